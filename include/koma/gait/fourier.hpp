// Fourier spectra of gait cycles: every channel as DC + K harmonics, with phases relative to the
// first harmonic of a reference joint (JP3312337B2; Unuma, Anjyo, Takeuchi 1995).
//
//   x(phi) = Re c_0 + sum_{k=1..K} Re( c_k e^{i k phi} ) = a_0 + sum_k A_k cos(k phi + theta_k)
//
// with phi in [0, 2 pi) the phase of the cycle, A_k = |c_k| the amplitude and theta_k = arg c_k the
// phase of harmonic k. Phases are made relative by shifting time so that the reference channel's
// first harmonic has phase 0 (c_k -> c_k e^{-i k theta_ref}); the result does not depend on where
// the input was cut (time-shift invariance).
#pragma once

#include <Eigen/Core>
#include <complex>
#include <span>
#include <string>
#include <vector>

#include "koma/core/units.hpp"
#include "koma/gait/cycle.hpp"

namespace koma::gait {

/// Settings of the Fourier analysis.
///
/// How many harmonics each channel keeps (K_c): by default the smallest that reproduces the
/// averaged cycle within a tolerance, per channel, up to a cap:
///   joint channels  the joint's three channels each leave at most tolerance / sqrt(3) RMS above
///                   K_c (so, by Parseval, the three together at most `tolerance`); then, while
///                   the joint's rotation-angle RMS (reconstruction_error()) is still above
///                   `tolerance`, the channel of the joint with most left above its K_c gets one
///                   more harmonic
///   root height     at most height_tolerance RMS above K_c
///   root speeds     at most speed_tolerance RMS above K_c
///   chains          then every joint keeps at least the harmonics of every joint below it, and
///                   the root channels those of the root joint: a planted foot is still because
///                   the harmonics of hips, knee, ankle and root travel cancel in the world, and
///                   cutting them at different K breaks that (foot skating on dataset-2's normal
///                   walk: 0.100 of the root speed without this rule, 0.038 with it, 0.064 at K = 5
///                   everywhere; docs/gait.md)
/// every K_c in 1 .. min(max_harmonics, samples / 2 - 1). A joint whose motion has more above the
/// cap than `tolerance` (a glitch in the data, a shuffle) stays above it: reconstruction_error()
/// reports it. `harmonics` >= 1 instead keeps that K on every channel (the behaviour before
/// per-channel K; `koma gait analyze --harmonics 5`).
struct FourierSettings {
  /// K for every channel, >= 1 and < samples / 2; 0 (default) = per channel by the tolerances.
  int harmonics = 0;
  /// Per joint: largest RMS rotation angle the spectrum may leave, radians, > 0. Default 0.5 deg.
  double tolerance = 0.5 * kDegToRad;
  /// Root height: largest RMS error, metres, > 0. Default 1 mm.
  double height_tolerance = 0.001;
  /// Root forward and lateral speed: largest RMS error, metres per second, > 0. Default 0.01 m/s.
  double speed_tolerance = 0.01;
  /// Cap on the per-channel K, >= 1 (and never more than samples / 2 - 1). Default 16: a cycle
  /// of 30 fps walks has about 32 frames, whose motion ends near harmonic 16; above it a 64-sample
  /// cycle holds the kinks of resampling, not motion.
  int max_harmonics = 16;
  /// Joint whose largest first harmonic sets phase 0. Empty (default) = the first joint whose name
  /// looks like a thigh (upleg, upperleg, thigh, femur; case-insensitive), else the joint channel
  /// with the largest first harmonic.
  std::string reference_joint;
  /// Throws Error(invalid_settings) naming the first out-of-range field.
  void validate() const;
};

/// A gait as a spectrum: the basis (skeleton, mean posture, travel frame, period) plus per-channel
/// Fourier coefficients.
///
/// Invariants (validate()): the basis is valid; coefficients has basis.channel_count() rows and
/// harmonics + 1 columns, all finite, column 0 real; channel_harmonics is empty or has one entry
/// per channel in 0..harmonics, and every coefficient above a channel's entry is zero;
/// reference_channel is a joint channel row.
struct Gait {
  GaitBasis basis;
  int harmonics = 5;  ///< K: the most harmonics any channel keeps (coefficients has K + 1 columns).
  /// channel_count() x (K + 1): column 0 the DC (real part only), column k the complex c_k, with
  /// relative phases. Units of the channel (metres, m/s or radians). Zero above a channel's K_c.
  Eigen::MatrixXcd coefficients;
  /// Per channel (row): K_c, the harmonics it keeps. Empty = every channel keeps `harmonics` (files
  /// written before per-channel K).
  std::vector<int> channel_harmonics;
  int reference_channel = kRootChannels;  ///< Row whose first harmonic has phase 0.
  /// Phase (radians) the reference channel's first harmonic had at the start of the analysed cycle:
  /// evaluating at phi + reference_phase reproduces the cycle sample at phi.
  double reference_phase = 0;

