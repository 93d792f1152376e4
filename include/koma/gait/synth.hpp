// Synthesis: a gait spectrum played back as a motion of any duration and frame rate.
//
//   phase    phi(t) = integral of 2 pi speed / T(t) dt        (speed scales omega; T may change)
//   channels x(phi) = DC + stride * sum_k Re(c_k e^{i k phi})  (stride scales the swing amplitudes)
//   joints   q_j = m_j exp(x_j)  (log map)   or   euler_to_quat(x_j)  (Euler mode)
//   root     height x_0; horizontal position = integral of stride * speed * (x_1 fwd + x_2 lateral)
//            so the root travels forward in step with stride (distance per cycle) and speed.
//
// A looping synthesis fits a whole number of cycles into the duration (nudging the speed by at
// most half a cycle over the clip), so frame F (one past the last) would equal frame 0 exactly:
//
//   frame   0   1   2  ...  F-1 | 0   1  ...        phase of frame f = phi_0 + 2 pi n f / F
//           |<----- n cycles ---->|
//
// Every clip starts at the calmest pose of the first gait (phi_0: the phase where the fastest
// joint channel changes slowest), so a loop's seam falls where least happens.
#pragma once

#include <span>

#include "koma/gait/adverb.hpp"

namespace koma::gait {

/// Settings of synthesize().
struct SynthSettings {
  double seconds = 10.0;     ///< Length of the output, seconds (> 0). Default 10 s.
  double frame_rate = 24.0;  ///< Output frames per second (> 0). Default 24.
  double stride = 1.0;       ///< beta: scales the swing (harmonics) and the distance per cycle, > 0. Default 1.
  double speed = 1.0;        ///< Scales the cadence (omega) and with it the travel speed, > 0. Default 1.
  /// Fit a whole number of cycles so the clip loops without a seam: frame_count = round(seconds *
  /// frame_rate) and the frame after the last would be frame 0. Only for a single gait. Default true.
  bool loop = true;
  bool in_place = false;          ///< Keep the root over the origin (sway only, no travel). Default false.
  double transition_cycles = 1.0; ///< A gait change blends over this many cycles of the previous gait, > 0. Default 1.
  /// Throws Error(invalid_settings) naming the first out-of-range field.
  void validate() const;
};

/// One gait of a sequence, starting at `start` seconds (the first segment's start is ignored: it
/// plays from 0).
struct GaitSegment {
  Gait gait;
  double start = 0;  ///< Seconds; strictly increasing along the sequence.
};

/// The gait as a motion on the gait's skeleton (use retarget() for another one). Deterministic.
/// Throws Error(invalid_settings) for bad settings, Error(bad_data) for an invalid gait.
Motion synthesize(const Gait& gait, const SynthSettings& settings = {});

/// A sequence of gaits with transitions: from each segment's start, coefficients, posture and
/// period blend from the previous gait to this one over transition_cycles of the previous period
/// (smoothstep weight), while the phase keeps running. Throws Error(invalid_settings) for an empty
/// sequence, non-increasing starts or loop = true with more than one segment; Error(mismatch)
/// when the gaits are not compatible (require_compatible()).
Motion synthesize(std::span<const GaitSegment> segments, const SynthSettings& settings = {});

/// The gait driving another skeleton of the same topology with other bone lengths: angles are
/// kept, the skeleton and bone vectors become the target's, and the root channels (height,
/// speeds) scale by the ratio of total bone length below and beside the root (target / source).
/// `bones` are the target's local translations per joint (e.g. its first frame; the root's entry
/// is unused). Throws Error(mismatch) naming the first mismatched joint; Error(bad_data) when
/// bones is not one finite vector per joint or the skeleton has no bone length.
Gait retarget(const Gait& gait, const Skeleton& target, std::span<const Vec3> bones);

}  // namespace koma::gait
