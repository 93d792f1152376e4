// Adverbs applied to a take (see include/koma/gait/apply.hpp).
#include "koma/gait/apply.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>

#include "koma/body/contacts.hpp"
#include "koma/body/leg_ik.hpp"
#include "koma/body/parts.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"

namespace koma::gait {

std::string_view to_string(PhaseSource source) noexcept {
  switch (source) {
    case PhaseSource::contacts: return "contacts";
    case PhaseSource::period: return "period";
    case PhaseSource::fixed: return "fixed";
  }
  return "contacts";
}

void ApplySettings::validate() const {
  cycle.validate();
  auto bad = [](const char* field, std::string msg) { throw Error(ErrorCode::invalid_settings, field, std::move(msg)); };
  if (!(fixed_period == 0 || (fixed_period > 0 && std::isfinite(fixed_period))))
    bad("fixed_period", fmt::format("{} s must be 0 (detect the gait) or finite and > 0", fixed_period));
  if (!(stride > 0 && stride <= 10)) bad("stride", fmt::format("{} must be in (0, 10]", stride));
  if (!(blend_seconds > 0 && blend_seconds <= 100)) bad("blend_seconds", fmt::format("{} s must be in (0, 100]", blend_seconds));
}

namespace {

// Touch-downs (contact starts after frame 0) of one foot, a touch-down closer than min_gap frames to
// the previous one dropped (a contact split in two).
std::vector<int> touch_downs(const body::EffectorContacts& foot, double min_gap) {
  std::vector<int> d;
  for (const body::Contact& c : foot.contacts) {
    if (c.begin == 0) continue;
    if (!d.empty() && c.begin - d.back() < min_gap) continue;
    d.push_back(c.begin);
  }
  return d;
}

// Horizontal distance the root travels between two frames.
double travel(const WorldPoses& w, int root, int a, int b) {
  const Vec3 d = w.position(b, root) - w.position(a, root);
  return std::hypot(d.x(), d.z());
}

// The phase from touch-downs `d` of one foot: 2 pi per cycle between touch-downs (an interval of
// about n median intervals counts n cycles: a missed contact), extrapolated at the nearest
// interval's rate before the first and after the last. Steady cycles (one median interval within
// -33 / +50 %, in the period range, travelling at least a third of the median travel, so stepping
// on the spot is not a gait) go into `steady`. Returns the median interval, frames.
double contact_phase(const std::vector<int>& d, const WorldPoses& w, int root, double lo, double hi, TakePhase& out,
                     std::vector<std::uint8_t>& steady) {
  const int n = static_cast<int>(out.phase.size());
  std::vector<double> len, dist;
  for (size_t i = 1; i < d.size(); ++i) len.push_back(d[i] - d[i - 1]);
  std::vector<double> sorted = len;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  for (size_t i = 1; i < d.size(); ++i) dist.push_back(travel(w, root, d[i - 1], d[i]));
  std::vector<double> sd = dist;
  std::nth_element(sd.begin(), sd.begin() + static_cast<std::ptrdiff_t>(sd.size() / 2), sd.end());
  const double median_travel = sd[sd.size() / 2];
  std::vector<double> knot_phase(d.size(), 0.0);
  for (size_t i = 1; i < d.size(); ++i) {
    const double cycles = std::max(1.0, std::round(len[i - 1] / median));
    knot_phase[i] = knot_phase[i - 1] + 2 * kPi * cycles;
    const double r = len[i - 1] / median;
    if (cycles == 1.0 && r >= 0.67 && r <= 1.5 && len[i - 1] >= lo && len[i - 1] <= hi &&
        dist[i - 1] >= median_travel / 3) {
      for (int f = d[i - 1]; f < d[i]; ++f) steady[f] = 1;
      ++out.cycles;
    }
  }
  size_t k = 0;
  for (int f = 0; f < n; ++f) {
    while (k + 2 < d.size() && f >= d[k + 1]) ++k;  // interval [d[k], d[k+1]] holds f, or is the nearest
    const double rate = (knot_phase[k + 1] - knot_phase[k]) / (d[k + 1] - d[k]);
    out.phase[f] = knot_phase[k] + rate * (f - d[k]);
  }
  return median;
}

// Error for a take without a detectable gait, from the period search's own message.
[[noreturn]] void no_gait(const Error& e) {
  throw Error(ErrorCode::bad_data, "period",
              fmt::format("no detectable gait in the take: {}; set `fixed_period` (seconds per cycle) to apply the "
                          "adverbs at a fixed period anyway",
                          e.message()));
}

// The take's roles: the settings' (checked against its skeleton) or found by name.
body::JointRoles take_roles(const Motion& take, const ApplySettings& s) {
  if (!s.roles) return body::find_joint_roles(take.skeleton);
  const int nj = take.joint_count(), np = take.skeleton.point_count();
  for (int r = 0; r < body::kRoleCount; ++r) {
    const auto role = static_cast<body::Role>(r);
    const int i = (*s.roles)[role];
    const bool toe = role == body::Role::left_toe || role == body::Role::right_toe;
    if (i < -1 || i >= (toe ? np : nj))
      throw Error(ErrorCode::invalid_settings, "roles",
                  fmt::format("{} = {} is not a {} of the take (-1 or 0..{})", body::role_name(role), i,
                              toe ? "point" : "joint", (toe ? np : nj) - 1));
  }
  return *s.roles;
}

}  // namespace

TakePhase track_phase(const Motion& take, const ApplySettings& settings) {
  settings.validate();
  take.validate();
  const int n = take.frame_count;
  const double rate = take.frame_rate;
  TakePhase out;
  out.phase.assign(n, 0.0);
  if (settings.fixed_period > 0) {
    out.source = PhaseSource::fixed;
    out.period = settings.fixed_period;
    out.confidence = 1;
    out.cycles = static_cast<int>(std::floor((n - 1) / (settings.fixed_period * rate)));
    for (int f = 0; f < n; ++f) out.phase[f] = 2 * kPi * f / (settings.fixed_period * rate);
    out.weight.assign(n, 1.0);
    return out;
  }
  // The foot with the most touch-downs sets the phase.
  std::vector<int> best;
  const double lo = settings.cycle.min_period * rate, hi = settings.cycle.max_period * rate;
  body::ContactReport report;
  const std::vector<body::Effector> feet = body::foot_effectors(take_roles(take, settings));
  CycleSettings cycle = settings.cycle;  // the period search's contacts route uses the same feet
  if (cycle.feet.empty()) cycle.feet = feet;
  try {
    if (!feet.empty()) report = body::detect_contacts(take, feet, settings.cycle.contact);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::bad_data) throw;  // under 3 frames: the period search below reports it
  }
  for (const body::EffectorContacts& foot : report.effectors) {
    std::vector<int> d = touch_downs(foot, lo);
    if (d.size() > best.size()) best = std::move(d), out.foot = foot.effector.name;
  }
  if (best.size() >= 3) {
    // Steady cycles: the gait is where they are (a take that starts, walks and stops repeats only
    // there), so the confidence is the period search's on their span.
    const WorldPoses w = forward_kinematics(take);
    std::vector<std::uint8_t> steady(n, 0);
    const double median = contact_phase(best, w, motion_channels(take, AngleMode::log_map).basis.root_joint, lo, hi, out, steady);
    if (out.cycles >= 1) {
      const auto first = std::find(steady.begin(), steady.end(), 1) - steady.begin();
      const auto last = steady.rend() - std::find(steady.rbegin(), steady.rend(), 1);
      // The period search on the steady span; on the whole take when the span is too short for
      // it (one cycle); the error of the whole take's when neither finds one.
      try {
        out.confidence = estimate_period(cut(take, static_cast<int>(first), static_cast<int>(last)), cycle).confidence;
      } catch (const Error& e) {
        if (e.code() != ErrorCode::bad_data) throw;
        try {
          out.confidence = estimate_period(take, cycle).confidence;
        } catch (const Error& whole) {
          if (whole.code() == ErrorCode::bad_data) no_gait(whole);
          throw;
        }
      }
      out.source = PhaseSource::contacts;
      out.period = median / rate;
      out.weight = body::contact_fade(steady, std::max(1.0, settings.blend_seconds * rate));
      return out;
    }
  }
  PeriodEstimate est;
  try {
    est = estimate_period(take, cycle);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::bad_data) no_gait(e);
    throw;
  }
  out.source = PhaseSource::period;
  out.foot.clear();
  out.confidence = est.confidence;
  out.period = est.period;
  out.cycles = static_cast<int>(std::floor((n - 1) / est.period_frames));
  for (int f = 0; f < n; ++f) out.phase[f] = 2 * kPi * f / est.period_frames;
  out.weight.assign(n, 1.0);
  return out;
}

