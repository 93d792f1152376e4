// The gait style pipeline in one call: analyse a walk (cycle, spectrum), add adverbs, blend into
// later gaits (transitions), drive another character of the same topology (retarget), synthesise.
// `koma gait style` / `koma gait synth`, Python's koma.gait_style and the Blender add-on call it.
//
//   motion ──analyse──▶ Gait ──apply_adverbs──▶ styled ──(transitions, retarget)──▶ synthesize ──▶ Motion
#pragma once

#include <string>

#include <span>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/gait/adverb.hpp"
#include "koma/gait/cycle.hpp"
#include "koma/gait/fourier.hpp"
#include "koma/gait/synth.hpp"

namespace koma::gait {

/// A motion's gait with what the analysis measured on the way.
struct GaitAnalysis {
  GaitCycle cycle;            ///< The averaged cycle (seam correction, rotation jumps found).
  Gait gait;                  ///< Its spectrum.
  ReconstructionError error;  ///< How well the spectrum reproduces the cycle (lossy by K).
  /// Per joint, radians: raw_energy_above(), what the motion itself has above the joint's K_c.
  std::vector<double> raw_above;
};

/// extract_cycle(), fourier_analyze(), reconstruction_error() and raw_energy_above(). Throws like
/// the first two.
GaitAnalysis analyse_gait(const Motion& motion, const CycleSettings& cycle = {}, const FourierSettings& fourier = {});

/// analyse_gait() of a motion read from `file`: its bad_data errors name the file (context `file`,
/// the step that failed, e.g. "period: ", leading the message), and a clip shorter than 1.5 of
/// cycle.max_period that holds no period is told what a gait needs. Other errors pass unchanged.
GaitAnalysis analyse_gait_of(const Motion& motion, const std::string& file, const CycleSettings& cycle = {},
                             const FourierSettings& fourier = {});

/// Everything after the adverbs.
struct StyleSettings {
  CycleSettings cycle;        ///< Analysis of the input motion (style() only).
  FourierSettings fourier;    ///< Harmonics of the analysis (style() only).
  SynthSettings synth;        ///< Length, rate, stride, speed, loop; loop is ignored (off) with transitions.
  /// Later gaits, each from its start (seconds, increasing, > 0): the output blends into each one
  /// over synth.transition_cycles. The adverbs apply to them too. Empty (default) = one gait.
  std::vector<GaitSegment> then;
  /// Drive this skeleton (same topology, other bone lengths) instead of the gait's own. Empty
  /// (default, no joints) = the gait's skeleton. `target_bones` are its rest bone vectors per joint
  /// (metres), e.g. the first frame's translations of a motion of that character.
  Skeleton target;
  std::vector<Vec3> target_bones;
};

/// Sets settings.target and target_bones to drive `character`'s skeleton: its skeleton and its
/// first frame's bone vectors (`koma gait style --skeleton FILE`). Throws Error(bad_data,
/// "skeleton") for a motion without frames.
void set_target(StyleSettings& settings, const Motion& character);

/// A styled gait played back.
struct StyleResult {
  Motion motion;  ///< The synthesised motion.
  Gait styled;    ///< The first gait after adverbs (and retargeting): what plays first.
  bool loop = false;  ///< Whether the output loops seamlessly (synth.loop and no transitions).
};

/// apply_adverbs() on `gait` and on every settings.then gait, retarget() to settings.target when
/// given, then synthesize(). Throws Error(invalid_settings) for bad synthesis settings or a
/// non-finite alpha, Error(mismatch) for an adverb, transition or target of another topology.
StyleResult style_gait(const Gait& gait, std::span<const WeightedAdverb> adverbs, const StyleSettings& settings);

/// analyse_gait() of `motion` (settings.cycle, settings.fourier), then style_gait(). Also throws
/// Error(bad_data, "period") when the motion has no stable period.
StyleResult style(const Motion& motion, std::span<const WeightedAdverb> adverbs, const StyleSettings& settings);

}  // namespace koma::gait
