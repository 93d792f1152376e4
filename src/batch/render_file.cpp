// The render pipeline of one file (moved here from apps/koma/cmd_render.cpp so `koma render` and
// Python run the same code).
#include "koma/batch/render_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "koma/core/drawings.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/kept_frames.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/video.hpp"

namespace koma::batch {

void RenderJob::validate() const {
  if (!std::isfinite(output_rate) || output_rate < 0 || output_rate > 1000) {
    throw Error(ErrorCode::invalid_settings, "output_rate",
                fmt::format("{} is not a frame rate; expected frames per second in (0, 1000], or 0 for the keys "
                            "report's (else 24)",
                            output_rate));
  }
  camera.validate();
  style.validate();
  if (style.smear != toon::Smear::off && look != Look::toon)
    throw Error(ErrorCode::invalid_settings, "toon.smear", "smears are drawn in the toon look only");
  if (style.transparent && look != Look::toon)
    throw Error(ErrorCode::invalid_settings, "toon.transparent", "transparent cels are drawn in the toon look only");
  if (style.transparent && !compare.empty()) {
    throw Error(ErrorCode::invalid_settings, "toon.transparent",
                "transparent cels are the result alone as PNG frames: give a folder ending in '/' and no `compare`");
  }
  compare_settings.validate();
}

namespace {

// What the pipeline draws: the result (held on the report's drawings, each body part on its
// layer's keys) and the original beside it, on one clock at the output rate.
struct RenderClips {
  render::Comparison cmp;
  Motion result;
  io::ReadResult read;  // the result's file, with the character it carries
  std::optional<Motion> other_motion;
  std::shared_ptr<const io::GltfScene> other_scene;
  std::string other_name;
  std::vector<int> joint_layer;
  std::vector<std::vector<int>> layer_keys;  // empty: the result is not held
  std::string in_name;
};

// Calls the job's sinks and keeps what they were given.
struct Messages {
  const RenderJob& job;
  RenderFileResult& out;
  void warn(const std::string& w) const {
    out.warnings.push_back(w);
    if (job.on_warning) job.on_warning(w);
  }
  void note(const std::string& n) const {
    out.notes.push_back(n);
    if (job.on_note) job.on_note(n);
  }
};

// Holds the result on the report's drawings: every joint on the kept frames, or each body part
// on its own layer's keys (a layered report, as koma keys wrote it).
void hold_on_report(const io::KeptFramesReport& report, const std::string& ctx, const WorldPoses& poses,
                    RenderClips& c) {
  const Motion& result = c.result;
  render::Comparison& cmp = c.cmp;
  if (report.frame_count && *report.frame_count != result.frame_count) {
    throw Error(ErrorCode::mismatch, ctx,
                fmt::format("the report is for {} output frames, {} has {} at {:g} fps", *report.frame_count,
                            c.in_name, result.frame_count, cmp.frame_rate));
  }
  check_kept_frames(report.kept_frames, result.frame_count, ctx);
  cmp.kept_frames = report.kept_frames;
  if (report.layers.empty()) {
    cmp.result.poses = render::hold_poses(poses, cmp.kept_frames);
    c.layer_keys = {cmp.kept_frames};
  } else {
    for (size_t l = 0; l < report.layers.size(); ++l) {
      c.layer_keys.push_back(report.layers[l].keys);
      for (const std::string& name : report.layers[l].joints) {
        const int j = result.skeleton.find(name);
        if (j < 0) {
          throw Error(ErrorCode::mismatch, ctx,
                      fmt::format("layer '{}' names joint '{}', which {} does not have", report.layers[l].name, name,
                                  c.in_name));
        }
        c.joint_layer[static_cast<size_t>(j)] = static_cast<int>(l);
      }
    }
    cmp.result.poses = render::hold_layers(result, c.joint_layer, c.layer_keys);
  }
  cmp.result.label = fmt::format("{} - {} drawings{}", c.in_name, cmp.kept_frames.size(),
                                 report.layers.empty() ? "" : fmt::format(", {} layers", report.layers.size()));
}

// Reads the compare file as the original: one clock, each clip at its own length, the shorter one
// staying on its last pose (a re-timed or gait-styled result beside its source). Noted, so a
// length mismatch is never a surprise.
void add_compare(const RenderJob& job, const Messages& messages, RenderClips& c) {
  io::ReadOptions ro = job.read;
  if (!job.compare_animation.empty()) ro.animation = job.compare_animation;
  io::ReadResult other_read = io::read_motion(job.compare, ro);
  for (const std::string& w : other_read.warnings) messages.warn(w);
  const double rate = c.cmp.frame_rate;
  Motion m = resample(other_read.motion, rate);
  const Motion& result = c.result;
  c.other_name = job.compare.filename().string();
  const int n = std::max(m.frame_count, result.frame_count);
  WorldPoses other_poses = forward_kinematics(m);
  if (m.frame_count != result.frame_count) {
    const bool result_shorter = result.frame_count < m.frame_count;
    messages.note(fmt::format("{} has {} frames and {} {} at {:g} fps; {} holds its last pose from frame {}",
                              c.in_name, result.frame_count, c.other_name, m.frame_count, rate,
                              result_shorter ? c.in_name : c.other_name, std::min(m.frame_count, result.frame_count)));
  }
  if (m.frame_count < n) other_poses = render::hold_last_pose(other_poses, n);
  if (c.cmp.result.poses.frame_count < n) c.cmp.result.poses = render::hold_last_pose(c.cmp.result.poses, n);
  c.cmp.original = render::Clip{m.skeleton, std::move(other_poses), c.other_name};
  c.other_motion = std::move(m);
  c.other_scene = std::move(other_read.gltf_scene);
}

RenderClips load_clips(const std::filesystem::path& input, const RenderJob& job, const Messages& messages) {
  std::optional<io::KeptFramesReport> report;
  if (!job.keys.empty()) report = io::read_kept_frames_report(job.keys);
  double rate = 24.0;
  if (report && report->frame_rate) rate = *report->frame_rate;
  if (job.output_rate > 0) rate = job.output_rate;

  RenderClips c;
  c.read = io::read_motion(input, job.read);
  for (const std::string& w : c.read.warnings) messages.warn(w);
  c.result = resample(c.read.motion, rate);
  if (c.result.frame_count < 2) {
    throw Error(ErrorCode::bad_data, input.string(),
                fmt::format("{} frame(s) at {:g} fps: a video needs at least 2 frames", c.result.frame_count, rate));
  }
  c.cmp.frame_rate = rate;
  c.joint_layer.assign(static_cast<size_t>(c.result.joint_count()), 0);
  const WorldPoses poses = forward_kinematics(c.result);
  c.in_name = input.filename().string();
  c.cmp.result = {c.result.skeleton, poses, c.in_name};
  if (report) hold_on_report(*report, job.keys.string(), poses, c);
  if (!job.compare.empty()) {
    add_compare(job, messages, c);
  } else if (report) {
    c.cmp.original = render::Clip{c.result.skeleton, poses, c.in_name + " - smooth"};
  }
  return c;
}

// The toon look's clip of a motion: held on its drawings (every joint on its layer's keys) when
// `layer_keys` is given, as it is otherwise, `frames` long (one clock for both clips: the shorter
// one holds its last pose), with the character its file carries or a generated body.
toon::ToonClip toon_clip(const Motion& motion, const std::shared_ptr<const io::GltfScene>& scene,
                         const std::string& file, int frames, const std::vector<int>& joint_layer,
                         const std::vector<std::vector<int>>& layer_keys, const Messages* messages) {
  toon::ToonClip c;
  c.motion = layer_keys.empty() ? motion : toon::held_motion(motion, joint_layer, layer_keys);
  if (c.motion.frame_count < frames) {
    const Motion& m = c.motion;
    const auto joints = static_cast<size_t>(m.joint_count());
    Motion longer = rest_motion(m.skeleton, m.frame_rate, frames);
    for (int f = 0; f < frames; ++f) {
      const int src = std::min(f, m.frame_count - 1);
      std::copy_n(m.frame_rotations(src).begin(), joints, longer.frame_rotations(f).begin());
      std::copy_n(m.frame_translations(src).begin(), joints, longer.frame_translations(f).begin());
    }
    if (!m.scales.empty()) {
      longer.scales.resize(longer.rotations.size());
      for (int f = 0; f < frames; ++f)
        for (size_t j = 0; j < joints; ++j)
          longer.scales[static_cast<size_t>(f) * joints + j] =
              m.scales[static_cast<size_t>(std::min(f, m.frame_count - 1)) * joints + j];
    }
    c.motion = std::move(longer);
  }
  c.character = toon::make_character(c.motion, scene, file);
  if (messages)
    for (const auto& w : c.character.warnings) messages->warn(w);
  return c;
}

// Draws the comparison video (or the cels) in the toon look.
void draw_toon(const std::filesystem::path& output, const RenderJob& job, const RenderClips& c,
               const Messages& messages, const render::ProgressFn& progress) {
  const int n_out = c.cmp.frame_count();
  const toon::ToonClip result_clip =
      toon_clip(c.result, c.read.gltf_scene, c.in_name, n_out, c.joint_layer, c.layer_keys, &messages);
  std::optional<toon::ToonClip> original_clip;
  if (c.other_motion) {
    original_clip = toon_clip(*c.other_motion, c.other_scene, c.other_name, n_out, {}, {}, &messages);
  } else if (c.cmp.original) {
    // The input again, smooth: its character's warnings were given with the result's.
    original_clip = toon_clip(c.result, c.read.gltf_scene, c.in_name, n_out, {}, {}, nullptr);
  }
  if (job.style.transparent) {
    toon::write_cels(output, c.cmp, result_clip, job.camera, job.style, progress);
  } else {
    toon::write_comparison_video(output, c.cmp, result_clip, original_clip ? &*original_clip : nullptr, job.camera,
                                 job.style, job.compare_settings, {}, progress);
  }
}

}  // namespace

RenderFileResult run_render_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                 const RenderJob& job, const FileProgress& progress) {
  job.validate();
  // The output's format before the work.
  const render::VideoFormat format = render::video_format_for(output);
  if (job.style.transparent && format != render::VideoFormat::png_sequence) {
    throw Error(ErrorCode::invalid_settings, "toon.transparent",
                "transparent cels are the result alone as PNG frames: give a folder ending in '/' and no `compare`");
  }
  RenderFileResult out;
  const Messages messages{job, out};
  const RenderClips c = load_clips(input, job, messages);
  // The toon look needs OpenGL; without it, say what to install and draw sticks.
  out.look = job.look;
  if (job.look == Look::toon) {
    if (const auto why = toon::unavailable_reason()) {
      if (job.style.transparent) throw Error(ErrorCode::io, "toon.transparent", *why);
      out.fallback = fmt::format("the toon look needs OpenGL: {}; drawing `look` sticks instead", *why);
      messages.warn(out.fallback);
      out.look = Look::sticks;
    }
  }
  const render::ProgressFn on_progress = [&](double f) {
    if (progress) progress(f);
  };
  if (out.look == Look::toon) {
    draw_toon(output, job, c, messages, on_progress);
  } else {
    render::write_comparison_video(output, c.cmp, job.camera, {}, job.compare_settings, {}, on_progress);
  }
  const bool split = c.cmp.original && job.compare_settings.layout == render::CompareLayout::side_by_side;
  out.format = format;
  out.frames = c.cmp.frame_count();
  out.frame_rate = c.cmp.frame_rate;
  out.width = split ? (job.camera.width / 2) * 2 : job.camera.width;
  out.height = job.camera.height;
  out.view = job.camera.view;
  out.follow = job.camera.follow;
  out.smear = out.look == Look::toon ? job.style.smear : toon::Smear::off;
  out.drawings = static_cast<int>(c.cmp.kept_frames.size());
  return out;
}

nlohmann::json render_figures(const RenderFileResult& result) {
  nlohmann::json j{{"format", std::string(render::to_string(result.format))},
                   {"frames", result.frames},
                   {"fps", result.frame_rate},
                   {"duration_s", result.frames / result.frame_rate},
                   {"width", result.width},
                   {"height", result.height},
                   {"camera", std::string(render::to_string(result.view))},
                   {"framing", result.follow ? "follow" : "fixed"},
                   {"look", std::string(kLookNames.name(result.look))},
                   {"smear", std::string(toon::kSmearNames.name(result.smear))}};
  if (result.drawings > 0) j["drawings"] = result.drawings;
  return j;
}

}  // namespace koma::batch
