// The keys pipeline of one file (moved here from apps/koma/cmd_keys.cpp so `koma keys`, `koma batch
// keys` and Python run the same code).
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "koma/batch/pipelines.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/gltf.hpp"
#include "koma/keys/report.hpp"

namespace koma::batch {

void KeysJob::validate() const {
  if (!std::isfinite(output_rate) || output_rate < 0 || output_rate > 1000) {
    throw Error(ErrorCode::invalid_settings, "output_rate",
                "output rate must be a number of frames per second in (0, 1000], or 0 for the file's own rate");
  }
  keys.validate();
  if (spacing) {
    spacing->validate();
    if (!keys.layers.empty()) {
      throw Error(ErrorCode::invalid_settings, "layers",
                  "spacing charts space the whole body between its key poses; body-part `layers` have keys of their own "
                  "(give one or the other)");
    }
  } else if (!chart_sheet.empty()) {
    throw Error(ErrorCode::invalid_settings, "chart_sheet", "per-gap charts from a sheet need spacing settings");
  }
}

namespace {

// The job's lengths in the file's unit become metres (the selection works in metres).
keys::KeySettings settings_in_metres(const KeysJob& job, double metres_per_file_unit) {
  keys::KeySettings st = job.keys;
  if (job.lengths_in_file_unit) {
    if (st.max_error >= 0) st.max_error = st.max_error * metres_per_file_unit * metres_per_file_unit;
    if (st.features.camera.projection == keys::Projection::perspective) {
      st.features.camera.position *= metres_per_file_unit;
      st.features.camera.target *= metres_per_file_unit;
    }
  }
  st.validate();
  return st;
}

// The gap charts of the job's sheet (read here: the pipeline does the I/O), checked against the keys.
std::vector<keys::GapChart> sheet_charts(const std::filesystem::path& sheet, const std::vector<int>& keys) {
  const keys::SheetCharts sc = keys::read_sheet_charts(read_file(sheet), sheet.string());
  if (sc.keys != keys) {
    auto list = [](const std::vector<int>& v) {
      const size_t n = std::min<size_t>(v.size(), 12);
      return fmt::format("{}{}", fmt::join(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), ","), v.size() > n ? ",..." : "");
    };
    throw Error(ErrorCode::mismatch, sheet.string(),
                fmt::format("the sheet's key poses ({}) are not this run's ({}): run with the settings that wrote the "
                            "sheet, or lock its keys (`constraints.locked`)",
                            list(sc.keys), list(keys)));
  }
  return sc.gaps;
}

// Spaces the drawings between the selection's keys (source at its own rate) and notes the gaps too
// short for an inbetween.
keys::Spacing space(const Motion& source, const KeysJob& job, const keys::KeySelection& ks, double rate,
                    std::vector<std::string>& warnings) {
  keys::SpacingSettings st = *job.spacing;
  if (!job.chart_sheet.empty()) {
    for (keys::GapChart& g : sheet_charts(job.chart_sheet, ks.keys())) {
      std::erase_if(st.gaps, [&](const keys::GapChart& o) { return o.start == g.start; });
      st.gaps.push_back(std::move(g));
    }
  }
  keys::Spacing sp = keys::space_drawings(source, ks.keys(), rate, st);
  std::string held;
  int count = 0;
  for (const keys::GapSpacing& g : sp.gaps) {
    if (!g.held) continue;
    if (++count <= 8) held += fmt::format("{}{}-{}", count > 1 ? ", " : "", g.start, g.end);
  }
  if (count > 0) {
    warnings.push_back(fmt::format("{} gap{} between keys too short for an inbetween every {} frames, held: {}{}", count,
                                   count > 1 ? "s" : "", sp.on, held, count > 8 ? ", ..." : ""));
  }
  return sp;
}

}  // namespace

