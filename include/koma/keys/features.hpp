// Features for key-pose selection: a generic [frames x D] matrix of weighted coordinates.
//
// The selection engine (metric.hpp, select.hpp) only ever sees a FeatureMatrix, so skeletons
// (world positions of joints and end sites, optionally projected through a camera) and video
// (region tracks) share one engine. Coordinates are pre-multiplied by sqrt(weight), so a squared
// Euclidean distance between two rows is the weighted sum of squared point distances.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "koma/core/large_pages.hpp"
#include "koma/core/enum_names.hpp"
#include "koma/core/motion.hpp"

namespace koma::keys {

/// How points are weighted in the error.
enum class WeightMode : std::uint8_t {
  equal,        ///< every point weighs 1
  bone_length,  ///< a point weighs the length of the bone to its parent (root: the mean), normalised to mean 1
};

/// How world positions are turned into features.
enum class Projection : std::uint8_t {
  none,         ///< 3D world positions (metres)
  front,        ///< orthographic, looking along -Z: (x, y) in metres
  side,         ///< orthographic, looking along -X: (z, y) in metres
  top,          ///< orthographic, looking down -Y: (x, z) in metres
  perspective,  ///< pinhole camera (Camera::position/target); image coordinates scaled to metres at the target's depth
};

/// The projections' and weight modes' names.
inline constexpr EnumNames<Projection, 5> kProjectionNames{{{{Projection::none, "none"},
                                                            {Projection::front, "front"},
                                                            {Projection::side, "side"},
                                                            {Projection::top, "top"},
                                                            {Projection::perspective, "perspective"}}}};
inline constexpr EnumNames<WeightMode, 2> kWeightModeNames{
    {{{WeightMode::equal, "equal"}, {WeightMode::bone_length, "bone_length"}}}, NameCase::exact, "bone_length"};

/// "none", "front", "side", "top", "perspective".
std::string_view to_string(Projection p) noexcept;
/// "equal", "bone_length".
std::string_view to_string(WeightMode w) noexcept;

/// A camera through which the error is measured on the rendered plane (as the patent does).
struct Camera {
  Projection projection = Projection::none;  ///< default: no projection (3D error)
  Vec3 position = Vec3(0, 1, 5);             ///< perspective: eye position, metres
  Vec3 target = Vec3(0, 1, 0);               ///< perspective: point looked at, metres
  double fov_degrees = 40.0;                 ///< perspective: vertical field of view, degrees, in (0, 180).
                                             ///< A uniform image scale: recorded, does not change which keys are best.

  /// Throws Error(invalid_settings) for a degenerate camera (position == target, fov out of range,
  /// looking straight up or down) or non-finite values.
  void validate() const;
};

/// Settings of extract_features().
struct FeatureSettings {
  WeightMode weights = WeightMode::equal;  ///< default: equal weights
  /// Per-point weight overrides by point name (joint name or "<joint>_end"); >= 0; applied after
  /// `weights` and before normalisation to mean 1. An unknown name is an error.
  std::vector<std::pair<std::string, double>> point_weights;
  Camera camera;  ///< default: no projection

  /// Throws Error(invalid_settings) naming the bad field.
  void validate() const;
};

/// A generic [frames x dims] feature matrix: `point_count()` points of `coords_per_point`
/// coordinates each (dims = points * coords_per_point), rows in frame order.
///
/// Invariants (validate()): frames >= 1; coords_per_point >= 1; values.size() == frames * dims;
/// point_ids and weights have one entry per point; every value is finite; weights >= 0.
struct FeatureMatrix {
  int frames = 0;            ///< rows
  int dims = 0;              ///< columns (weighted coordinates)
  int coords_per_point = 3;  ///< 3 for world positions, 2 for projected points or region tracks
  std::vector<int> point_ids;     ///< source point (skeleton point index, region id) of each feature point
  std::vector<double> weights;    ///< weight of each feature point (values are scaled by sqrt(weight))
  /// frames * dims, row-major, units: metres * sqrt(weight). On large pages, and resize() leaves
  /// new values unwritten (a million-frame take's features are written once, by the threads that
  /// compute them, instead of being zero-filled first).
  std::vector<double, LargePageAllocator<double>> values;
  /// Rows computed on demand instead of stored (select_keys on a long take: stored features would
  /// be a second copy of the motion). When set, `values` is empty and generate(first, count, out)
  /// writes rows first .. first + count - 1 (count * dims values) exactly as they would be stored;
  /// it may be called from several threads at once. Finiteness is then checked where rows are
  /// generated (the cost table), not by validate(). Only the exact selector's closed-form table
  /// (position with linear interpolation, or hold) and the residual reports read such a matrix.
  std::function<void(int first, int count, double* out)> generate;

  int point_count() const noexcept { return coords_per_point > 0 ? dims / coords_per_point : 0; }
  /// True when the rows are in `values` (row() may be used); false when they are generated.
  bool stored() const noexcept { return !generate; }
  /// Rows first .. first + count - 1 (count * dims values): in `values` when stored, else
  /// generated into `scratch`.
  const double* rows(int first, int count, std::vector<double>& scratch) const;
  const double* row(int f) const noexcept { return values.data() + static_cast<size_t>(f) * dims; }
  double* row(int f) noexcept { return values.data() + static_cast<size_t>(f) * dims; }

  /// Throws Error(bad_data) naming the first broken invariant (with frame for non-finite values).
  void validate() const;
};

/// The weight of every skeleton point (joints then end sites) under `settings` (before removing
/// unused points), normalised to mean 1 over the points in `points` (all when empty).
/// Throws Error(invalid_settings) for an unknown point name in settings.point_weights.
std::vector<double> point_weights(const Skeleton& skeleton, const FeatureSettings& settings,
                                  std::span<const int> points = {});

/// Features of a motion: forward kinematics of every frame, the chosen points (skeleton point
/// indices; all joints and end sites when empty; points with weight 0 are dropped), projected
/// through settings.camera, each scaled by sqrt(weight). Lossless apart from the projection.
/// Throws Error(invalid_settings) for invalid settings or out-of-range point indices, and
/// Error(bad_data) when the motion is invalid (NaN) or every point has weight 0.
FeatureMatrix extract_features(const Motion& motion, const FeatureSettings& settings = {},
                               std::span<const int> points = {});

namespace detail {
/// extract_features() for a motion the caller has validated already (select_keys: a long take is
/// checked once, not once per layer).
FeatureMatrix extract_features_of_valid(const Motion& motion, const FeatureSettings& settings, std::span<const int> points);
/// The same features with `generate` set instead of `values` (computed on demand, frame by frame,
/// bit for bit the rows extract_features() stores). `motion` must outlive the matrix.
FeatureMatrix generated_features_of_valid(const Motion& motion, const FeatureSettings& settings, std::span<const int> points);
}  // namespace detail

/// Projects world positions (one frame, `points` of them) into features exactly as
/// extract_features() does, writing point_ids.size() * coords_per_point values to `out`.
/// Used by pose-space interpolation (slerp + FK) to compare reconstructed frames.
void project_points(std::span<const Vec3> world_positions, const FeatureMatrix& layout,
                    const Camera& camera, std::span<double> out);

}  // namespace koma::keys
