// Adverbs applied to a take (see include/koma/gait/apply.hpp).
#include "koma/gait/apply.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "koma/body/contacts.hpp"
#include "koma/body/leg_ik.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"

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
  PeriodEstimate est;
  try {
    est = estimate_period(take, settings.cycle);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::bad_data) no_gait(e);
    throw;
  }
  out.confidence = est.confidence;
  out.period = est.period;
  // The foot with the most touch-downs sets the phase.
  std::vector<int> best;
  const double lo = settings.cycle.min_period * rate, hi = settings.cycle.max_period * rate;
  body::ContactReport report;
  try {
    report = body::detect_foot_contacts(take, settings.cycle.contact);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::bad_data) throw;  // no feet: the uniform period below
  }
  for (const body::EffectorContacts& foot : report.effectors) {
    std::vector<int> d = touch_downs(foot, lo);
    if (d.size() > best.size()) best = std::move(d), out.foot = foot.effector.name;
  }
  if (best.size() < 2) {
    out.source = PhaseSource::period;
    out.foot.clear();
    out.cycles = static_cast<int>(std::floor((n - 1) / est.period_frames));
    for (int f = 0; f < n; ++f) out.phase[f] = 2 * kPi * f / est.period_frames;
    out.weight.assign(n, 1.0);
    return out;
  }
  out.source = PhaseSource::contacts;
  MotionChannels ch = motion_channels(take, AngleMode::log_map);
  const WorldPoses w = forward_kinematics(take);
  std::vector<std::uint8_t> steady(n, 0);
  const double median = contact_phase(best, w, ch.basis.root_joint, lo, hi, out, steady);
  out.period = median / rate;
  const double fade = std::max(1.0, settings.blend_seconds * rate);
  out.weight = body::contact_fade(steady, fade);
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
double phase_offset(const MotionChannels& ch, const TakePhase& ph, int row) {
  Eigen::Matrix3d ata = Eigen::Matrix3d::Zero();
  Eigen::Vector3d atb = Eigen::Vector3d::Zero();
  for (Eigen::Index f = 0; f < ch.values.cols(); ++f) {
    const double wt = ph.weight[f];
    if (wt <= 0.5) continue;
    const Eigen::Vector3d a(1.0, std::cos(ph.phase[f]), std::sin(ph.phase[f]));
    ata += a * a.transpose();
    atb += a * ch.values(row, f);
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
  try {
    require_same_topology(sk, w.adverb.skeleton);
  } catch (const Error& e) {
    throw Error(ErrorCode::mismatch, ctx + ": " + e.context(), e.message());
  }
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
void plant_feet(const Motion& take, const WorldPoses& in, const ApplySettings& s, int root, Motion& out, ApplyResult& res) {
  const body::JointRoles roles = body::find_joint_roles(take.skeleton);
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

}  // namespace

ApplyResult apply_to_take(const Motion& take, std::span<const WeightedAdverb> adverbs, const ApplySettings& settings) {
  settings.validate();
  take.validate();
  ApplyResult res;
  for (const WeightedAdverb& w : adverbs) {
    const std::string ctx = check_adverb(w, take.skeleton);
    res.adverbs.push_back({w.name, w.weight, 0.0, std::exp(w.adverb.log_period_ratio)});
    if (w.weight < kAlphaWarnMin || w.weight > kAlphaWarnMax)
      res.warnings.push_back(fmt::format("{}: alpha {} is outside [{}, {}]: extrapolating that far rarely stays human",
                                         ctx, w.weight, kAlphaWarnMin, kAlphaWarnMax));
  }
  res.phase = track_phase(take, settings);
  res.motion = take;
  const MotionChannels ch = motion_channels(take, AngleMode::log_map);
  for (size_t a = 0; a < adverbs.size(); ++a) res.adverbs[a].phase_offset = phase_offset(ch, res.phase, adverbs[a].adverb.reference_channel);
  const WorldPoses in = forward_kinematics(take);
  add_offsets(take, ch, adverbs, settings, in, res);
  const int root = ch.basis.root_joint;
  if (settings.stride != 1.0) {
    const Vec3 t0 = take.translation(0, root);
    for (int f = 0; f < take.frame_count; ++f) {
      Vec3& t = res.motion.frame_translations(f)[root];
      t.x() = t0.x() + settings.stride * (t.x() - t0.x());
      t.z() = t0.z() + settings.stride * (t.z() - t0.z());
    }
  }
  if (settings.plant_feet) plant_feet(take, in, settings, root, res.motion, res);
  return res;
}

}  // namespace koma::gait
