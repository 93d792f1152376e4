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

namespace koma::keys::detail {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void dp_block(const double* __restrict prev_row, int prev_lo, int prev_hi, int K, const int* lo, const int* hi,
              const double* __restrict table, int width, int table_max_span, int a, int b,
              const int* __restrict lockprev, int N, int ring, double* __restrict rings, std::uint16_t* const* back,
              double* __restrict out_row, double* finals) {
  const int mask = ring - 1;
  std::fill(rings, rings + static_cast<long>(K) * 2 * ring, kUnreachable);
  std::fill(out_row, out_row + N, kUnreachable);
  for (int k = 0; k < K; ++k) finals[k] = kUnreachable;
  const int jstart = lo[0];
  int jend = 0;
  for (int k = 0; k < K; ++k) jend = std::max(jend, hi[k]);
  for (int j = jstart; j <= jend; ++j) {
    const double* row = table + static_cast<long>(j) * width + (table_max_span - j);
    const int smax_j = std::min(b, j - lockprev[j]);
    int plo = prev_lo, phi = prev_hi;
    for (int k = 0; k < K; ++k) {
      double val = kUnreachable;
      if (j >= lo[k] && j <= hi[k]) {
        const int smin = std::max(a, j - phi);
        const int smax = std::min(smax_j, j - plo);
        int bs = 0;
        if (smax >= smin) {
          const int i0 = j - smax;
          const int len = smax - smin + 1;
          const double* pa = k == 0 ? prev_row + i0 : rings + static_cast<long>(k - 1) * 2 * ring + (i0 & mask);
          const double* pb = row + i0;
          double m = 4 * kUnreachable;
          for (int t = 0; t < len; ++t) {
            const double v = pa[t] + pb[t];
            m = v < m ? v : m;
          }
          int t = len - 1;
          while (t > 0 && pa[t] + pb[t] != m) --t;
          val = m;
          bs = j - (i0 + t);
        }
        back[k][j] = static_cast<std::uint16_t>(bs);
      }
      double* r = rings + static_cast<long>(k) * 2 * ring;
      r[j & mask] = val;
      r[(j & mask) + ring] = val;
      if (k == K - 1) out_row[j] = val;
      if (j == N - 1) finals[k] = val;
      plo = lo[k];
      phi = hi[k];
    }
  }
}

}  // namespace koma::keys::detail
