#include "koma/core/skeleton.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"

namespace koma {

std::string_view to_string(Channel channel) noexcept { return kChannelNames.name(channel); }

std::optional<Channel> parse_channel(std::string_view text) noexcept { return kChannelNames.parse(text); }


int Skeleton::find(std::string_view name) const noexcept {
  for (int j = 0; j < joint_count(); ++j) {
    if (names[j] == name) return j;
  }
  return -1;
}

std::string Skeleton::point_name(int p) const {
  if (p < joint_count()) return names[p];
  const int e = p - joint_count();
  const int parent = end_sites[e].parent;
  // Number the end sites of one joint: "Head_end", then "Head_end2", ...
  int ordinal = 1;
  for (int k = 0; k < e; ++k) ordinal += end_sites[k].parent == parent ? 1 : 0;
  return ordinal == 1 ? names[parent] + "_end" : fmt::format("{}_end{}", names[parent], ordinal);
}

int Skeleton::point_parent(int p) const noexcept {
  return p < joint_count() ? parents[p] : end_sites[p - joint_count()].parent;
}

EulerOrder Skeleton::euler_order(int joint) const noexcept {
  std::string order;
  for (Channel c : channels[joint]) {
    if (is_rotation(c)) order += static_cast<char>('X' + channel_axis(c));
  }
  if (order.empty()) return EulerOrder::ZXY;
  for (char axis : {'X', 'Y', 'Z'}) {
    if (order.find(axis) == std::string::npos) order += axis;
  }
  return parse_euler_order(order).value_or(EulerOrder::ZXY);
}

bool Skeleton::has_position_channels(int joint) const noexcept {
  return std::any_of(channels[joint].begin(), channels[joint].end(),
                     [](Channel c) { return !is_rotation(c); });
}

int Skeleton::channel_count() const noexcept {
  int n = 0;
  for (const auto& c : channels) n += static_cast<int>(c.size());
  return n;
}

double Skeleton::rest_height() const {
  const Motion rest = rest_motion(*this, 1.0, 1);
  const WorldPoses poses = forward_kinematics(rest);
  double lo = INFINITY, hi = -INFINITY;
  for (const Vec3& p : poses.positions) {
    lo = std::min(lo, p.y());
    hi = std::max(hi, p.y());
  }
  return hi - lo;
}

double Skeleton::rest_extent() const {
  const WorldPoses poses = forward_kinematics(rest_motion(*this, 1.0, 1));
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
  for (const Vec3& p : poses.positions) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  return (hi - lo).maxCoeff();
}

void Skeleton::validate() const {
  auto fail = [](std::string context, std::string message) {
    throw Error(ErrorCode::bad_data, std::move(context), std::move(message));
  };
  const size_t n = names.size();
  if (n == 0) fail("skeleton", "has no joints (invariant 1)");
  if (parents.size() != n || offsets.size() != n || channels.size() != n) {
    fail("skeleton", fmt::format("{} names but {} parents, {} offsets, {} channel lists (invariant 1)",
                                 n, parents.size(), offsets.size(), channels.size()));
  }
  std::unordered_set<std::string_view> seen;
  for (size_t j = 0; j < n; ++j) {
    const std::string context = fmt::format("joint {} '{}'", j, names[j]);
    if (j == 0 && parents[0] != -1) fail(context, "the first joint must be the root (parent -1) (invariant 2)");
    if (j > 0 && (parents[j] < 0 || parents[j] >= static_cast<int>(j))) {
      fail(context, fmt::format("parent index {} is not an earlier joint (invariant 2)", parents[j]));
    }
    if (names[j].empty()) fail(context, "has an empty name (invariant 3)");
    if (!seen.insert(names[j]).second) fail(context, "name is used twice (invariant 3)");
    if (channels[j].size() > 6) fail(context, "has more than 6 channels (invariant 4)");
    for (size_t a = 0; a < channels[j].size(); ++a) {
      for (size_t b = a + 1; b < channels[j].size(); ++b) {
        if (channels[j][a] == channels[j][b]) {
          fail(context, fmt::format("lists channel {} twice (invariant 4)", to_string(channels[j][a])));
        }
      }
    }
    if (!offsets[j].allFinite()) fail(context, "offset is not finite (invariant 5)");
  }
  for (size_t e = 0; e < end_sites.size(); ++e) {
    if (end_sites[e].parent < 0 || end_sites[e].parent >= static_cast<int>(n)) {
      fail(fmt::format("end site {}", e), "hangs from no existing joint (invariant 6)");
    }
    if (!end_sites[e].offset.allFinite()) fail(fmt::format("end site {}", e), "offset is not finite (invariant 6)");
  }
}

void require_same_topology(const Skeleton& a, const Skeleton& b) {
  const int n = std::min(a.joint_count(), b.joint_count());
  for (int j = 0; j < n; ++j) {
    if (a.names[j] != b.names[j] || a.parents[j] != b.parents[j]) {
      throw Error(ErrorCode::mismatch, fmt::format("joint {}", j),
                  fmt::format("skeletons differ: '{}' (parent {}) vs '{}' (parent {})", a.names[j],
                              a.parents[j], b.names[j], b.parents[j]));
    }
  }
  if (a.joint_count() != b.joint_count()) {
    throw Error(ErrorCode::mismatch, fmt::format("joint {}", n),
                fmt::format("skeletons differ in size: {} vs {} joints; first extra joint '{}'",
                            a.joint_count(), b.joint_count(),
                            a.joint_count() > n ? a.names[n] : b.names[n]));
  }
}

}  // namespace koma
