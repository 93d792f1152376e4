// libFuzzer harness: koma::fuzz::gltf (fuzz/harnesses.hpp).
#include "harnesses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::gltf(data, size);
  return 0;
}
