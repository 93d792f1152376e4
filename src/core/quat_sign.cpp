#include "koma/core/quat_sign.hpp"

namespace koma {

void make_sign_continuous(std::span<Quat> rotations, std::size_t stride) noexcept {
  for (std::size_t i = stride; i < rotations.size(); i += stride) {
    if (rotations[i].dot(rotations[i - stride]) < 0) rotations[i].coeffs() = -rotations[i].coeffs();
  }
}

namespace {

// The sign-aligned mean of count rotations get(0 .. count - 1).
template <class Get>
Quat aligned_mean(int count, Get get) noexcept {
  if (count <= 0) return Quat::Identity();
  const Quat ref = get(0);
  Eigen::Vector4d sum = Eigen::Vector4d::Zero();
  for (int i = 0; i < count; ++i) {
    const Quat& q = get(i);
    sum += (q.coeffs().dot(ref.coeffs()) < 0 ? -1.0 : 1.0) * q.coeffs();
  }
  Quat mean = ref;
  if (sum.norm() > kDegenerateQuatSum) mean.coeffs() = sum.normalized();
  return mean;
}

}  // namespace

Quat sign_aligned_mean(std::span<const Quat> rotations) noexcept {
  return aligned_mean(static_cast<int>(rotations.size()), [&](int i) -> const Quat& { return rotations[i]; });
}

Quat sign_aligned_mean(const Motion& motion, int joint, int begin, int end) noexcept {
  if (end < 0) end = motion.frame_count;
  return aligned_mean(end - begin, [&](int i) -> const Quat& { return motion.rotation(begin + i, joint); });
}

}  // namespace koma
