// Per-file pipelines of the commands that batch runs: read -> settings -> run -> write, returning
// the command's own figures. The single-file CLI commands (`koma keys`, `koma cartoon`), the batch
// runner (koma/batch/batch.hpp) and Python all call these, so a file gives the same bytes whichever
// front end ran it.
//
// These functions do file I/O (that is their job) but hold no state: the same file and settings
// give byte-identical outputs, on any thread. Outputs are written atomically (core/atomic_file.hpp):
// a failure, or an exception thrown by `progress`, leaves no partial file.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "koma/cartoon/filter.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/units.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/spacing.hpp"

namespace koma::batch {

/// Progress of one file in [0, 1]. It may throw to abandon the file (batch cancellation): the
/// exception propagates out of the pipeline and nothing is written.
using FileProgress = std::function<void(double)>;

/// Settings of the keys pipeline (`koma keys` on a motion file).
struct KeysJob {
  keys::KeySettings keys;  ///< the selection (default: exact, position MSE, linear; n from keys/ratio/on/max_error)
  /// Output frame rate in frames per second; the motion is resampled to it before selection.
  /// 0 = the file's own rate. Default 24 (film).
  double output_rate = 24.0;
  io::ReadOptions read;  ///< BVH unit (default detected), glTF animation (default the first)
  /// How the output is written: its animation name (default the source's), FBX form. The pipeline
  /// sets step_keys (each drawing) and the character itself.
  io::WriteOptions write;
  /// true: keys.max_error (unit^2) and keys.features.camera position/target (unit) are in the
  /// file's own length unit and are converted to metres per file. false (default): metres.
  bool lengths_in_file_unit = false;
  std::filesystem::path report;  ///< non-empty: also write the JSON report (keys::report_json) here
  std::filesystem::path xsheet;  ///< non-empty: also write the exposure sheet CSV here
  std::string input_label;       ///< the input's name in the report (default: the input path)
  /// Spacing charts (docs/keys.md#spacing): with a value, inbetweens are drawn between the key
  /// poses every spacing->on output frames, placed by the charts (keys::space_drawings), and the
  /// output shows keys and inbetweens. Empty (default): the keys are held, as without charts.
  /// Refused with body-part layers (they have keys of their own).
  std::optional<keys::SpacingSettings> spacing;
  /// With spacing: an exposure sheet (CSV, as a spaced run writes it) whose gap_chart cells set the
  /// charts of single gaps, added to spacing->gaps; its key rows must be this run's keys. Empty = none.
  std::filesystem::path chart_sheet;
  /// Called with the held (or spaced) motion at the output rate, the selection, the spacing (empty
  /// without charts) and the character the input carries (glTF / FBX; null for BVH) after selecting
  /// and before anything is written; it may render pictures of its own (the CLI's contact sheet),
  /// writing each to `outputs.stage(path)` so they appear together with the motion and reports or
  /// not at all, or throw to abandon the file with nothing written. Empty = none.
  std::function<void(const Motion& held, const keys::KeySelection& selection, const std::optional<keys::Spacing>& spacing,
                     OutputBatch& outputs, const std::shared_ptr<const io::GltfScene>& character)>
      on_held;

