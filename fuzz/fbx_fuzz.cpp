// libFuzzer harness: koma::fuzz::fbx (fuzz/harnesses.hpp), the parse in this process.
#include <cstdlib>
#include <string_view>

#include "harnesses.hpp"

// assimp 5.2.5 leaks parts of its document when it gives up on a malformed file (allocations
// whose every frame above operator new is inside libassimp). koma reads in a child process that
// exits after one read, so the leak ends with it; LeakSanitizer is told to ignore those only.
extern "C" const char* __lsan_default_suppressions() { return "leak:libassimp.so\n"; }

// By default the harness checks koma's contract: the read runs in a child process as it does for a
// user, so whatever assimp does becomes a koma::Error (a parser crash that koma's pre-checks do not
// foresee is bad_file, never a crash of koma). KOMA_FUZZ_IN_PROCESS=1 parses in this process instead,
// for campaigns that look for assimp faults the pre-checks could catch: every such fault is then a
// finding, although koma survives it (assimp 5.2.5 has more than the pre-checks name).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* in_process = std::getenv("KOMA_FUZZ_IN_PROCESS");
  if (in_process != nullptr && std::string_view(in_process) == "1") ::setenv("KOMA_READ_IN_PROCESS", "1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::fbx(data, size);
  return 0;
}
