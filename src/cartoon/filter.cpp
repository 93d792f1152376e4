#include "koma/cartoon/filter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <unsupported/Eigen/FFT>

#include "bound.hpp"
#include "detail.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/quat_sign.hpp"
#include "leg_ik.hpp"
#include "squash.hpp"

namespace koma::cartoon {

namespace {

// The Gaussian is truncated at +-5 sigma. At +-3 sigma its cut tails leak about 1 % of every
// frequency through, and the filter multiplies that by A w^2: on a 120 fps take the 20-60 Hz
// capture jitter came back as visible motion (CMU 01_01's hands moved 25 % more than at 30 fps,
// where those frequencies do not exist). At 5 sigma the tails are exp(-12.5) = 4e-6.
constexpr double kTruncation = 5.0;

int radius_for(double sigma) { return std::max(1, static_cast<int>(std::ceil(kTruncation * sigma))); }

}  // namespace

namespace detail {

// Normalised Gaussian g[k + R], k in [-R, R].
void gaussian(double sigma, std::vector<double>& g) {
  const int r = radius_for(sigma);
  g.resize(static_cast<size_t>(2 * r + 1));
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += g[k + r] = std::exp(-0.5 * k * k / (sigma * sigma));
  for (double& v : g) v /= sum;
}

// Rotation-vector unwrapping: the representation of the same rotation nearest to `prev`.
Vec3 unwrap_near(const Vec3& r, const Vec3& prev) {
  const double angle = r.norm();
  if (angle < 1e-9) return r;
  const Vec3 axis = r / angle;
  Vec3 best = r;
  double best_d = (r - prev).squaredNorm();
  for (int k = -3; k <= 3; ++k) {
    if (k == 0) continue;
    const Vec3 c = axis * (angle + 2.0 * kPi * k);
    const double d = (c - prev).squaredNorm();
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace detail

namespace {

using detail::gaussian;
using detail::unwrap_near;

[[noreturn]] void bad_setting(std::string field, std::string message) {
  throw Error(ErrorCode::invalid_settings, std::move(field), std::move(message));
}

// x'' per frame^2 by the fourth-order central stencil (-1, 16, -30, 16, -1) / 12, whose response
// w^2 (1 - w^4 / 90 + ...) matches the continuous w^2 within 0.3 % up to w = 0.7 rad/frame; then
// smoothed by the truncated Gaussian: d2 = g * stencil over [-(R+2), R+2]. It sums to exactly zero
// (constants pass) and is symmetric (ramps pass).
void second_derivative_kernel(double sigma, std::vector<double>& g, std::vector<double>& d2) {
  static constexpr double kStencil[5] = {-1.0 / 12, 16.0 / 12, -30.0 / 12, 16.0 / 12, -1.0 / 12};
  gaussian(sigma, g);
  const int r = static_cast<int>(g.size() / 2), l = r + 2;
  d2.assign(static_cast<size_t>(2 * l + 1), 0.0);
  for (int k = -r; k <= r; ++k) {
    for (int s = -2; s <= 2; ++s) d2[k + s + l] += g[k + r] * kStencil[s + 2];
  }
}

// The whole filter as one kernel over [-(R+2), R+2]: h = delta - A * d2.
void cartoon_kernel(double sigma, double strength, std::vector<double>& g, std::vector<double>& h) {
  second_derivative_kernel(sigma, g, h);
  for (double& v : h) v *= -strength;
  h[h.size() / 2] += 1.0;
}

// buf[j] = x extended linearly, j in [0, n + 2L), sample i of x at j = i + L.
// Extends x linearly by l samples past each end with the mean slope over the first and last
// `span0` / `span1` frames (about one sigma: a fixed time, so the same at every frame rate). The
// slope of one end difference made a single jittered end frame of a 120 fps take fling the
// extension, and the filter with it: CMU 01_01's hand moved 0.8 m in its first frames.
void extend(std::span<const double> x, int l, double span0, double span1, double* buf) {
  const int n = static_cast<int>(x.size());
  const int k0 = std::clamp(static_cast<int>(std::round(span0)), 1, n - 1);
  const int k1 = std::clamp(static_cast<int>(std::round(span1)), 1, n - 1);
  const double d0 = (x[k0] - x[0]) / k0, d1 = (x[n - 1] - x[n - 1 - k1]) / k1;
  for (int j = 0; j < l; ++j) buf[j] = x[0] - (l - j) * d0;
  std::copy(x.begin(), x.end(), buf + l);
  for (int j = 0; j < l; ++j) buf[l + n + j] = x[n - 1] + (j + 1) * d1;
}

// out[i] = sum_t h[t] * buf[i + t] for a symmetric kernel (h[t] = h[taps - 1 - t]): pairs of
// taps share one multiply; blocked so the running outputs stay in L1.
void convolve(const double* __restrict buf, const double* __restrict h, int taps, int n, double* __restrict out) {
  constexpr int kBlock = 1024;
  const int mid = taps / 2;
  for (int i0 = 0; i0 < n; i0 += kBlock) {
    const int len = std::min(n - i0, kBlock);
    double* __restrict o = out + i0;
    const double wm = h[mid];
    const double* __restrict c = buf + i0 + mid;
    for (int i = 0; i < len; ++i) o[i] = wm * c[i];
    for (int t = 0; t < mid; ++t) {
      const double w = h[t];
      const double* __restrict lo = buf + i0 + t;
      const double* __restrict hi = buf + i0 + taps - 1 - t;
      for (int i = 0; i < len; ++i) o[i] += w * (lo[i] + hi[i]);
    }
  }
}

// Largest |strength| accepted: 1250 times the command's default. Far beyond it the filter's
// output is no longer a pose (1e308 overflowed to infinity and was blamed on the input file). The
// per-frame A of the core may be larger: at 960 fps the rate-independent limit is 1e4 * 32^2.
constexpr double kMaxStrength = 1e4;
constexpr double kMaxFrameStrength = 1e7;

void check_strength(double strength, const std::string& field, double limit = kMaxStrength) {
  if (!std::isfinite(strength) || std::abs(strength) > limit)
    bad_setting(field, fmt::format("strength {:g}; expected a number within +-{:g}", strength, limit));
}

void check_core_inputs(size_t n, double strength) {
  check_strength(strength, "strength", kMaxFrameStrength);
  if (n < 3) throw Error(ErrorCode::bad_data, "signal", fmt::format("the filter needs at least 3 samples, got {}", n));
}

// Filters `channels` interleaved channels (layout [frames x channels]) in place with the group's sigma.
void filter_group(std::vector<double>& data, int frames, int channels, const std::vector<double>& sigma,
                  double strength) {
  std::vector<double> ch(static_cast<size_t>(frames));
  for (int c = 0; c < channels; ++c) {
    for (int f = 0; f < frames; ++f) ch[f] = data[static_cast<size_t>(f) * channels + c];
    const std::vector<double> y = filter_channel(ch, sigma, strength);
    for (int f = 0; f < frames; ++f) data[static_cast<size_t>(f) * channels + c] = y[f];
  }
}

std::vector<double> group_sigma(std::span<const double> data, int frames, int channels, const FilterSettings& s) {
  if (s.sigma_frames > 0) return std::vector<double>(static_cast<size_t>(frames), s.sigma_frames);
  return adaptive_sigma(data, frames, channels, s);
}

struct SigmaStats {
  double lo = 1e300, hi = 0, sum = 0;
  long count = 0;
  void add(const std::vector<double>& s) {
    for (double v : s) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      ++count;
    }
  }
};


}  // namespace

void FilterSettings::validate() const {
  check_strength(strength, "strength", kMaxFrameStrength);
  if (!(sigma_frames >= 0) || !std::isfinite(sigma_frames))
    bad_setting("sigma", fmt::format("{} must be > 0 frames (or 0 = adaptive)", sigma_frames));
  if (window < 8 || window > 1024) bad_setting("window", fmt::format("{} must be 8..1024 frames", window));
  if (!(min_sigma > 0) || !std::isfinite(min_sigma)) bad_setting("min_sigma", fmt::format("{} must be > 0", min_sigma));
  if (!(max_sigma >= min_sigma) || !std::isfinite(max_sigma))
    bad_setting("max_sigma", fmt::format("{} must be finite and >= min_sigma {}", max_sigma, min_sigma));
  if (hop < 1) bad_setting("hop", fmt::format("{} must be >= 1 frame", hop));
  if (smooth < 0) bad_setting("smooth", fmt::format("{} must be >= 0 frames", smooth));
}

double sigma_for_frequency(double omega) noexcept { return std::sqrt(2.0) / omega; }

void filter_channel(std::span<const double> x, double sigma, double strength, std::span<double> scratch,
                    std::span<double> out) {
  KOMA_ASSERT(x.size() >= 3 && sigma > 0 && out.size() == x.size());
  std::vector<double> g, h;  // small: 2 * ceil(5 sigma) + 3 taps
  cartoon_kernel(sigma, strength, g, h);
  const int l = static_cast<int>(h.size() / 2), n = static_cast<int>(x.size());
  KOMA_ASSERT(scratch.size() >= x.size() + 2 * static_cast<size_t>(l));
  extend(x, l, sigma, sigma, scratch.data());
  convolve(scratch.data(), h.data(), static_cast<int>(h.size()), n, out.data());
}

std::vector<double> filter_channel(std::span<const double> x, double sigma, double strength) {
  check_core_inputs(x.size(), strength);
  if (!(sigma > 0) || !std::isfinite(sigma)) bad_setting("sigma", fmt::format("{} must be > 0 frames", sigma));
  std::vector<double> out(x.size()), scratch(x.size() + 2 * static_cast<size_t>(radius_for(sigma) + 2));
  filter_channel(x, sigma, strength, scratch, out);
  return out;
}

std::vector<double> filter_channel(std::span<const double> x, std::span<const double> sigma, double strength) {
  check_core_inputs(x.size(), strength);
  if (sigma.size() != x.size())
    throw Error(ErrorCode::mismatch, "sigma", fmt::format("{} sigmas for {} samples", sigma.size(), x.size()));
  double smax = 0;
  for (double s : sigma) {
    if (!(s > 0) || !std::isfinite(s)) bad_setting("sigma", fmt::format("{} must be > 0 frames", s));
    smax = std::max(smax, s);
  }
  const int n = static_cast<int>(x.size()), l = radius_for(smax) + 2;
  std::vector<double> buf(static_cast<size_t>(n + 2 * l));
  extend(x, l, sigma.front(), sigma.back(), buf.data());
  std::vector<double> out(x.size()), g, d2;
  double cached = -1;
  for (int i = 0; i < n; ++i) {
    if (sigma[i] != cached) {
      second_derivative_kernel(sigma[i], g, d2);
      cached = sigma[i];
    }
    const int r = static_cast<int>(d2.size() / 2);
    double acc = 0;
    const double* b = buf.data() + i + l;
    for (int k = -r; k <= r; ++k) acc += d2[k + r] * b[k];
    out[i] = x[i] - strength * acc;
  }
  return out;
}

std::vector<double> adaptive_sigma(std::span<const double> samples, int frames, int channels,
                                   const FilterSettings& settings) {
  settings.validate();
  KOMA_ASSERT(channels >= 1 && samples.size() == static_cast<size_t>(frames) * channels);
  std::vector<double> sigma(static_cast<size_t>(std::max(frames, 0)), settings.max_sigma);
  if (frames < 3) return sigma;
  // A window of `window` frames, zero-padded 4x so the peak is located to a quarter bin before
  // the parabolic refinement.
  const int win = settings.window, big_n = 4 * settings.window, nd = frames - 1;
  const int len = std::min(win, nd);
  std::vector<double> hann(static_cast<size_t>(len));
  for (int k = 0; k < len; ++k) hann[k] = len > 1 ? 0.5 - 0.5 * std::cos(2.0 * kPi * (k + 0.5) / len) : 1.0;
  Eigen::FFT<double> fft;
  std::vector<double> in(static_cast<size_t>(big_n)), power(static_cast<size_t>(big_n / 2 + 1));
  std::vector<std::complex<double>> spec;
  std::vector<double> raw(static_cast<size_t>(frames)), energy(static_cast<size_t>(frames), 0.0);
  std::vector<double> total(power.size(), 0.0);  // all windows' spectra: the clip's dominant frequency

  // sigma of the strongest bin at or above the window's first bin (lower frequencies are not
  // resolved), refined by a parabola through the log power; max_sigma for a still window.
  auto peak_sigma = [&](const std::vector<double>& pw) {
    int best = 4;
    for (int k = 5; k <= big_n / 2; ++k) {
      if (pw[k] > pw[best]) best = k;
    }
    if (!(pw[best] > 1e-24)) return settings.max_sigma;
    double kk = best;
    if (best < big_n / 2) {
      const double a = std::log(pw[best - 1] + 1e-300), b = std::log(pw[best]), c = std::log(pw[best + 1] + 1e-300);
      const double den = a - 2 * b + c;
      if (den < 0) kk += std::clamp(0.5 * (a - c) / den, -0.5, 0.5);
    }
    return std::clamp(sigma_for_frequency(2.0 * kPi * kk / big_n), settings.min_sigma, settings.max_sigma);
  };

  // The spectrum is estimated every kHop frames and interpolated between (the result is smoothed
  // over +-smooth frames anyway); windows that clamp to the same start are computed once.
  const int kHop = settings.hop;
  int last_start = -1, estimates = 0;
  double energy_sum = 0;
  for (int i = 0; i < frames; ++i) {
    if (i % kHop != 0 && i != frames - 1) continue;
    const int start = std::clamp(i - win / 2, 0, nd - len);
    if (start != last_start) {
      std::fill(power.begin(), power.end(), 0.0);
      for (int c = 0; c < channels; ++c) {
        double mean = 0;
        auto diff = [&](int j) {
          return samples[static_cast<size_t>(j + 1) * channels + c] - samples[static_cast<size_t>(j) * channels + c];
        };
        for (int k = 0; k < len; ++k) mean += diff(start + k);
        mean /= len;
        std::fill(in.begin(), in.end(), 0.0);
        for (int k = 0; k < len; ++k) in[k] = hann[k] * (diff(start + k) - mean);
        fft.fwd(spec, in);
        for (int k = 0; k <= big_n / 2; ++k) power[k] += std::norm(spec[k]);
      }
      last_start = start;
    }
    raw[i] = peak_sigma(power);
    for (int k = 4; k <= big_n / 2; ++k) energy[i] += power[k];
    for (int k = 0; k <= big_n / 2; ++k) total[k] += power[k];
    energy_sum += energy[i];
    ++estimates;
  }
  // Windows with little motion (a planted foot, a held pose) have a spectrum of noise whose peak
  // is meaningless and would give a tiny sigma (a huge gain on noise): their sigma leans towards
  // the clip's dominant one, in proportion to how weak they are (weight P / (P + P_mean / 2),
  // blended in log sigma).
  const double global = peak_sigma(total), mean_energy = energy_sum / std::max(estimates, 1);
  for (int i = 0; i < frames; ++i) {
    if (i % kHop != 0 && i != frames - 1) continue;
    if (!(mean_energy > 0)) break;  // no motion anywhere: max_sigma throughout
    const double w = energy[i] / (energy[i] + 0.5 * mean_energy);
    raw[i] = std::exp(w * std::log(raw[i]) + (1 - w) * std::log(global));
  }
  for (int i = 0; i < frames; ++i) {
    if (i % kHop == 0 || i == frames - 1) continue;
    const int a = i - i % kHop, b = std::min(a + kHop, frames - 1);
    raw[i] = raw[a] + (raw[b] - raw[a]) * (i - a) / static_cast<double>(b - a);
  }
  // Smooth over +-smooth frames so the kernel does not jump between neighbouring frames.
  for (int i = 0; i < frames; ++i) {
    const int a = std::max(0, i - settings.smooth), b = std::min(frames - 1, i + settings.smooth);
    double sum = 0;
    for (int k = a; k <= b; ++k) sum += raw[k];
    sigma[i] = sum / (b - a + 1);
  }
  return sigma;
}

void CartoonSettings::validate() const {
  if (per_frame) per_frame->validate();
  check_strength(strength, "strength");
  auto positive = [](double v, const char* field, bool zero_ok) {
    if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0))
      bad_setting(field, fmt::format("{} must be finite and {} seconds", v, zero_ok ? ">= 0" : "> 0"));
  };
  positive(sigma_seconds, "sigma_seconds", true);
  positive(min_sigma_seconds, "min_sigma_seconds", false);
  positive(max_sigma_seconds, "max_sigma_seconds", false);
  positive(window_seconds, "window_seconds", false);
  if (max_sigma_seconds < min_sigma_seconds)
    bad_setting("max_sigma_seconds",
                fmt::format("{} s must be >= the minimum sigma, {} s", max_sigma_seconds, min_sigma_seconds));
  contacts.validate();
  for (int p = 0; p < body::kBodyPartCount; ++p) {
    check_strength(part_strength[p], fmt::format("part {}", body::part_name(static_cast<body::BodyPart>(p))));
  }
  if (!(squash >= 0) || !std::isfinite(squash)) bad_setting("squash", fmt::format("{} must be finite and >= 0", squash));
  if (!(squash_delay >= 0) || !std::isfinite(squash_delay))
    bad_setting("squash_delay", fmt::format("{} must be finite and >= 0 seconds", squash_delay));
  if (!(blend_seconds >= 0) || !std::isfinite(blend_seconds))
    bad_setting("blend_seconds", fmt::format("{} must be finite and >= 0", blend_seconds));
  if (!(bound_share >= 0) || !std::isfinite(bound_share))
    bad_setting("bound_share", fmt::format("{} must be finite and >= 0 (0 = no bound)", bound_share));
  if (!(cut_speed >= 0) || !std::isfinite(cut_speed))
    bad_setting("cut_speed", fmt::format("{} must be finite and >= 0 body sizes per second (0 = never split)", cut_speed));
  if (!(cut_ratio > 1) || !std::isfinite(cut_ratio))
    bad_setting("cut_ratio", fmt::format("{} must be finite and > 1", cut_ratio));
}

FilterSettings CartoonSettings::filter_at(double frame_rate) const {
  validate();
  if (!std::isfinite(frame_rate) || !(frame_rate > 0))
    bad_setting("frame_rate", fmt::format("{} must be a finite rate > 0", frame_rate));
  if (per_frame) return *per_frame;
  const double scale = frame_rate / kStrengthReferenceRate;
  FilterSettings f;
  f.strength = strength * scale * scale;
  f.sigma_frames = sigma_seconds * frame_rate;
  f.min_sigma = min_sigma_seconds * frame_rate;
  f.max_sigma = max_sigma_seconds * frame_rate;
  f.window = static_cast<int>(std::clamp(std::round(window_seconds * frame_rate), 8.0, 1024.0));
  f.hop = std::max(1, static_cast<int>(std::round(4.0 * scale)));
  f.smooth = std::max(1, static_cast<int>(std::round(4.0 * scale)));
  f.validate();
  return f;
}

namespace {

// One filter over 3-channel tracks, read and written through small adapters (a joint's
// translation, a joint's rotation as an unwrapped log map about its mean, a 2D/3D point track),
// over frames [b, e). Filters the track when it moves (a sample differs from the first by more
// than `still`) and the strength is not 0. Returns the sigma per frame of the range, or nothing
// when it was left alone.
template <class Track>
std::vector<double> filter_track(Track& track, int b, int e, double strength, double still,
                                 const FilterSettings& settings, std::vector<double>& data) {
  const int n = e - b;
  bool moves = false;
  Vec3 first = Vec3::Zero();
  for (int f = 0; f < n; ++f) {
    const Vec3 x = track.load(b + f);
    if (f == 0) first = x;
    for (int c = 0; c < 3; ++c) data[static_cast<size_t>(f) * 3 + c] = x[c];
    moves = moves || (x - first).cwiseAbs().maxCoeff() > still;
  }
  if (!moves || strength == 0) return {};
  std::vector<double> sigma = group_sigma(std::span<const double>(data.data(), static_cast<size_t>(n) * 3), n, 3, settings);
  filter_group(data, n, 3, sigma, strength);
  for (int f = 0; f < n; ++f) track.store(b + f, Vec3(data[f * 3], data[f * 3 + 1], data[f * 3 + 2]));
  return sigma;
}


// A joint's rotation as the log map relative to its mean rotation over frames [first, ...),
// unwrapped frame to frame (so the channels are continuous): what the adaptive sigma is measured
// on and what the bound measures a joint's own range in.
struct LogMapTrack {
  const Motion& in;
  int joint;
  Quat mean;
  int first = 0;
  Quat inv = mean.conjugate();
  Vec3 prev = Vec3::Zero();
  Vec3 load(int f) {
    Vec3 r = quat_log(inv * in.rotation(f, joint));
    if (f > first) r = unwrap_near(r, prev);
    prev = r;
    return r;
  }
};

// The filter on rotations, in the tangent space at each frame: the neighbours q(t + k) are seen
// from q(t) as rotation vectors v_k = log(q(t)^-1 q(t + k)) (unwrapped outwards from k = 0), and
// the added rotation is delta(t) = -A * sum_k d2[k] v_k, applied as q*(t) = q(t) exp(delta(t)).
// Constant rotation and turning at a constant rate about any axis pass exactly (d2 sums to 0
// and is symmetric); about a fixed axis it is exactly the 1-D filter of the angle. No mean pose
// and no wrap-around: a joint that turns round and round is filtered like a slow one. The ends
// are extended along the mean angular velocity over the first / last round(sigma) frames.
std::vector<Vec3> added_rotation(std::span<const Quat> q, std::span<const double> sigma, double strength) {
  const int n = static_cast<int>(q.size());
  const double smax = *std::max_element(sigma.begin(), sigma.end());
  const int l = radius_for(smax) + 2;
  auto velocity = [&](int a, int b) -> Vec3 { return quat_log(q[a].conjugate() * q[b]) / static_cast<double>(b - a); };
  const int k0 = std::clamp(static_cast<int>(std::round(sigma.front())), 1, n - 1);
  const int k1 = std::clamp(static_cast<int>(std::round(sigma.back())), 1, n - 1);
  const Vec3 w0 = velocity(0, k0), w1 = velocity(n - 1 - k1, n - 1);
  std::vector<Quat> ext(static_cast<size_t>(n + 2 * l));
  for (int j = 0; j < l; ++j) ext[j] = q[0] * quat_exp(w0 * static_cast<double>(j - l));
  std::copy(q.begin(), q.end(), ext.begin() + l);
  for (int j = 0; j < l; ++j) ext[l + n + j] = q[n - 1] * quat_exp(w1 * static_cast<double>(j + 1));
  std::vector<Vec3> added(static_cast<size_t>(n));
  std::vector<double> g, d2;
  double cached = -1;
  for (int i = 0; i < n; ++i) {
    if (sigma[i] != cached) {
      second_derivative_kernel(sigma[i], g, d2);
      cached = sigma[i];
    }
    const int r = static_cast<int>(d2.size() / 2);
    const Quat inv = q[i].conjugate();
    Vec3 acc = Vec3::Zero();
    for (int side : {-1, 1}) {
      Vec3 prev = Vec3::Zero();
      for (int k = 1; k <= r; ++k) {
        Vec3 v = quat_log(inv * ext[i + l + side * k]);
        // Within pi of the previous tap no other representation is nearer (they are 2 pi apart).
        if ((v - prev).squaredNorm() >= kPi * kPi) v = unwrap_near(v, prev);
        acc += d2[r + side * k] * v;
        prev = v;
      }
    }
    added[i] = -strength * acc;
  }
  return added;
}

// Filters joint j's translation over one segment, bounds the added displacement by a share of the
// joint's own range of positions there, writes `out`. Returns the sigma per frame, or nothing
// when the joint does not move there.
std::vector<double> filter_translation(const Motion& motion, int j, const Segment& seg, double strength,
                                       const FilterSettings& filter, double share, std::vector<double>& data,
                                       Motion& out, detail::JointBound& bound) {
  const int n = seg.end - seg.begin;
  bool moves = false;
  for (int f = 0; f < n; ++f) {
    const Vec3 x = motion.translation(seg.begin + f, j);
    for (int c = 0; c < 3; ++c) data[static_cast<size_t>(f) * 3 + c] = x[c];
    moves = moves || (x - motion.translation(seg.begin, j)).cwiseAbs().maxCoeff() > 0;
  }
  if (!moves || strength == 0) return {};
  const std::vector<double> input(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n) * 3);
  std::vector<double> sigma = group_sigma(input, n, 3, filter);
  filter_group(data, n, 3, sigma, strength);
  std::vector<Vec3> added(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) {
    for (int c = 0; c < 3; ++c) added[f][c] = data[static_cast<size_t>(f) * 3 + c] - input[static_cast<size_t>(f) * 3 + c];
  }
  if (share > 0) {
    double mean_sigma = 0;
    for (double v : sigma) mean_sigma += v / n;
    detail::bound_added(input, added, share, mean_sigma, seg.begin, bound, false);
  }
  for (int f = 0; f < n; ++f) out.frame_translations(seg.begin + f)[j] = motion.translation(seg.begin + f, j) + added[f];
  return sigma;
}

// Filters joint j's rotation over one segment, bounds the added rotation, writes `out`.
// Returns the sigma per frame, or nothing when the joint does not move there.
std::vector<double> filter_rotation(const Motion& motion, int j, const Segment& seg, double strength,
                                    const FilterSettings& filter, double share, std::vector<double>& data,
                                    Motion& out, detail::JointBound& bound) {
  const int n = seg.end - seg.begin;
  LogMapTrack track{motion, j, sign_aligned_mean(motion, j, seg.begin, seg.end), seg.begin};
  bool moves = false;
  for (int f = 0; f < n; ++f) {
    const Vec3 x = track.load(seg.begin + f);
    for (int c = 0; c < 3; ++c) data[static_cast<size_t>(f) * 3 + c] = x[c];
    moves = moves || x.cwiseAbs().maxCoeff() > 1e-12;
  }
  if (!moves || strength == 0) return {};
  const std::span<const double> logmap(data.data(), static_cast<size_t>(n) * 3);
  std::vector<double> sigma = group_sigma(logmap, n, 3, filter);
  std::vector<Quat> q(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) q[f] = motion.rotation(seg.begin + f, j);
  make_sign_continuous(q);
  std::vector<Vec3> added = added_rotation(q, sigma, strength);
  if (share > 0) {
    double mean_sigma = 0;
    for (double v : sigma) mean_sigma += v / n;
    detail::bound_added(logmap, added, share, mean_sigma, seg.begin, bound, true);
  }
  for (int f = 0; f < n; ++f) {
    out.frame_rotations(seg.begin + f)[j] =
        align_sign((q[f] * quat_exp(added[f])).normalized(), motion.rotation(seg.begin + f, j));
  }
  return sigma;
}

// One point of a [frames x points] track; every sample must be finite.
struct PointTrack {
  std::span<const Vec3> in;
  std::span<Vec3> out;
  int points;
  int point;
  const std::string& name;
  Vec3 load(int f) const {
    const Vec3& x = in[static_cast<size_t>(f) * points + point];
    if (!x.allFinite()) throw Error(ErrorCode::bad_data, fmt::format("point {} frame {}", name, f), "not finite");
    return x;
  }
  void store(int f, const Vec3& x) { out[static_cast<size_t>(f) * points + point] = x; }
};

}  // namespace

