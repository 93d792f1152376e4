// Private to the cartoon module: small helpers that filter.cpp, leg_ik.cpp and squash.cpp share.
#pragma once

#include <vector>

#include "koma/core/rotation.hpp"

namespace koma::cartoon::detail {

// Normalised Gaussian g[k + R], k in [-R, R], R = ceil(3 sigma) (at least 1).
void gaussian(double sigma, std::vector<double>& g);

// Rotation-vector unwrapping: the representation of the same rotation as r nearest to `prev`
// (r + 2 pi k along its axis, |k| <= 3).
Vec3 unwrap_near(const Vec3& r, const Vec3& prev);

}  // namespace koma::cartoon::detail
