// The exact selector for long takes: Lagrangian relaxation with a certificate. Private to the
// keys module; select_exact (select.hpp) chooses between it and the level DP.
#pragma once

#include <functional>

#include "koma/keys/select.hpp"

namespace koma::keys::detail {

/// The optimal selection of exactly n keys by Lagrangian relaxation (see select.hpp, ExactMethod).
/// Preconditions (the caller's): constraints valid for n; the cost table covers holds
/// [min_hold, max_span]. The result carries lower_bound, optimal, solves, and a curve of the hull
/// points the search met.
Selection select_lagrange(const SegmentCosts& costs, const HoldConstraints& constraints, int n,
                          const ExactSettings& settings, const std::function<void(double)>& progress);

}  // namespace koma::keys::detail
