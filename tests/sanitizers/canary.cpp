// The sanitizer canary (tests/sanitizers/CMakeLists.txt): deliberate bugs that ASan and UBSan must
// catch. Built only in the asan preset (KOMA_SANITIZER_CANARY); the tests pass when the program dies
// with the sanitizer's report, so a build that lost its -fsanitize flags fails them.
//   sanitizer_canary heap-read      reads one int past the end of a std::vector's buffer
//   sanitizer_canary signed-overflow adds 1 to INT_MAX
//   sanitizer_canary clean          the same code in bounds
// Each case exits 0 when nothing stops it, so a non-zero exit means the sanitizer did.
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sanitizer_canary heap-read|signed-overflow|clean\n");
    return 2;
  }
  const bool clean = std::strcmp(argv[1], "clean") == 0;
  // Sizes and values come from argc, so the compiler cannot prove anything about them.
  std::vector<int> values(static_cast<std::size_t>(argc) + 2, 7);  // 4 ints
  if (clean || std::strcmp(argv[1], "heap-read") == 0) {
    const std::size_t index = values.size() - (clean ? 1 : 0);  // clean: the last; else one past it
    const int* data = values.data();
    std::printf("read %d\n", data[index]);
    return 0;
  }
  if (std::strcmp(argv[1], "signed-overflow") == 0) {
    int big = INT_MAX - 2 + argc;  // INT_MAX
    big += argc - 1;               // + 1
    std::printf("sum %d\n", big);
    return 0;
  }
  std::fprintf(stderr, "unknown case '%s'\n", argv[1]);
  return 2;
}
