#include "koma/io/angles_csv.hpp"

#include <fmt/format.h>

#include "koma/core/atomic_file.hpp"

namespace koma::io {

std::string format_angles_csv(const Motion& motion) {
  motion.validate();
  const Skeleton& sk = motion.skeleton;
  std::string out = "frame,time";
  for (int j = 0; j < sk.joint_count(); ++j)
    for (Channel c : sk.channels[j]) out += fmt::format(",{}.{}", sk.names[j], to_string(c));
  out += '\n';
  std::vector<Vec3> prev(sk.joint_count(), Vec3::Zero());
  for (int f = 0; f < motion.frame_count; ++f) {
    out += fmt::format("{},{:.9g}", f, motion.time(f));
    for (int j = 0; j < sk.joint_count(); ++j) {
      const EulerOrder order = sk.euler_order(j);
      prev[j] = quat_to_euler(motion.rotation(f, j), order, prev[j]);  // nearest to the last frame
      const auto axes = euler_axes(order);
      for (Channel c : sk.channels[j]) {
        const int axis = channel_axis(c);
        double v = 0;
        if (is_rotation(c)) {
          for (int k = 0; k < 3; ++k)
            if (axes[k] == axis) v = prev[j][k];
        } else {
          v = motion.translation(f, j)[axis];
        }
        out += fmt::format(",{:.9g}", v);
      }
    }
    out += '\n';
  }
  return out;
}

void write_angles_csv(const std::filesystem::path& path, const Motion& motion) {
  write_file_atomic(path, format_angles_csv(motion));
}

}  // namespace koma::io
