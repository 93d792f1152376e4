// libFuzzer harness: koma::fuzz::keys_report (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::keys_report(data, size);
  return 0;
}
