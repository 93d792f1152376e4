// libFuzzer harness: koma::fuzz::gltf (fuzz/harnesses.hpp).
#include <cstdlib>

#include "harnesses.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("KOMA_READ_IN_PROCESS", "1", 1);  // tinygltf's coverage and faults in this process
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::gltf(data, size);
  return 0;
}
