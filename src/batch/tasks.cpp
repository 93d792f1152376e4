#include "koma/batch/tasks.hpp"

#include <tbb/task_arena.h>

#include <fmt/format.h>

#include <system_error>
#include <utility>

#include "koma/core/error.hpp"

namespace koma::batch {

namespace {

// The job for one item: an item of PlanSettings::every_animation reads its own animation.
template <class Job>
Job for_item(Job job, const Item& item) {
  if (!item.animation.empty()) job.read.animation = item.animation;
  return job;
}

// A task from a pipeline: run it on the item, keep its warnings, return its figures.
template <class Job, class Run, class Figures>
Task task_of(const Job& job, Run run, Figures figures) {
  return [job, run, figures](const Item& item, const std::function<void(double)>& progress,
                             std::vector<std::string>& warnings) {
    auto result = run(item, for_item(job, item), progress);
    warnings = std::move(result.warnings);
    return figures(result);
  };
}

}  // namespace

Task keys_task(const KeysJob& job) {
  return task_of(
      job,
      [](const Item& item, KeysJob j, const FileProgress& progress) {
        j.input_label = item.input.string();
        return run_keys_file(item.input, item.output, j, progress);
      },
      [](const KeysFileResult& r) { return keys_figures(r); });
}

Task cartoon_task(const CartoonJob& job) {
  return task_of(
      job, [](const Item& item, const CartoonJob& j, const FileProgress& p) { return run_cartoon_file(item.input, item.output, j, p); },
      [](const CartoonFileResult& r) { return r.summary; });
}

namespace {

// A task from a pipeline whose job reports warnings as they arise (on_warning): they are recorded
// even when the file then fails.
template <class Job, class Run, class Figures>
Task warning_task_of(const Job& job, Run run, Figures figures) {
  return [job, run, figures](const Item& item, const std::function<void(double)>& progress,
                             std::vector<std::string>& warnings) {
    Job j = for_item(job, item);
    j.on_warning = [&warnings](const std::string& w) { warnings.push_back(w); };
    return figures(run(item, j, progress));
  };
}

}  // namespace

Task retime_task(const RetimeJob& job) {
  return warning_task_of(
      job, [](const Item& item, const RetimeJob& j, const FileProgress& p) { return run_retime_file(item.input, item.output, j, p); },
      [](const RetimeFileResult& r) { return retime_figures(r); });
}

Task convert_task(const ConvertJob& job) {
  return warning_task_of(
      job, [](const Item& item, const ConvertJob& j, const FileProgress& p) { return run_convert_file(item.input, item.output, j, p); },
      [](const ConvertFileResult& r) { return convert_figures(r); });
}

Task gait_apply_task(const GaitApplyJob& job) {
  return [job](const Item& item, const std::function<void(double)>& progress, std::vector<std::string>& warnings) {
    GaitApplyJob j = for_item(job, item);
    j.on_warning = [&warnings](const std::string& w) { warnings.push_back(w); };
    const GaitApplyFileResult r = run_gait_apply_file(item.input, item.output, j, progress);
    warnings.insert(warnings.end(), r.applied.warnings.begin(), r.applied.warnings.end());
    return r.summary;
  };
}

Task gait_style_task(const GaitStyleJob& job) {
  if (!job.csv.empty())
    throw Error(ErrorCode::invalid_settings, "csv",
                fmt::format("'{}': one CSV path for every file of a batch; write each beside its output instead",
                            job.csv.string()));
  return warning_task_of(
      job, [](const Item& item, const GaitStyleJob& j, const FileProgress& p) { return run_gait_style_file(item.input, item.output, j, p); },
      [](const GaitStyleFileResult& r) { return r.summary; });
}

std::vector<std::string> gait_style_extensions() {
  std::vector<std::string> out = PlanSettings{}.extensions;
  out.emplace_back(".gait.json");
  return out;
}

namespace {

namespace fs = std::filesystem;

// The compare file of an item: `compare` itself, or in a folder the item's mirrored path (else the
// same name with another motion extension).
fs::path compare_for(const fs::path& compare, const Item& item) {
  std::error_code ec;
  if (compare.empty() || !fs::is_directory(compare, ec)) return compare;
  const fs::path same = compare / item.relative;
  if (fs::is_regular_file(same, ec)) return same;
  for (const char* ext : {".bvh", ".glb", ".gltf", ".fbx"}) {
    const fs::path other = fs::path(same).replace_extension(ext);
    if (fs::is_regular_file(other, ec)) return other;
  }
  throw Error(ErrorCode::io, same.string(),
              fmt::format("no compare file for {}: the compare folder {} mirrors the inputs, so it should hold this "
                          "file (or the same name with .bvh, .glb, .gltf or .fbx)",
                          item.input.string(), compare.string()));
}

// A render job a batch can run: valid, and its keys a folder of reports.
void check_batch_job(const RenderJob& job) {
  job.validate();
  std::error_code ec;
  if (!job.keys.empty() && !fs::is_directory(job.keys, ec)) {
    throw Error(ErrorCode::invalid_settings, "keys",
                fmt::format("'{}' is one take's report; a batch needs a folder of `koma keys` reports that mirrors "
                            "the inputs (FOLDER/<relative path>.json for each input)",
                            job.keys.string()));
  }
}

}  // namespace

Task render_task(const RenderJob& job) {
  check_batch_job(job);
  return [job](const Item& item, const std::function<void(double)>& progress, std::vector<std::string>& warnings) {
    RenderJob j = for_item(job, item);
    j.on_warning = [&warnings](const std::string& w) { warnings.push_back(w); };
    j.on_note = {};
    if (!job.keys.empty()) j.keys = job.keys / fs::path(item.relative).replace_extension(".json");
    j.compare = compare_for(job.compare, item);
    // Isolated: while this item waits inside a parallel loop (the BVH reader's), its thread takes
    // up no other item, so an item's OpenGL context and its timing are its own.
    nlohmann::json figures;
    tbb::this_task_arena::isolate([&] {
      const RenderFileResult r = run_render_file(item.input, item.output, j, progress);
      figures = render_figures(r);
      if (!r.notes.empty()) figures["notes"] = r.notes;
    });
    return figures;
  };
}

PlanSettings render_plan(const RenderJob& job, const std::string& to) {
  check_batch_job(job);
  PlanSettings plan;
  plan.output_formats = {".mp4", ".gif", ".png"};
  plan.output_extension = !to.empty() ? to : job.style.transparent ? ".png" : ".mp4";
  if (job.style.transparent && plan.output_extension != ".png") {
    throw Error(ErrorCode::invalid_settings, "toon.transparent",
                "transparent cels are PNG frames: leave `output_extension` at png, its default with transparent cels");
  }
  return plan;
}

}  // namespace koma::batch
