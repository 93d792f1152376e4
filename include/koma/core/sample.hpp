// A built-in procedural character, so the demo, tests and benchmarks need no data files.
#pragma once

#include "koma/core/motion.hpp"

namespace koma {

/// What the sample character does.
struct SampleSettings {
  double frame_rate = 60.0;   ///< frames per second of the generated motion
  int walk_cycles = 2;        ///< full walk cycles (two steps each), >= 0
  double cycle_seconds = 1.1; ///< duration of one walk cycle
  bool jump = true;           ///< end with a crouch, a forward jump and a landing
  double arm_swing = 1.0;     ///< scales arm swing (0 = arms still)

  /// Throws Error(invalid_settings) for out-of-range values or an empty motion.
  void validate() const;
};

/// The sample skeleton: 19 joints (Hips root, spine chain, head, arms, legs with toes), 1.75 m
/// tall, facing +Z, channel layout of a typical mocap BVH (root 6, others 3, ZXY order).
Skeleton sample_skeleton();

/// A deterministic walk (then, optionally, a jump) on the sample skeleton, walking along +Z.
/// Feet are planted exactly during stance: the root advances by what the stance foot moves back,
/// and the lowest foot point touches y = 0. source_unit is centimetre, like most mocap files.
Motion make_sample_motion(const SampleSettings& settings = {});

}  // namespace koma
