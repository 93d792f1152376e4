#include "koma/gait/synth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/core/blend.hpp"
#include "koma/core/error.hpp"

namespace koma::gait {

void SynthSettings::validate() const {
  auto bad = [](const char* field, std::string msg) { throw Error(ErrorCode::invalid_settings, field, std::move(msg)); };
  auto positive = [&](const char* field, double v, double max) {
    if (!(v > 0 && v <= max)) bad(field, fmt::format("{} must be finite, > 0 and <= {}", v, max));
  };
  positive("seconds", seconds, 1e5);
  positive("frame_rate", frame_rate, 1000);
  positive("stride", stride, 100);
  positive("speed", speed, 100);
  positive("transition_cycles", transition_cycles, 1000);
  if (seconds * frame_rate > 1e7) bad("seconds", fmt::format("{} s at {} fps is more than 10 million frames", seconds, frame_rate));
}

namespace {

// Sum of bone lengths of the joints that are neither the root joint nor above it.
double body_size(const Skeleton& sk, int root, std::span<const Vec3> bones) {
  std::vector<bool> above(sk.joint_count(), false);
  for (int j = root; j >= 0; j = sk.parents[j]) above[j] = true;
  double sum = 0;
  for (int j = 0; j < sk.joint_count(); ++j)
    if (!above[j]) sum += bones[j].norm();
  return sum;
}

// The phase of the calmest pose: where the fastest joint channel changes slowest. Clips start
// there, so a loop's seam falls where least happens.
double calmest_phase(const Gait& g) {
  constexpr int kSteps = 256;
  double best = 1e300, best_phi = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double phi = 2 * kPi * i / kSteps;
    double fastest = 0;
    for (Eigen::Index r = kRootChannels; r < g.coefficients.rows(); ++r) {
      double d = 0;  // d x_r / d phi
      for (int k = 1; k <= g.harmonics; ++k) d += (g.coefficients(r, k) * std::polar(static_cast<double>(k), k * phi + kPi / 2)).real();
      fastest = std::max(fastest, std::abs(d));
    }
    if (fastest < best) best = fastest, best_phi = phi;
  }
  return best_phi;
}

}  // namespace

Gait retarget(const Gait& gait, const Skeleton& target, std::span<const Vec3> bones) {
  gait.validate();
  target.validate();
  require_same_topology(gait.basis.skeleton, target);
  if (static_cast<int>(bones.size()) != target.joint_count())
    throw Error(ErrorCode::bad_data, "bones", fmt::format("{} bone vectors for {} joints", bones.size(), target.joint_count()));
  for (int j = 0; j < target.joint_count(); ++j)
    if (!bones[j].allFinite()) throw Error(ErrorCode::bad_data, "joint " + target.names[j], "bone vector is not finite");
  const double from = body_size(gait.basis.skeleton, gait.basis.root_joint, gait.basis.bones);
  const double to = body_size(target, gait.basis.root_joint, bones);
  if (!(from > 0 && to > 0))
    throw Error(ErrorCode::bad_data, "skeleton", "has no bone length below the root: cannot scale the root travel");
  Gait out = gait;
  out.basis.skeleton = target;
  out.basis.bones.assign(bones.begin(), bones.end());
  out.coefficients.topRows(kRootChannels) *= to / from;
  return out;
}

Motion synthesize(const Gait& gait, const SynthSettings& settings) {
  const GaitSegment seg{gait, 0.0};
  return synthesize(std::span<const GaitSegment>(&seg, 1), settings);
}

