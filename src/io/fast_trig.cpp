#include "fast_trig.hpp"

#include "koma/core/simd.hpp"

namespace koma::io::detail {

namespace {

// Compiled three times (AVX-512, AVX2 + FMA, baseline x86-64) and chosen by koma::simd::active()
// (KOMA_ISA pins one, so tests and benchmarks measure every path).
[[gnu::always_inline]] inline void sincos_body(const double* x, double* s, double* c, std::int32_t* quadrant, std::size_t n) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  constexpr double kP1 = 1.5707963267341256141;   // pi/2, first 33 bits
  constexpr double kP2 = 6.0771005065061922e-11;  // next bits
  constexpr double kP3 = 2.0222662487959506e-21;  // remainder
  // Pass 1 (vectorised): reduce and evaluate both polynomials.
  for (std::size_t i = 0; i < n; ++i) {
    const double t = x[i] * kTwoOverPi;
    const std::int32_t q = static_cast<std::int32_t>(t + std::copysign(0.5, t));
    const double k = static_cast<double>(q);
    double r = x[i] - k * kP1;
    r -= k * kP2;
    r -= k * kP3;
    const double r2 = r * r;
    s[i] = r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 +
           r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800 + r2 * (-1.0 / 1307674368000.0))))))));
    c[i] = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (-1.0 / 3628800 +
           r2 * (1.0 / 479001600 + r2 * (-1.0 / 87178291200.0 + r2 * (1.0 / 20922789888000.0))))))));
    quadrant[i] = q;
  }
  // Pass 2: rotate by the quadrant (sin, cos) -> (cos, -sin) -> (-sin, -cos) -> (-cos, sin).
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t q = quadrant[i] & 3;
    const double sr = s[i], cr = c[i];
    const double ss = (q & 1) ? cr : sr;
    const double cc = (q & 1) ? sr : cr;
    s[i] = (q & 2) ? -ss : ss;
    c[i] = ((q + 1) & 2) ? -cc : cc;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("arch=x86-64-v4"))) void sincos_avx512(const double* x, double* s, double* c, std::int32_t* q, std::size_t n) {
  sincos_body(x, s, c, q, n);
}
__attribute__((target("arch=x86-64-v3"))) void sincos_avx2(const double* x, double* s, double* c, std::int32_t* q, std::size_t n) {
  sincos_body(x, s, c, q, n);
}
constexpr bool kVariants = true;
#else
void sincos_avx512(const double* x, double* s, double* c, std::int32_t* q, std::size_t n) { sincos_body(x, s, c, q, n); }
void sincos_avx2(const double* x, double* s, double* c, std::int32_t* q, std::size_t n) { sincos_body(x, s, c, q, n); }
constexpr bool kVariants = false;
#endif

}  // namespace

void sincos_moderate(const double* x, double* s, double* c, std::int32_t* quadrant, std::size_t n) {
  switch (kVariants ? simd::active() : simd::Isa::scalar) {
    case simd::Isa::avx512: sincos_avx512(x, s, c, quadrant, n); return;
    case simd::Isa::avx2: sincos_avx2(x, s, c, quadrant, n); return;
    case simd::Isa::scalar: break;
  }
  sincos_body(x, s, c, quadrant, n);
}

}  // namespace koma::io::detail
