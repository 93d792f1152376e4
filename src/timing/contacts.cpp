#include "koma/timing/contacts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "koma/core/error.hpp"

namespace koma::timing {

namespace {

constexpr std::array<std::string_view, kRoleCount> kRoleNames = {
    "hips",           "spine",       "neck",      "head",           "left_shoulder", "left_elbow",
    "left_hand",      "right_shoulder", "right_elbow", "right_hand", "left_hip",      "left_knee",
    "left_ankle",     "left_toe",    "right_hip", "right_knee",     "right_ankle",   "right_toe"};

// The name without any namespace prefix ("mixamorig:LeftFoot" -> "LeftFoot").
std::string_view strip_namespace(std::string_view name) noexcept {
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::string& s, std::string_view word) { return s.find(word) != std::string::npos; }

bool is_finger(const std::string& n) {
  for (std::string_view w : {"thumb", "index", "middle", "ring", "pinky", "finger", "carpal"})
    if (contains(n, w)) return true;
  return false;
}

std::vector<int> depths(const Skeleton& s) {
  std::vector<int> d(static_cast<size_t>(s.joint_count()), 0);
  for (int j = 1; j < s.joint_count(); ++j) d[j] = s.parents[j] >= 0 ? d[s.parents[j]] + 1 : 0;
  return d;
}

// The shallowest joint whose lower-case name satisfies `pred` and whose side is `side`.
template <class Pred>
int shallowest(const Skeleton& s, const std::vector<int>& depth, int side, Pred pred) {
  int best = -1;
  for (int j = 0; j < s.joint_count(); ++j) {
    const std::string n = lower(strip_namespace(s.names[j]));
    if (name_side(s.names[j]) != side || !pred(n)) continue;
    if (best < 0 || depth[j] < depth[best]) best = j;
  }
  return best;
}

// Parent of `j`, skipping twist/roll helper joints.
int parent_skipping_helpers(const Skeleton& s, int j) {
  int p = j >= 0 ? s.parents[j] : -1;
  while (p >= 0) {
    const std::string n = lower(strip_namespace(s.names[p]));
    if (!contains(n, "twist") && !contains(n, "roll")) break;
    p = s.parents[p];
  }
  return p;
}

[[noreturn]] void bad_setting(std::string field, std::string message) {
  throw Error(ErrorCode::invalid_settings, std::move(field), std::move(message));
}

}  // namespace

std::string_view role_name(Role role) noexcept { return kRoleNames[static_cast<int>(role)]; }

std::array<std::string_view, kRoleCount> role_names() noexcept { return kRoleNames; }

Role parse_role(std::string_view name) {
  for (int r = 0; r < kRoleCount; ++r) {
    if (kRoleNames[r] == name) return static_cast<Role>(r);
  }
  throw Error(ErrorCode::invalid_settings, fmt::format("role {}", name),
              fmt::format("unknown role; valid roles are {}", fmt::join(kRoleNames, ", ")));
}

int name_side(std::string_view name) noexcept {
  const std::string_view base = strip_namespace(name);
  if (base.empty()) return 0;
  std::string n;
  n.reserve(base.size());
  for (char c : base) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.rfind("left", 0) == 0) return -1;
  if (n.rfind("right", 0) == 0) return 1;
  if (base.size() >= 2) {
    const char last = n.back(), sep = n[n.size() - 2];
    if (sep == '_' || sep == '.' || sep == '-' || sep == ' ') {
      if (last == 'l') return -1;
      if (last == 'r') return 1;
    }
    const char first = n[0], second = base[1];
    // "lFoot", "LHipJoint", "rShldr": a side letter followed by a capital.
    if (std::isupper(static_cast<unsigned char>(second)) || second == '_' || second == '.') {
      if (first == 'l') return -1;
      if (first == 'r') return 1;
    }
  }
  if (contains(n, "left")) return -1;
  if (contains(n, "right")) return 1;
  return 0;
}

