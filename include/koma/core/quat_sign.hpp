// Quaternion signs: q and -q are one rotation. The shared helpers for choosing between them —
// hemisphere alignment, sign continuity over a sequence, and the sign-aligned mean — written once
// for every module (glTF read/write, cartoon, gait, timing).
#pragma once

#include <cstddef>
#include <span>

#include "koma/core/motion.hpp"

namespace koma {

/// Below this norm a sign-aligned quaternion sum is degenerate and sign_aligned_mean() falls back
/// to the first rotation. For unit quaternions it cannot happen: every aligned term has a
/// non-negative component along the first, which itself contributes 1, so the sum's norm is >= 1.
inline constexpr double kDegenerateQuatSum = 1e-12;

/// q or -q (the same rotation), whichever lies in the hemisphere of `ref` (result . ref >= 0; q
/// itself on a tie). Lossless.
inline Quat align_sign(const Quat& q, const Quat& ref) noexcept {
  Quat out = q;
  if (q.coeffs().dot(ref.coeffs()) < 0) out.coeffs() = -q.coeffs();
  return out;
}

/// Sign continuity: flips element i to its negative where its dot product with element i - 1
/// (after that one's own flip) is negative, so consecutive quaternions lie in one hemisphere and
/// per-component interpolation or filtering sees no jump through -q. Lossless (the rotations are
/// unchanged). `stride` is the distance between consecutive elements: 1 for a plain sequence,
/// the joint count for one joint of a [frames x joints] array (then rotations starts at that
/// joint's first frame). In place; no allocation.
void make_sign_continuous(std::span<Quat> rotations, std::size_t stride = 1) noexcept;

/// Sign-aligned mean of unit quaternions: each taken as q or -q, whichever is nearer the first,
/// summed and normalised (the chordal L2 mean, a good start for a geodesic mean). The result does
/// not depend on the signs of the inputs. The first rotation when the sum is degenerate (see
/// kDegenerateQuatSum); identity for an empty span.
Quat sign_aligned_mean(std::span<const Quat> rotations) noexcept;

/// The same over frames [begin, end) of one joint of `motion`; end < 0 means to the last frame.
/// Identity for an empty range.
Quat sign_aligned_mean(const Motion& motion, int joint, int begin = 0, int end = -1) noexcept;

}  // namespace koma
