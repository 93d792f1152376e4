#include <fmt/format.h>

#include <cmath>

#include "commands.hpp"
#include "common.hpp"
#include "koma/body/height.hpp"
#include "koma/core/stats.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"
#ifdef KOMA_HAVE_VIDEO
#include "koma/video/decode.hpp"
#endif

namespace koma::cli {

namespace {
#ifdef KOMA_HAVE_VIDEO
// A video (what `koma keys` reads): ffprobe's size, rate, frame count and duration.
void print_video_info(const std::string& path, bool json) {
  const video::VideoInfo v = video::probe_video(path);
  const int frames = v.frame_count > 0 ? v.frame_count : static_cast<int>(std::lround(v.duration * v.frame_rate));
  const double duration = v.duration > 0 ? v.duration : (v.frame_rate > 0 ? frames / v.frame_rate : 0.0);
  if (json) {
    print_json({{"file", path}, {"kind", "video"}, {"width", v.width}, {"height", v.height}, {"fps", v.frame_rate},
                {"frames", frames}, {"frames_counted", v.frame_count > 0}, {"duration_s", duration},
                {"warnings", v.warnings}});
    return;
  }
  fmt::print("file       {}\n", path);
  fmt::print("video      {} x {} pixels\n", v.width, v.height);
  fmt::print("frames     {}{} at {:g} fps ({:.3f} s)\n", frames, v.frame_count > 0 ? "" : " (from the duration)",
             v.frame_rate, duration);
  for (const std::string& w : v.warnings) fmt::print(stderr, "koma: warning: {}\n", w);
}
#endif
}  // namespace

void add_info_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    bool json = false;
    bool joints = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("info", "Show what a motion file holds: skeleton, frames, rate, unit, size");
  cmd->footer(
      "Examples:\n"
      "  koma info walk.bvh\n"
      "  koma info walk.bvh --joints        # also list every joint with its channels\n"
      "  koma info walk.bvh --json | jq .frames\n"
      "  koma info Fox.glb                     # also lists the file's animations\n"
      "  koma info Fox.glb --animation Walk    # frames and rate of one animation\n"
      "  koma info hero.fbx                    # FBX: lists the stacks with their rates and durations\n"
      "  koma info clip.mp4                    # video: size, frame rate, frame count, duration");
  cmd->add_option("file", opts->in.path, "Motion file (.bvh, .gltf, .glb, .fbx) or video (.mp4, .gif, ...)")->required();
  add_input_options(*cmd, opts->in);
  cmd->add_flag("--joints", opts->joints, "List the joints with their parents and channels");
  cmd->add_flag("--json", opts->json, "Print a JSON object instead of text");
  cmd->callback([opts] {
#ifdef KOMA_HAVE_VIDEO
    if (video::is_video_path(opts->in.path)) return print_video_info(opts->in.path, opts->json);
#endif
    const io::ReadResult r = read_input(opts->in, opts->json);
    const Motion& m = r.motion;
    const MotionStats s = motion_stats(m);
    const body::HeightEstimate height = body::estimate_height(m);
    const double k = 1.0 / m.source_metres_per_unit();
    const std::string unit = unit_label(m);
    const std::string path_name = m.skeleton.names[static_cast<size_t>(s.path_joint)];
    std::vector<io::GltfAnimationInfo> animations;
    if (io::is_gltf_file(opts->in.path)) animations = io::list_gltf_animations(opts->in.path, opts->in.asset_root);
    std::vector<io::FbxAnimationInfo> stacks;
    if (io::is_fbx_file(opts->in.path)) stacks = io::list_fbx_animations(opts->in.path);
    if (opts->json) {
      nlohmann::json j;
      j["file"] = opts->in.path;
      j["joints"] = s.joints;
      j["end_sites"] = s.end_sites;
      j["channels"] = s.channels;
      j["frames"] = s.frames;
      j["fps"] = s.frame_rate;
      j["duration_s"] = s.duration;
      j["unit"] = unit;
      j["metres_per_unit"] = m.source_metres_per_unit();
      j["unit_detected"] = r.unit_detected;
      j["unit_rule"] = r.unit_rule;
      j["height_m"] = height.height;
      j["height_rule"] = height.rule;
      j["figure_size_m"] = s.height;
      j["rest_height_m"] = s.rest_height;
      j["path_joint"] = path_name;
      j["bbox_min_m"] = {s.box_min.x(), s.box_min.y(), s.box_min.z()};
      j["bbox_max_m"] = {s.box_max.x(), s.box_max.y(), s.box_max.z()};
      j["root_travel_m"] = s.root_travel;
      j["warnings"] = r.warnings;
      if (io::is_gltf_file(opts->in.path)) {
        auto& list = j["animations"] = nlohmann::json::array();
        for (const auto& a : animations)
          list.push_back({{"index", a.index}, {"name", a.name}, {"channels", a.channel_count}, {"keys", a.max_keys},
                          {"start_s", a.start}, {"end_s", a.end}, {"interpolations", a.interpolations}});
      }
      if (io::is_fbx_file(opts->in.path)) {
        auto& list = j["animations"] = nlohmann::json::array();
        for (const auto& a : stacks)
          list.push_back({{"index", a.index}, {"name", a.name}, {"fps", a.frame_rate}, {"duration_s", a.duration},
                          {"frames", a.frame_count}, {"channels", a.channel_count}, {"keys", a.max_keys},
                          {"junk", a.junk}});
      }
      if (opts->joints) {
        auto& list = j["joint_list"] = nlohmann::json::array();
        for (int i = 0; i < m.joint_count(); ++i) {
          std::vector<std::string> ch;
          for (Channel c : m.skeleton.channels[i]) ch.emplace_back(to_string(c));
          list.push_back({{"name", m.skeleton.names[i]},
                          {"parent", m.skeleton.parents[i] < 0 ? "" : m.skeleton.names[m.skeleton.parents[i]]},
                          {"channels", ch},
                          {"order", to_string(m.skeleton.euler_order(i))}});
        }
      }
      print_json(j);
      return;
    }
    fmt::print("file       {}\n", opts->in.path);
    fmt::print("skeleton   {} joints, {} end sites, {} channels\n", s.joints, s.end_sites, s.channels);
    fmt::print("frames     {} at {:g} fps ({:.3f} s)\n", s.frames, s.frame_rate, s.duration);
    fmt::print("unit       {} ({})\n", unit, r.unit_rule.empty() ? "stored in the file" : r.unit_rule);
    fmt::print("height     {:.3f} m ({:.4g} file units, from the {}); figure size {:.3f} m\n", height.height,
               height.height * k, height.from_legs ? "leg bones" : "posed figure", s.height);
    fmt::print("bounds     x {:.3f}..{:.3f}  y {:.3f}..{:.3f}  z {:.3f}..{:.3f} m\n", s.box_min.x(), s.box_max.x(),
               s.box_min.y(), s.box_max.y(), s.box_min.z(), s.box_max.z());
    fmt::print("root path  {:.3f} m ({}{})\n", s.root_travel, path_name,
               s.path_joint != 0 ? fmt::format(", below the static root {}", m.skeleton.names[0]) : "");
    if (!animations.empty()) {
      fmt::print("\n{:<4} {:<24} {:>8} {:>6} {:>15}  {}\n", "#", "animation", "channels", "keys", "time (s)", "interpolation");
      for (const auto& a : animations) {
        std::string interp;
        for (const auto& i : a.interpolations) {
          if (!interp.empty()) interp += ',';
          interp += i;
        }
        fmt::print("{:<4} {:<24} {:>8} {:>6} {:>7.3f}..{:<7.3f} {}\n", a.index, a.name.empty() ? "-" : a.name,
                   a.channel_count, a.max_keys, a.start, a.end, interp);
      }
    }
    if (!stacks.empty()) {
      fmt::print("\n{:<4} {:<36} {:>9} {:>10} {:>7} {:>8} {:>6}\n", "#", "animation", "fps", "duration", "frames",
                 "channels", "keys");
      for (const auto& a : stacks)
        fmt::print("{:<4} {:<36} {:>9.6g} {:>8.3f} s {:>7} {:>8} {:>6}{}\n", a.index, a.name.empty() ? "-" : a.name,
                   a.frame_rate, a.duration, a.frame_count, a.channel_count, a.max_keys,
                   a.junk ? "  (at most one frame: skipped by default)" : "");
    }
    if (opts->joints) {
      fmt::print("\n{:<4} {:<28} {:<28} {}\n", "#", "joint", "parent", "channels");
      for (int i = 0; i < m.joint_count(); ++i) {
        std::string ch;
        for (Channel c : m.skeleton.channels[i]) ch += std::string(to_string(c)) + " ";
        const int p = m.skeleton.parents[i];
        fmt::print("{:<4} {:<28} {:<28} {}\n", i, m.skeleton.names[i], p < 0 ? "-" : m.skeleton.names[p], ch);
      }
    }
  });
}

}  // namespace koma::cli
