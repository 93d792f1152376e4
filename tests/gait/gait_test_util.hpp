// Fixtures shared by the gait tests: steady sample walks and hand-made periodic motions.
#pragma once

#include <cmath>
#include <functional>

#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/gait/fourier.hpp"
#include "koma/gait/synth.hpp"

namespace koma::gait::test_util {

/// The built-in walk without the jump: `cycles` steady cycles of 1.1 s at `rate`.
inline Motion sample_walk(int cycles = 6, double arm_swing = 1.0, double rate = 60.0) {
  SampleSettings s;
  s.walk_cycles = cycles;
  s.jump = false;
  s.arm_swing = arm_swing;
  s.frame_rate = rate;
  return make_sample_motion(s);
}

/// The sample skeleton at rest with joint rotations (x axis, radians) given per frame time t.
inline Motion driven_motion(int frames, double rate, const std::function<double(int joint, double t)>& angle) {
  Motion m = rest_motion(sample_skeleton(), rate, frames);
  for (int f = 0; f < frames; ++f)
    for (int j = 0; j < m.joint_count(); ++j)
      m.frame_rotations(f)[j] = Quat(Eigen::AngleAxisd(angle(j, f / rate), Vec3::UnitX()));
  return m;
}

/// Fourier settings keeping `k` harmonics on every channel (the behaviour before per-channel K).
inline FourierSettings fixed_k(int k) {
  FourierSettings s;
  s.harmonics = k;
  return s;
}

/// Largest joint rotation change (radians) between two frames' rotations.
inline double pose_step(const Motion& m, int a, int b) {
  double worst = 0;
  for (int j = 0; j < m.joint_count(); ++j)
    worst = std::max(worst, m.rotation(a, j).angularDistance(m.rotation(b, j)));
  return worst;
}

}  // namespace koma::gait::test_util
