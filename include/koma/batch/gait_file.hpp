// The gait pipelines of one file: gait apply (adverbs on a take itself: `koma gait apply`, `koma
// batch gait-apply`) and gait style (a walk analysed, or a gait file, played back with adverbs:
// `koma gait style`, `koma gait synth`). Stateless; outputs atomic and together (see pipelines.hpp).
// Python's koma.gait_apply / koma.gait_style and the Blender add-on call the same gait functions
// on motions in memory (gait::apply_to_take, gait::style).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "koma/batch/pipelines.hpp"
#include "koma/gait/apply.hpp"
#include "koma/gait/style.hpp"
#include "koma/io/motion_file.hpp"

namespace koma::batch {

/// Settings of the gait apply pipeline.
struct GaitApplyJob {
  gait::ApplySettings apply;                  ///< How the adverbs are applied; apply.roles comes from `roles`.
  std::vector<gait::WeightedAdverb> adverbs;  ///< The adverbs with their alphas (gait::read_weighted_adverb()).
  /// A roles file ({"left_ankle": "leg_joint_L_3", ...}) for a rig koma cannot name; empty
  /// (default) = apply.roles, or the roles found by name.
  std::filesystem::path roles;
  io::ReadOptions read;    ///< The take's unit and animation.
  io::WriteOptions write;  ///< How the output is written; the pipeline sets the take's character.
  /// Called with each reader warning as it arises (before any later step can fail), e.g. to print
  /// it; the result's `warnings` hold them too. Empty (default) = collected only.
  std::function<void(const std::string&)> on_warning;

  /// Throws ApplySettings::validate()'s errors.
  void validate() const;
};

/// What run_gait_apply_file() did.
struct GaitApplyFileResult {
  gait::ApplyResult applied;          ///< gait::apply_to_take()'s result (its own warnings included)
  nlohmann::json summary;             ///< gait::apply_report() plus "input" and "output"
  std::vector<std::string> warnings;  ///< the reader's warnings
};

/// Reads the take, reads job.roles, applies the adverbs and writes `output` (format by extension;
/// a glTF/FBX take's character carries over to a glTF output). Throws what reading, the roles file
/// and gait::apply_to_take() throw, and whatever `progress` throws.
GaitApplyFileResult run_gait_apply_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                        const GaitApplyJob& job, const FileProgress& progress = {});

/// Settings of the gait style pipeline.
struct GaitStyleJob {
  /// Analysis (cycle, fourier) of a motion input, synthesis, later gaits (then) and the character
  /// driven (target, target_bones).
  gait::StyleSettings style;
  std::vector<gait::WeightedAdverb> adverbs;  ///< The adverbs with their alphas.
  io::ReadOptions read;                       ///< A motion input's unit and animation.
  io::WriteOptions write;                     ///< How the output is written (its name, FBX form).
  /// Non-empty: also write the output's joint angles (radians, one column per DOF) as CSV here.
  std::filesystem::path csv;
  /// true: also write the angles beside the output, named after it (out/walk.bvh -> out/walk.csv);
  /// what a batch does (one `csv` path cannot serve every file). Not with `csv`.
  bool csv_beside_output = false;
  /// Called with each reader warning as it arises (before any later step can fail), e.g. to print
  /// it; the result's `warnings` hold them too. Empty (default) = collected only.
  std::function<void(const std::string&)> on_warning;

  /// Throws FourierSettings::validate()'s errors and Error(invalid_settings, "csv") for both csv
  /// and csv_beside_output (the rest is checked by the gait functions).
  void validate() const;
};

/// What run_gait_style_file() did.
struct GaitStyleFileResult {
  std::optional<gait::GaitAnalysis> analysis;  ///< A motion input's analysis (none for a gait file)
  gait::StyleResult styled;                    ///< gait::style_gait()'s result
  /// gait::gait_summary() of the analysed gait plus "input" (motion input) or {"gait": input} (gait
  /// file), updated with gait::style_summary(), "output" and "csv" (when written).
  nlohmann::json summary;
  std::vector<std::string> warnings;  ///< the reader's warnings
};

/// True when `path` names a gait file (ends in .json) rather than a motion.
bool is_gait_file(const std::filesystem::path& path);

/// Reads `input` (a gait file, or a motion analysed with job.style.cycle / fourier), applies the
/// adverbs, later gaits and target, synthesises, and writes `output` (BVH, glTF or FBX) and the CSV
/// (job.csv, or beside the output).
/// Throws what reading, the analysis and gait::style_gait() throw, and whatever `progress` throws.
GaitStyleFileResult run_gait_style_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                        const GaitStyleJob& job, const FileProgress& progress = {});

}  // namespace koma::batch
