#include "koma/core/sample.hpp"

#include <fmt/format.h>

#include <cmath>

#include "koma/core/blend.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"

namespace koma {

namespace {

constexpr double kTau = 2.0 * kPi;

// Joint indices of sample_skeleton().
enum J : int {
  kHips, kSpine, kChest, kNeck, kHead,
  kLArm, kLForeArm, kLHand, kRArm, kRForeArm, kRHand,
  kLUpLeg, kLLeg, kLFoot, kLToe, kRUpLeg, kRLeg, kRFoot, kRToe, kJointCount
};

// Leg angles (radians) at gait phase p in [0, 1): stance 0..0.6, swing 0.6..1.
struct LegAngles {
  double hip, knee, ankle;
};
LegAngles walk_leg(double p) {
  p -= std::floor(p);
  LegAngles a{};
  // Hip flexion: forward (+Z, negative X rotation) at heel strike (p = 0), back at toe-off.
  a.hip = -0.42 * std::cos(kTau * p) + 0.08;
  if (p < 0.6) {
    a.knee = 0.12 + 0.18 * std::sin(kPi * p / 0.6);  // loading response bump
    a.ankle = -0.05 + 0.25 * smoothstep(0.35, 0.6, p);  // heel rises before toe-off
  } else {
    const double s = (p - 0.6) / 0.4;
    a.knee = 0.12 + 0.95 * std::sin(kPi * std::pow(s, 0.8));
    a.ankle = 0.2 * (1 - s) - 0.1 * std::sin(kPi * s);
  }
  return a;
}

}  // namespace

void SampleSettings::validate() const {
  auto bad = [](std::string what, std::string msg) { throw Error(ErrorCode::invalid_settings, std::move(what), std::move(msg)); };
  if (!(frame_rate > 0 && frame_rate <= 1000)) bad("frame_rate", fmt::format("{} must be in (0, 1000]", frame_rate));
  if (walk_cycles < 0 || walk_cycles > 1000) bad("walk_cycles", fmt::format("{} must be in 0..1000", walk_cycles));
  if (!(cycle_seconds >= 0.3 && cycle_seconds <= 10)) bad("cycle_seconds", fmt::format("{} must be in [0.3, 10]", cycle_seconds));
  if (!std::isfinite(arm_swing)) bad("arm_swing", "must be finite");
  if (walk_cycles == 0 && !jump) bad("sample", "no walk cycles and no jump: the motion would be empty");
}

Skeleton sample_skeleton() {
  Skeleton s;
  auto add = [&](const char* name, int parent, Vec3 offset, bool root = false) {
    s.names.emplace_back(name);
    s.parents.push_back(parent);
    s.offsets.push_back(offset);
    if (root) {
      s.channels.push_back({Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation,
                            Channel::Xrotation, Channel::Yrotation});
    } else {
      s.channels.push_back({Channel::Zrotation, Channel::Xrotation, Channel::Yrotation});
    }
  };
  add("Hips", -1, {0, 0, 0}, true);
  add("Spine", kHips, {0, 0.12, 0});
  add("Chest", kSpine, {0, 0.16, 0});
  add("Neck", kChest, {0, 0.22, 0});
  add("Head", kNeck, {0, 0.09, 0.01});
  add("LeftArm", kChest, {0.18, 0.17, 0});
  add("LeftForeArm", kLArm, {0, -0.28, 0});
  add("LeftHand", kLForeArm, {0, -0.25, 0});
  add("RightArm", kChest, {-0.18, 0.17, 0});
  add("RightForeArm", kRArm, {0, -0.28, 0});
  add("RightHand", kRForeArm, {0, -0.25, 0});
  add("LeftUpLeg", kHips, {0.1, -0.04, 0});
  add("LeftLeg", kLUpLeg, {0, -0.43, 0});
  add("LeftFoot", kLLeg, {0, -0.42, 0});
  add("LeftToeBase", kLFoot, {0, -0.06, 0.12});
  add("RightUpLeg", kHips, {-0.1, -0.04, 0});
  add("RightLeg", kRUpLeg, {0, -0.43, 0});
  add("RightFoot", kRLeg, {0, -0.42, 0});
  add("RightToeBase", kRFoot, {0, -0.06, 0.12});
  s.end_sites = {{kHead, {0, 0.18, 0.02}}, {kLHand, {0, -0.09, 0}}, {kRHand, {0, -0.09, 0}},
                 {kLToe, {0, 0, 0.06}}, {kRToe, {0, 0, 0.06}}};
  return s;
}

Motion make_sample_motion(const SampleSettings& settings) {
  settings.validate();
  const Skeleton sk = sample_skeleton();
  const double rate = settings.frame_rate;
  const double walk_seconds = settings.walk_cycles * settings.cycle_seconds;
  const double jump_seconds = settings.jump ? 1.8 : 0.0;
  const int frames = static_cast<int>(std::lround((walk_seconds + jump_seconds) * rate)) + 1;
  Motion m = rest_motion(sk, rate, frames);
  m.source_unit = LengthUnit::centimetre;
  const double swing = settings.arm_swing;

  auto rot = [](double x, double y, double z) { return euler_to_quat(Vec3(z, x, y), EulerOrder::ZXY); };
  // Walk blends out into a standing pose over the first 0.25 s of the jump section.
  for (int f = 0; f < frames; ++f) {
    const double t = f / rate;  // never accumulated
    auto r = m.frame_rotations(f);
    double w = 1.0;        // walk weight
    double crouch = 0.0;   // 0 standing .. 1 deep crouch
    double tuck = 0.0;     // legs tucked in flight
    double arms_up = 0.0;  // arms thrown forward/up for the jump
    double p = settings.cycle_seconds > 0 ? t / settings.cycle_seconds : 0.0;
    if (settings.jump && t > walk_seconds) {
      const double u = t - walk_seconds;  // seconds into the jump section
      w = 1.0 - smoothstep(0.0, 0.25, u);
      p = settings.walk_cycles;  // freeze the phase at the cycle boundary (heel strike)
      // 0.25-0.65 crouch (anticipation), 0.65-0.8 extend (push), 0.8-1.25 flight, 1.25-1.45 landing
      // crouch, then recover.
      crouch = smoothstep(0.2, 0.6, u) * (1 - smoothstep(0.62, 0.78, u)) +
               0.8 * smoothstep(1.22, 1.32, u) * (1 - smoothstep(1.4, 1.75, u));
      tuck = smoothstep(0.8, 0.95, u) * (1 - smoothstep(1.1, 1.24, u));
      arms_up = -0.6 * smoothstep(0.3, 0.6, u) * (1 - smoothstep(0.6, 0.7, u)) +
                1.0 * smoothstep(0.62, 0.8, u) * (1 - smoothstep(1.2, 1.6, u));
    }
    const LegAngles l = walk_leg(p), rr = walk_leg(p + 0.5);
    const double legs_hip = -1.0 * crouch - 0.9 * tuck, legs_knee = 1.9 * crouch + 1.6 * tuck;
    const double legs_ankle = -0.9 * crouch + 0.3 * tuck;
    r[kLUpLeg] = rot(w * l.hip + legs_hip, 0, 0);
    r[kLLeg] = rot(w * l.knee + legs_knee, 0, 0);
    r[kLFoot] = rot(w * l.ankle + legs_ankle, 0, 0);
    r[kRUpLeg] = rot(w * rr.hip + legs_hip, 0, 0);
    r[kRLeg] = rot(w * rr.knee + legs_knee, 0, 0);
    r[kRFoot] = rot(w * rr.ankle + legs_ankle, 0, 0);
    // Arms swing opposite to the legs; elbows bend more on the forward swing.
    const double arm = w * swing * 0.35 * std::cos(kTau * p);
    r[kLArm] = rot(arm - 1.3 * arms_up, 0, 0.08);
    r[kRArm] = rot(-arm - 1.3 * arms_up, 0, -0.08);
    r[kLForeArm] = rot(-0.25 - 0.2 * std::max(0.0, std::cos(kTau * p)) * w - 0.5 * crouch, 0, 0);
    r[kRForeArm] = rot(-0.25 - 0.2 * std::max(0.0, -std::cos(kTau * p)) * w - 0.5 * crouch, 0, 0);
    r[kSpine] = rot(0.45 * crouch + 0.05, w * 0.08 * std::cos(kTau * p), 0);
    r[kChest] = rot(0.15 * crouch, w * 0.06 * std::cos(kTau * p), 0);
    r[kNeck] = rot(-0.3 * crouch, -w * 0.1 * std::cos(kTau * p), 0);
    r[kHead] = rot(-0.25 * crouch - 0.05, 0, 0);
    r[kHips] = rot(0.2 * crouch, -w * 0.12 * std::cos(kTau * p), w * 0.05 * std::sin(kTau * p));
  }

  // Root placement: advance by what the stance foot slides back, so stance feet stay
  // planted; in flight, travel at take-off speed on a parabola; otherwise rest the lowest foot
  // point on the ground.
  std::vector<Vec3> pos(static_cast<size_t>(sk.point_count()));
  std::vector<Quat> wrot(static_cast<size_t>(sk.joint_count()));
  const int foot_points[2][2] = {{kLFoot, sk.joint_count() + 3}, {kRFoot, sk.joint_count() + 4}};
  auto pose = [&](int f) {
    auto tr = m.frame_translations(f);
    tr[kHips] = Vec3::Zero();
    forward_kinematics(sk, m.frame_rotations(f), tr, {}, pos, wrot);
  };
  auto lowest = [&](int foot) { return std::min(pos[foot_points[foot][0]].y() - 0.05, pos[foot_points[foot][1]].y()); };
  const double flight_begin = walk_seconds + 0.8, flight_end = walk_seconds + 1.24;
  Vec3 root(0, 0, 0);
  Vec3 prev_rel[2];
  int prev_stance = -1;
  double flight_y0 = 0, flight_vz = 0;
  for (int f = 0; f < frames; ++f) {
    const double t = f / rate;
    pose(f);
    // Stance by gait phase: the left foot carries the body for the first half-cycle, the right
    // for the second; after the walk both feet are down and the left one anchors.
    const double phase = settings.cycle_seconds > 0 ? t / settings.cycle_seconds : 0.0;
    const int stance = (t < walk_seconds && phase - std::floor(phase) >= 0.5) ? 1 : 0;
    const Vec3 rel = pos[foot_points[stance][1]];
    const bool in_flight = settings.jump && t > flight_begin && t < flight_end;
    if (f > 0 && !in_flight && stance == prev_stance) {
      root.z() -= rel.z() - prev_rel[stance].z();
      root.x() -= rel.x() - prev_rel[stance].x();
    }
    double ground_y = -std::min(lowest(0), lowest(1));
    if (in_flight) {
      const double tau = t - flight_begin, T = flight_end - flight_begin;
      if (flight_vz == 0) {
        flight_y0 = root.y();
        flight_vz = 1.9;  // m/s forward in the air
      }
      root.z() += flight_vz / rate;
      const double apex = 0.45;  // metres above the take-off height
      root.y() = std::max(ground_y, flight_y0 + 4 * apex * (tau / T) * (1 - tau / T));
    } else {
      root.y() = ground_y;
    }
    m.frame_translations(f)[kHips] = root;
    for (int k = 0; k < 2; ++k) prev_rel[k] = pos[foot_points[k][1]];
    prev_stance = in_flight ? -1 : stance;
  }
  return m;
}

}  // namespace koma
