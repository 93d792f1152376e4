#include "koma/keys/features.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <fmt/format.h>

#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"

namespace koma::keys {

std::string_view to_string(Projection p) noexcept { return kProjectionNames.name(p); }


std::string_view to_string(WeightMode w) noexcept { return kWeightModeNames.name(w); }


void Camera::validate() const {
  if (projection != Projection::perspective) return;
  if (!position.allFinite() || !target.allFinite()) {
    throw Error(ErrorCode::invalid_settings, "camera", "position and target must be finite");
  }
  const Vec3 f = target - position;
  if (f.norm() < 1e-9) throw Error(ErrorCode::invalid_settings, "camera", "position equals target");
  if (f.normalized().cross(Vec3::UnitY()).norm() < 1e-6) {
    throw Error(ErrorCode::invalid_settings, "camera", "camera looks straight up or down; tilt it slightly");
  }
  if (!(fov_degrees > 0 && fov_degrees < 180)) {
    throw Error(ErrorCode::invalid_settings, "camera", fmt::format("field of view {} must be in (0, 180) degrees", fov_degrees));
  }
}

void FeatureSettings::validate() const {
  camera.validate();
  for (const auto& [name, w] : point_weights) {
    if (!std::isfinite(w) || w < 0) {
      throw Error(ErrorCode::invalid_settings, "weight " + name, fmt::format("weight {} must be finite and >= 0", w));
    }
  }
}

void FeatureMatrix::validate() const {
  if (frames < 1) throw Error(ErrorCode::bad_data, "features", "no frames");
  if (coords_per_point < 1 || dims < coords_per_point || dims % coords_per_point != 0) {
    throw Error(ErrorCode::bad_data, "features", fmt::format("{} columns are not whole points of {} coordinates", dims, coords_per_point));
  }
  if (generate ? !values.empty() : values.size() != static_cast<size_t>(frames) * dims) {
    throw Error(ErrorCode::bad_data, "features", fmt::format("{} values for {} x {}", values.size(), frames, dims));
  }
  if (static_cast<int>(point_ids.size()) != point_count() || static_cast<int>(weights.size()) != point_count()) {
    throw Error(ErrorCode::bad_data, "features", "point_ids and weights need one entry per point");
  }
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0) throw Error(ErrorCode::bad_data, "features", "weights must be finite and >= 0");
  }
  if (generate) return;  // rows are checked where they are generated
  // Every value finite: blocks of frames on every core, then the first bad one named.
  const bool finite = tbb::parallel_reduce(
      tbb::blocked_range<int>(0, frames, 4096), true,
      [&](const tbb::blocked_range<int>& r, bool ok) {
        const double* v = row(r.begin());
        const size_t count = static_cast<size_t>(r.size()) * static_cast<size_t>(dims);
        for (size_t q = 0; q < count; ++q) ok &= std::isfinite(v[q]);
        return ok;
      },
      [](bool a, bool b) { return a && b; });
  if (finite) return;
  for (int f = 0; f < frames; ++f) {
    const double* r = row(f);
    for (int d = 0; d < dims; ++d) {
      if (!std::isfinite(r[d])) {
        throw Error(ErrorCode::bad_data, fmt::format("frame {}", f),
                    fmt::format("feature {} (point {}) is not finite (NaN or infinity)", d, point_ids[d / coords_per_point]));
      }
    }
  }
}

std::vector<double> point_weights(const Skeleton& skeleton, const FeatureSettings& settings, std::span<const int> points) {
  const int np = skeleton.point_count();
  std::vector<double> w(static_cast<size_t>(np), 1.0);
  if (settings.weights == WeightMode::bone_length) {
    double sum = 0;
    int count = 0;
    for (int p = 0; p < np; ++p) {
      if (p == 0) continue;
      const Vec3& off = p < skeleton.joint_count() ? skeleton.offsets[p] : skeleton.end_sites[p - skeleton.joint_count()].offset;
      w[p] = off.norm();
      sum += w[p];
      ++count;
    }
    w[0] = count > 0 ? sum / count : 1.0;
  }
  for (const auto& [name, value] : settings.point_weights) {
    int found = -1;
    for (int p = 0; p < np && found < 0; ++p) {
      if (skeleton.point_name(p) == name) found = p;
    }
    if (found < 0) throw Error(ErrorCode::invalid_settings, "weight " + name, "no joint or end site of that name");
    w[found] = value;
  }
  // Normalise to mean 1 over the points used, so errors stay in metres^2 per point.
  double sum = 0;
  int count = 0;
  auto add = [&](int p) { sum += w[p]; ++count; };
  if (points.empty()) {
    for (int p = 0; p < np; ++p) add(p);
  } else {
    for (int p : points) add(p);
  }
  if (sum > 0) {
    for (double& v : w) v *= count / sum;
  }
  return w;
}

namespace {

struct CameraBasis {
  Vec3 right, up, forward;
  double distance = 1;
};

CameraBasis basis(const Camera& c) {
  CameraBasis b;
  const Vec3 f = c.target - c.position;
  b.distance = f.norm();
  b.forward = f / b.distance;
  b.right = b.forward.cross(Vec3::UnitY()).normalized();
  b.up = b.right.cross(b.forward);
  return b;
}

}  // namespace