KeysFileResult run_keys_file(const std::filesystem::path& input, const std::filesystem::path& output,
                             const KeysJob& job, const FileProgress& progress) {
  job.validate();
  io::ReadResult r = io::read_motion(input, job.read);
  KeysFileResult out;
  out.warnings = std::move(r.warnings);
  Motion src = std::move(r.motion);
  const auto gltf_scene = r.gltf_scene;
  const double rate = job.output_rate > 0 ? job.output_rate : src.frame_rate;
  out.settings = settings_in_metres(job, src.source_metres_per_unit());
  const keys::KeySettings& st = out.settings;
  // At the source rate the motion is used as read (no copy: long takes are gigabytes). Spacing
  // keeps the source: inbetweens are sampled from it at their own times.
  Motion m = rate == src.frame_rate && !job.spacing ? std::move(src) : resample(src, rate);
  if (!job.spacing) src = Motion{};
  const auto t0 = std::chrono::steady_clock::now();
  out.selection = keys::select_keys(m, st, progress);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const keys::KeySelection& ks = out.selection;
  if (job.spacing) {
    out.spacing = space(src, job, ks, rate, out.warnings);
    m = keys::spaced_motion(src, *out.spacing);  // keys exactly as held, inbetweens between them
    src = Motion{};
  } else {
    keys::hold_in_place(m, ks);  // m becomes the held motion (a take's poses are not copied)
  }
  // Only what was asked for (a long take's exposure sheet has a row per frame).
  const std::string label = job.input_label.empty() ? input.string() : job.input_label;
  std::string report, sheet;
  if (!job.report.empty()) {
    report = out.spacing ? keys::report_json(ks, m.skeleton, m.source_metres_per_unit(), m.source_unit_label(), st, label, *out.spacing)
                         : keys::report_json(ks, m.skeleton, m.source_metres_per_unit(), m.source_unit_label(), st, label);
  }
  if (!job.xsheet.empty()) sheet = out.spacing ? keys::exposure_sheet_csv(*out.spacing) : keys::exposure_sheet_csv(ks);
  // Everything is computed before anything is written, and every output is staged: the motion,
  // the reports and the pictures appear together, or (an error, a full disk, Ctrl-C) none does.
  OutputBatch outputs;
  io::WriteOptions wo = job.write;
  const bool separate_bin = io::is_gltf_file(output) && output.extension() == ".gltf";
  outputs.write([&] {
    if (job.on_held) job.on_held(m, ks, out.spacing, outputs, gltf_scene);
    if (!job.report.empty()) write_file_atomic(outputs.stage(job.report), report);
    if (!job.xsheet.empty()) write_file_atomic(outputs.stage(job.xsheet), sheet);
    // glTF holds each drawing as one STEP key (BVH ignores this and stores every frame), on the
    // input's own character when it came from glTF.
    wo.step_keys = out.spacing ? out.spacing->drawing_frames() : keys::drawing_frames(ks);
    wo.gltf_scene = gltf_scene;
    // A .gltf names its .bin after itself, so it cannot be written under a staged name: it is
    // written (atomically, .bin first) once the others are in place.
    if (!separate_bin) io::write_motion(outputs.stage(output), m, wo);
  });
  outputs.commit();
  if (separate_bin) io::write_motion(output, m, wo);
  out.frames = m.frame_count;
  out.frame_rate = m.frame_rate;
  out.unit = m.source_unit;
  out.metres_per_unit = m.source_metres_per_unit();
  out.unit_label = m.source_unit_label();
  out.worst_point = m.skeleton.point_name(ks.worst_point);
  return out;
}

nlohmann::json keys_figures(const KeysFileResult& result) {
  const keys::KeySelection& ks = result.selection;
  const keys::KeySettings& st = result.settings;
  const double mpu = result.metres_per_unit;
  const double u2 = 1.0 / (mpu * mpu);
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& L : ks.layers) {
    nlohmann::json layer = {{"name", L.name}, {"keys", L.keys}, {"key_count", L.keys.size()}, {"error_m2", L.error},
                            {"max_hold", L.max_hold}};
    if (st.selector == keys::Selector::exact) {
      layer["certificate"] = {{"optimal", L.optimal}, {"lower_bound_m2", L.lower_bound / L.normaliser},
                              {"solves", L.solves}};
    }
    layers.push_back(std::move(layer));
  }
  nlohmann::json doc = {{"frames", result.frames}, {"fps", result.frame_rate}, {"selector", to_string(st.selector)},
          {"metric", to_string(st.metric)}, {"interpolation", to_string(st.interpolation)},
          {"key_count", ks.keys().size()}, {"keys", ks.keys()}, {"error_m2", ks.error},
          {"error_unit2", ks.error * u2}, {"unit", result.unit_label},
          {"worst", {{"error_m2", ks.worst_error}, {"error_unit2", ks.worst_error * u2}, {"frame", ks.worst_frame},
                     {"point", result.worst_point}}},
          {"layers", layers}};
  if (result.spacing) {
    int inbetweens = 0, held = 0;
    for (const keys::GapSpacing& g : result.spacing->gaps) {
      inbetweens += g.inbetweens;
      held += g.held ? 1 : 0;
    }
    doc["spacing"] = {{"on", result.spacing->on}, {"drawing_count", result.spacing->drawings.size()},
                      {"inbetweens", inbetweens}, {"held_gaps", held}};
  }
  return doc;
}

}  // namespace koma::batch
