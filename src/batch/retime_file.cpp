// The retime pipeline of one file (moved here from apps/koma/cmd_retime.cpp so `koma retime`,
// `koma batch retime` and Python run the same code).
#include "koma/batch/retime_file.hpp"

#include "koma/body/roles_file.hpp"
#include "koma/core/error.hpp"
#include "koma/timing/files.hpp"
#include "koma/timing/report.hpp"
#include "outputs.hpp"

namespace koma::batch {

void RetimeJob::validate() const {
  if (like.empty()) throw Error(ErrorCode::invalid_settings, "like", "no example to take the timing from");
  retime.validate();
}

timing::TimingSource load_timing_source(const std::filesystem::path& like, const std::filesystem::path& roles,
                                        const io::ReadOptions& read,
                                        const std::function<void(const std::string&)>& warn) {
  timing::MotionFileReader reader;
  reader.is_motion_file = [](const std::filesystem::path& p) { return io::is_motion_file(p); };
  reader.read = [&](const std::filesystem::path& p) {
    io::ReadOptions ro;
    ro.unit = read.unit;
    ro.scale = read.scale;
    io::ReadResult r = io::read_motion(p, ro);
    for (const std::string& w : r.warnings) warn(w);
    return std::move(r.motion);
  };
  return timing::load_timing_source(like, reader, roles);
}

RetimeFileResult run_retime_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                 const RetimeJob& job, const FileProgress& progress) {
  job.validate();
  if (progress) progress(0.0);
  RetimeFileResult out;
  const auto warn = [&](const std::string& w) {
    out.warnings.push_back(w);
    if (job.on_warning) job.on_warning(w);
  };
  io::ReadResult in = io::read_motion(input, job.read);
  for (const std::string& w : in.warnings) warn(w);
  const body::JointRoles roles = body::read_roles(in.motion.skeleton, job.roles);
  const timing::TimingSource source = load_timing_source(job.like, job.roles, job.read, warn);
  timing::RetimeResult r = timing::retime(in.motion, roles, source, job.retime);
  out.summary = timing::retime_report(r.report, source);
  out.summary["input"] = input.string();
  out.summary["output"] = output.string();
  io::WriteOptions wo = job.write;
  wo.gltf_scene = in.gltf_scene;  // the input's character (glTF/FBX) carries over to a glTF output
  // Everything computed: the motion and the report appear together or not at all.
  detail::write_motion_outputs(output, r.motion, wo, {{job.report, out.summary.dump(1) + "\n"}});
  out.report = std::move(r.report);
  if (progress) progress(1.0);
  return out;
}

nlohmann::json retime_figures(const RetimeFileResult& result) {
  nlohmann::json j = result.summary;
  j.erase("warp");
  return j;
}

}  // namespace koma::batch
