// libFuzzer harness: koma::fuzz::bvh (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::bvh(data, size);
  return 0;
}
