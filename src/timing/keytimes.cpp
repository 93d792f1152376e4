#include "koma/timing/keytimes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/body/lowpass.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/stats.hpp"
#include "koma/timing/source.hpp"

namespace koma::timing {

std::string_view to_string(KeyKind kind) noexcept { return kKeyKindNames.name(kind); }



void KeyTimeSettings::validate() const {
  contact.validate();
  auto bad = [](const char* field, const std::string& msg) {
    throw Error(ErrorCode::invalid_settings, field, msg);
  };
  for (const auto& [h, s] : fallbacks) {
    if (!(h > 0 && h <= 1)) bad("fallbacks", fmt::format("height fraction {} must be in (0, 1]", h));
    if (!(s > 0 && std::isfinite(s))) bad("fallbacks", fmt::format("speed threshold {} must be > 0", s));
  }
  if (!(accel_cutoff_hz >= 0 && std::isfinite(accel_cutoff_hz)))
    bad("accel_cutoff_hz", fmt::format("{} must be >= 0", accel_cutoff_hz));
  if (!(min_separation >= 0 && std::isfinite(min_separation)))
    bad("min_separation", fmt::format("{} must be >= 0 s", min_separation));
  if (!(min_prominence >= 0 && min_prominence < 1))
    bad("min_prominence", fmt::format("{} must be in [0, 1)", min_prominence));
  if (!(still_speed >= 0 && std::isfinite(still_speed)))
    bad("still_speed", fmt::format("{} must be finite and >= 0 body sizes/s", still_speed));
  extremes.validate();
  beat.validate();
}

const EffectorKeyTimes* KeyTimeReport::find(std::string_view name) const noexcept {
  for (const auto& e : effectors)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<KeyTime> acceleration_minima(std::span<const Vec3> track, double frame_rate, double cutoff_hz,
                                         double min_separation, double min_prominence) {
  const int n = static_cast<int>(track.size());
  std::vector<KeyTime> out;
  if (n < 5) return out;
  const std::vector<Vec3> x = body::lowpass_zero_phase(track, frame_rate, cutoff_hz);
  std::vector<double> a(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) {
    const int c = std::clamp(f, 1, n - 2);
    a[f] = (x[c + 1] - 2 * x[c] + x[c - 1]).norm() * frame_rate * frame_rate;
  }
  const double range = quantile(a, 0.95) - quantile(a, 0.05);
  if (!(range > 1e-6)) return out;  // m/s^2: constant acceleration (a line, a parabola)
  // Strict local minima (plateaus: their first frame), with prominence against the highest values
  // reached before a lower minimum on each side (the topographic definition).
  for (int f = 1; f < n - 1; ++f) {
    if (!(a[f] < a[f - 1] && a[f] <= a[f + 1])) continue;
    double left = a[f], right = a[f];
    for (int g = f - 1; g >= 0 && a[g] >= a[f]; --g) left = std::max(left, a[g]);
    for (int g = f + 1; g < n && a[g] >= a[f]; ++g) right = std::max(right, a[g]);
    const double prominence = std::min(left, right) - a[f];
    if (prominence < min_prominence * range) continue;
    out.push_back({f, f, f + 1, std::min(1.0, prominence / range)});
  }
  // Merge minima closer than min_separation, keeping the deeper one.
  const double sep = min_separation * frame_rate;
  std::vector<KeyTime> merged;
  for (const KeyTime& k : out) {
    if (!merged.empty() && k.frame - merged.back().frame < sep) {
      if (a[k.frame] < a[merged.back().frame]) merged.back() = k;
    } else {
      merged.push_back(k);
    }
  }
  return merged;
}

KeyTimeReport detect_key_times(const Motion& motion, const body::JointRoles& roles, const KeyTimeSettings& settings) {
  settings.validate();
  if (motion.frame_count < 3) {
    throw Error(ErrorCode::bad_data, "motion",
                fmt::format("{} frame(s): key times need at least 3 frames", motion.frame_count));
  }
  return detect_key_times(motion, forward_kinematics(motion), roles, settings);
}

KeyTimeReport detect_key_times(const Motion& motion, const WorldPoses& poses, const body::JointRoles& roles,
                               const KeyTimeSettings& settings) {
  settings.validate();
  if (motion.frame_count < 3) {
    throw Error(ErrorCode::bad_data, "motion",
                fmt::format("{} frame(s): key times need at least 3 frames", motion.frame_count));
  }
  const std::vector<body::Effector> feet = body::foot_effectors(roles);
  if (feet.empty()) {
    throw Error(ErrorCode::bad_data, "skeleton",
                "no foot joint found by name (left_ankle / right_ankle roles); name them in the `roles` setting");
  }
  KOMA_ASSERT(poses.frame_count == motion.frame_count);
  KeyTimeReport report;

  // Contacts: the given thresholds, then the looser fallbacks until something is found.
  std::vector<body::ContactSettings> ladder{settings.contact};
  for (const auto& [h, s] : settings.fallbacks) {
    body::ContactSettings c = settings.contact;
    c.height_fraction = h;
    c.speed_threshold = s;
    ladder.push_back(c);
  }
  for (const body::ContactSettings& c : ladder) {
    report.contacts = body::detect_contacts(motion, poses, feet, c);
    report.attempts.push_back({c.height_fraction, c.speed_threshold, report.contacts.contact_count()});
    if (report.contacts.contact_count() > 0) break;
  }
  if (report.contacts.contact_count() == 0 && settings.require_contacts) {
    std::string tried;
    for (const ContactAttempt& t : report.attempts) {
      tried += fmt::format("{}height_fraction {} / speed_threshold {} body sizes/s", tried.empty() ? "" : "; ",
                           t.height_fraction, t.speed_threshold);
    }
    throw Error(ErrorCode::bad_data, "foot contacts",
                fmt::format("no foot contact found (accel_threshold {} body sizes/s^2, min_duration {} s); "
                            "thresholds tried: {}",
                            settings.contact.accel_threshold, settings.contact.min_duration, tried));
  }
  for (const body::EffectorContacts& ec : report.contacts.effectors) {
    EffectorKeyTimes e;
    e.name = ec.effector.name;
    e.kind = KeyKind::contact;
    e.points = ec.effector.points;
    for (const body::Contact& c : ec.contacts) e.keys.push_back({c.key_frame, c.begin, c.end, c.confidence});
    report.effectors.push_back(std::move(e));
  }

  const double size = body::body_size(motion.skeleton);
  if (settings.hands_and_head) {
    const std::pair<const char*, body::Role> others[] = {
        {"left_hand", body::Role::left_hand}, {"right_hand", body::Role::right_hand}, {"head", body::Role::head}};
    const int hips = path_point(roles);
    std::vector<Vec3> track(static_cast<size_t>(motion.frame_count)), rel(track.size());
    std::vector<double> speed(track.size());
    for (const auto& [name, role] : others) {
      if (!roles.has(role)) continue;
      const int p = roles[role];
      for (int f = 0; f < motion.frame_count; ++f) {
        track[f] = poses.position(f, p);
        rel[f] = track[f] - poses.position(f, hips);
      }
      EffectorKeyTimes e;
      e.name = name;
      e.kind = KeyKind::accel_min;
      e.points = {p};
      const std::vector<Vec3> smooth = body::lowpass_zero_phase(rel, motion.frame_rate, settings.extremes.cutoff_hz);
      for (int f = 0; f < motion.frame_count; ++f) {
        const int a = std::max(f - 1, 0), b = std::min(f + 1, motion.frame_count - 1);
        speed[f] = (smooth[b] - smooth[a]).norm() / (b - a) * motion.frame_rate / size;
      }
      e.still = quantile(speed, 0.9) < settings.still_speed;
      if (!e.still) {
        e.keys = acceleration_minima(track, motion.frame_rate, settings.accel_cutoff_hz, settings.min_separation,
                                     settings.min_prominence);
        for (const body::Reversal& r : body::direction_reversals(rel, motion.frame_rate, size, settings.extremes))
          e.extremes.push_back({r.frame, r.frame, r.frame + 1, r.sharpness});
        if (e.keys.empty() && e.extremes.empty())
          e.note = fmt::format(
              "moves ({:.2f} body sizes/s at the 90th percentile) but neither slows to an acceleration minimum nor "
              "turns back relative to the hips in {:.2f} s: a drift, no key",
              quantile(speed, 0.9), motion.frame_count / motion.frame_rate);
      }
      report.effectors.push_back(std::move(e));
    }
  }

  // The beat of the touch-downs (or, with too few, of every other key).
  std::vector<double> times;
  for (const EffectorKeyTimes& e : report.effectors)
    if (e.kind == KeyKind::contact)
      for (const KeyTime& k : e.keys)
        if (k.begin > 0) times.push_back(k.begin / motion.frame_rate);
  if (times.size() < 3) {
    times.clear();
    for (const EffectorKeyTimes& e : report.effectors) {
      if (e.kind == KeyKind::contact) continue;
      for (const KeyTime& k : e.keys) times.push_back(k.frame / motion.frame_rate);
      for (const KeyTime& k : e.extremes) times.push_back(k.frame / motion.frame_rate);
    }
  }
  report.beat = fit_beat(times, {}, settings.beat);
  return report;
}

std::vector<StepKey> step_keys(const KeyTimeReport& report, int min_gap_frames) {
  std::vector<StepKey> keys;
  for (const EffectorKeyTimes& e : report.effectors) {
    if (e.kind != KeyKind::contact) continue;
    for (const KeyTime& k : e.keys) keys.push_back({k.frame, e.name, k.confidence, k.begin, k.end});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const StepKey& a, const StepKey& b) { return a.frame < b.frame; });
  std::vector<StepKey> merged;
  for (const StepKey& k : keys) {
    if (!merged.empty() && k.frame - merged.back().frame < min_gap_frames) {
      if (k.confidence > merged.back().confidence) merged.back() = k;
    } else {
      merged.push_back(k);
    }
  }
  return merged;
}

std::vector<StepKey> full_steps(std::span<const StepKey> keys, int frame_count, int max_split_gap_frames) {
  std::vector<StepKey> merged;
  for (const StepKey& k : keys) {
    if (!merged.empty() && merged.back().foot == k.foot && k.begin - merged.back().end <= max_split_gap_frames) {
      StepKey& m = merged.back();
      const int begin = m.begin;
      if (k.end - k.begin > m.end - m.begin) m = k;
      m.begin = begin;
      m.end = k.end;
      continue;
    }
    merged.push_back(k);
  }
  std::vector<StepKey> out;
  for (const StepKey& k : merged)
    if (k.full(frame_count)) out.push_back(k);
  if (out.size() < 2) out = std::move(merged);
  return out;
}

}  // namespace koma::timing
