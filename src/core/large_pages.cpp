#include "koma/core/large_pages.hpp"

#include <cstdio>

namespace koma {

std::uint64_t available_memory_bytes() {
  std::uint64_t kib = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long v = 0;
      if (std::sscanf(line, "MemAvailable: %llu kB", &v) == 1) {
        kib = v;
        break;
      }
    }
    std::fclose(f);
  }
  return kib * 1024;
}

}  // namespace koma
