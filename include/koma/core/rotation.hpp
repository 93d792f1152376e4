// Rotation helpers: per-axis Euler orders (as BVH channels list them), quaternion <-> Euler, the
// quaternion log/exp maps used to filter rotations as continuous 3-vectors, and slerp.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "koma/core/enum_names.hpp"

namespace koma {

using Vec3 = Eigen::Vector3d;
using Quat = Eigen::Quaterniond;

/// The six Tait-Bryan orders. ZXY means R = Rz * Rx * Ry (BVH "Zrotation Xrotation Yrotation").
enum class EulerOrder : std::uint8_t { XYZ, XZY, YXZ, YZX, ZXY, ZYX };

/// The orders' names ("ZXY"), parsed in any case.
inline constexpr EnumNames<EulerOrder, 6> kEulerOrderNames{{{{EulerOrder::XYZ, "XYZ"},
                                                            {EulerOrder::XZY, "XZY"},
                                                            {EulerOrder::YXZ, "YXZ"},
                                                            {EulerOrder::YZX, "YZX"},
                                                            {EulerOrder::ZXY, "ZXY"},
                                                            {EulerOrder::ZYX, "ZYX"}}},
                                                          NameCase::ignore,
                                                          "ZXY"};

/// "XYZ", "ZXY", ...
std::string_view to_string(EulerOrder order) noexcept;
/// Parses "XYZ", "zxy", ...; nullopt otherwise.
std::optional<EulerOrder> parse_euler_order(std::string_view text) noexcept;
/// The three axis indices (0 = X, 1 = Y, 2 = Z) in matrix-product order.
std::array<int, 3> euler_axes(EulerOrder order) noexcept;

/// R = R_a0(angles[0]) * R_a1(angles[1]) * R_a2(angles[2]) for the order's axes a0, a1, a2.
/// `angles` are in radians and listed in the order's axis order (ZXY: z, x, y).
Quat euler_to_quat(const Vec3& angles, EulerOrder order) noexcept;

/// Inverse of euler_to_quat: the angles (radians, in the order's axis order) of `q`. Of the two
/// equivalent solutions, and of all 2*pi shifts of each angle, returns the one nearest to `near`
/// (the previous frame's angles), so a sequence of conversions stays continuous and reproduces the
/// angles it was made from. euler_to_quat(quat_to_euler(q, o, n), o) equals q up to sign.
Vec3 quat_to_euler(const Quat& q, EulerOrder order, const Vec3& near = Vec3::Zero()) noexcept;

/// Log map: the rotation vector (axis * angle, angle in [0, pi]) of a unit quaternion.
Vec3 quat_log(const Quat& q) noexcept;
/// Exp map: the unit quaternion of rotation vector `v` (axis * angle).
Quat quat_exp(const Vec3& v) noexcept;

/// Spherical interpolation along the shorter arc; t in [0, 1]; the result is normalised.
Quat slerp(const Quat& a, const Quat& b, double t) noexcept;

}  // namespace koma
