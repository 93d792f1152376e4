// Adverbs: styles ("happily", "tiredly") as differences of gait spectra, and their combination
//
//   adverb = gait(styled) - gait(neutral)           (same skeleton topology, same settings)
//   C      = C_in + sum_j alpha_j * dC_j            (alpha in [0, 1] interpolates, outside extrapolates)
//
// The difference is taken in three parts, each so that alpha = 1 reproduces the styled gait exactly:
//   coefficients  dC = C_styled - C_neutral (complex, relative phases; linear in the waveforms)
//   posture       d_j = log(m_neutral_j^-1 m_styled_j) per joint; applied as m_j exp(alpha d_j)
//   cadence       ln(T_styled / T_neutral); applied as T exp(alpha * that)
#pragma once

#include <span>
#include <string>
#include <vector>

#include "koma/gait/fourier.hpp"

namespace koma::gait {

/// A style as a difference of two gaits.
///
/// Invariants (validate()): valid skeleton; posture has one finite entry per joint; delta has
/// channel_count() rows and harmonics + 1 columns, all finite; channel_harmonics empty or one entry
/// per channel in 0..harmonics with zeros above it in delta; log_period_ratio finite; roles and
/// frames empty or one per joint (frames unit quaternions).
struct Adverb {
  Skeleton skeleton;  ///< The neutral's skeleton; names and parents are what must match on use.
  AngleMode angles = AngleMode::log_map;  ///< Channel kind of both gaits.
  int harmonics = 5;                      ///< K: the larger of the two gaits' (delta has K + 1 columns).
  int reference_channel = kRootChannels;  ///< Phase reference row of both gaits.
  std::vector<Vec3> posture;              ///< Per joint, radians: log(m_neutral^-1 m_styled). Zero in Euler mode.
  double log_period_ratio = 0;            ///< ln(T_styled / T_neutral).
  Eigen::MatrixXcd delta;                 ///< C_styled - C_neutral, channel_count() x (K + 1).
  /// Per channel: the larger K_c of the two gaits (delta is zero above it). Empty = every channel
  /// has `harmonics` (files written before per-channel K).
  std::vector<int> channel_harmonics;
  /// Per joint: its body role (body::role_name(), "left_hip"...) found by name on the neutral's
  /// rig, or "" for a joint that plays none (a second spine joint, a finger). What an adverb is
  /// applied by on another rig; the joint names are kept as hints. Empty = not known.
  std::vector<std::string> roles;
  /// Per joint: its world rotation in the neutral's mean pose, heading-free (travel along +Z).
  /// Carries the joint's axes to another rig whose local axes differ. Empty = not known (adverb
  /// files written before roles were stored): usable on the same topology only.
  std::vector<Quat> frames;

  /// kRootChannels + 3 * joints.
  int channel_count() const noexcept { return kRootChannels + 3 * skeleton.joint_count(); }
  /// Throws Error(bad_data) naming the first broken invariant.
  void validate() const;
};

/// The world rotation of every joint in a pose of local rotations `local` (one per joint).
std::vector<Quat> pose_frames(const Skeleton& skeleton, std::span<const Quat> local);

/// styled - neutral, with the neutral rig's roles and mean-pose frames. Gaits of different
/// (per-channel) K are padded with zeros: a harmonic one of them does not keep is zero there.
/// Throws Error(mismatch) naming the first mismatched joint when the skeletons' topologies
/// differ, or the angle mode or reference channel.
Adverb make_adverb(const Gait& neutral, const Gait& styled);

/// An adverb with its weight alpha.
struct WeightedAdverb {
  Adverb adverb;
  double weight = 1.0;  ///< alpha; 0 = no effect, 1 = the full style, > 1 or < 0 extrapolates. Must be finite.
  std::string name;     ///< Shown in error contexts (e.g. the file it came from); may be empty.
};

/// C_in + sum alpha_j dC_j (with posture and cadence as above). alpha = 0 returns `in` unchanged;
/// neutral + 1 * (styled - neutral) returns the styled gait. The result keeps the most harmonics
/// of the gait and the adverbs, per channel (zeros padded). Throws Error(invalid_settings) for a
/// non-finite alpha, Error(mismatch) (first mismatched joint) for an adverb of another topology,
/// angle mode or reference channel.
Gait apply_adverbs(const Gait& in, std::span<const WeightedAdverb> adverbs);

/// The gait a fraction `w` of the way from `a` to `b` (0 = a, 1 = b): coefficients and bones
/// linearly, mean rotations by slerp, the period geometrically; other basis fields from `a`.
/// Throws Error(mismatch) for incompatible gaits, Error(invalid_settings) for a non-finite w.
Gait blend_gaits(const Gait& a, const Gait& b, double w);

}  // namespace koma::gait
