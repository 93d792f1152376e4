// Motion: a skeleton animated at a fixed frame rate, stored as dense [frames x joints] arrays.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "koma/core/skeleton.hpp"
#include "koma/core/units.hpp"

namespace koma {

/// Dense animation: for every frame and joint a local rotation and a local translation.
///
/// Layout: element (frame f, joint j) is at index f * joint_count + j. The local translation of a
/// joint without position channels equals its rest offset on every frame; with position channels it
/// is the animated value (BVH position channels replace the OFFSET, as every major importer reads
/// them). Time of frame f is f / frame_rate seconds, never accumulated.
///
/// Invariants (checked by validate()):
///  1. the skeleton is valid;
///  2. frame_rate is finite and > 0; frame_count >= 1;
///  3. rotations and translations hold frame_count * joint_count entries; scales is empty or the same;
///  4. every value is finite, every rotation has unit norm (within 1e-6).
struct Motion {
  Skeleton skeleton;
  double frame_rate = 30.0;   ///< Frames per second.
  int frame_count = 0;        ///< Number of frames.
  std::vector<Quat> rotations;     ///< Local rotations, unit quaternions.
  std::vector<Vec3> translations;  ///< Local translations, metres, in the parent's frame.
  std::vector<Vec3> scales;        ///< Optional local scale per axis (squash and stretch); empty = 1.
  LengthUnit source_unit = LengthUnit::metre;  ///< Unit of the file it came from; writers restore it.
  /// Metres per file unit when the file's unit was given as a number (a unit of its own, e.g. a
  /// BVH read with scale 0.056); 0 (default) = the named source_unit. Writers restore it.
  double source_scale = 0.0;
  /// The clip's name: the animation (glTF) or stack (FBX) it was read from, or the file's stem
  /// (BVH, unnamed animations). Writers name the written animation / take with it, so a clip keeps
  /// its name through every command. Empty = unnamed (writers use the output file's stem).
  std::string name;

  int joint_count() const noexcept { return skeleton.joint_count(); }
  /// Seconds from the first to the last frame: (frame_count - 1) / frame_rate.
  double duration() const noexcept {
    return frame_count > 1 ? (frame_count - 1) / frame_rate : 0.0;
  }
  /// Metres per unit of the source file: source_scale when set, else metres_per_unit(source_unit).
  double source_metres_per_unit() const noexcept {
    return source_scale > 0 ? source_scale : metres_per_unit(source_unit);
  }
  /// The source unit as reports name it: "cm", or "0.056 m" for a unit given as a number.
  std::string source_unit_label() const;
  /// Time of frame f in seconds.
  double time(int frame) const noexcept { return frame / frame_rate; }

  std::span<const Quat> frame_rotations(int f) const {
    return {rotations.data() + static_cast<size_t>(f) * joint_count(), static_cast<size_t>(joint_count())};
  }
  std::span<Quat> frame_rotations(int f) {
    return {rotations.data() + static_cast<size_t>(f) * joint_count(), static_cast<size_t>(joint_count())};
  }
  std::span<const Vec3> frame_translations(int f) const {
    return {translations.data() + static_cast<size_t>(f) * joint_count(), static_cast<size_t>(joint_count())};
  }
  std::span<Vec3> frame_translations(int f) {
    return {translations.data() + static_cast<size_t>(f) * joint_count(), static_cast<size_t>(joint_count())};
  }
  const Quat& rotation(int f, int j) const { return rotations[static_cast<size_t>(f) * joint_count() + j]; }
  const Vec3& translation(int f, int j) const { return translations[static_cast<size_t>(f) * joint_count() + j]; }

  /// Throws koma::Error(bad_data) naming the first broken invariant (with frame and joint).
  void validate() const;
};

/// A motion of `frames` frames in the skeleton's rest pose (identity rotations, rest offsets).
Motion rest_motion(const Skeleton& skeleton, double frame_rate, int frames);

}  // namespace koma
