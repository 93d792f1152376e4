#include "dp_kernel.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

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
// Closed-form costs from a banded Gram matrix (fill_gram_costs)

// The eight lanes of an accumulator group summed in one fixed order, whatever W is.
template <int W>
KOMA_INLINE double sum8(const typename Vec<W>::D* acc) {
  double lanes[8];
  std::memcpy(lanes, acc, sizeof(lanes));
  return ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
}

// gram[m * gs + a] = y_a . y_{a+m} for 0 <= m <= band, a + m < rows. Two rows by two columns per
// step: eight values loaded per 16 multiply-adds.
template <int W>
KOMA_INLINE void band_gram(const double* __restrict y, int rows, int dp, int band, double* __restrict gram, std::ptrdiff_t gs) {
  using V = Vec<W>;
  constexpr int R = 8 / W;
  for (int a = 0; a < rows; a += 2) {
    const int a1 = std::min(a + 1, rows - 1);
    const int top = std::min(rows - 1, a + 1 + band);
    for (int b = a; b <= top; b += 2) {
      const int b1 = std::min(b + 1, rows - 1);
      typename V::D acc[4][R];
      for (auto& g : acc)
        for (auto& v : g) v = typename V::D{};
      const double* ya = y + static_cast<std::ptrdiff_t>(a) * dp;
      const double* yb = y + static_cast<std::ptrdiff_t>(a1) * dp;
      const double* yc = y + static_cast<std::ptrdiff_t>(b) * dp;
      const double* yd = y + static_cast<std::ptrdiff_t>(b1) * dp;
      for (int d = 0; d < dp; d += 8) {
        for (int r = 0; r < R; ++r) {
          const int o = d + W * r;
          const typename V::D va = V::load(ya + o), vb = V::load(yb + o), vc = V::load(yc + o), vd = V::load(yd + o);
          acc[0][r] += va * vc;
          acc[1][r] += va * vd;
          acc[2][r] += vb * vc;
          acc[3][r] += vb * vd;
        }
      }
      const int rr[4] = {a, a, a1, a1}, cc[4] = {b, b1, b, b1};
      for (int q = 0; q < 4; ++q) {
        const int m = cc[q] - rr[q];
        if (m >= 0 && m <= band && (q < 2 || a1 > a) && (q % 2 == 0 || b1 > b)) gram[m * gs + rr[q]] = sum8<W>(acc[q]);
      }
    }
  }
}

template <int W>
KOMA_INLINE void fill_gram_impl(const double* __restrict y, int rows, int dp, int w0, int j_begin, int j_end, int min_span,
                                int max_span, bool hold, double* __restrict table, std::ptrdiff_t stride,
                                double* __restrict scratch) {
  const int H = std::min(max_span, j_end - 1);
  const std::ptrdiff_t gs = rows + 8;
  double* gram = scratch;                            // (H + 1) x gs
  double* p1 = gram + static_cast<std::ptrdiff_t>(max_span + 1) * gs;  // per row: sum_{m < s} G(a, a + m), m >= 1
  double* pk = p1 + gs;                              // per row: sum_{m < s} m G(a, a + m)
  double* sq = pk + gs;                              // sq[r] = sum_{r' < r} |y_r'|^2
  double* c1 = sq + gs;                              // per end frame of the tile
  double* ck = c1 + (j_end - j_begin + 8);
  band_gram<W>(y, rows, dp, H, gram, gs);
  sq[0] = 0;
  for (int r = 0; r < rows; ++r) sq[r + 1] = sq[r] + gram[r];
  for (int r = 0; r < rows; ++r) p1[r] = pk[r] = 0;
  const int tile = j_end - j_begin;
  for (int t = 0; t < tile; ++t) c1[t] = ck[t] = 0;
  for (int s = 1; s <= H; ++s) {
    const double L = s, tri = L * (L - 1) / 2, lin = (L - 1) * (2 * L - 1) / (6 * L), two_l = 2 / L;
    const double* gs_row = gram + static_cast<std::ptrdiff_t>(s) * gs;
    const int jb = std::max(j_begin, s);
    // Local indices: end frame j is row j - w0 and tile slot j - j_begin; its start i = j - s.
    const int rj0 = jb - w0, ri0 = jb - s - w0, t0 = jb - j_begin, count = j_end - jb;
    double* out = table + static_cast<std::ptrdiff_t>(s - min_span) * stride + jb;
    if (s >= min_span) {
      for (int q = 0; q < count; ++q) {
        const int ri = ri0 + q, rj = rj0 + q, t = t0 + q;
        const double gij = gs_row[ri], gii = gram[ri], gjj = gram[rj];
        const double s2 = (sq[rj] - sq[ri + 1]) - 2 * p1[ri] + (L - 1) * gii;
        const double c = hold ? s2 : s2 - two_l * (ck[t] - pk[ri] - tri * gij + tri * gii) + (gjj - 2 * gij + gii) * lin;
        out[q] = c > 0 ? c : 0.0;
      }
    }
    for (int q = 0; q < count; ++q) {
      const double gij = gs_row[ri0 + q];
      ck[t0 + q] += c1[t0 + q] + gij;
      c1[t0 + q] += gij;
    }
    for (int r = 0; r + s < rows; ++r) {
      p1[r] += gs_row[r];
      pk[r] += L * gs_row[r];
    }
  }
}

