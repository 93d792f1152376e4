// Squash and stretch for the cartoon filter (see squash.hpp).
#include "squash.hpp"

#include <algorithm>
#include <cmath>

#include "koma/body/lowpass.hpp"

namespace koma::cartoon::detail {

void squash_and_stretch(const WorldPoses& out_poses, int joint, const CartoonSettings& settings, Motion& out,
                        CartoonResult& res) {
  const int n = out.frame_count, jn = out.joint_count();
  std::vector<Vec3> track(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) track[f] = out_poses.position(f, joint);
  track = body::lowpass_zero_phase(track, out.frame_rate, 6.0);
  const int delay = static_cast<int>(std::lround(settings.squash_delay * out.frame_rate));
  const double rate = out.frame_rate, g = 9.81;
  out.scales.assign(static_cast<size_t>(n) * jn, Vec3::Ones());
  res.squash.resize(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) {
    const int c = std::clamp(f - delay, 1, n - 2);
    const Vec3 v = (track[c + 1] - track[c - 1]) * (rate / 2);
    const Vec3 acc = (track[c + 1] - 2 * track[c] + track[c - 1]) * (rate * rate);
    SquashFrame& sf = res.squash[f];
    if (acc.norm() > 1e-9) sf.direction = acc.normalized();
    const double speed = v.norm();
    const double along = speed > 1e-9 ? v.dot(sf.direction) / speed * speed / (speed + 0.5) : 0.0;
    sf.stretch = std::exp(settings.squash * along * std::min(acc.norm() / g, 3.0));
    const double across = 1.0 / std::sqrt(sf.stretch);
    const Vec3 dl = out_poses.rotations[static_cast<size_t>(f) * jn + joint].conjugate() * sf.direction;
    Vec3 s;
    for (int i = 0; i < 3; ++i) s[i] = across + (sf.stretch - across) * dl[i] * dl[i];
    sf.axis_scale = s / std::cbrt(s.prod());
    out.scales[static_cast<size_t>(f) * jn + joint] = sf.axis_scale;
  }
}

}  // namespace koma::cartoon::detail
