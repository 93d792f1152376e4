// The gait pipelines of one file (moved here from apps/koma/cmd_gait.cpp's run_apply and run_synth
// so `koma gait apply|style|synth`, `koma batch gait-apply` and Python run the same code).
#include "koma/batch/gait_file.hpp"

#include "koma/body/roles_file.hpp"
#include "koma/core/error.hpp"
#include "koma/gait/files.hpp"
#include "koma/gait/report.hpp"
#include "koma/io/angles_csv.hpp"
#include "outputs.hpp"

namespace koma::batch {

void GaitApplyJob::validate() const { apply.validate(); }

GaitApplyFileResult run_gait_apply_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                        const GaitApplyJob& job, const FileProgress& progress) {
  job.validate();
  if (progress) progress(0.0);
  GaitApplyFileResult out;
  io::ReadResult r = io::read_motion(input, job.read);
  out.warnings = std::move(r.warnings);
  if (job.on_warning)
    for (const std::string& w : out.warnings) job.on_warning(w);
  gait::ApplySettings settings = job.apply;
  if (!job.roles.empty()) settings.roles = body::read_roles(r.motion.skeleton, job.roles);
  out.applied = gait::apply_to_take(r.motion, job.adverbs, settings);
  io::WriteOptions wo = job.write;
  wo.gltf_scene = r.gltf_scene;  // the take's character (glTF/FBX input) carries over to a glTF output
  detail::write_motion_outputs(output, out.applied.motion, wo);
  out.summary = gait::apply_report(out.applied);
  out.summary["input"] = input.string();
  out.summary["output"] = output.string();
  if (progress) progress(1.0);
  return out;
}

void GaitStyleJob::validate() const {
  style.fourier.validate();
  if (csv_beside_output && !csv.empty())
    throw Error(ErrorCode::invalid_settings, "csv", "give a CSV path or write it beside the output, not both");
}

bool is_gait_file(const std::filesystem::path& path) { return path.string().ends_with(".json"); }

GaitStyleFileResult run_gait_style_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                        const GaitStyleJob& job, const FileProgress& progress) {
  job.validate();
  if (progress) progress(0.0);
  GaitStyleFileResult out;
  gait::Gait base;
  if (is_gait_file(input)) {
    base = gait::read_gait(input);
    out.summary = {{"gait", input.string()}};
  } else {
    io::ReadResult r = io::read_motion(input, job.read);
    out.warnings = std::move(r.warnings);
    if (job.on_warning)
      for (const std::string& w : out.warnings) job.on_warning(w);
    out.analysis = gait::analyse_gait_of(r.motion, input.string(), job.style.cycle, job.style.fourier);
    base = out.analysis->gait;
    out.summary = gait::gait_summary(base);
    out.summary["input"] = input.string();
  }
  out.styled = gait::style_gait(base, job.adverbs, job.style);
  const Motion& m = out.styled.motion;
  const std::filesystem::path csv = job.csv_beside_output ? std::filesystem::path(output).replace_extension(".csv") : job.csv;
  // Everything computed: the motion and the angles appear together or not at all.
  detail::write_motion_outputs(output, m, job.write, {{csv, csv.empty() ? std::string() : io::format_angles_csv(m)}});
  out.summary.update(gait::style_summary(out.styled));
  out.summary["output"] = output.string();
  if (!csv.empty()) out.summary["csv"] = csv.string();
  if (progress) progress(1.0);
  return out;
}

}  // namespace koma::batch
