#include "koma/body/height.hpp"

#include <fmt/format.h>

#include <array>

#include "koma/body/roles.hpp"
#include "koma/core/stats.hpp"

namespace koma::body {

namespace {

// Rest distance from joint `ancestor` down to joint `j` (the vector sum of the offsets between).
double chain_length(const Skeleton& sk, int ancestor, int j) {
  Vec3 v = Vec3::Zero();
  for (int k = j; k >= 0 && k != ancestor; k = sk.parents[static_cast<size_t>(k)]) v += sk.offsets[static_cast<size_t>(k)];
  return v.norm();
}

// An ancestor test: is `a` above `j` in the tree?
bool is_ancestor(const Skeleton& sk, int a, int j) {
  for (int k = sk.parents[static_cast<size_t>(j)]; k >= 0; k = sk.parents[static_cast<size_t>(k)]) {
    if (k == a) return true;
  }
  return false;
}

}  // namespace

HeightEstimate estimate_height(const Motion& motion) {
  const Skeleton& sk = motion.skeleton;
  const JointRoles roles = find_joint_roles(sk);
  double sum = 0;
  int legs = 0;
  for (auto [hip, knee, ankle] : {std::array{Role::left_hip, Role::left_knee, Role::left_ankle},
                                  std::array{Role::right_hip, Role::right_knee, Role::right_ankle}}) {
    const int h = roles[hip], k = roles[knee], a = roles[ankle];
    if (h < 0 || k < 0 || a < 0 || !is_ancestor(sk, h, k) || !is_ancestor(sk, k, a)) continue;
    const double leg = chain_length(sk, h, k) + chain_length(sk, k, a);
    if (!(leg > 0)) continue;
    sum += leg;
    ++legs;
  }
  HeightEstimate e;
  if (legs > 0) {
    e.from_legs = true;
    e.height = sum / legs / kLegFractionOfHeight;
    e.rule = fmt::format("leg bones {:.4g} units / {:.3f}", sum / legs, kLegFractionOfHeight);
  } else {
    e.height = figure_size(motion);
    e.rule = "figure size (no legs found)";
  }
  return e;
}

}  // namespace koma::body
