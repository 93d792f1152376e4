// libFuzzer harness: koma::fuzz::points_csv (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::points_csv(data, size);
  return 0;
}
