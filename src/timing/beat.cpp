#include "koma/timing/beat.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "koma/core/error.hpp"

namespace koma::timing {

namespace {

constexpr double kTwoPi = 6.283185307179586;

double resultant(std::span<const double> t, std::span<const double> w, double wsum, double period) {
  std::complex<double> z = 0;
  for (size_t i = 0; i < t.size(); ++i) z += w[i] * std::polar(1.0, kTwoPi * t[i] / period);
  return std::abs(z) / wsum;
}

}  // namespace

void BeatSettings::validate() const {
  auto bad = [](const char* f, const std::string& m) { throw Error(ErrorCode::invalid_settings, f, m); };
  if (!(min_bpm > 0 && std::isfinite(min_bpm))) bad("beat.min_bpm", fmt::format("{} must be > 0", min_bpm));
  if (!(max_bpm > min_bpm && std::isfinite(max_bpm)))
    bad("beat.max_bpm", fmt::format("{} must be finite and > min_bpm ({})", max_bpm, min_bpm));
  if (!(near_best > 0 && near_best <= 1)) bad("beat.near_best", fmt::format("{} must be in (0, 1]", near_best));
  if (!(on_beat_tolerance > 0 && on_beat_tolerance <= 0.5))
    bad("beat.on_beat_tolerance", fmt::format("{} must be in (0, 0.5]", on_beat_tolerance));
}

double Beat::nearest(double t) const noexcept {
  if (!found()) return t;
  return phase + std::round((t - phase) / period) * period;
}

Beat fit_beat(std::span<const double> times, std::span<const double> weights, const BeatSettings& st) {
  st.validate();
  if (!weights.empty() && weights.size() != times.size())
    throw Error(ErrorCode::invalid_settings, "beat weights",
                fmt::format("{} weights for {} key times", weights.size(), times.size()));
  std::vector<double> t, w;
  for (size_t i = 0; i < times.size(); ++i) {
    const double wi = weights.empty() ? 1.0 : weights[i];
    if (!std::isfinite(times[i]) || !(std::isfinite(wi) && wi >= 0))
      throw Error(ErrorCode::bad_data, "beat", fmt::format("key time {} ({} s, weight {}) is not finite", i, times[i], wi));
    if (wi > 0) {
      t.push_back(times[i]);
      w.push_back(wi);
    }
  }
  Beat beat;
  beat.keys = static_cast<int>(t.size());
  if (t.size() < 3) return beat;
  double wsum = 0;
  for (double x : w) wsum += x;
  // Times relative to the first key keep the phases well conditioned on long takes.
  const double t0 = *std::min_element(t.begin(), t.end());
  for (double& x : t) x -= t0;

  // Log grid of periods, 0.25 % apart.
  const double p_lo = 60.0 / st.max_bpm, p_hi = 60.0 / st.min_bpm;
  const double step = std::log(1.0025);
  const int count = static_cast<int>(std::ceil(std::log(p_hi / p_lo) / step)) + 1;
  std::vector<double> periods(static_cast<size_t>(count)), r(static_cast<size_t>(count));
  double best = 0;
  for (int k = 0; k < count; ++k) {
    periods[k] = p_lo * std::exp(step * k);
    r[k] = resultant(t, w, wsum, periods[k]);
    best = std::max(best, r[k]);
  }
  // The longest near-best local maximum.
  int pick = -1;
  for (int k = count - 1; k >= 0; --k) {
    const bool peak = (k == 0 || r[k] >= r[k - 1]) && (k == count - 1 || r[k] >= r[k + 1]);
    if (peak && r[k] >= st.near_best * best) {
      pick = k;
      break;
    }
  }
  if (pick < 0) return beat;
  double period = periods[pick];
  if (pick > 0 && pick < count - 1) {  // parabola through the peak, in log period
    const double a = r[pick - 1], b = r[pick], c = r[pick + 1];
    const double den = a - 2 * b + c;
    if (den < 0) period *= std::exp(step * std::clamp(0.5 * (a - c) / den, -0.5, 0.5));
  }
  // Phase from the resultant's angle, then the weighted least-squares line t = phase + k * period
  // through the keys within tolerance (beat index k by rounding).
  std::complex<double> z = 0;
  for (size_t i = 0; i < t.size(); ++i) z += w[i] * std::polar(1.0, kTwoPi * t[i] / period);
  double phase = std::arg(z) / kTwoPi * period;
  for (int pass = 0; pass < 2; ++pass) {
    double sw = 0, sk = 0, st_ = 0, skk = 0, skt = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double k = std::round((t[i] - phase) / period);
      if (std::abs(t[i] - (phase + k * period)) > st.on_beat_tolerance * period) continue;
      sw += w[i];
      sk += w[i] * k;
      st_ += w[i] * t[i];
      skk += w[i] * k * k;
      skt += w[i] * k * t[i];
    }
    const double det = sw * skk - sk * sk;
    if (!(sw > 0) || !(std::abs(det) > 1e-12 * sw * sw)) break;
    const double p = (sw * skt - sk * st_) / det;
    if (!(p >= 0.5 * period && p <= 2 * period)) break;
    phase = (st_ - p * sk) / sw;
    period = p;
  }
  beat.period = period;
  beat.tempo_bpm = 60.0 / period;
  beat.resultant = resultant(t, w, wsum, period);
  double ss = 0;
  for (double x : t) {
    const double d = x - (phase + std::round((x - phase) / period) * period);
    if (std::abs(d) <= st.on_beat_tolerance * period) {
      ++beat.on_beat;
      ss += d * d;
    }
  }
  beat.rms_seconds = beat.on_beat > 0 ? std::sqrt(ss / beat.on_beat) : 0.0;
  const double r0 = std::min(0.99, 2.0 / std::sqrt(static_cast<double>(t.size())));
  const double above = std::clamp((beat.resultant - r0) / (1 - r0), 0.0, 1.0);
  beat.confidence = above * beat.on_beat / static_cast<double>(t.size());
  phase += t0;
  beat.phase = phase - std::floor(phase / period) * period;
  return beat;
}

}  // namespace koma::timing