// ------------------------------------------------------------------------------------------
// Lagrangian shortest path (lambda_forward / lambda_backward)
//
// The table holds one column per hold; a long take's columns are megabytes apart, so reading 48 of
// them eight frames at a time defeats the prefetchers. Each pass therefore works in tiles of
// kPassTile frames: it first copies the tile's slice of every column into a small buffer (48
// sequential 2 KiB reads), then runs the recurrence on the buffer in L1/L2.

constexpr std::ptrdiff_t kPassTile = 256;

// Holds s >= kLanes read values at least eight frames back, so eight end frames share one
// vector step; holds below kLanes depend on the frames just computed and run lane by lane.
template <int W>
KOMA_INLINE void lambda_forward_impl(const LambdaPass& p) {
  using V = Vec<W>;
  constexpr int R = kLanes / W;
  double* f = p.value;
  const std::ptrdiff_t len = p.last;  // local frames 0 .. last; f[0] given
  const int vs = std::max(p.a, kLanes);
  const int width = p.b - p.a + 1;
  std::vector<double> buf(static_cast<size_t>(width) * kPassTile);
  for (std::ptrdiff_t t0 = 1; t0 <= len; t0 += kPassTile) {
    const std::ptrdiff_t t1 = std::min(len + 1, t0 + kPassTile);
    // buf[(s - a) * tile + (j - t0)] = cost(j - s, j) for end frames j in [t0, t1).
    for (int s = p.a; s <= p.b; ++s) {
      const double* src = p.table + (s - p.table_min) * p.stride + p.begin + t0;
      std::memcpy(buf.data() + static_cast<size_t>(s - p.a) * kPassTile, src, static_cast<size_t>(t1 - t0) * sizeof(double));
    }
    auto col = [&](int s) { return buf.data() + static_cast<size_t>(s - p.a) * kPassTile - t0; };
    for (std::ptrdiff_t j0 = t0; j0 < t1; j0 += kLanes) {
      const int lanes = static_cast<int>(std::min<std::ptrdiff_t>(kLanes, t1 - j0));
      double best[kLanes];
      std::int64_t arg[kLanes];
      if (lanes == kLanes) {
        typename V::D acc[R];
        typename V::L idx[R];
        for (int r = 0; r < R; ++r) {
          acc[r] = typename V::D{} + 4 * kUnreachable;
          idx[r] = typename V::L{};
        }
        for (int s = vs; s <= p.b; ++s) {
          const double* c = col(s) + j0;
          const double* fp = f + j0 - s;
          const typename V::L sv = typename V::L{} + s;
          for (int r = 0; r < R; ++r) {
            const typename V::D v = V::load(fp + W * r) + V::load(c + W * r);
            const typename V::L lt = v < acc[r];
            acc[r] = lt ? v : acc[r];
            idx[r] = lt ? sv : idx[r];
          }
        }
        for (int r = 0; r < R; ++r) {
          V::store(best + W * r, acc[r]);
          std::memcpy(arg + W * r, &idx[r], sizeof(idx[r]));
        }
      } else {
        for (int l = 0; l < lanes; ++l) {
          double m = 4 * kUnreachable;
          int ms = 0;
          for (int s = vs; s <= p.b; ++s) {
            const double v = f[j0 + l - s] + col(s)[j0 + l];
            if (v < m) { m = v; ms = s; }
          }
          best[l] = m;
          arg[l] = ms;
        }
      }
      const int top = std::min(p.b, kLanes - 1);
      for (int l = 0; l < lanes; ++l) {
        const std::ptrdiff_t j = j0 + l;
        double m = best[l];
        std::int64_t ms = arg[l];
        for (int s = p.a; s <= top; ++s) {
          const double v = f[j - s] + col(s)[j];
          if (v < m) { m = v; ms = s; }
        }
        f[j] = m + p.lambda;
        p.hold[j] = static_cast<std::uint16_t>(ms);
      }
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
  const int width = p.b - p.a + 1;
  const std::ptrdiff_t span = kPassTile + p.b + kLanes;  // end frames a tile of start frames reaches
  std::vector<double> buf(static_cast<size_t>(width) * static_cast<size_t>(span));
  // Tiles of start frames [u0, u1), from the end down; inside, blocks of eight from the top.
  for (std::ptrdiff_t u1 = len; u1 > 0; u1 -= kPassTile) {
    const std::ptrdiff_t u0 = std::max<std::ptrdiff_t>(u1 - kPassTile, 0);
    // buf[(s - a) * span + (e - u0)] = cost(e - s, e) for end frames e in [u0, u0 + span), with
    // frames past the table read as unreachable.
    for (int s = p.a; s <= p.b; ++s) {
      double* dst = buf.data() + static_cast<size_t>(s - p.a) * static_cast<size_t>(span);
      const std::ptrdiff_t have = std::clamp<std::ptrdiff_t>(p.table_end - (p.begin + u0), 0, span);
      std::memcpy(dst, p.table + (s - p.table_min) * p.stride + p.begin + u0, static_cast<size_t>(have) * sizeof(double));
      std::fill(dst + have, dst + span, kUnreachable);
    }
    auto col = [&](int s) { return buf.data() + static_cast<size_t>(s - p.a) * static_cast<size_t>(span) - u0; };
    for (std::ptrdiff_t hi = u1 - 1; hi >= u0; hi -= kLanes) {
      const std::ptrdiff_t i0 = std::max<std::ptrdiff_t>(hi - kLanes + 1, u0);
      const int lanes = static_cast<int>(hi - i0 + 1);
      double best[kLanes];
      if (lanes == kLanes) {
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
  const double* y;
  int rows, dp, w0, j_begin, j_end, min_span, max_span;
  bool hold;
  double* table;
  std::ptrdiff_t stride;
  double* scratch;
};
template <int W>
KOMA_INLINE void fill_gram_args(const FillArgs& a) {
  fill_gram_impl<W>(a.y, a.rows, a.dp, a.w0, a.j_begin, a.j_end, a.min_span, a.max_span, a.hold, a.table, a.stride, a.scratch);
}
}  // namespace

KOMA_ISA_VARIANTS(fill_gram_dispatch, fill_gram_args, const FillArgs&)

void fill_gram_costs(const double* y, int rows, int dp, int w0, int j_begin, int j_end, int min_span, int max_span,
                     bool hold, double* table, std::ptrdiff_t stride, double* scratch) {
  fill_gram_dispatch(FillArgs{y, rows, dp, w0, j_begin, j_end, min_span, max_span, hold, table, stride, scratch});
}

}  // namespace koma::keys::detail
