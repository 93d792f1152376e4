// libFuzzer harness: koma::fuzz::fbx (fuzz/harnesses.hpp), the parse in this process.
#include <cstdlib>

#include "harnesses.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("KOMA_READ_IN_PROCESS", "1", 1);  // assimp's coverage and faults in this process
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::fbx(data, size);
  return 0;
}
