#include "dp_kernel.hpp"

#include <algorithm>
#include <cstring>

#include "koma/core/simd.hpp"

// Every kernel here is written once over a vector width W (doubles per register) and compiled
// three times: W = 8 for AVX-512 (x86-64-v4), W = 4 for AVX2 (x86-64-v3), W = 2 for the baseline
// x86-64 (SSE2). koma::simd::active() picks one per process (KOMA_ISA overrides). Widths that do
// not match the target's registers are what made the old AVX2 clone ~30x slower: GCC lowers a
// 64-byte vector operation it cannot do natively lane by lane.
//
// Built with -O3 -ffinite-math-only -fno-signed-zeros -fno-trapping-math: only finite values
// reach the kernels (kUnreachable is finite), so min reductions vectorise.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KOMA_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))
#define KOMA_TARGET_AVX2 __attribute__((target("arch=x86-64-v3")))
#define KOMA_HAVE_ISA_VARIANTS 1
#else
#define KOMA_TARGET_AVX512
#define KOMA_TARGET_AVX2
#define KOMA_HAVE_ISA_VARIANTS 0
#endif
#define KOMA_INLINE __attribute__((always_inline)) inline

namespace koma::keys::detail {

namespace {

// GCC drops vector_size on an alias whose size depends on a template parameter, so each width
// names its types with a literal size.
template <int W>
struct VecTypes;
template <>
struct VecTypes<2> {
  typedef double D __attribute__((vector_size(16)));
  typedef long long L __attribute__((vector_size(16)));
};
template <>
struct VecTypes<4> {
  typedef double D __attribute__((vector_size(32)));
  typedef long long L __attribute__((vector_size(32)));
};
template <>
struct VecTypes<8> {
  typedef double D __attribute__((vector_size(64)));
  typedef long long L __attribute__((vector_size(64)));
};

template <int W>
struct Vec {
  using D = typename VecTypes<W>::D;
  using L = typename VecTypes<W>::L;
  static KOMA_INLINE D load(const double* p) {
    D v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static KOMA_INLINE L loadl(const std::int64_t* p) {
    L v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static KOMA_INLINE void store(double* p, D v) { std::memcpy(p, &v, sizeof(v)); }
};

// ------------------------------------------------------------------------------------------
// Level DP (dp_block)

// U groups of eight end frames j .. j + 8U - 1 of one level, as 8U / W registers: independent
// accumulators so the compare/select chains of successive holds overlap.
template <int W, int U, bool Limited, class BackT>
KOMA_INLINE void level_step(const DpBlock& blk, const double* __restrict prev, double* __restrict cur,
                            BackT* __restrict back, std::ptrdiff_t j) {
  using V = Vec<W>;
  constexpr int R = U * kLanes / W;
  constexpr double big = 4 * kUnreachable;
  typename V::D best[R];
  typename V::L idx[R];
  typename V::L limit[R];
  for (int u = 0; u < R; ++u) {
    best[u] = typename V::D{} + big;
    idx[u] = typename V::L{};
    if constexpr (Limited) limit[u] = V::loadl(blk.span_limit + j + W * u);
  }
  const double* col = blk.table + (blk.a - blk.table_min) * blk.stride + j;
  for (int s = blk.a; s <= blk.b; ++s, col += blk.stride) {
    const typename V::L sv = typename V::L{} + (s - blk.a);
    const double* p = prev + j - s;
    for (int u = 0; u < R; ++u) {
      const typename V::D v = V::load(p + W * u) + V::load(col + W * u);
      typename V::L lt = v < best[u];
      if constexpr (Limited) lt &= (typename V::L{} + s) <= limit[u];
      best[u] = lt ? v : best[u];
      idx[u] = lt ? sv : idx[u];
    }
  }
  for (int u = 0; u < R; ++u) {
    V::store(cur + j + W * u, best[u]);
    std::int64_t lanes[W];
    std::memcpy(lanes, &idx[u], sizeof(lanes));
    for (int q = 0; q < W; ++q) back[j + W * u + q] = static_cast<BackT>(lanes[q]);
  }
}

template <int W, bool Limited, class BackT>
KOMA_INLINE void level_run(const DpBlock& blk, BackT* const* backs) {
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
      for (; j + 32 <= end; j += 32) level_step<W, 4, Limited>(blk, prev, cur, back, j);
      for (; j < end; j += 8) level_step<W, 1, Limited>(blk, prev, cur, back, j);
    }
  }
}

template <int W>
KOMA_INLINE void dp_block_impl(const DpBlock& blk) {
  if (blk.levels <= 0) return;
  if (blk.back8) {
    if (blk.span_limit) level_run<W, true>(blk, blk.back8); else level_run<W, false>(blk, blk.back8);
  } else {
    if (blk.span_limit) level_run<W, true>(blk, blk.back16); else level_run<W, false>(blk, blk.back16);
  }
}

// ------------------------------------------------------------------------------------------
// Closed-form costs

template <int W>
KOMA_INLINE double hsum(typename Vec<W>::D v) {
  double lanes[W];
  std::memcpy(lanes, &v, sizeof(lanes));
  double s = 0;
  for (int q = 0; q < W; ++q) s += lanes[q];
  return s;
}

template <int W>
KOMA_INLINE void fill_closed_impl(const double* __restrict x, const double* __restrict mean, const double* __restrict sum_x,
                                  const double* __restrict sum_kx, const double* __restrict sum_sq, int origin, int j_begin, int j_end,
                                  int dims, int min_span, int max_span, bool hold, double* __restrict table,
                                  std::ptrdiff_t stride) {
  using V = Vec<W>;
  const int D = dims;
  // Eight doubles per step whatever W is, so the sums are added in the same order on every path.
  const int D8 = D / 8 * 8;
  constexpr int R = 8 / W;
  for (int j = j_begin; j < j_end; ++j) {
    const double* xj = x + static_cast<std::ptrdiff_t>(j) * D;
    const double* sx_b = sum_x + static_cast<std::ptrdiff_t>(j - origin) * D;
    const double* sk_b = sum_kx + static_cast<std::ptrdiff_t>(j - origin) * D;
    const int top = std::min(max_span, j);
    for (int s = min_span; s <= top; ++s) {
      const int i = j - s;
      const double* xi = x + static_cast<std::ptrdiff_t>(i) * D;
      const double* sx_a = sum_x + static_cast<std::ptrdiff_t>(i + 1 - origin) * D;
      const double* sk_a = sum_kx + static_cast<std::ptrdiff_t>(i + 1 - origin) * D;
      const double L = s;
      const double tri = L * (L - 1) / 2;
      const double fi = i - origin;
      typename V::D v_ysy[R], v_y2[R], v_bd[R], v_d2[R];
      for (int r = 0; r < R; ++r) v_ysy[r] = v_y2[r] = v_bd[r] = v_d2[r] = typename V::D{};
      int d = 0;
      for (; d < D8; d += 8) {
        for (int r = 0; r < R; ++r) {
          const int o = d + W * r;
          const typename V::D yi = V::load(xi + o) - V::load(mean + o);
          const typename V::D sy = V::load(sx_b + o) - V::load(sx_a + o);
          const typename V::D dd = V::load(xj + o) - V::load(xi + o);
          const typename V::D bb = (V::load(sk_b + o) - V::load(sk_a + o)) - fi * sy - tri * yi;
          v_ysy[r] += yi * sy;
          v_y2[r] += yi * yi;
          v_bd[r] += bb * dd;
          v_d2[r] += dd * dd;
        }
      }
      double ysy = 0, y2 = 0, bd = 0, d2 = 0;
      for (int r = 0; r < R; ++r) {
        ysy += hsum<W>(v_ysy[r]);
        y2 += hsum<W>(v_y2[r]);
        bd += hsum<W>(v_bd[r]);
        d2 += hsum<W>(v_d2[r]);
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
      const double s2 = (sum_sq[j - origin] - sum_sq[i + 1 - origin]) - 2 * ysy + (L - 1) * y2;
      const double c = hold ? s2 : s2 - 2 / L * bd + d2 * (L - 1) * (2 * L - 1) / (6 * L);
      table[(s - min_span) * stride + j] = c > 0 ? c : 0.0;
    }
  }
}

// ------------------------------------------------------------------------------------------
// Lagrangian shortest path (lambda_forward / lambda_backward)

// Holds s >= kLanes read values at least eight frames back, so eight end frames share one
// vector step; holds below kLanes depend on the frames just computed and run lane by lane.
template <int W>
KOMA_INLINE void lambda_forward_impl(const LambdaPass& p) {
  using V = Vec<W>;
  constexpr int R = kLanes / W;
  double* f = p.value;
  const std::ptrdiff_t len = p.last;  // local frames 0 .. last; f[0] given
  const int vs = std::max(p.a, kLanes);
  auto col = [&p](int s) { return p.table + (s - p.table_min) * p.stride + p.begin; };
  for (std::ptrdiff_t j0 = 1; j0 <= len; j0 += kLanes) {
    const int lanes = static_cast<int>(std::min<std::ptrdiff_t>(kLanes, len - j0 + 1));
    double best[kLanes];
    if (lanes == kLanes && p.begin + j0 + kLanes <= p.table_end) {
      typename V::D acc[R];
      for (int r = 0; r < R; ++r) acc[r] = typename V::D{} + 4 * kUnreachable;
      for (int s = vs; s <= p.b; ++s) {
        const double* c = col(s) + j0;
        const double* fp = f + j0 - s;
        for (int r = 0; r < R; ++r) {
          const typename V::D v = V::load(fp + W * r) + V::load(c + W * r);
          acc[r] = v < acc[r] ? v : acc[r];
        }
      }
      for (int r = 0; r < R; ++r) V::store(best + W * r, acc[r]);
    } else {
      for (int l = 0; l < lanes; ++l) {
        double m = 4 * kUnreachable;
        for (int s = vs; s <= p.b; ++s) {
          const double v = f[j0 + l - s] + col(s)[j0 + l];
          m = v < m ? v : m;
        }
        best[l] = m;
      }
    }
    const int top = std::min(p.b, kLanes - 1);
    for (int l = 0; l < lanes; ++l) {
      const std::ptrdiff_t j = j0 + l;
      double m = best[l];
      for (int s = p.a; s <= top; ++s) {
        const double v = f[j - s] + col(s)[j];
        m = v < m ? v : m;
      }
      f[j] = m + p.lambda;
    }
  }
}

template <int W>
KOMA_INLINE void lambda_backward_impl(const LambdaPass& p) {
  using V = Vec<W>;
  constexpr int R = kLanes / W;
  double* g = p.value;
  const std::ptrdiff_t len = p.last;  // local frames 0 .. last; g[last] given
  const int vs = std::max(p.a, kLanes);
  auto col = [&p](int s) { return p.table + (s - p.table_min) * p.stride + p.begin; };
  // Blocks of eight start frames i0 .. i0 + 7, from the end down.
  for (std::ptrdiff_t hi = len - 1; hi >= 0; hi -= kLanes) {
    const std::ptrdiff_t i0 = std::max<std::ptrdiff_t>(hi - kLanes + 1, 0);
    const int lanes = static_cast<int>(hi - i0 + 1);
    double best[kLanes];
    if (lanes == kLanes && p.begin + i0 + p.b + kLanes <= p.table_end) {
      typename V::D acc[R];
      for (int r = 0; r < R; ++r) acc[r] = typename V::D{} + 4 * kUnreachable;
      for (int s = vs; s <= p.b; ++s) {
        const double* c = col(s) + i0 + s;  // cost(i, i + s) = column s at end frame i + s
        const double* gp = g + i0 + s;
        for (int r = 0; r < R; ++r) {
          const typename V::D v = V::load(gp + W * r) + V::load(c + W * r);
          acc[r] = v < acc[r] ? v : acc[r];
        }
      }
      for (int r = 0; r < R; ++r) V::store(best + W * r, acc[r]);
    } else {
      for (int l = 0; l < lanes; ++l) {
        const std::ptrdiff_t i = i0 + l;
        double m = 4 * kUnreachable;
        const int smax = static_cast<int>(std::min<std::ptrdiff_t>(p.b, len - i));
        for (int s = vs; s <= smax; ++s) {
          const double v = g[i + s] + col(s)[i + s];
          m = v < m ? v : m;
        }
        best[l] = m;
      }
    }
    const int top = std::min(p.b, kLanes - 1);
    for (int l = lanes - 1; l >= 0; --l) {
      const std::ptrdiff_t i = i0 + l;
      double m = best[l];
      const int smax = static_cast<int>(std::min<std::ptrdiff_t>(top, len - i));
      for (int s = p.a; s <= smax; ++s) {
        const double v = g[i + s] + col(s)[i + s];
        m = v < m ? v : m;
      }
      g[i] = m + p.lambda;
    }
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------
// The three compiled paths of each kernel and the dispatch.

#define KOMA_ISA_VARIANTS(name, impl, Arg)                                   \
  KOMA_TARGET_AVX512 void name##_avx512(Arg x) { impl<8>(x); }              \
  KOMA_TARGET_AVX2 void name##_avx2(Arg x) { impl<4>(x); }                  \
  void name##_scalar(Arg x) { impl<2>(x); }                                 \
  void name(Arg x) {                                                        \
    switch (KOMA_HAVE_ISA_VARIANTS ? simd::active() : simd::Isa::scalar) {  \
      case simd::Isa::avx512: name##_avx512(x); return;                     \
      case simd::Isa::avx2: name##_avx2(x); return;                         \
      case simd::Isa::scalar: break;                                        \
    }                                                                       \
    name##_scalar(x);                                                       \
  }

KOMA_ISA_VARIANTS(dp_block, dp_block_impl, const DpBlock&)
KOMA_ISA_VARIANTS(lambda_forward, lambda_forward_impl, const LambdaPass&)
KOMA_ISA_VARIANTS(lambda_backward, lambda_backward_impl, const LambdaPass&)

namespace {
struct FillArgs {
  const double* x;
  const double* mean;
  const double* sum_x;
  const double* sum_kx;
  const double* sum_sq;
  int origin, j_begin, j_end, dims, min_span, max_span;
  bool hold;
  double* table;
  std::ptrdiff_t stride;
};
template <int W>
KOMA_INLINE void fill_closed_args(const FillArgs& a) {
  fill_closed_impl<W>(a.x, a.mean, a.sum_x, a.sum_kx, a.sum_sq, a.origin, a.j_begin, a.j_end, a.dims, a.min_span, a.max_span, a.hold,
                      a.table, a.stride);
}
}  // namespace

KOMA_ISA_VARIANTS(fill_closed_dispatch, fill_closed_args, const FillArgs&)

void fill_closed_costs(const double* x, const double* mean, const double* sum_x, const double* sum_kx,
                       const double* sum_sq, int origin, int j_begin, int j_end, int dims, int min_span,
                       int max_span, bool hold, double* table, std::ptrdiff_t stride) {
  fill_closed_dispatch(FillArgs{x, mean, sum_x, sum_kx, sum_sq, origin, j_begin, j_end, dims, min_span, max_span, hold, table, stride});
}

}  // namespace koma::keys::detail
