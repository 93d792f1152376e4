// The cartoon pipeline of one file (moved here from apps/koma/cmd_cartoon.cpp so `koma cartoon`,
// `koma batch cartoon` and Python run the same code).
#include <cctype>
#include <cmath>

#include "koma/batch/pipelines.hpp"
#include "koma/cartoon/report.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/csv.hpp"
#include "koma/io/gltf.hpp"

namespace koma::batch {

bool is_points_csv(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

void CartoonJob::validate() const {
  if (!std::isfinite(sigma_frames) || sigma_frames < 0)
    throw Error(ErrorCode::invalid_settings, "sigma_frames", "a sigma in frames must be finite and >= 0 (0 = unused)");
  cartoon.validate();
}

namespace {

// The job's settings at one file's rate: a sigma given in frames, and a sigma in seconds with
// per-frame settings, become the file's own frames.
cartoon::CartoonSettings settings_at(const CartoonJob& job, double frame_rate) {
  cartoon::CartoonSettings cs = job.cartoon;
  if (cs.per_frame) {
    if (job.sigma_frames > 0) cs.per_frame->sigma_frames = job.sigma_frames;
    else if (cs.sigma_seconds > 0) cs.per_frame->sigma_frames = cs.sigma_seconds * frame_rate;
  } else if (job.sigma_frames > 0 && frame_rate > 0) {
    cs.sigma_seconds = job.sigma_frames / frame_rate;
  }
  return cs;
}

}  // namespace

CartoonFileResult run_cartoon_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                   const CartoonJob& job, const FileProgress& progress) {
  job.validate();
  cartoon::CartoonSettings cs = job.cartoon;  // checks before reading; resolved at the file's rate below
  CartoonFileResult out;
  // The output and the report appear together or not at all (see run_keys_file).
  OutputBatch outputs;
  if (progress) progress(0.0);
  if (is_points_csv(input)) {
    if (!is_points_csv(output))
      throw Error(ErrorCode::invalid_settings, "output",
                  io::is_motion_file(output)
                      ? "point-track CSV input has no skeleton, so it cannot become a motion file (.fbx, .glb, .bvh); "
                        "write a .csv output"
                      : "point-track CSV input needs a .csv output");
    if (cs.keep_feet) throw Error(ErrorCode::invalid_settings, "keep_feet", "needs a skeleton (motion input, not point tracks)");
    if (cs.squash > 0) throw Error(ErrorCode::invalid_settings, "squash", "needs a skeleton (motion input, not point tracks)");
    io::PointTracks t = io::read_points_csv(input, job.points_unit);
    cs = settings_at(job, t.frame_rate);
    t.positions = cartoon::cartoon_points(t.positions, t.frame_count, t.names, t.frame_rate, cs);
    outputs.write([&] { io::write_points_csv(outputs.stage(output), t, job.points_unit); });
    out.summary = out.report = cartoon::cartoon_points_summary(t.frame_count, static_cast<int>(t.names.size()), t.frame_rate, cs);
  } else {
    if (is_points_csv(output))
      throw Error(ErrorCode::invalid_settings, "output", "motion input writes a motion file, not CSV");
    io::ReadResult in = io::read_motion(input, job.read);
    out.warnings = std::move(in.warnings);
    cs = settings_at(job, in.motion.frame_rate);
    const cartoon::CartoonResult r = cartoon::cartoon_motion(in.motion, cs);
    if (std::string held = cartoon::bound_warning(r, cs); !held.empty()) out.warnings.push_back(input.string() + ": " + held);
    out.summary = cartoon::cartoon_summary(r, cs);
    out.report = cartoon::cartoon_report(r, cs);
    // A glTF or FBX input's character carries over to a glTF output (squash as its bones' scale).
    io::WriteOptions wo = job.write;
    wo.gltf_scene = in.gltf_scene;
    // A .gltf names its .bin after itself, so it cannot be staged: it is written (atomically, .bin
    // first) under its own name before the report.
    if (io::is_gltf_file(output) && output.extension() == ".gltf") {
      io::write_motion(output, r.motion, wo);
    } else {
      outputs.write([&] { io::write_motion(outputs.stage(output), r.motion, wo); });
    }
  }
  for (nlohmann::json* doc : {&out.summary, &out.report}) {
    (*doc)["input"] = input.string();
    (*doc)["output"] = output.string();
  }
  if (!job.report.empty())
    outputs.write([&] { write_file_atomic(outputs.stage(job.report), out.report.dump(2) + "\n"); });
  outputs.commit();
  if (progress) progress(1.0);
  return out;
}

}  // namespace koma::batch
