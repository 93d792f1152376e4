// Reports of a key selection as text: the JSON report and the exposure sheet (CSV). Pure functions
// returning strings; the caller writes them (atomically).
#pragma once

#include <string>
#include <string_view>

#include "koma/keys/keys.hpp"
#include "koma/keys/spacing.hpp"

namespace koma::keys {

/// The JSON report: settings, per layer the kept frames, per-segment errors, total and worst error
/// (frame and joint name), the error-vs-n curve; timings. Errors are given in metres^2 and in the
/// file's unit^2 (`unit`). `input` names the source file (may be empty).
std::string report_json(const KeySelection& selection, const Skeleton& skeleton, LengthUnit unit,
                        const KeySettings& settings, std::string_view input);
/// The same for a file whose unit is `metres_per_unit` metres, named `unit_label` ("cm", or
/// "0.056 m" for a unit given as a number: Motion::source_metres_per_unit() / source_unit_label()).
std::string report_json(const KeySelection& selection, const Skeleton& skeleton, double metres_per_unit,
                        std::string_view unit_label, const KeySettings& settings, std::string_view input);

/// The report of a spaced run: the same, plus "spacing": {"on", "drawing_count", "gaps": [{"from",
/// "to", "chart" (a name or the fractions), "inbetweens", "held", "path_m"}], "drawings": [{"frame",
/// "source_time" (s), "kind" ("key" | "inbetween"), "chart" (share of the gap's pose path)}]}.
std::string report_json(const KeySelection& selection, const Skeleton& skeleton, double metres_per_unit,
                        std::string_view unit_label, const KeySettings& settings, std::string_view input,
                        const Spacing& spacing);

/// The exposure sheet: one row per output frame, "frame,sheet_frame,time_s,<layer>..." where
/// frame is 0-based, sheet_frame 1-based (as a timesheet counts), and each layer column holds the
/// 1-based drawing number shown on that frame.
std::string exposure_sheet_csv(const KeySelection& selection);

/// The exposure sheet of a spaced run: "frame,sheet_frame,time_s,main,kind,chart,source_time_s,gap_chart".
/// main is the 1-based drawing shown (keys and inbetweens); on the row where a drawing starts, kind
/// is "key" or "inbetween", chart its share of the gap's pose path and source_time_s the source
/// time of its pose; on a key row gap_chart names the chart of the gap it opens (Chart::name(): an
/// animator may edit it and give the sheet back, read_sheet_charts). Hold rows leave them empty.
std::string exposure_sheet_csv(const Spacing& spacing);

/// The charts an exposure sheet sets per gap.
struct SheetCharts {
  std::vector<int> keys;       ///< frames of its key rows, increasing
  std::vector<GapChart> gaps;  ///< per key row with a gap_chart, that gap's chart
};

/// Reads the key rows and their gap_chart cells from an exposure sheet as exposure_sheet_csv(const
/// Spacing&) writes it (columns found by name; other columns and hold rows ignored). `context`
/// names the file in errors. Throws Error(bad_file, "<context>:<line>") for a missing column, a
/// frame that is not a number or not after the key before it, or a chart parse_chart() refuses.
SheetCharts read_sheet_charts(std::string_view csv, std::string_view context);

}  // namespace koma::keys
