#include "koma/body/contacts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/body/lowpass.hpp"
#include "koma/core/blend.hpp"
#include "koma/core/error.hpp"
#include "koma/core/stats.hpp"

namespace koma::body {

namespace {

constexpr double kMinScore = -4.0;  // EffectorContacts::score's floor: far outside every threshold

[[noreturn]] void bad_setting(std::string field, std::string message) {
  throw Error(ErrorCode::invalid_settings, std::move(field), std::move(message));
}

}  // namespace

std::vector<Effector> foot_effectors(const JointRoles& roles) {
  std::vector<Effector> out;
  for (auto [name, ankle, toe] : {std::tuple{"left_foot", Role::left_ankle, Role::left_toe},
                                  std::tuple{"right_foot", Role::right_ankle, Role::right_toe}}) {
    if (!roles.has(ankle)) continue;
    Effector e{name, {roles[ankle]}};
    if (roles.has(toe)) e.points.push_back(roles[toe]);
    out.push_back(std::move(e));
  }
  return out;
}

void ContactSettings::validate() const {
  auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(cutoff_hz)) bad_setting("cutoff_hz", "must be finite (<= 0 disables smoothing)");
  if (!(height_fraction > 0 && height_fraction <= 1))
    bad_setting("height_fraction", fmt::format("{} must be in (0, 1]", height_fraction));
  if (!(min_height_band >= 0 && finite(min_height_band)))
    bad_setting("min_height_band", fmt::format("{} must be finite and >= 0 body sizes", min_height_band));
  if (!(release >= 1 && finite(release))) bad_setting("release", fmt::format("{} must be finite and >= 1", release));
  if (!(max_shift_gap >= 0 && finite(max_shift_gap)))
    bad_setting("max_shift_gap", fmt::format("{} must be finite and >= 0 seconds", max_shift_gap));
  if (!(same_place >= 0 && finite(same_place)))
    bad_setting("same_place", fmt::format("{} must be finite and >= 0 body sizes", same_place));
  if (!(speed_threshold > 0 && finite(speed_threshold)))
    bad_setting("speed_threshold", fmt::format("{} must be finite and > 0", speed_threshold));
  if (!(accel_threshold > 0 && finite(accel_threshold)))
    bad_setting("accel_threshold", fmt::format("{} must be finite and > 0", accel_threshold));
  if (!(min_duration >= 0 && finite(min_duration)))
    bad_setting("min_duration", fmt::format("{} must be finite and >= 0 seconds", min_duration));
  if (!(key_tolerance >= 0 && finite(key_tolerance)))
    bad_setting("key_tolerance", fmt::format("{} must be finite and >= 0 body sizes", key_tolerance));
  if (!(max_gap >= 0 && finite(max_gap)))
    bad_setting("max_gap", fmt::format("{} must be finite and >= 0 seconds", max_gap));
  if (!(calibration.slope > 0 && finite(calibration.slope)))
    bad_setting("calibration.slope", fmt::format("{} must be finite and > 0", calibration.slope));
  if (!finite(calibration.offset)) bad_setting("calibration.offset", "must be finite");
}

double ContactCalibration::probability(double score) const noexcept {
  return 1.0 / (1.0 + std::exp(-(slope * score + offset)));
}

const EffectorContacts* ContactReport::find(std::string_view name) const noexcept {
  for (const auto& e : effectors) {
    if (e.effector.name == name) return &e;
  }
  return nullptr;
}

int ContactReport::contact_count() const noexcept {
  int n = 0;
  for (const auto& e : effectors) n += static_cast<int>(e.contacts.size());
  return n;
}

ContactReport detect_contacts(const Motion& motion, std::span<const Effector> effectors,
                              const ContactSettings& settings) {
  settings.validate();
  if (motion.frame_count < 3)
    throw Error(ErrorCode::bad_data, "motion",
                fmt::format("contact detection needs at least 3 frames, got {}", motion.frame_count));
  return detect_contacts(motion, forward_kinematics(motion), effectors, settings);
}