JointRoles find_joint_roles(const Skeleton& s) {
  JointRoles roles;
  if (s.joint_count() == 0) return roles;
  const std::vector<int> depth = depths(s);

  int hips = shallowest(s, depth, 0, [](const std::string& n) {
    return n == "hips" || n == "hip" || n == "pelvis" || n == "joint_hips";
  });
  if (hips < 0) hips = 0;
  roles.set(Role::hips, hips);

  const int head = shallowest(s, depth, 0, [](const std::string& n) {
    return contains(n, "head") && !contains(n, "top") && !contains(n, "end");
  });
  roles.set(Role::head, head);
  roles.set(Role::neck, shallowest(s, depth, 0, [](const std::string& n) { return contains(n, "neck"); }));
  // Spine: the head's ancestor whose parent is the hips.
  for (int j = head; j >= 0; j = s.parents[j]) {
    if (s.parents[j] == hips) {
      roles.set(Role::spine, j);
      break;
    }
  }

  struct Limb {
    int side;
    Role hand, elbow, shoulder, ankle, knee, hip, toe;
  };
  for (const Limb& l : {Limb{-1, Role::left_hand, Role::left_elbow, Role::left_shoulder, Role::left_ankle,
                             Role::left_knee, Role::left_hip, Role::left_toe},
                        Limb{1, Role::right_hand, Role::right_elbow, Role::right_shoulder, Role::right_ankle,
                             Role::right_knee, Role::right_hip, Role::right_toe}}) {
    const int hand = shallowest(s, depth, l.side, [](const std::string& n) {
      return (contains(n, "hand") || contains(n, "wrist")) && !is_finger(n);
    });
    if (hand >= 0) {
      roles.set(l.hand, hand);
      const int elbow = parent_skipping_helpers(s, hand);
      roles.set(l.elbow, elbow);
      roles.set(l.shoulder, parent_skipping_helpers(s, elbow));
    }
    const int ankle = shallowest(s, depth, l.side, [](const std::string& n) {
      return (contains(n, "foot") || contains(n, "ankle")) && !contains(n, "toe");
    });
    if (ankle < 0) continue;
    roles.set(l.ankle, ankle);
    const int knee = parent_skipping_helpers(s, ankle);
    roles.set(l.knee, knee);
    roles.set(l.hip, parent_skipping_helpers(s, knee));
    int toe = -1;
    for (int j = ankle + 1; j < s.joint_count(); ++j) {
      if (s.parents[j] != ankle) continue;
      const bool toe_named = contains(lower(strip_namespace(s.names[j])), "toe");
      if (toe < 0 || (toe_named && !contains(lower(strip_namespace(s.names[toe])), "toe"))) toe = j;
    }
    if (toe < 0) {
      for (int e = 0; e < s.end_site_count(); ++e) {
        if (s.end_sites[e].parent == ankle) {
          toe = s.joint_count() + e;
          break;
        }
      }
    }
    roles.set(l.toe, toe);
  }
  return roles;
}

void assign_role(JointRoles& roles, const Skeleton& skeleton, std::string_view role, std::string_view joint_name) {
  const Role r = parse_role(role);
  const bool point_role = r == Role::left_toe || r == Role::right_toe;
  const int count = point_role ? skeleton.point_count() : skeleton.joint_count();
  for (int p = 0; p < count; ++p) {
    if (skeleton.point_name(p) == joint_name) {
      roles.set(r, p);
      return;
    }
  }
  throw Error(ErrorCode::mismatch, fmt::format("role {}", role),
              fmt::format("the skeleton has no {} named '{}'", point_role ? "joint or end site" : "joint",
                          joint_name));
}

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
    bad_setting("min_height_band", fmt::format("{} must be finite and >= 0 metres", min_height_band));
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

