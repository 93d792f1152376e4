#include "koma/gait/style.hpp"

#include "koma/core/error.hpp"

#include <fmt/format.h>

namespace koma::gait {

GaitAnalysis analyse_gait(const Motion& motion, const CycleSettings& cycle, const FourierSettings& fourier) {
  fourier.validate();
  GaitAnalysis a;
  a.cycle = extract_cycle(motion, cycle);
  a.gait = fourier_analyze(a.cycle, fourier);
  a.error = reconstruction_error(a.cycle, a.gait);
  a.raw_above = raw_energy_above(motion, a.cycle, a.gait);
  return a;
}

GaitAnalysis analyse_gait_of(const Motion& motion, const std::string& file, const CycleSettings& cycle,
                             const FourierSettings& fourier) {
  try {
    return analyse_gait(motion, cycle, fourier);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::bad_data) throw;
    const bool short_clip = e.context() == "period" && motion.duration() < 1.5 * cycle.max_period;
    const std::string need =
        short_clip ? fmt::format("{:.2f} s ({} frames) holds no walk cycle koma can use: a gait needs at least 1.5 "
                                 "cycles (about three steps) with one foot touching down twice; ",
                                 motion.duration(), motion.frame_count)
                   : "";
    throw Error(e.code(), file, need + (e.context().empty() ? "" : e.context() + ": ") + e.message());
  }
}

void set_target(StyleSettings& settings, const Motion& character) {
  if (character.frame_count < 1)
    throw Error(ErrorCode::bad_data, "skeleton", "the character has no frame to take its bone lengths from");
  settings.target = character.skeleton;
  const auto bones = character.frame_translations(0);
  settings.target_bones.assign(bones.begin(), bones.end());
}

StyleResult style_gait(const Gait& gait, std::span<const WeightedAdverb> adverbs, const StyleSettings& settings) {
  std::vector<GaitSegment> segments{{apply_adverbs(gait, adverbs), 0.0}};
  for (const GaitSegment& t : settings.then) segments.push_back({apply_adverbs(t.gait, adverbs), t.start});
  if (settings.target.joint_count() > 0) {
    for (GaitSegment& s : segments) s.gait = retarget(s.gait, settings.target, settings.target_bones);
  }
  SynthSettings synth = settings.synth;
  synth.loop = synth.loop && segments.size() == 1;
  StyleResult r;
  r.motion = synthesize(segments, synth);
  r.styled = std::move(segments.front().gait);
  r.loop = synth.loop;
  return r;
}

StyleResult style(const Motion& motion, std::span<const WeightedAdverb> adverbs, const StyleSettings& settings) {
  return style_gait(analyse_gait(motion, settings.cycle, settings.fourier).gait, adverbs, settings);
}

}  // namespace koma::gait
