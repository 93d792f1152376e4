// Private helpers shared by the gait sources (never installed).
#pragma once

#include <Eigen/Core>
#include <span>

#include "koma/core/rotation.hpp"

namespace koma::gait::detail {

/// Geodesic (Karcher) mean of unit quaternions, sign-insensitive. `qs` must not be empty.
Quat mean_rotation(std::span<const Quat> qs);

/// Row `row` of x at fractional column u, linear interpolation, clamped to the columns.
double sample_row(const Eigen::MatrixXd& x, int row, double u);

}  // namespace koma::gait::detail
