// libFuzzer harness: koma::fuzz::fbx (fuzz/harnesses.hpp), the parse in this process.
#include <cstdlib>

#include "harnesses.hpp"

// assimp 5.2.5 leaks parts of its document when it gives up on a malformed file (allocations
// whose every frame above operator new is inside libassimp). koma reads in a child process that
// exits after one read, so the leak ends with it; LeakSanitizer is told to ignore those only.
extern "C" const char* __lsan_default_suppressions() { return "leak:libassimp.so\n"; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("KOMA_READ_IN_PROCESS", "1", 1);  // assimp's coverage and faults in this process
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::fbx(data, size);
  return 0;
}