CartoonResult cartoon_motion(const Motion& motion, const CartoonSettings& settings) {
  settings.validate();
  if (motion.frame_count < 3)
    throw Error(ErrorCode::bad_data, "motion",
                fmt::format("the cartoon filter needs at least 3 frames, got {}", motion.frame_count));
  motion.validate();
  const int n = motion.frame_count, jn = motion.joint_count();
  const Skeleton& sk = motion.skeleton;
  const FilterSettings filter = settings.filter_at(motion.frame_rate);
  const double a_global = filter.strength;
  auto part_of = [&](int j) { return body::body_part_of(sk.names[j]); };

  int squash_joint = 0;
  if (!settings.squash_joint.empty()) {
    squash_joint = sk.find(settings.squash_joint);
    if (squash_joint < 0)
      bad_setting("squash_joint", fmt::format("the skeleton has no joint named '{}'", settings.squash_joint));
  }

  CartoonResult res;
  res.motion = motion;
  res.frame_rate = motion.frame_rate;
  res.filter = filter;
  Motion& out = res.motion;
  SigmaStats stats;
  std::vector<double> data(static_cast<size_t>(n) * 3);

  const WorldPoses in_poses = forward_kinematics(motion);
  res.segments = find_segments(motion, in_poses, settings);
  res.root_sigma.assign(static_cast<size_t>(n), 0.0);
  std::vector<detail::JointBound> bounds(static_cast<size_t>(jn)), moved(static_cast<size_t>(jn));
  for (const Segment& seg : res.segments) {
    if (seg.end - seg.begin < 3) continue;  // a cut's own frames, or too short to filter: kept
    // Translations: the root always, other joints when animated.
    for (int j = 0; j < jn; ++j) {
      if (j != 0 && !sk.has_position_channels(j)) continue;
      const double a = a_global * settings.part_strength[static_cast<int>(j == 0 ? body::BodyPart::root : part_of(j))];
      const std::vector<double> sigma = filter_translation(motion, j, seg, a, filter, settings.bound_share, data, out,
                                                           moved[static_cast<size_t>(j)]);
      stats.add(sigma);
      if (j == 0) std::copy(sigma.begin(), sigma.end(), res.root_sigma.begin() + seg.begin);
    }
    // Rotations: unwrapped log map relative to the joint's mean rotation over the segment; the
    // added rotation bounded by a share of the joint's own range there.
    for (int j = 0; j < jn; ++j) {
      const double a = a_global * settings.part_strength[static_cast<int>(part_of(j))];
      if (a == 0) continue;
      stats.add(filter_rotation(motion, j, seg, a, filter, settings.bound_share, data, out,
                                bounds[static_cast<size_t>(j)]));
    }
  }
  for (int j = 0; j < jn; ++j) {
    if (!moved[static_cast<size_t>(j)].frames.empty())
      res.bounded.push_back(detail::bound_report(moved[static_cast<size_t>(j)], j, true));
    if (!bounds[static_cast<size_t>(j)].frames.empty())
      res.bounded.push_back(detail::bound_report(bounds[static_cast<size_t>(j)], j, false));
  }
  if (stats.count > 0) {
    res.sigma_min = stats.lo;
    res.sigma_max = stats.hi;
    res.sigma_mean = stats.sum / static_cast<double>(stats.count);
  }

  if (settings.keep_feet) detail::keep_feet(motion, in_poses, settings, out, res);

  const WorldPoses out_poses = forward_kinematics(out);
  double sum = 0;
  for (int f = 0; f < n; ++f) {
    for (int j = 0; j < jn; ++j) {
      const double d = (out_poses.position(f, j) - in_poses.position(f, j)).norm();
      sum += d;
      if (d > res.max_change_m) {
        res.max_change_m = d;
        res.max_change_joint = j;
        res.max_change_frame = f;
      }
    }
  }
  res.body_change_m = sum / (static_cast<double>(n) * jn);
  if (settings.keep_feet) {
    res.skating_input_mm = foot_skating_mm(motion, res.contacts);
    res.skating_output_mm = foot_skating_mm(out, res.contacts);
  }

  // Squash and stretch from a delayed, smoothed copy of the joint's filtered trajectory.
  if (settings.squash > 0) detail::squash_and_stretch(out_poses, squash_joint, settings, out, res);
  return res;
}