std::vector<Vec3> lowpass_zero_phase(std::span<const Vec3> track, double frame_rate, double cutoff_hz) {
  std::vector<Vec3> out(track.begin(), track.end());
  const int n = static_cast<int>(track.size());
  if (!(cutoff_hz > 0) || !(frame_rate > 0) || n < 2) return out;
  const double sigma = std::sqrt(std::log(2.0)) / (2.0 * kPi * cutoff_hz) * frame_rate;
  const int radius = static_cast<int>(std::ceil(3.0 * sigma));
  if (sigma < 0.25 || radius < 1) return out;
  std::vector<double> w(static_cast<size_t>(2 * radius + 1));
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) sum += w[k + radius] = std::exp(-0.5 * k * k / (sigma * sigma));
  for (double& v : w) v /= sum;
  // Linear extension past both ends with the end differences, so a ramp is a fixed point.
  const Vec3 d0 = track[1] - track[0], d1 = track[n - 1] - track[n - 2];
  auto at = [&](int i) -> Vec3 {
    if (i < 0) return track[0] + i * d0;
    if (i >= n) return track[n - 1] + (i - n + 1) * d1;
    return track[i];
  };
  for (int i = 0; i < n; ++i) {
    Vec3 acc = Vec3::Zero();
    for (int k = -radius; k <= radius; ++k) acc += w[k + radius] * at(i + k);
    out[i] = acc;
  }
  return out;
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
  double size = motion.skeleton.rest_extent();
  if (!(size > 1e-6)) size = 1.7;
  ContactReport report;
  report.speed_threshold = settings.speed_threshold * size;
  report.accel_threshold = settings.accel_threshold * size;
  report.smoothing_sigma_frames =
      settings.cutoff_hz > 0 ? std::sqrt(std::log(2.0)) / (2.0 * kPi * settings.cutoff_hz) * rate : 0.0;
  const int min_len = std::max(1, static_cast<int>(std::lround(settings.min_duration * rate)));
  const int max_gap = static_cast<int>(std::lround(settings.max_gap * rate));
  const double key_tolerance = settings.key_tolerance * size;

  std::vector<Vec3> raw(static_cast<size_t>(n));
  for (const Effector& e : effectors) {
    EffectorContacts ec;
    ec.effector = e;
    std::vector<double> margin(static_cast<size_t>(n), -1.0);  // < 0: not in contact
    std::vector<Vec3> centre(static_cast<size_t>(n), Vec3::Zero());
    for (int p : e.points) {
      for (int f = 0; f < n; ++f) raw[f] = poses.position(f, p);
      const std::vector<Vec3> x = lowpass_zero_phase(raw, rate, settings.cutoff_hz);
      double lo = x[0].y(), hi = x[0].y();
      for (const Vec3& v : x) {
        lo = std::min(lo, v.y());
        hi = std::max(hi, v.y());
      }
      const double band = std::max(settings.height_fraction * (hi - lo), settings.min_height_band);
      ec.height_band = std::max(ec.height_band, band);
      for (int f = 0; f < n; ++f) {
        centre[f] += x[f] / static_cast<double>(e.points.size());
        const int a = std::max(f - 1, 0), b = std::min(f + 1, n - 1);
        const double speed = (x[b] - x[a]).norm() / (b - a) * rate;
        const int c = std::clamp(f, 1, n - 2);
        const double accel = (x[c + 1] - 2 * x[c] + x[c - 1]).norm() * rate * rate;
        const double height = x[f].y() - lo;
        if (height <= band && speed < report.speed_threshold && accel < report.accel_threshold) {
          const double m = std::min(1.0 - speed / report.speed_threshold, 1.0 - height / std::max(band, 1e-12));
          margin[f] = std::max(margin[f], std::clamp(m, 0.0, 1.0));
        }
      }
    }
    // Runs of contact frames; close short gaps, drop short runs.
    std::vector<std::pair<int, int>> runs;
    for (int f = 0; f < n;) {
      if (margin[f] < 0) {
        ++f;
        continue;
      }
      int g = f;
      while (g < n && margin[g] >= 0) ++g;
      if (!runs.empty() && f - runs.back().second <= max_gap) runs.back().second = g;
      else runs.emplace_back(f, g);
      f = g;
    }
    ec.in_contact.assign(static_cast<size_t>(n), 0);
    for (auto [b, end] : runs) {
      if (end - b < min_len) continue;
      Contact c;
      c.begin = b;
      c.end = end;
      double msum = 0, wsum_mean = 0;
      for (int f = b; f < end; ++f) {
        // Planted frames weigh most: heel strike and heel off (the centre moving) pull the mean
        // off the planted position otherwise.
        const int a = std::max(f - 1, 0), z = std::min(f + 1, n - 1);
        const double speed = (centre[z] - centre[a]).norm() / std::max(z - a, 1) * rate;
        const double w = 1e-3 + std::clamp(1.0 - speed / report.speed_threshold, 0.0, 1.0);
        c.mean_position += w * centre[f];
        wsum_mean += w;
        msum += std::max(margin[f], 0.0);  // frames of a closed gap count as margin 0
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
      c.confidence = msum / c.length() * std::min(1.0, c.length() / (0.2 * rate));
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

}  // namespace koma::timing
