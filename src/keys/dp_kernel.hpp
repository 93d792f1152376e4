// The exact selector's inner loop, in its own translation unit so it can be compiled for SIMD
// (see CMakeLists.txt). Private to the keys module.
#pragma once

#include <cstddef>
#include <cstdint>

namespace koma::keys::detail {

/// Values >= this are unreachable states (a finite sentinel: the kernel is built with
/// -ffinite-math-only so its min reduction vectorises).
inline constexpr double kUnreachable = 1e300;

/// Frames are processed eight at a time; level ranges are widened to multiples of this.
inline constexpr int kLanes = 8;

/// One block of consecutive levels of the exact selector's DP (shortest n-link path):
///
///   rows[k][j] = min over holds s in [a, b] of rows[k-1][j - s] + cost(j - s, j)
///   back[k][j] = the hold s attaining it, stored as s - a (the shortest hold on ties)
///
/// for k = 1 .. levels and j in [clo[k], cend[k]) (multiples of kLanes). The frames are swept in
/// tiles, each tile through every level of the block, so a tile's costs are loaded from memory
/// once per block instead of once per level; within a level eight end frames share one
/// instruction (no horizontal reductions, no argmin scan).
///
/// Preconditions (the caller's): rows[k] is indexable on [-row_pad, stride + row_pad) and reads
/// as kUnreachable wherever level k has no state (rows[0] is the level before the block; the
/// kernel itself fills rows[1..levels] outside [clo, cend) over the band the next level reads);
/// row_pad >= b + 2 * kLanes; cost(j - s, j) = table[(s - table_min) * stride + j] for every s in
/// [a, b] and j < stride, kUnreachable where j - s < 0 or j >= frames. `span_limit` (nullable):
/// per end frame j, the longest hold allowed (j - the last locked frame before j).
struct DpBlock {
  const double* table = nullptr;
  std::ptrdiff_t stride = 0;
  int table_min = 1;
  int a = 1, b = 1;
  const std::int64_t* span_limit = nullptr;
  int levels = 0;
  const int* clo = nullptr;   ///< [levels + 1], index 0 unused
  const int* cend = nullptr;  ///< [levels + 1], index 0 unused
  double* const* rows = nullptr;  ///< [levels + 1]
  std::ptrdiff_t row_pad = 0;
  std::uint8_t* const* back8 = nullptr;    ///< [levels + 1], each indexed by frame; used when b - a <= 255
  std::uint16_t* const* back16 = nullptr;  ///< used otherwise
};

void dp_block(const DpBlock& block);

}  // namespace koma::keys::detail

namespace koma::keys::detail {

/// One pass of the Lagrangian shortest path over the frames of one gap between anchors, global
/// frames begin .. begin + last (local frames 0 .. last):
///
///   forward   value[j] = min over holds s in [a, b] of value[j - s] + cost(j - s, j) + lambda
///   backward  value[i] = min over holds s in [a, b] of value[i + s] + cost(i, i + s) + lambda
///
/// The caller sets value[0] (forward) or value[last] (backward) and pads `value` with kUnreachable
/// for b + kLanes entries before index 0 (forward) or after index last (backward). Costs are read
/// from the table as in DpBlock (column s at global end frame); `table_end` bounds the end frames the
/// table holds (its stride): vector reads stay below it.
struct LambdaPass {
  const double* table = nullptr;
  std::ptrdiff_t stride = 0;
  int table_min = 1;
  int a = 1, b = 1;
  std::ptrdiff_t begin = 0;
  std::ptrdiff_t last = 0;
  std::ptrdiff_t table_end = 0;
  double lambda = 0;
  double* value = nullptr;
  /// forward only: per local frame j >= 1, the hold s of the segment that attains value[j]
  /// (0 when unreachable); required.
  std::uint16_t* hold = nullptr;
};

void lambda_forward(const LambdaPass& pass);
void lambda_backward(const LambdaPass& pass);

/// The closed-form position (hold = false) or hold (hold = true) cost of every segment (j - s, j)
/// with j_begin <= j < j_end and s in [min_span, min(max_span, j)], written to
/// table[(s - min_span) * stride + j]; the same quantity as SegmentCosts::cost_closed (see
/// metric.cpp), from one dot product per pair of frames instead of four sums over the dimensions
/// per segment:
///
///   with y the window's centred features, G(a, b) = y_a . y_b for 0 <= b - a <= max_span, and for
///   a segment (i, j) of length L:  P1 = sum_{k in (i,j)} G(i, k), Pk = sum (k - i) G(i, k),
///   C1 = sum G(k, j), Ck = sum (k - i) G(k, j), Q = sum |y_k|^2, tri = L (L - 1) / 2,
///   hold      = Q - 2 P1 + (L - 1) G(i, i)
///   position  = hold - 2 / L (Ck - Pk - tri G(i, j) + tri G(i, i))
///               + (G(j, j) - 2 G(i, j) + G(i, i)) (L - 1)(2L - 1) / (6L)
///
/// P1, Pk grow along a row of the band and C1, Ck along a column, so each segment costs O(1) once
/// the band is known. y: `rows` frames (global frames w0 .. w0 + rows - 1, with w0 <= j_begin -
/// min(max_span, j_begin) and w0 + rows == j_end) of `dp` values each, dp a multiple of 8 with zero
/// padding. scratch: at least gram_scratch_size(rows, max_span, j_end - j_begin) doubles. Every
/// SIMD path adds in the same order, so every path writes the same table bit for bit.
void fill_gram_costs(const double* y, int rows, int dp, int w0, int j_begin, int j_end, int min_span, int max_span,
                     bool hold, double* table, std::ptrdiff_t stride, double* scratch);

/// Doubles of scratch fill_gram_costs needs.
constexpr std::size_t gram_scratch_size(int rows, int max_span, int tile) {
  return static_cast<std::size_t>(max_span + 1) * static_cast<std::size_t>(rows + 8) + 4 * static_cast<std::size_t>(rows + 8) +
         2 * static_cast<std::size_t>(tile + 8);
}

}  // namespace koma::keys::detail
