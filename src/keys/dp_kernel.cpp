#include "dp_kernel.hpp"

#include <algorithm>

namespace koma::keys::detail {

// Built with -O3 -ffinite-math-only -fno-signed-zeros -fno-trapping-math: the min reduction below
// then vectorises (SSE2, and AVX2 through target_clones where the CPU has it). Only finite values
// reach it (kUnreachable is finite).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void dp_level(const double* __restrict prev, const double* __restrict table, int width, int table_max_span, int lo,
              int hi, int a, int b, int plo, int phi, const int* __restrict lockprev, double* __restrict cur,
              std::uint16_t* __restrict back) {
  for (int j = lo; j <= hi; ++j) {
    const int smin = std::max(a, j - phi);
    const int smax = std::min(std::min(b, j - plo), j - lockprev[j]);
    if (smax < smin) {
      cur[j] = kUnreachable;
      back[j] = 0;
      continue;
    }
    // Candidates i = j - smax .. j - smin, ascending; both arrays contiguous.
    const int i0 = j - smax;
    const int len = smax - smin + 1;
    const double* pa = prev + i0;
    const double* pb = table + static_cast<long>(j) * width + (table_max_span - j) + i0;
    double m = 4 * kUnreachable;
    for (int t = 0; t < len; ++t) {
      const double v = pa[t] + pb[t];
      m = v < m ? v : m;
    }
    // The last (shortest hold) index attaining the minimum; optimal holds are usually short.
    int t = len - 1;
    while (t > 0 && pa[t] + pb[t] != m) --t;
    cur[j] = m;
    back[j] = static_cast<std::uint16_t>(j - (i0 + t));
  }
}

}  // namespace koma::keys::detail