  /// Throws Error(bad_data) naming the first broken invariant.
  void validate() const;
};

/// The spectrum of an averaged cycle, by FFT (Eigen's kissfft backend). Lossy: harmonics above K
/// are dropped (reconstruction_error() measures the loss). Throws Error(invalid_settings) for bad
/// settings, K >= samples / 2 or an unknown reference joint.
Gait fourier_analyze(const GaitCycle& cycle, const FourierSettings& settings = {});

/// extract_cycle() then fourier_analyze(): the gait of a periodic motion. Throws like both.
Gait analyze_gait(const Motion& motion, const CycleSettings& cycle = {}, const FourierSettings& fourier = {});

/// K_c of row `row`: channel_harmonics[row], or harmonics when channel_harmonics is empty.
int channel_harmonic_count(const Gait& gait, int row);

/// The gait with `harmonics` columns (>= gait.harmonics): zeros appended, K_c kept, so gaits and
/// adverbs of different K combine (a harmonic a spectrum does not keep is zero). Lossless.
Gait padded(const Gait& gait, int harmonics);

/// Channel values at relative phase `phi` (radians, any real). `stride` scales every harmonic
/// k >= 1 (the swing amplitudes); 1 reproduces the gait.
Eigen::VectorXd evaluate(const Gait& gait, double phi, double stride = 1.0);

/// The cycle re-sampled from the spectrum: channel_count() x samples, column i at the analysed
/// cycle's phase 2*pi*i/samples (so it lines up with GaitCycle::samples). samples >= 1.
Eigen::MatrixXd reconstruct_cycle(const Gait& gait, int samples);

/// How well the spectrum reproduces the averaged cycle.
struct ReconstructionError {
  std::vector<double> joint_rms;  ///< Per joint: RMS over samples of the rotation angle error, radians.
  int worst_joint = 0;            ///< Joint with the largest RMS.
  double worst_rms = 0;           ///< Its RMS, radians.
  double height_rms = 0;          ///< RMS error of the root height, metres.
};

/// Compares every sample of `cycle` with the spectrum's reconstruction at the same phase, as the
/// angle between the joint rotations each encodes. Throws Error(mismatch) when the gait's channel
/// count differs from the cycle's.
ReconstructionError reconstruction_error(const GaitCycle& cycle, const Gait& gait);

/// Per joint, radians: the RMS over the cycle of everything above harmonic `harmonics` (K) in the
/// averaged cycle's joint channels (harmonics K+1 .. samples/2, all three channels together). By
/// Parseval this is exactly the channel-space error of the K-harmonic reconstruction, so it tells
/// how much of the motion lies above K. Throws Error(invalid_settings) for K < 0.
std::vector<double> energy_above(const GaitCycle& cycle, int harmonics);

/// Per channel (row): the RMS over the cycle of everything above harmonic `harmonics[row]` (K_c)
/// in the averaged cycle, in the channel's unit. harmonics has one entry per channel, each >= 0.
/// Throws Error(invalid_settings) for a wrong count or a negative entry.
std::vector<double> channel_energy_above(const GaitCycle& cycle, std::span<const int> harmonics);

/// Per joint, radians: how much the motion itself has above each channel's K_c, measured on the
/// raw frames: every kept cycle of `cycle` (cycle.starts, cycle.period_frames), cut at whole
/// frames, is fitted on its own frames by least squares with DC + a linear trend + K_c harmonics
/// per channel (no averaging, resampling or alignment); the result is the RMS rotation angle
/// between the frames and the fit, over all those frames. It tells motion from pipeline: where the
/// spectrum's error (reconstruction_error()) is at or below this, the loss is the motion's own
/// detail above K_c (heel strike, toe-off), which averaging only smooths. A cycle too short for
/// its K_c is fitted with as many harmonics as its frames hold. Throws Error(mismatch) when the
/// motion, cycle and gait differ in joints.
std::vector<double> raw_energy_above(const Motion& motion, const GaitCycle& cycle, const Gait& gait);

/// Per joint: the largest K_c of its three channels.
std::vector<int> joint_harmonics(const Gait& gait);

/// Per joint, per harmonic k = 1..K: the amplitude of the joint's rotation at that harmonic,
/// sqrt(sum over its three channels of |c_k|^2), radians (what a spectra plot shows).
/// Result [joints][K].
std::vector<std::vector<double>> joint_amplitudes(const Gait& gait);

/// Distance between two gaits of one topology and angle mode (harmonics one keeps and the other
/// does not count as zero there): the RMS over the cycle of the
/// difference of their joint-rotation waveforms, summed over joint channels, with the posture
/// (mean rotation) difference added to the DC term:
///   sqrt( sum_j |log(m_a^-1 m_b)|^2 + sum_{joint rows} ( |dDC|^2 + 1/2 sum_k |dc_k|^2 ) ), radians.
/// Root channels (metres, m/s) are left out. Throws Error(mismatch) for other topologies or modes
/// (naming the first mismatched joint).
double coefficient_distance(const Gait& a, const Gait& b);

/// Throws Error(mismatch) when `a` and `b` cannot be combined: topology (names the first
/// mismatched joint), angle mode, or reference channel. Harmonic counts may differ (see padded()).
void require_compatible(const Gait& a, const Gait& b);

}  // namespace koma::gait