ContactReport detect_contacts(const Motion& motion, const WorldPoses& poses, std::span<const Effector> effectors,
                              const ContactSettings& settings) {
  settings.validate();
  const int n = motion.frame_count;
  if (n < 3)
    throw Error(ErrorCode::bad_data, "motion", fmt::format("contact detection needs at least 3 frames, got {}", n));
  KOMA_ASSERT(poses.frame_count == n);
  for (const Effector& e : effectors) {
    if (e.points.empty()) bad_setting(fmt::format("effector {}", e.name), "has no points");
    for (int p : e.points) {
      if (p < 0 || p >= poses.point_count)
        bad_setting(fmt::format("effector {}", e.name),
                    fmt::format("point index {} is outside 0..{}", p, poses.point_count - 1));
    }
  }
  const double rate = motion.frame_rate;
  const double size = body_size(motion.skeleton);
  ContactReport report;
  report.speed_threshold = settings.speed_threshold * size;
  report.accel_threshold = settings.accel_threshold * size;
  report.smoothing_sigma_frames =
      settings.cutoff_hz > 0 ? std::sqrt(std::log(2.0)) / (2.0 * kPi * settings.cutoff_hz) * rate : 0.0;
  const int min_len = std::max(1, static_cast<int>(std::lround(settings.min_duration * rate)));
  const int max_gap = static_cast<int>(std::lround(settings.max_gap * rate));
  const double key_tolerance = settings.key_tolerance * size;

  std::vector<Vec3> raw(static_cast<size_t>(n));
  std::vector<double> heights(static_cast<size_t>(n));
  const double rel = settings.release;
  for (const Effector& e : effectors) {
    EffectorContacts ec;
    ec.effector = e;
    std::vector<double> margin(static_cast<size_t>(n), -1.0);  // < 0: not inside the thresholds
    ec.score.assign(static_cast<size_t>(n), kMinScore);
    std::vector<std::uint8_t> held(static_cast<size_t>(n), 0);  // inside release * thresholds
    std::vector<Vec3> centre(static_cast<size_t>(n), Vec3::Zero());
    for (int p : e.points) {
      for (int f = 0; f < n; ++f) raw[f] = poses.position(f, p);
      const std::vector<Vec3> x = lowpass_zero_phase(raw, rate, settings.cutoff_hz);
      for (int f = 0; f < n; ++f) heights[f] = x[f].y();
      const double lo = koma::quantile(heights, 0.05), hi = koma::quantile(heights, 0.95);
      const double band = std::max(settings.height_fraction * (hi - lo), settings.min_height_band * size);
      ec.height_band = std::max(ec.height_band, band);
      for (int f = 0; f < n; ++f) {
        centre[f] += x[f] / static_cast<double>(e.points.size());
        const int a = std::max(f - 1, 0), b = std::min(f + 1, n - 1);
        const double speed = (x[b] - x[a]).norm() / (b - a) * rate;
        const int c = std::clamp(f, 1, n - 2);
        const double accel = (x[c + 1] - 2 * x[c] + x[c - 1]).norm() * rate * rate;
        const double height = x[f].y() - lo;
        const double score = std::min(1.0 - speed / report.speed_threshold, 1.0 - std::max(height, 0.0) / std::max(band, 1e-12));
        ec.score[f] = std::max(ec.score[f], std::clamp(score, kMinScore, 1.0));
        if (height <= band && speed < report.speed_threshold && accel < report.accel_threshold) {
          const double m = std::min(1.0 - speed / report.speed_threshold, 1.0 - std::max(height, 0.0) / std::max(band, 1e-12));
          margin[f] = std::max(margin[f], std::clamp(m, 0.0, 1.0));
        }
        if (height <= rel * band && speed < rel * report.speed_threshold && accel < rel * report.accel_threshold)
          held[f] = 1;
      }
    }
    // Runs of held frames that hold at least one frame inside the thresholds (hysteresis); close
    // short gaps, drop short runs, then join contacts that stay in place (weight shifts).
    // A run must last min_duration inside the thresholds (first to last core frame, closed gaps
    // included): hysteresis lengthens contacts, it does not turn a brief dip into one.
    std::vector<std::pair<int, int>> runs, cores;
    for (int f = 0; f < n;) {
      if (!held[f] && margin[f] < 0) {
        ++f;
        continue;
      }
      int g = f, core_begin = -1, core_end = -1;
      for (; g < n && (held[g] || margin[g] >= 0); ++g) {
        if (margin[g] < 0) continue;
        if (core_begin < 0) core_begin = g;
        core_end = g + 1;
      }
      if (core_begin >= 0) {
        if (!runs.empty() && f - runs.back().second <= max_gap) {
          runs.back().second = g;
          cores.back().second = core_end;
        } else {
          runs.emplace_back(f, g);
          cores.emplace_back(core_begin, core_end);
        }
      }
      f = g;
    }
    for (size_t k = runs.size(); k-- > 0;) {
      if (cores[k].second - cores[k].first < min_len) runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (settings.max_shift_gap > 0 && runs.size() > 1) {
      auto place = [&](std::pair<int, int> r) {
        Vec3 s = Vec3::Zero();
        for (int f = r.first; f < r.second; ++f) s += centre[f];
        s /= static_cast<double>(r.second - r.first);
        return Vec3(s.x(), 0.0, s.z());
      };
      const int shift_gap = static_cast<int>(std::lround(settings.max_shift_gap * rate));
      std::vector<std::pair<int, int>> joined{runs.front()};
      for (size_t k = 1; k < runs.size(); ++k) {
        std::pair<int, int>& last = joined.back();
        if (runs[k].first - last.second <= shift_gap &&
            (place(runs[k]) - place(last)).norm() <= settings.same_place * size) {
          last.second = runs[k].second;
        } else {
          joined.push_back(runs[k]);
        }
      }
      runs = std::move(joined);
    }
    ec.probability.resize(static_cast<size_t>(n));
    for (int f = 0; f < n; ++f) ec.probability[f] = settings.calibration.probability(ec.score[f]);
    ec.in_contact.assign(static_cast<size_t>(n), 0);
    for (auto [b, end] : runs) {
      Contact c;
      c.begin = b;
      c.end = end;
      double psum = 0, wsum_mean = 0;
      for (int f = b; f < end; ++f) {
        // Planted frames weigh most: heel strike and heel off (the centre moving) pull the mean
        // off the planted position otherwise.
        const int a = std::max(f - 1, 0), z = std::min(f + 1, n - 1);
        const double speed = (centre[z] - centre[a]).norm() / std::max(z - a, 1) * rate;
        const double w = 1e-3 + std::clamp(1.0 - speed / report.speed_threshold, 0.0, 1.0);
        c.mean_position += w * centre[f];
        wsum_mean += w;
        psum += ec.probability[f];
        ec.in_contact[f] = 1;
      }
      c.mean_position /= wsum_mean;
      double nearest = 1e300;
      for (int f = b; f < end; ++f) nearest = std::min(nearest, (centre[f] - c.mean_position).norm());
      double wsum = 0, fsum = 0;
      for (int f = b; f < end; ++f) {
        const double x = key_tolerance > 0 ? ((centre[f] - c.mean_position).norm() - nearest) / key_tolerance : 0.0;
        const double w = key_tolerance > 0 ? std::exp(-x * x) : ((centre[f] - c.mean_position).norm() == nearest ? 1.0 : 0.0);
        wsum += w;
        fsum += w * f;
      }
      c.key_time = fsum / wsum;
      c.key_frame = std::clamp(static_cast<int>(std::lround(c.key_time)), b, end - 1);
      c.confidence = psum / c.length();
      ec.contacts.push_back(c);
    }
    report.effectors.push_back(std::move(ec));
  }
  return report;
}

ContactReport detect_foot_contacts(const Motion& motion, const ContactSettings& settings) {
  const std::vector<Effector> feet = foot_effectors(find_joint_roles(motion.skeleton));
  if (feet.empty())
    throw Error(ErrorCode::bad_data, "skeleton",
                "no foot found: no joint named like foot/ankle with a left/right side; assign roles "
                "left_ankle/right_ankle explicitly");
  return detect_contacts(motion, feet, settings);
}

ContactCalibration fit_contact_calibration(std::span<const double> scores, std::span<const std::uint8_t> labels) {
  if (scores.size() != labels.size())
    throw Error(ErrorCode::bad_data, "calibration",
                fmt::format("{} scores but {} labels", scores.size(), labels.size()));
  if (scores.size() < 10)
    throw Error(ErrorCode::bad_data, "calibration", fmt::format("needs at least 10 labelled frames, got {}", scores.size()));
  size_t positive = 0;
  for (size_t k = 0; k < scores.size(); ++k) {
    if (!std::isfinite(scores[k])) throw Error(ErrorCode::bad_data, "calibration", fmt::format("score {} is not finite", k));
    positive += labels[k] != 0;
  }
  if (positive == 0 || positive == scores.size())
    throw Error(ErrorCode::bad_data, "calibration", "the labels are all of one class: a fit needs both");
  // Newton's method on the penalised log-likelihood of p = sigma(w0 + w1 s): gradient g, Hessian H.
  constexpr double kRidge = 1e-3;
  double w0 = 0.0, w1 = 1.0;
  for (int it = 0; it < 100; ++it) {
    double g0 = -kRidge * w0, g1 = -kRidge * w1, h00 = kRidge, h01 = 0.0, h11 = kRidge;
    for (size_t k = 0; k < scores.size(); ++k) {
      const double s = scores[k], p = 1.0 / (1.0 + std::exp(-(w0 + w1 * s))), r = (labels[k] ? 1.0 : 0.0) - p;
      const double v = std::max(p * (1.0 - p), 1e-12);
      g0 += r;
      g1 += r * s;
      h00 += v;
      h01 += v * s;
      h11 += v * s * s;
    }
    const double det = h00 * h11 - h01 * h01;
    const double d0 = (h11 * g0 - h01 * g1) / det, d1 = (h00 * g1 - h01 * g0) / det;
    w0 += d0;
    w1 += d1;
    if (std::abs(d0) + std::abs(d1) < 1e-10) break;
  }
  if (!(w1 > 0))
    throw Error(ErrorCode::bad_data, "calibration",
                fmt::format("the fitted slope {} is not positive: the labels do not rise with the score", w1));
  return {w1, w0};
}

double expected_calibration_error(std::span<const double> probabilities, std::span<const std::uint8_t> labels, int bins) {
  KOMA_ASSERT(bins >= 1 && probabilities.size() == labels.size());
  if (probabilities.empty()) return 0.0;
  std::vector<double> p_sum(static_cast<size_t>(bins), 0.0), y_sum(static_cast<size_t>(bins), 0.0);
  std::vector<int> count(static_cast<size_t>(bins), 0);
  for (size_t k = 0; k < probabilities.size(); ++k) {
    const int b = std::clamp(static_cast<int>(probabilities[k] * bins), 0, bins - 1);
    p_sum[b] += probabilities[k];
    y_sum[b] += labels[k] ? 1.0 : 0.0;
    ++count[b];
  }
  double ece = 0.0;
  for (int b = 0; b < bins; ++b)
    if (count[b] > 0) ece += std::abs(p_sum[b] - y_sum[b]);  // = count * |mean p - share of 1|
  return ece / static_cast<double>(probabilities.size());
}

std::vector<int> frames_to_contact(std::span<const std::uint8_t> in_contact) {
  const int n = static_cast<int>(in_contact.size());
  std::vector<int> dist(static_cast<size_t>(n), kNoContactNearby);
  // Two passes: distance to the last contact frame before, then to the next one after.
  for (int k = 0; k < n; ++k) {
    if (in_contact[k]) dist[k] = 0;
    else if (k > 0) dist[k] = std::min(dist[k - 1] + 1, kNoContactNearby);
  }
  for (int k = n - 2; k >= 0; --k) dist[k] = std::min(dist[k], dist[k + 1] + 1);
  return dist;
}

std::vector<double> contact_fade(std::span<const std::uint8_t> in_contact, double fade_frames) {
  KOMA_ASSERT(fade_frames > 0);
  const std::vector<int> dist = frames_to_contact(in_contact);
  std::vector<double> weight(dist.size());
  for (size_t k = 0; k < dist.size(); ++k) weight[k] = smoothstep(1.0 - dist[k] / fade_frames);
  return weight;
}

double body_size(const Skeleton& skeleton) {
  const double size = skeleton.rest_extent();
  return size > 1e-6 ? size : 1.7;  // metres: a figure with no extent (one joint) is taken as human
}

}  // namespace koma::body
