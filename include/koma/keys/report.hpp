// Reports of a key selection as text: the JSON report and the exposure sheet (CSV). Pure functions
// returning strings; the caller writes them (atomically).
#pragma once

#include <string>
#include <string_view>

#include "koma/keys/keys.hpp"

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

/// The exposure sheet: one row per output frame, "frame,sheet_frame,time_s,<layer>..." where
/// frame is 0-based, sheet_frame 1-based (as a timesheet counts), and each layer column holds the
/// 1-based drawing number shown on that frame.
std::string exposure_sheet_csv(const KeySelection& selection);

}  // namespace koma::keys