Motion synthesize(std::span<const GaitSegment> segments, const SynthSettings& settings) {
  settings.validate();
  if (segments.empty()) throw Error(ErrorCode::invalid_settings, "segments", "no gait to synthesise");
  if (settings.loop && segments.size() > 1)
    throw Error(ErrorCode::invalid_settings, "loop", "a looping clip plays one gait; turn loop off for transitions");
  for (size_t i = 0; i < segments.size(); ++i) {
    segments[i].gait.validate();
    if (i > 0) {
      require_compatible(segments[0].gait, segments[i].gait);
      if (!(segments[i].start > segments[i - 1].start) || !std::isfinite(segments[i].start))
        throw Error(ErrorCode::invalid_settings, fmt::format("segment {}", i),
                    fmt::format("start {} s must be finite and after the previous start", segments[i].start));
    }
  }
  const Gait& first = segments[0].gait;
  const GaitBasis& b0 = first.basis;
  const Skeleton& sk = b0.skeleton;
  const int nj = sk.joint_count(), root = b0.root_joint;
  const double rate = settings.frame_rate, beta = settings.stride;

  // Frame count and, for a loop, the whole number of cycles n that fits.
  int frames = 0, cycles = 0;
  double speed = settings.speed;
  if (settings.loop) {
    frames = std::max(2, static_cast<int>(std::lround(settings.seconds * rate)));
    const double duration = frames / rate;
    cycles = std::max(1, static_cast<int>(std::lround(duration * settings.speed / b0.period)));
    speed = cycles * b0.period / duration;  // exact cadence of a seamless loop
  } else {
    frames = static_cast<int>(std::lround(settings.seconds * rate)) + 1;
  }

  Motion m = rest_motion(sk, rate, frames);
  m.source_unit = b0.source_unit;
  const Eigen::Vector2d fwd = b0.forward, lat(fwd.y(), -fwd.x());
  const Quat heading = heading_rotation(fwd);
  Gait blended;  // only filled during a transition
  auto gait_at = [&](double t) -> const Gait& {
    size_t i = 0;
    while (i + 1 < segments.size() && segments[i + 1].start <= t) ++i;
    if (i == 0) return segments[0].gait;
    const Gait& prev = segments[i - 1].gait;
    const double span = settings.transition_cycles * prev.basis.period / speed;
    const double w = smoothstep((t - segments[i].start) / span);
    if (w >= 1.0) return segments[i].gait;
    blended = blend_gaits(prev, segments[i].gait, w);
    return blended;
  };

  const double phi0 = calmest_phase(first);
  double phi = phi0, prev_omega = 0;
  Eigen::Vector2d pos(0, 0), prev_vel(0, 0);
  std::vector<Quat> world_rot(nj);
  std::vector<Vec3> world_pos(nj);
  for (int f = 0; f < frames; ++f) {
    const double t = f / rate;  // never accumulated
    const Gait& g = gait_at(t);
    const double omega = 2 * kPi * speed / g.basis.period;
    if (settings.loop) {
      phi = phi0 + 2 * kPi * static_cast<double>(cycles) * f / frames;
    } else if (f > 0) {
      phi += 0.5 * (prev_omega + omega) / rate;  // phase is the integral of omega over time
    }
    prev_omega = omega;
    const Eigen::VectorXd x = evaluate(g, phi, beta);
    // Speeds scale as a whole with stride (distance per cycle) and with the cadence.
    double vf = x(1) + (beta - 1) * g.coefficients(1, 0).real();
    double vl = x(2) + (beta - 1) * g.coefficients(2, 0).real();
    if (settings.in_place) {
      vf -= beta * g.coefficients(1, 0).real();
      vl -= beta * g.coefficients(2, 0).real();
    }
    const Eigen::Vector2d vel = speed * (vf * fwd + vl * lat);
    if (f > 0) pos += 0.5 * (prev_vel + vel) / rate;  // travel is the integral of the velocity
    prev_vel = vel;

    auto rot = m.frame_rotations(f);
    auto tr = m.frame_translations(f);
    for (int j = 0; j < nj; ++j) {
      rot[j] = joint_rotation(g.basis, j, x.segment<3>(joint_channel(j, 0)));
      tr[j] = g.basis.bones[j];
    }
    // Place the root joint in the world through whatever joints sit above it.
    const Vec3 target(pos.x(), x(0), pos.y());
    Quat parent_rot = Quat::Identity();
    Vec3 parent_pos = Vec3::Zero();
    for (int j = 0; j < root; ++j) {
      const int p = sk.parents[j];
      world_rot[j] = p < 0 ? rot[j] : world_rot[p] * rot[j];
      world_pos[j] = p < 0 ? tr[j] : Vec3(world_pos[p] + world_rot[p] * tr[j]);
    }
    if (sk.parents[root] >= 0) parent_rot = world_rot[sk.parents[root]], parent_pos = world_pos[sk.parents[root]];
    // The root's channels are heading-free: turn it to the travel direction (through its parents).
    rot[root] = (parent_rot.conjugate() * heading * parent_rot * rot[root]).normalized();
    tr[root] = parent_rot.conjugate() * (target - parent_pos);
  }
  return m;
}

}  // namespace koma::gait
