#include "koma/core/large_pages.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

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

bool huge_pages_enabled() noexcept {
  static const bool enabled = [] {
    const char* env = std::getenv("KOMA_HUGE_PAGES");
    return env != nullptr && std::string_view(env) == "1";
  }();
  return enabled;
}

void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (!huge_pages_enabled()) return;
  constexpr std::uintptr_t kPage = std::uintptr_t{2} << 20;
  if (bytes < 2 * kPage) return;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) / kPage * kPage;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / kPage * kPage;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace koma