std::vector<Vec3> cartoon_points(std::span<const Vec3> positions, int frames, std::span<const std::string> names,
                                 double frame_rate, const CartoonSettings& settings) {
  const FilterSettings filter = settings.filter_at(frame_rate);
  if (frames < 3)
    throw Error(ErrorCode::bad_data, "points", fmt::format("the cartoon filter needs at least 3 frames, got {}", frames));
  const int pn = static_cast<int>(names.size());
  if (positions.size() != static_cast<size_t>(frames) * pn)
    throw Error(ErrorCode::mismatch, "points",
                fmt::format("{} positions for {} frames x {} points", positions.size(), frames, pn));
  std::vector<Vec3> out(positions.begin(), positions.end());
  std::vector<double> data(static_cast<size_t>(frames) * 3);
  for (int p = 0; p < pn; ++p) {
    const double a = filter.strength * settings.part_strength[static_cast<int>(body::body_part_of(names[p]))];
    PointTrack track{positions, out, pn, p, names[p]};
    filter_track(track, 0, frames, a, -1.0, filter, data);
  }
  return out;
}

double foot_skating_mm(const Motion& motion, const body::ContactReport& contacts) {
  const WorldPoses w = forward_kinematics(motion);
  double sum = 0;
  long count = 0;
  for (const auto& ec : contacts.effectors) {
    const int toe = ec.effector.points.back();
    for (const auto& c : ec.contacts) {
      for (int f = c.begin + 1; f < c.end; ++f) {
        const Vec3 d = w.position(f, toe) - w.position(f - 1, toe);
        sum += std::hypot(d.x(), d.z());
        ++count;
      }
    }
  }
  return count > 0 ? 1000.0 * sum / static_cast<double>(count) : 0.0;
}

}  // namespace koma::cartoon
