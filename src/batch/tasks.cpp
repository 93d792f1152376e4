#include "koma/batch/tasks.hpp"

#include <fmt/format.h>

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

}  // namespace koma::batch