  /// Throws Error(invalid_settings, "<field>") for output_rate outside [0, 1000] or not finite, for
  /// any KeySettings::validate() or SpacingSettings::validate() failure, for spacing with layers
  /// ("layers"), and for a chart_sheet without spacing ("chart_sheet").
  void validate() const;
};

/// What run_keys_file() did: the selection and what is needed to describe it.
struct KeysFileResult {
  keys::KeySelection selection;
  keys::KeySettings settings;     ///< as applied (lengths in metres)
  int frames = 0;                 ///< output frames
  double frame_rate = 0;          ///< output rate (fps)
  LengthUnit unit = LengthUnit::metre;  ///< the file's named unit
  double metres_per_unit = 1.0;   ///< metres per file unit (figures in unit^2 use it; a numeric --unit included)
  std::string unit_label;         ///< the file's unit as reports name it ("cm", "0.056 m")
  std::string worst_point;        ///< name of the point with the worst error
  double seconds = 0;             ///< time spent selecting (wall clock, excludes reading and writing)
  std::vector<std::string> warnings;  ///< the reader's warnings (tolerated quirks), and gaps
                                      ///< too short for an inbetween (held)
  std::optional<keys::Spacing> spacing;  ///< the drawings and gaps, when the job asked for charts
};

/// Reads `input`, resamples it to job.output_rate, selects keys, holds them and writes the held
/// motion to `output` (format by extension; a glTF input keeps its character when written to glTF;
/// glTF outputs store each drawing as one STEP key). With job.spacing, inbetweens are drawn between
/// the keys (the source at its own rate gives their poses). Also writes job.report / job.xsheet when set;
/// everything is computed before anything is written. Throws what reading, the settings or
/// selection throw (Error), and whatever `progress` throws.
KeysFileResult run_keys_file(const std::filesystem::path& input, const std::filesystem::path& output,
                             const KeysJob& job, const FileProgress& progress = {});

/// The figures of a keys run as JSON (what `koma keys --json` prints, without paths): "frames",
/// "fps", "selector", "metric", "interpolation", "key_count", "keys", "error_m2", "error_unit2",
/// "unit", "worst" {error_m2, error_unit2, frame, point}, "layers" (with the exact selector's
/// certificate); with spacing also "spacing" {"on", "drawing_count", "inbetweens", "held_gaps"}.
/// No timings: the same file and settings give the same figures.
nlohmann::json keys_figures(const KeysFileResult& result);

/// Settings of the cartoon pipeline (`koma cartoon` on a motion or a point-track CSV).
struct CartoonJob {
  /// The filter, in seconds (converted with each file's rate). Default: CartoonSettings' defaults
  /// with strength 8 (the command's default: the filter's own default of 1 is barely visible),
  /// adaptive sigma.
  cartoon::CartoonSettings cartoon = [] {
    cartoon::CartoonSettings s;
    s.strength = 8.0;
    return s;
  }();
  /// > 0: a fixed sigma in frames of each file (its seconds = frames / the file's rate), overriding
  /// cartoon.sigma_seconds, or cartoon.per_frame's sigma when that is set. Default 0 = unused.
  double sigma_frames = 0.0;
  io::ReadOptions read;  ///< motion input: BVH unit, glTF animation
  /// How a motion output is written: its animation name (default the source's), FBX form. The
  /// pipeline sets the character itself.
  io::WriteOptions write;
  /// Point-track CSV input: the length unit of the CSV (read and written). Default metre.
  LengthUnit points_unit = LengthUnit::metre;
  std::filesystem::path report;  ///< non-empty: also write the full JSON report here

  /// Throws Error(invalid_settings, "<field>") for a negative or non-finite sigma_frames and any
  /// CartoonSettings::validate() failure.
  void validate() const;
};

/// What run_cartoon_file() did, as the JSON documents of koma/cartoon/report.hpp plus "input" and
/// "output".
struct CartoonFileResult {
  nlohmann::json summary;  ///< cartoon_summary (motion) or cartoon_points_summary (CSV)
  nlohmann::json report;   ///< cartoon_report (motion) or the same summary (CSV)
  std::vector<std::string> warnings;
};

/// Reads `input` (a motion, or point tracks when it ends in .csv), filters it and writes `output`
/// (a motion writes a motion file, point tracks write CSV). Throws Error(invalid_settings,
/// "output") when the output's kind does not match the input's, Error(invalid_settings,
/// "keep_feet") / ("squash") for point tracks (they need a skeleton), and what reading and the
/// filter throw.
CartoonFileResult run_cartoon_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                   const CartoonJob& job, const FileProgress& progress = {});

/// True if the path ends in .csv (any case): the cartoon pipeline reads it as point tracks.
bool is_points_csv(const std::filesystem::path& path);

}  // namespace koma::batch
