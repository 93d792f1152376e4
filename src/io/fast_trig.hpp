// Sines and cosines of many moderate angles at once, accurate to a few ulp, in loops the compiler
// vectorises (glibc's scalar sin/cos dominated BVH parsing time). Private to the io module.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace koma::io::detail {

/// s[i] = sin(x[i]), c[i] = cos(x[i]) for |x[i]| < 1e5 radians (BVH half-angles are a few radians
/// at most). Cody-Waite reduction by pi/2 in three parts, then Taylor polynomials on |r| <= pi/4,
/// where the first omitted terms (r^17/17!, r^18/18!) are below 1e-16. `quadrant` is scratch space
/// of n ints.
void sincos_moderate(const double* x, double* s, double* c, std::int32_t* quadrant, std::size_t n);

}  // namespace koma::io::detail
