#include "koma/core/motion.hpp"

#include "koma/core/checked.hpp"

#include <fmt/format.h>

#include <cmath>

#include "koma/core/error.hpp"

namespace koma {

void Motion::validate() const {
  skeleton.validate();
  if (!std::isfinite(frame_rate) || frame_rate <= 0) {
    throw Error(ErrorCode::bad_data, "motion", fmt::format("frame rate {} is not > 0 (invariant 2)", frame_rate));
  }
  check_frame_rate(frame_rate, "motion");
  if (frame_count < 1) {
    throw Error(ErrorCode::bad_data, "motion", fmt::format("has {} frames; at least 1 is needed (invariant 2)", frame_count));
  }
  const size_t n = static_cast<size_t>(frame_count) * joint_count();
  if (rotations.size() != n || translations.size() != n || (!scales.empty() && scales.size() != n)) {
    throw Error(ErrorCode::bad_data, "motion",
                fmt::format("{} frames x {} joints needs {} entries; has {} rotations, {} translations, "
                            "{} scales (invariant 3)",
                            frame_count, joint_count(), n, rotations.size(), translations.size(), scales.size()));
  }
  // A cheap pass over every value first (no division, no square root: a million-frame take is
  // checked in milliseconds); the slow pass below only runs to name the first broken value.
  const double lo = (1.0 - 1e-6) * (1.0 - 1e-6), hi = (1.0 + 1e-6) * (1.0 + 1e-6);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    const double q2 = rotations[i].coeffs().squaredNorm();
    ok &= q2 >= lo && q2 <= hi && translations[i].allFinite() && (scales.empty() || scales[i].allFinite());
  }
  if (ok) return;
  for (size_t i = 0; i < n; ++i) {
    const int f = static_cast<int>(i / joint_count());
    const int j = static_cast<int>(i % joint_count());
    auto where = [&] { return fmt::format("frame {}, joint '{}'", f, skeleton.names[j]); };
    if (!rotations[i].coeffs().allFinite() || !translations[i].allFinite() ||
        (!scales.empty() && !scales[i].allFinite())) {
      throw Error(ErrorCode::bad_data, where(), "value is not finite (NaN or infinity) (invariant 4)");
    }
    if (std::abs(rotations[i].norm() - 1.0) > 1e-6) {
      throw Error(ErrorCode::bad_data, where(),
                  fmt::format("rotation has norm {}, not 1 (invariant 4)", rotations[i].norm()));
    }
  }
}

Motion rest_motion(const Skeleton& skeleton, double frame_rate, int frames) {
  Motion m;
  m.skeleton = skeleton;
  m.frame_rate = frame_rate;
  m.frame_count = frames;
  m.rotations.assign(static_cast<size_t>(frames) * skeleton.joint_count(), Quat::Identity());
  m.translations.reserve(m.rotations.size());
  for (int f = 0; f < frames; ++f) {
    m.translations.insert(m.translations.end(), skeleton.offsets.begin(), skeleton.offsets.end());
  }
  return m;
}

std::string Motion::source_unit_label() const {
  if (source_scale > 0) return fmt::format("{:g} m", source_scale);
  return std::string(to_string(source_unit));
}

}  // namespace koma
