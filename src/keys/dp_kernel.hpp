// The exact selector's inner loop, in its own translation unit so it can be compiled for SIMD
// (see CMakeLists.txt). Private to the keys module.
#pragma once

#include <cstdint>

namespace koma::keys::detail {

/// Values >= this are unreachable states (a finite sentinel: the kernel is built with
/// -ffinite-math-only so its min reduction vectorises).
inline constexpr double kUnreachable = 1e300;

/// One DP level: for every j in [lo, hi],
///   cur[j] = min over holds s in [max(a, j - phi), min(b, j - plo, j - lockprev[j])] of prev[j - s] + cost(j - s, j)
/// and back[j] = the hold s attaining it (the shortest on ties). `table` holds cost(i, j) at
/// table[j * width + table_max_span - (j - i)] (ascending in i). Unreachable: cur[j] >= kUnreachable.
void dp_level(const double* prev, const double* table, int width, int table_max_span, int lo, int hi, int a, int b,
              int plo, int phi, const int* lockprev, double* cur, std::uint16_t* back);

}  // namespace koma::keys::detail

namespace koma::keys::detail {

/// K consecutive DP levels at once, frame by frame, so each table row is loaded once for all K
/// levels (the level-by-level order streams the whole table from memory once per level).
/// Level k of the block reads level k-1 from a ring of the last `ring` values (ring is a power of
/// two > b; each ring is stored twice over so any window of b values is contiguous).
/// prev_row: the level before the block (N values, unreachable outside [prev_lo, prev_hi]).
/// lo[k], hi[k]: the frame range of level k. back[k]: back pointers of level k, indexed by frame,
/// stored as hold - a (so b - a must be <= 255).
/// rings: K * 2 * ring scratch values. out_row: N values, receives the block's last level.
/// finals[k]: level k's value at frame N-1 (kUnreachable when outside its range).
void dp_block(const double* prev_row, int prev_lo, int prev_hi, int K, const int* lo, const int* hi,
              const double* table, int width, int table_max_span, int a, int b, const int* lockprev, int N, int ring,
              double* rings, std::uint8_t* const* back, double* out_row, double* finals);

}  // namespace koma::keys::detail
