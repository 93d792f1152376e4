#include "dp_kernel.hpp"

#include <algorithm>

namespace koma::keys::detail {

namespace {

// min over t < len of a[t] + b[t], with four independent 4-wide accumulators so the min chain's
// latency overlaps (one accumulator makes every min wait for the previous one).
using V4 = double __attribute__((vector_size(32)));

__attribute__((always_inline)) inline V4 load4(const double* p) {
  V4 v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

__attribute__((always_inline)) inline V4 vmin(V4 a, V4 b) { return a < b ? a : b; }

__attribute__((always_inline)) inline double min_plus(const double* __restrict a, const double* __restrict b, int len) {
  const V4 big = {4 * kUnreachable, 4 * kUnreachable, 4 * kUnreachable, 4 * kUnreachable};
  V4 m0 = big, m1 = big, m2 = big, m3 = big;
  int t = 0;
  for (; t + 16 <= len; t += 16) {
    m0 = vmin(m0, load4(a + t) + load4(b + t));
    m1 = vmin(m1, load4(a + t + 4) + load4(b + t + 4));
    m2 = vmin(m2, load4(a + t + 8) + load4(b + t + 8));
    m3 = vmin(m3, load4(a + t + 12) + load4(b + t + 12));
  }
  for (; t + 4 <= len; t += 4) m0 = vmin(m0, load4(a + t) + load4(b + t));
  m0 = vmin(vmin(m0, m1), vmin(m2, m3));
  double m = std::min(std::min(m0[0], m0[1]), std::min(m0[2], m0[3]));
  for (; t < len; ++t) {
    const double v = a[t] + b[t];
    m = v < m ? v : m;
  }
  return m;
}

}  // namespace

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
              const int* __restrict lockprev, int N, int ring, double* __restrict rings, std::uint8_t* const* back,
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
        int bs = a;
        if (smax >= smin) {
          const int i0 = j - smax;
          const int len = smax - smin + 1;
          const double* pa = k == 0 ? prev_row + i0 : rings + static_cast<long>(k - 1) * 2 * ring + (i0 & mask);
          const double* pb = row + i0;
          const double m = min_plus(pa, pb, len);
          int t = len - 1;
          while (t > 0 && pa[t] + pb[t] != m) --t;
          val = m;
          bs = j - (i0 + t);
        }
        back[k][j] = static_cast<std::uint8_t>(bs - a);
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
