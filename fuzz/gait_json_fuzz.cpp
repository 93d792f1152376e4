// libFuzzer harness: koma::fuzz::gait_json (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::gait_json(data, size);
  return 0;
}
