#include "dp_kernel.hpp"

#include <algorithm>
#include <cstring>

namespace koma::keys::detail {

namespace {

// Eight doubles (one AVX-512 register, two AVX2 registers, four SSE2 registers) and the
// matching comparison mask / hold index type.
using V8 = double __attribute__((vector_size(64)));
using V8L = long long __attribute__((vector_size(64)));

__attribute__((always_inline)) inline V8 load8(const double* p) {
  V8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

__attribute__((always_inline)) inline V8L load8l(const std::int64_t* p) {
  V8L v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

using V8B = std::uint8_t __attribute__((vector_size(8)));
using V8W = std::uint16_t __attribute__((vector_size(16)));

__attribute__((always_inline)) inline void store_back(std::uint8_t* p, V8L idx) {
  const V8B narrow = __builtin_convertvector(idx, V8B);
  std::memcpy(p, &narrow, sizeof(narrow));
}

__attribute__((always_inline)) inline void store_back(std::uint16_t* p, V8L idx) {
  const V8W narrow = __builtin_convertvector(idx, V8W);
  std::memcpy(p, &narrow, sizeof(narrow));
}

// U groups of eight end frames j .. j + 8U - 1 of one level: independent accumulators so the
// compare/select chains of successive holds overlap.
template <int U, bool Limited, class BackT>
__attribute__((always_inline)) inline void step(const DpBlock& blk, const double* __restrict prev, double* __restrict cur,
                                                BackT* __restrict back, std::ptrdiff_t j) {
  constexpr double big = 4 * kUnreachable;
  V8 best[U];
  V8L idx[U];
  V8L limit[U];
  for (int u = 0; u < U; ++u) {
    best[u] = V8{} + big;
    idx[u] = V8L{};
    if constexpr (Limited) limit[u] = load8l(blk.span_limit + j + 8 * u);
  }
  const double* col = blk.table + (blk.a - blk.table_min) * blk.stride + j;
  for (int s = blk.a; s <= blk.b; ++s, col += blk.stride) {
    const V8L sv = V8L{} + (s - blk.a);
    const double* p = prev + j - s;
    for (int u = 0; u < U; ++u) {
      const V8 v = load8(p + 8 * u) + load8(col + 8 * u);
      V8L lt = v < best[u];
      if constexpr (Limited) lt &= (V8L{} + s) <= limit[u];
      best[u] = lt ? v : best[u];
      idx[u] = lt ? sv : idx[u];
    }
  }
  for (int u = 0; u < U; ++u) {
    std::memcpy(cur + j + 8 * u, &best[u], sizeof(V8));
    store_back(back + j + 8 * u, idx[u]);
  }
}

template <bool Limited, class BackT>
__attribute__((always_inline)) inline void run(const DpBlock& blk, BackT* const* backs) {
  const std::ptrdiff_t first = blk.clo[1], last = blk.cend[blk.levels];
  // Frames beyond each level's range read as unreachable by the next level.
  for (int k = 1; k <= blk.levels; ++k) {
    double* r = blk.rows[k];
    std::fill(r + std::max<std::ptrdiff_t>(blk.clo[k] - blk.b - 2 * kLanes, -blk.row_pad), r + blk.clo[k], kUnreachable);
    std::fill(r + blk.cend[k], r + std::min<std::ptrdiff_t>(blk.cend[k] + blk.b + 2 * kLanes, blk.stride + blk.row_pad),
              kUnreachable);
  }
  // Tiles of 256 frames: 48 cost columns x 256 frames x 8 bytes = 96 KiB stays in L2 for the block.
  constexpr std::ptrdiff_t kTile = 256;
  for (std::ptrdiff_t t0 = first; t0 < last; t0 += kTile) {
    const std::ptrdiff_t t1 = t0 + kTile;
    for (int k = 1; k <= blk.levels; ++k) {
      std::ptrdiff_t j = std::max<std::ptrdiff_t>(t0, blk.clo[k]);
      const std::ptrdiff_t end = std::min<std::ptrdiff_t>(t1, blk.cend[k]);
      const double* prev = blk.rows[k - 1];
      double* cur = blk.rows[k];
      BackT* back = backs[k];
      for (; j + 32 <= end; j += 32) step<4, Limited>(blk, prev, cur, back, j);
      for (; j < end; j += 8) step<1, Limited>(blk, prev, cur, back, j);
    }
  }
}

}  // namespace

// Built with -O3 -ffinite-math-only -fno-signed-zeros -fno-trapping-math (only finite values
// reach it: kUnreachable is finite), and cloned for AVX-512 and AVX2 where the CPU has them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
void dp_block(const DpBlock& blk) {
  if (blk.levels <= 0) return;
  if (blk.back8) {
    if (blk.span_limit) run<true>(blk, blk.back8); else run<false>(blk, blk.back8);
  } else {
    if (blk.span_limit) run<true>(blk, blk.back16); else run<false>(blk, blk.back16);
  }
}

}  // namespace koma::keys::detail

namespace koma::keys::detail {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
void fill_closed_costs(const double* __restrict x, const double* __restrict mean, const double* __restrict sum_x,
                       const double* __restrict sum_kx, const double* __restrict sum_sq, int frames, int dims,
                       int min_span, int max_span, bool hold, double* __restrict table, std::ptrdiff_t stride) {
  const int D = dims;
  const int D8 = D / 8 * 8;
  for (int j = 1; j < frames; ++j) {
    const double* xj = x + static_cast<std::ptrdiff_t>(j) * D;
    const double* sx_b = sum_x + static_cast<std::ptrdiff_t>(j) * D;
    const double* sk_b = sum_kx + static_cast<std::ptrdiff_t>(j) * D;
    const int top = std::min(max_span, j);
    for (int s = min_span; s <= top; ++s) {
      const int i = j - s;
      const double* xi = x + static_cast<std::ptrdiff_t>(i) * D;
      const double* sx_a = sum_x + static_cast<std::ptrdiff_t>(i + 1) * D;
      const double* sk_a = sum_kx + static_cast<std::ptrdiff_t>(i + 1) * D;
      const double L = s;
      const double tri = L * (L - 1) / 2;
      const double fi = i;
      V8 v_ysy = V8{}, v_y2 = V8{}, v_bd = V8{}, v_d2 = V8{};
      int d = 0;
      for (; d < D8; d += 8) {
        const V8 yi = load8(xi + d) - load8(mean + d);
        const V8 sy = load8(sx_b + d) - load8(sx_a + d);
        const V8 dd = load8(xj + d) - load8(xi + d);
        const V8 bb = (load8(sk_b + d) - load8(sk_a + d)) - fi * sy - tri * yi;
        v_ysy += yi * sy;
        v_y2 += yi * yi;
        v_bd += bb * dd;
        v_d2 += dd * dd;
      }
      double ysy = 0, y2 = 0, bd = 0, d2 = 0;
      for (int q = 0; q < 8; ++q) {
        ysy += v_ysy[q];
        y2 += v_y2[q];
        bd += v_bd[q];
        d2 += v_d2[q];
      }
      for (; d < D; ++d) {
        const double yi = xi[d] - mean[d];
        const double sy = sx_b[d] - sx_a[d];
        const double dd = xj[d] - xi[d];
        ysy += yi * sy;
        y2 += yi * yi;
        bd += ((sk_b[d] - sk_a[d]) - fi * sy - tri * yi) * dd;
        d2 += dd * dd;
      }
      const double s2 = (sum_sq[j] - sum_sq[i + 1]) - 2 * ysy + (L - 1) * y2;
      const double c = hold ? s2 : s2 - 2 / L * bd + d2 * (L - 1) * (2 * L - 1) / (6 * L);
      table[(s - min_span) * stride + j] = c > 0 ? c : 0.0;
    }
  }
}

}  // namespace koma::keys::detail
