#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/bvh.hpp"

namespace koma::io {

namespace {

// A number with `digits` significant digits in plain (non-exponent) notation, trailing zeros
// trimmed: 12.5, -0.00012, 0. Plain notation keeps every BVH consumer happy.
void append_number(std::string& out, double v, int digits) {
  if (v == 0.0 || std::abs(v) < 1e-12) {
    out += '0';
    return;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(v))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 17);
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  (void)ec;
  std::string_view s(buf, static_cast<size_t>(ptr - buf));
  if (s.find('.') != std::string_view::npos) {
    while (s.back() == '0') s.remove_suffix(1);
    if (s.back() == '.') s.remove_suffix(1);
  }
  if (s == "-0") s = "0";
  out += s;
}

// Euler angles as exporters write them. Of the two equivalent solutions (and their whole-turn
// shifts), take the one nearest the previous frame when it is near (every angle within 60
// degrees), so curves stay continuous through +-180 and through gimbal passes; after a jump, or on
// the first frame, take the standard decomposition (middle angle in [-90, 90] degrees, the others
// in (-180, 180]). This reproduces the angles of every file in the test corpus modulo 360.
Vec3 file_style_euler(const Quat& q, EulerOrder order, const Vec3* previous) {
  if (previous) {
    const Vec3 near = quat_to_euler(q, order, *previous);
    if ((near - *previous).cwiseAbs().maxCoeff() < kPi / 3) return near;
  }
  Vec3 a = quat_to_euler(q, order, Vec3::Zero());
  if (std::abs(a[1]) > kPi / 2) a = Vec3(a[0] + kPi, kPi - a[1], a[2] + kPi);
  for (int i = 0; i < 3; ++i) a[i] -= 2 * kPi * std::round(a[i] / (2 * kPi));
  return a;
}

void write_joint(std::string& out, const Skeleton& sk, int j, int depth, double inv_scale, int digits) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  out += indent;
  out += sk.parents[j] < 0 ? "ROOT " : "JOINT ";
  out += sk.names[j];
  out += '\n' + indent + "{\n" + indent + "  OFFSET";
  for (int i = 0; i < 3; ++i) {
    out += ' ';
    append_number(out, sk.offsets[j][i] * inv_scale, digits);
  }
  out += '\n' + indent + "  CHANNELS " + std::to_string(sk.channels[j].size());
  for (Channel c : sk.channels[j]) {
    out += ' ';
    out += to_string(c);
  }
  out += '\n';
  for (int k = j + 1; k < sk.joint_count(); ++k) {
    if (sk.parents[k] == j) write_joint(out, sk, k, depth + 1, inv_scale, digits);
  }
  for (const EndSite& e : sk.end_sites) {
    if (e.parent != j) continue;
    out += indent + "  End Site\n" + indent + "  {\n" + indent + "    OFFSET";
    for (int i = 0; i < 3; ++i) {
      out += ' ';
      append_number(out, e.offset[i] * inv_scale, digits);
    }
    out += '\n' + indent + "  }\n";
  }
  out += indent + "}\n";
}

}  // namespace

std::string format_bvh(const Motion& motion, const BvhWriteOptions& options) {
  motion.validate();
  if (options.significant_digits < 3 || options.significant_digits > 17) {
    throw Error(ErrorCode::invalid_settings, "BVH writer",
                fmt::format("significant digits {} must be within 3..17", options.significant_digits));
  }
  const Skeleton& sk = motion.skeleton;
  // The named unit asked for, else the source file's unit (a number of metres per unit included).
  const double inv_scale = 1.0 / (options.unit ? metres_per_unit(*options.unit) : motion.source_metres_per_unit());
  const int digits = options.significant_digits;
  std::string out = "HIERARCHY\n";
  // Joints are written depth-first; a valid skeleton in parent-before-child order whose children
  // are listed after their parents is reproduced in the same order.
  write_joint(out, sk, 0, 0, inv_scale, digits);
  out += fmt::format("MOTION\nFrames: {}\nFrame Time: ", motion.frame_count);
  append_number(out, 1.0 / motion.frame_rate, 10);
  out += '\n';

  const int joints = sk.joint_count();
  // Depth-first order of joints, which is the order of values in a row.
  std::vector<int> order;
  order.reserve(joints);
  std::vector<int> todo{0};
  while (!todo.empty()) {
    const int j = todo.back();
    todo.pop_back();
    order.push_back(j);
    for (int k = joints - 1; k > j; --k) {
      if (sk.parents[k] == j) todo.push_back(k);
    }
  }
  std::vector<EulerOrder> euler(joints);
  std::vector<Vec3> previous(joints, Vec3::Zero());
  for (int j = 0; j < joints; ++j) euler[j] = sk.euler_order(j);
  out.reserve(out.size() + static_cast<size_t>(motion.frame_count) * sk.channel_count() * 10);
  for (int f = 0; f < motion.frame_count; ++f) {
    bool first_value = true;
    for (int j : order) {
      const auto& ch = sk.channels[j];
      if (ch.empty()) continue;
      const auto axes = euler_axes(euler[j]);
      Vec3 angles = Vec3::Zero();
      bool need_angles = false;
      for (Channel c : ch) need_angles |= is_rotation(c);
      if (need_angles) {
        angles = file_style_euler(motion.rotation(f, j), euler[j], f > 0 ? &previous[j] : nullptr);
        previous[j] = angles;
      }
      const Vec3& t = motion.translation(f, j);
      for (Channel c : ch) {
        if (!first_value) out += ' ';
        first_value = false;
        if (is_rotation(c)) {
          const int axis = channel_axis(c);
          const int slot = axis == axes[0] ? 0 : axis == axes[1] ? 1 : 2;
          append_number(out, angles[slot] * kRadToDeg, digits);
        } else {
          append_number(out, t[channel_axis(c)] * inv_scale, digits);
        }
      }
    }
    out += '\n';
  }
  return out;
}

void write_bvh(const std::filesystem::path& path, const Motion& motion, const BvhWriteOptions& options) {
  write_file_atomic(path, format_bvh(motion, options));
}

}  // namespace koma::io
