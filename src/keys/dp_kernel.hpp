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