void project_points(std::span<const Vec3> world_positions, const FeatureMatrix& layout, const Camera& camera,
                    std::span<double> out) {
  const int n = static_cast<int>(layout.point_ids.size());
  const int c = layout.coords_per_point;
  KOMA_ASSERT(static_cast<int>(out.size()) >= n * c);
  CameraBasis b;
  if (camera.projection == Projection::perspective) b = basis(camera);
  for (int q = 0; q < n; ++q) {
    const Vec3& p = world_positions[layout.point_ids[q]];
    const double s = std::sqrt(layout.weights[q]);
    double* o = out.data() + static_cast<size_t>(q) * c;
    switch (camera.projection) {
      case Projection::none: o[0] = s * p.x(); o[1] = s * p.y(); o[2] = s * p.z(); break;
      case Projection::front: o[0] = s * p.x(); o[1] = s * p.y(); break;
      case Projection::side: o[0] = s * p.z(); o[1] = s * p.y(); break;
      case Projection::top: o[0] = s * p.x(); o[1] = s * p.z(); break;
      case Projection::perspective: {
        const Vec3 pc = p - camera.position;
        // Points at or behind the eye are clamped to a small depth instead of flipping over.
        const double z = std::max(pc.dot(b.forward), 1e-3 * b.distance);
        o[0] = s * pc.dot(b.right) / z * b.distance;
        o[1] = s * pc.dot(b.up) / z * b.distance;
        break;
      }
    }
  }
}

FeatureMatrix extract_features(const Motion& motion, const FeatureSettings& settings, std::span<const int> points) {
  motion.validate();
  return detail::extract_features_of_valid(motion, settings, points);
}

const double* FeatureMatrix::rows(int first, int count, std::vector<double>& scratch) const {
  if (!generate) return row(first);
  scratch.resize(static_cast<size_t>(count) * static_cast<size_t>(dims));
  generate(first, count, scratch.data());
  return scratch.data();
}

namespace {

// The layout (points, weights, dims) of a motion's features, without values.
FeatureMatrix feature_layout(const Motion& motion, const FeatureSettings& settings, std::span<const int> points) {
  settings.validate();
  const Skeleton& sk = motion.skeleton;
  for (int p : points) {
    if (p < 0 || p >= sk.point_count()) {
      throw Error(ErrorCode::invalid_settings, "features", fmt::format("point index {} outside 0..{}", p, sk.point_count() - 1));
    }
  }
  const std::vector<double> w = point_weights(sk, settings, points);
  FeatureMatrix out;
  out.frames = motion.frame_count;
  out.coords_per_point = settings.camera.projection == Projection::none ? 3 : 2;
  auto take = [&](int p) {
    if (w[p] > 0) {
      out.point_ids.push_back(p);
      out.weights.push_back(w[p]);
    }
  };
  if (points.empty()) {
    for (int p = 0; p < sk.point_count(); ++p) take(p);
  } else {
    for (int p : points) take(p);
  }
  if (out.point_ids.empty()) throw Error(ErrorCode::bad_data, "features", "every selected point has weight 0");
  out.dims = static_cast<int>(out.point_ids.size()) * out.coords_per_point;
  return out;
}

// Rows first .. first + count - 1 of the features laid out as `layout`, into out (count * dims),
// frame by frame into scratch buffers (a whole-motion WorldPoses would be another ~2x the features).
void feature_rows(const Motion& motion, const FeatureMatrix& layout, const Camera& camera, int first, int count, double* out) {
  const Skeleton& sk = motion.skeleton;
  const size_t J = static_cast<size_t>(sk.joint_count());
  std::vector<Vec3> pos(static_cast<size_t>(sk.point_count()));
  std::vector<Quat> rot(J);
  for (int f = first; f < first + count; ++f) {
    std::span<const Vec3> scales;
    if (!motion.scales.empty()) scales = {motion.scales.data() + static_cast<size_t>(f) * J, J};
    forward_kinematics(sk, motion.frame_rotations(f), motion.frame_translations(f), scales, pos, rot);
    project_points(pos, layout, camera, {out + static_cast<size_t>(f - first) * layout.dims, static_cast<size_t>(layout.dims)});
  }
}

}  // namespace

FeatureMatrix detail::extract_features_of_valid(const Motion& motion, const FeatureSettings& settings, std::span<const int> points) {
  FeatureMatrix out = feature_layout(motion, settings, points);
  out.values.resize(static_cast<size_t>(out.frames) * out.dims);
  // Blocks of frames on every core; each frame's row depends on that frame only.
  tbb::parallel_for(tbb::blocked_range<int>(0, out.frames, 512), [&](const tbb::blocked_range<int>& r) {
    feature_rows(motion, out, settings.camera, r.begin(), static_cast<int>(r.size()), out.row(r.begin()));
  });
  return out;
}

FeatureMatrix detail::generated_features_of_valid(const Motion& motion, const FeatureSettings& settings, std::span<const int> points) {
  FeatureMatrix out = feature_layout(motion, settings, points);
  FeatureMatrix layout;  // the generator's own copy of the layout (project_points reads ids and weights)
  layout.coords_per_point = out.coords_per_point;
  layout.point_ids = out.point_ids;
  layout.weights = out.weights;
  layout.dims = out.dims;
  out.generate = [&motion, layout = std::move(layout), camera = settings.camera](int first, int count, double* rows) {
    feature_rows(motion, layout, camera, first, count, rows);
  };
  return out;
}

}  // namespace koma::keys