namespace {

// alpha * (posture + DC) per joint, radians, in the joint's tangent space.
std::vector<Vec3> posture_part(const WeightedAdverb& w, int joints) {
  std::vector<Vec3> p(joints, Vec3::Zero());
  for (int j = 0; j < joints; ++j) {
    const Vec3 dc = w.adverb.delta.block<3, 1>(joint_channel(j, 0), 0).real();
    p[j] = w.weight * (w.adverb.posture[j] + dc);
  }
  return p;
}

// The phase offset making the take's phase the adverb's relative phase: the reference channel's
// first harmonic over the steady frames, least squares x = a + b cos psi + c sin psi, so that
// b cos psi + c sin psi = A cos(psi + offset) with offset = atan2(-c, b).
double phase_offset(const MotionChannels& ch, const TakePhase& ph, int joint, const Vec3& axis) {
  Eigen::Matrix3d ata = Eigen::Matrix3d::Zero();
  Eigen::Vector3d atb = Eigen::Vector3d::Zero();
  for (Eigen::Index f = 0; f < ch.values.cols(); ++f) {
    const double wt = ph.weight[f];
    if (wt <= 0.5) continue;
    const Eigen::Vector3d a(1.0, std::cos(ph.phase[f]), std::sin(ph.phase[f]));
    ata += a * a.transpose();
    atb += a * axis.dot(ch.values.block<3, 1>(joint_channel(joint, 0), f));
  }
  if (std::abs(ata.determinant()) < 1e-12) return 0.0;
  const Eigen::Vector3d x = ata.ldlt().solve(atb);
  return std::atan2(-x(2), x(1));
}

// Checks one weighted adverb against the take; returns its context name.
std::string check_adverb(const WeightedAdverb& w, const Skeleton& sk) {
  const std::string ctx = w.name.empty() ? std::string("adverb") : "adverb " + w.name;
  if (!std::isfinite(w.weight)) throw Error(ErrorCode::invalid_settings, ctx, fmt::format("alpha must be finite, got {}", w.weight));
  w.adverb.validate();
  (void)sk;
  if (w.adverb.angles != AngleMode::log_map)
    throw Error(ErrorCode::mismatch, ctx,
                fmt::format("learned on {} channels; applying to a take needs log-map channels", to_string(w.adverb.angles)));
  return ctx;
}

// The root's world yaw taken out of a root-local correction r on a frame where the root's world
// rotation is g: the swing of g r g^-1 away from its twist about +Y, back in the local frame.
Quat without_yaw(const Quat& g, const Quat& r) {
  const Quat d = (g * r * g.conjugate()).normalized();
  Quat twist(d.w(), 0.0, d.y(), 0.0);
  const double nt = twist.norm();
  if (nt < 1e-12) return r;
  twist.coeffs() /= nt;
  const Quat swing = d * twist.conjugate();
  return (g.conjugate() * swing * g).normalized();
}

// `in_contact` widened by `margin` frames on both sides of every contact.
std::vector<std::uint8_t> pinned_frames(std::span<const std::uint8_t> in_contact, int margin) {
  const std::vector<int> d = body::frames_to_contact(in_contact);
  std::vector<std::uint8_t> out(d.size());
  for (size_t f = 0; f < d.size(); ++f) out[f] = d[f] <= margin ? 1 : 0;
  return out;
}

// Soft-IK zone of the planted legs: a fraction of the leg length. The cartoon filter's 2 % leaves
// the ankle millimetres short on a straight stance leg, enough to unplant it for the contact
// detector; the take's own leg reached there, so a small zone suffices.
constexpr double kSoftReach = 0.002;

struct LegIk {
  int hip, knee, ankle;
  size_t foot;  // effector index in the contact report
  body::Hinge hinge;
};

// Bends each leg of `out` so its ankle follows the take's (stride-scaled) during a contact,
// blending in and out with the contact fade.
void plant_feet(const Motion& take, const WorldPoses& in, const ApplySettings& s, const body::JointRoles& roles, int root,
                Motion& out, ApplyResult& res) {
  const std::vector<body::Effector> feet = body::foot_effectors(roles);
  if (feet.empty()) return;
  const body::ContactReport report = body::detect_contacts(take, in, feet, s.cycle.contact);
  std::vector<LegIk> legs;
  for (size_t e = 0; e < feet.size(); ++e) {
    const bool left = feet[e].name == "left_foot";
    const body::Role h = left ? body::Role::left_hip : body::Role::right_hip;
    const body::Role k = left ? body::Role::left_knee : body::Role::right_knee;
    const body::Role a = left ? body::Role::left_ankle : body::Role::right_ankle;
    if (!roles.has(h) || !roles.has(k) || !roles.has(a) || roles[h] == 0) continue;
    legs.push_back({roles[h], roles[k], roles[a], e, body::knee_hinge(take, in, roles[h], roles[k], roles[a])});
  }
  const Skeleton& sk = take.skeleton;
  const int jn = sk.joint_count();
  std::vector<Vec3> wp(static_cast<size_t>(sk.point_count()));
  std::vector<Quat> wr(static_cast<size_t>(jn));
  const double fade = std::max(1.0, s.blend_seconds * take.frame_rate);
  const Vec3 start = in.position(0, root);
  // The contact detector sees positions through its low-pass: pin the foot exactly also over the
  // kernel's reach beyond each contact, so the detector sees the same foot inside every contact.
  const double cutoff = s.cycle.contact.cutoff_hz;
  const int margin = 1 + (cutoff > 0 ? static_cast<int>(std::ceil(3 * std::sqrt(std::log(2.0)) / (2 * kPi * cutoff) * take.frame_rate)) : 0);
  for (const LegIk& leg : legs) {
    const std::vector<double> weight = body::contact_fade(pinned_frames(report.effectors[leg.foot].in_contact, margin), fade);
    for (int f = 0; f < take.frame_count; ++f) {
      if (weight[f] <= 0) continue;
      forward_kinematics(sk, out.frame_rotations(f), out.frame_translations(f), {}, wp, wr);
      Vec3 goal = in.position(f, leg.ankle);
      if (s.stride != 1.0) goal = Vec3(start.x() + s.stride * (goal.x() - start.x()), goal.y(), start.z() + s.stride * (goal.z() - start.z()));
      const Vec3 target = (1 - weight[f]) * wp[leg.ankle] + weight[f] * goal;
      const Quat in_ankle = in.rotations[static_cast<size_t>(f) * jn + leg.ankle];
      const Quat rot = slerp(wr[leg.ankle], in_ankle, weight[f]);
      if ((target - wp[leg.ankle]).norm() < 1e-9 && rot.angularDistance(wr[leg.ankle]) < 1e-9) continue;
      // The knee bends to the side the take's knee is bent to (hinge sign), as in the cartoon filter.
      ++res.planted_frames;
      if (!body::solve_leg(sk, out.frame_rotations(f), out.frame_translations(f), wp, wr, leg.hip, leg.knee, leg.ankle,
                           target, rot, leg.hinge, leg.hinge.sign, kSoftReach))
        ++res.unreachable_frames;
      if (weight[f] >= 1.0) res.max_plant_error = std::max(res.max_plant_error, (wp[leg.ankle] - target).norm());
    }
  }
}

// Per frame: rotations times the adverbs' tangent-space offsets; the root's height offset.
void add_offsets(const Motion& take, const MotionChannels& ch, std::span<const WeightedAdverb> adverbs,
                 const ApplySettings& s, const WorldPoses& in, ApplyResult& res) {
  const int nj = take.joint_count(), root = ch.basis.root_joint, root_parent = take.skeleton.parents[root];
  std::vector<std::vector<Vec3>> posture;
  for (const WeightedAdverb& w : adverbs) posture.push_back(posture_part(w, nj));
  std::vector<Vec3> v(nj);
  Motion& out = res.motion;
  for (int f = 0; f < take.frame_count; ++f) {
    const double wt = res.phase.weight[f], wp = s.hold_posture ? 1.0 : wt;
    std::fill(v.begin(), v.end(), Vec3::Zero());
    Vec3 root_posture = Vec3::Zero();
    double height = 0;
    for (size_t a = 0; a < adverbs.size(); ++a) {
      const WeightedAdverb& w = adverbs[a];
      if (w.weight == 0.0) continue;
      const Eigen::MatrixXcd& dc = w.adverb.delta;
      const double phi = res.phase.phase[f] + res.adverbs[a].phase_offset;
      Eigen::VectorXd x = Eigen::VectorXd::Zero(dc.rows());
      for (Eigen::Index k = 1; k < dc.cols(); ++k) x += (dc.col(k) * std::polar(1.0, static_cast<double>(k) * phi)).real();
      for (int j = 0; j < nj; ++j) {
        const Vec3 osc = w.weight * wt * x.segment<3>(joint_channel(j, 0));
        if (j == root) root_posture += wp * posture[a][j], v[j] += osc;
        else v[j] += wp * posture[a][j] + osc;
      }
      height += w.weight * (wp * dc(0, 0).real() + wt * x(0));
    }
    for (int j = 0; j < nj; ++j) {
      Quat& q = out.frame_rotations(f)[j];
      if (j == root && root_posture.squaredNorm() > 0) {
        const Quat g = in.rotations[static_cast<size_t>(f) * nj + root];
        q = (q * without_yaw(g, quat_exp(root_posture))).normalized();
      }
      if (v[j].squaredNorm() > 0) q = (q * quat_exp(v[j])).normalized();
    }
    if (s.root_height && height != 0) {
      const Quat pr = root_parent < 0 ? Quat::Identity() : in.rotations[static_cast<size_t>(f) * nj + root_parent];
      out.frame_translations(f)[root] += pr.conjugate() * Vec3(0, height, 0);
    }
  }
}

// Whether two skeletons have one topology (names and parents).
bool same_topology(const Skeleton& a, const Skeleton& b) {
  try {
    require_same_topology(a, b);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

namespace {

// A joint name as a hint compares: lower case, letters and digits only ("Shoulder_L" and
// "shoulder.L" agree).
std::string name_key(std::string_view name) {
  std::string k;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

bool is_ancestor(const Skeleton& sk, int ancestor, int joint) {
  for (int j = joint; j >= 0; j = sk.parents[j])
    if (j == ancestor) return true;
  return false;
}

// The joints strictly between `below` and its ancestor `above`, top down.
std::vector<int> chain_between(const Skeleton& sk, int above, int below) {
  std::vector<int> chain;
  for (int j = sk.parents[below]; j >= 0 && j != above; j = sk.parents[j]) chain.push_back(j);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// One adverb joint's share of a take joint.
struct Share {
  int s, t;
  double weight;
};

// Torso joints without a role or a match (a chest): the take's unmapped joints between the same
// two mapped joints take them by their share of the chain; where there are none, they fold into
// the nearest mapped joints above and below, half each, so their bend is kept. Sets `placed` for
// the adverb joints placed, source = -2 for the take joints driven by shares, and reports them.
std::vector<Share> torso_shares(const Adverb& a, const Skeleton& take, const std::vector<int>& target,
                                std::vector<int>& source, std::vector<std::uint8_t>& placed, AppliedAdverb& rep) {
  const Skeleton& as = a.skeleton;
  const int na = as.joint_count();
  std::vector<Share> shares;
  const std::vector<body::BodyPart> parts = body::joint_parts(as);
  for (int s = 0; s < na; ++s) {
    if (placed[s] || target[s] >= 0 || !a.roles[s].empty() || parts[s] != body::BodyPart::torso) continue;
    int up = as.parents[s];
    while (up >= 0 && target[up] < 0) up = as.parents[up];
    if (up < 0 || a.roles[up] == "hips") continue;  // above the hips, or the pelvis itself: no
    // The nearest mapped torso or head joint below (the neck).
    int down = -1, best_steps = 1 << 20;
    for (int u = 0; u < na; ++u) {
      if (target[u] < 0 || parts[u] == body::BodyPart::arms || parts[u] == body::BodyPart::legs) continue;
      int steps = 0, v = u;
      while (v >= 0 && v != s) v = as.parents[v], ++steps;
      if (v == s && steps > 0 && steps < best_steps) best_steps = steps, down = u;
    }
    std::vector<int> from{s}, into;
    if (down >= 0 && is_ancestor(take, target[up], target[down])) {
      from = chain_between(as, up, down);
      into = chain_between(take, target[up], target[down]);
      const bool free = std::all_of(from.begin(), from.end(), [&](int j) { return target[j] < 0 && !placed[j]; }) &&
                        std::all_of(into.begin(), into.end(), [&](int j) { return source[j] < 0; });
      if (!free) from = {s}, into.clear();
    }
    if (!into.empty()) {
      // Adverb joint i covers [i, i+1) / n_a of the chain, take joint k [k, k+1) / n_t: the
      // overlap, in units of the adverb joint, is its share of the take joint.
      const double na_c = static_cast<double>(from.size()), nt_c = static_cast<double>(into.size());
      for (size_t i = 0; i < from.size(); ++i) {
        std::vector<std::string> to;
        const double di = static_cast<double>(i);
        for (size_t k = 0; k < into.size(); ++k) {
          const double dk = static_cast<double>(k);
          const double lo = std::max(di / na_c, dk / nt_c), hi = std::min((di + 1) / na_c, (dk + 1) / nt_c);
          if (hi - lo <= 1e-12) continue;
          const double w = (hi - lo) * na_c;
          shares.push_back({from[i], into[k], w});
          to.push_back(w == 1.0 ? take.names[into[k]] : fmt::format("{} x{:.2f}", take.names[into[k]], w));
        }
        placed[from[i]] = 1;
        rep.mapped.push_back(fmt::format("{} -> {} (torso chain {} .. {})", as.names[from[i]], fmt::join(to, " + "),
                                         take.names[target[up]], take.names[target[down]]));
      }
      for (int t : into) source[t] = -2;  // driven, by shares
      continue;
    }
    const double share = down >= 0 ? 0.5 : 1.0;
    shares.push_back({s, target[up], share});
    if (down >= 0) shares.push_back({s, target[down], share});
    placed[s] = 1;
    rep.mapped.push_back(fmt::format("{} -> {}{} (folded)", as.names[s], take.names[target[up]],
                                     down >= 0 ? " + " + take.names[target[down]] : std::string()));
  }
  return shares;
}

}  // namespace

Adverb map_adverb(const Adverb& a, const Skeleton& take, const body::JointRoles& roles, std::span<const Quat> take_frames,
                  AppliedAdverb& rep, int& ref_joint, Vec3& ref_axis) {
  const std::string ctx = rep.name.empty() ? std::string("adverb") : "adverb " + rep.name;
  if (a.roles.empty() || a.frames.empty())
    throw Error(ErrorCode::mismatch, ctx,
                "learned on another rig and stored without joint roles and frames (an older adverb file): learn it "
                "again to apply it by joint role");
  const Skeleton& as = a.skeleton;
  const int na = as.joint_count(), nt = take.joint_count();
  std::vector<int> target(na, -1), source(nt, -1);
  std::vector<std::string> missing;
  const auto map = [&](int s, int t, std::string_view why) {
    target[s] = t, source[t] = s;
    rep.mapped.push_back(fmt::format("{} -> {} ({})", as.names[s], take.names[t], why));
  };
  for (int s = 0; s < na; ++s) {
    if (a.roles[s].empty()) continue;
    const int t = roles[body::parse_role(a.roles[s])];
    if (t >= 0 && t < nt && source[t] < 0) {
      map(s, t, a.roles[s]);
    } else if (a.roles[s].ends_with("_toe") && t >= nt) {
      rep.left_alone.push_back(fmt::format("{}: the take's {} is an end site", as.names[s], a.roles[s]));
    } else {
      missing.push_back(a.roles[s]);
    }
  }
  if (!missing.empty())
    throw Error(ErrorCode::mismatch, ctx,
                fmt::format("the take's rig has no joint for the roles {} (found by name: see the body vocabulary, or "
                            "name them with `roles`)",
                            fmt::join(missing, ", ")));
  for (int s = 0; s < na; ++s) {  // name hints for joints without a role
    if (!a.roles[s].empty()) continue;
    int t = take.find(as.names[s]);
    if (t < 0) {
      const std::string key = name_key(as.names[s]);
      for (int u = 0; u < nt && !key.empty(); ++u)
        if (source[u] < 0 && name_key(take.names[u]) == key) {
          t = u;
          break;
        }
    }
    if (t >= 0 && source[t] < 0) map(s, t, "name");
  }
  // Clavicles: the unmapped parent of a shoulder, when it is not on the way to the neck.
  const auto find_role = [&](std::string_view role) {
    return static_cast<int>(std::find(a.roles.begin(), a.roles.end(), role) - a.roles.begin());
  };
  const int neck_a = find_role("neck"), neck_t = roles[body::Role::neck];
  for (const body::Role shoulder : {body::Role::left_shoulder, body::Role::right_shoulder}) {
    const int s_sh = find_role(body::role_name(shoulder)), t_sh = roles[shoulder];
    if (s_sh >= na || t_sh < 0 || t_sh >= nt || target[s_sh] != t_sh) continue;
    const int s = as.parents[s_sh], t = take.parents[t_sh];
    if (s < 0 || t < 0 || target[s] >= 0 || source[t] >= 0) continue;
    if ((neck_a < na && is_ancestor(as, s, neck_a)) || (neck_t >= 0 && neck_t < nt && is_ancestor(take, t, neck_t))) continue;
    map(s, t, fmt::format("clavicle, above {}", body::role_name(shoulder)));
  }
  std::vector<std::uint8_t> placed(na, 0);
  const std::vector<Share> shares = torso_shares(a, take, target, source, placed, rep);
  for (int s = 0; s < na; ++s)
    if (target[s] < 0 && !placed[s] && (a.roles[s].empty() || !a.roles[s].ends_with("_toe")))
      rep.left_alone.push_back(fmt::format("adverb joint {}: no role, no joint of that name on the take", as.names[s]));
  for (int t = 0; t < nt; ++t)
    if (source[t] == -1) rep.left_alone.push_back(fmt::format("{}: no adverb joint plays its role or has its name", take.names[t]));
  Adverb b;
  b.skeleton = take;
  b.angles = a.angles;
  b.harmonics = a.harmonics;
  b.log_period_ratio = a.log_period_ratio;
  b.posture.assign(nt, Vec3::Zero());
  b.delta = Eigen::MatrixXcd::Zero(kRootChannels + 3 * nt, a.harmonics + 1);
  b.delta.topRows(kRootChannels) = a.delta.topRows(kRootChannels);
  const int ref_s = (a.reference_channel - kRootChannels) / 3, ref_a = (a.reference_channel - kRootChannels) % 3;
  ref_joint = -1;
  for (int s = 0; s < na; ++s) {
    const int t = target[s];
    if (t < 0) continue;
    const Eigen::Matrix3d m = (take_frames[t].conjugate() * a.frames[s]).normalized().toRotationMatrix();
    b.posture[t] = m * a.posture[s];
    b.delta.middleRows(joint_channel(t, 0), 3) = m.cast<std::complex<double>>() * a.delta.middleRows(joint_channel(s, 0), 3);
    if (s == ref_s) ref_joint = t, ref_axis = m.col(ref_a);
  }
  for (const Share& sh : shares) {
    const Eigen::Matrix3d m = sh.weight * (take_frames[sh.t].conjugate() * a.frames[sh.s]).normalized().toRotationMatrix();
    b.posture[sh.t] += m * a.posture[sh.s];
    b.delta.middleRows(joint_channel(sh.t, 0), 3) +=
        m.cast<std::complex<double>>() * a.delta.middleRows(joint_channel(sh.s, 0), 3);
  }
  if (ref_joint < 0)
    throw Error(ErrorCode::mismatch, ctx,
                fmt::format("its phase reference joint {} has no counterpart on the take's rig", as.names[ref_s]));
  Eigen::Index best = 0;
  ref_axis.cwiseAbs().maxCoeff(&best);
  b.reference_channel = joint_channel(ref_joint, static_cast<int>(best));
  b.frames.assign(take_frames.begin(), take_frames.end());
  b.roles.assign(nt, "");
  return b;
}

ApplyResult apply_to_take(const Motion& take, std::span<const WeightedAdverb> adverbs, const ApplySettings& settings) {
  settings.validate();
  take.validate();
  ApplyResult res;
  for (const WeightedAdverb& w : adverbs) {
    const std::string ctx = check_adverb(w, take.skeleton);
    AppliedAdverb applied;
    applied.name = w.name, applied.weight = w.weight, applied.period_ratio_ignored = std::exp(w.adverb.log_period_ratio);
    res.adverbs.push_back(std::move(applied));
    if (w.weight < kAlphaWarnMin || w.weight > kAlphaWarnMax)
      res.warnings.push_back(fmt::format("{}: alpha {} is outside [{}, {}]: extrapolating that far rarely stays human",
                                         ctx, w.weight, kAlphaWarnMin, kAlphaWarnMax));
  }
  const body::JointRoles roles = take_roles(take, settings);
  res.phase = track_phase(take, settings);
  res.motion = take;
  const MotionChannels ch = motion_channels(take, AngleMode::log_map);
  // Adverbs of other rigs are carried over by joint role.
  const std::vector<Quat> frames = pose_frames(take.skeleton, ch.basis.mean_rotations);
  std::vector<WeightedAdverb> on_take(adverbs.begin(), adverbs.end());
  for (size_t a = 0; a < adverbs.size(); ++a) {
    const Adverb& adv = adverbs[a].adverb;
    int ref_joint = (adv.reference_channel - kRootChannels) / 3;
    Vec3 ref_axis = Vec3::Unit((adv.reference_channel - kRootChannels) % 3);
    res.adverbs[a].same_rig = same_topology(take.skeleton, adv.skeleton);
    if (!res.adverbs[a].same_rig) on_take[a].adverb = map_adverb(adv, take.skeleton, roles, frames, res.adverbs[a], ref_joint, ref_axis);
    res.adverbs[a].phase_offset = phase_offset(ch, res.phase, ref_joint, ref_axis);
  }
  const WorldPoses in = forward_kinematics(take);
  add_offsets(take, ch, on_take, settings, in, res);
  const int root = ch.basis.root_joint;
  if (settings.stride != 1.0) {
    const Vec3 t0 = take.translation(0, root);
    for (int f = 0; f < take.frame_count; ++f) {
      Vec3& t = res.motion.frame_translations(f)[root];
      t.x() = t0.x() + settings.stride * (t.x() - t0.x());
      t.z() = t0.z() + settings.stride * (t.z() - t0.z());
    }
  }
  if (settings.plant_feet) plant_feet(take, in, settings, roles, root, res.motion, res);
  return res;
}

}  // namespace koma::gait
