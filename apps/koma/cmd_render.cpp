#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/kept_frames.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/sheet.hpp"

namespace koma::cli {

namespace {

// "1280x720" -> {1280, 720}.
std::pair<int, int> parse_size(const std::string& text) {
  int w = 0, h = 0;
  char x = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || (x != 'x' && x != 'X') || w <= 0 || h <= 0 ||
      w > 8192 || h > 8192) {
    throw Error(ErrorCode::invalid_settings, "--size",
                fmt::format("'{}' is not a frame size; expected WIDTHxHEIGHT, e.g. 1280x720 (1 .. 8192 each)", text));
  }
  return {w, h};
}

}  // namespace

void add_render_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string compare, compare_animation, keys, out, camera = "side", size = "1280x720", fps, layout = "side";
    int onion = 0;
    bool json = false, quiet = false;
  };
  auto opts = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("render", "Render a motion (or a comparison of two) to MP4, GIF or PNG frames");
  cmd->footer(
      "The figure: tapered bones, left limbs vermilion, right limbs cobalt, a contact shadow on a\n"
      "ground grid; the camera frames the whole motion. Output format by name: .mp4 (H.264),\n"
      ".gif, or a folder ending in '/' for PNG frames. Written atomically.\n"
      "--keys reads \"kept_frames\" (output frames that start a new drawing) from the JSON report of\n"
      "`koma keys`: the input is shown held on those frames beside the smooth input (or beside\n"
      "--compare), with NEW/HOLD markers and a timeline of the kept frames.\n"
      "Examples:\n"
      "  koma render walk.bvh -o walk.mp4\n"
      "  koma render walk.bvh --keys keys.json -o compare.mp4 --onion 2\n"
      "  koma render cartoon.bvh --compare walk.bvh -o cmp.gif --camera persp --size 960x540\n"
      "  koma render tired_hero.glb --compare hero.fbx --compare-animation \"Armature|Walk\" -o cmp.mp4 --layout overlay\n"
      "  koma render walk.bvh -o frames/ --size 640x360");
  cmd->add_option("input", opts->in.path, "Motion to show (the result)")->required();
  cmd->add_option("--compare", opts->compare, "Second motion (the original) shown beside or under the input");
  cmd->add_option("--compare-animation", opts->compare_animation,
                  "glTF or FBX --compare file: animation to read, by name or index (default: --animation's; "
                  "a take and its styled GLB name theirs differently)");
  cmd->add_option("--keys", opts->keys, "JSON report of `koma keys` (reads its kept_frames)");
  cmd->add_option("-o,--output", opts->out, "Output .mp4, .gif, or folder/ for PNG frames")->required();
  cmd->add_option("--camera", opts->camera, "front, side, top or persp")->capture_default_str();
  cmd->add_option("--size", opts->size, "Frame size WIDTHxHEIGHT")->capture_default_str();
  cmd->add_option("--fps", opts->fps, "Output frame rate (default: the report's, else 24)");
  cmd->add_option("--layout", opts->layout, "side (by side) or overlay, when there are two motions")
      ->capture_default_str();
  cmd->add_option("--onion", opts->onion, "Onion skin: previous drawings shown as ghosts (0 .. 8)")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress bar");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] {
    const auto t0 = std::chrono::steady_clock::now();
    render::CameraSettings camera;
    const auto view = render::parse_camera_view(opts->camera);
    if (!view)
      throw Error(ErrorCode::invalid_settings, "--camera",
                  fmt::format("unknown camera '{}'; expected {}", opts->camera, render::kCameraViewNames.names()));
    camera.view = *view;
    std::tie(camera.width, camera.height) = parse_size(opts->size);
    render::CompareSettings cs;
    if (opts->layout == "side") cs.layout = render::CompareLayout::side_by_side;
    else if (opts->layout == "overlay") cs.layout = render::CompareLayout::overlay;
    else throw Error(ErrorCode::invalid_settings, "--layout", fmt::format("'{}': expected side or overlay", opts->layout));
    cs.onion_skin = opts->onion;
    cs.validate();
    // Check the output path before the work: format and folder.
    render::video_format_for(opts->out);

    std::optional<io::KeptFramesReport> report;
    if (!opts->keys.empty()) report = io::read_kept_frames_report(opts->keys);
    double rate = 24.0;
    if (report && report->frame_rate) rate = *report->frame_rate;
    if (!opts->fps.empty()) rate = parse_fps_option(opts->fps, rate, "--fps");

    io::ReadResult r = read_input(opts->in, opts->json);
    const Motion result = resample(r.motion, rate);
    if (result.frame_count < 2) {
      throw Error(ErrorCode::bad_data, opts->in.path,
                  fmt::format("{} frame(s) at {:g} fps: a video needs at least 2 frames", result.frame_count, rate));
    }
    render::Comparison cmp;
    cmp.frame_rate = rate;
    const WorldPoses poses = forward_kinematics(result);
    const std::string in_name = std::filesystem::path(opts->in.path).filename().string();
    cmp.result = {result.skeleton, poses, in_name};
    if (report) {
      const std::string ctx = opts->keys;
      if (report->frame_count && *report->frame_count != result.frame_count) {
        throw Error(ErrorCode::mismatch, ctx,
                    fmt::format("the report is for {} output frames, {} has {} at {:g} fps", *report->frame_count,
                                in_name, result.frame_count, rate));
      }
      render::check_kept_frames(report->kept_frames, result.frame_count, ctx);
      cmp.kept_frames = report->kept_frames;
      if (report->layers.empty()) {
        cmp.result.poses = render::hold_poses(poses, cmp.kept_frames);
      } else {
        // A layered report: every body part held on its own layer's keys, as koma keys wrote it.
        std::vector<int> joint_layer(static_cast<size_t>(result.joint_count()), 0);
        std::vector<std::vector<int>> layer_keys;
        for (size_t l = 0; l < report->layers.size(); ++l) {
          layer_keys.push_back(report->layers[l].keys);
          for (const std::string& name : report->layers[l].joints) {
            const int j = result.skeleton.find(name);
            if (j < 0) {
              throw Error(ErrorCode::mismatch, ctx,
                          fmt::format("layer '{}' names joint '{}', which {} does not have", report->layers[l].name,
                                      name, in_name));
            }
            joint_layer[static_cast<size_t>(j)] = static_cast<int>(l);
          }
        }
        cmp.result.poses = render::hold_layers(result, joint_layer, layer_keys);
      }
      cmp.result.label = fmt::format("{} - {} drawings{}", in_name, cmp.kept_frames.size(),
                                     report->layers.empty() ? "" : fmt::format(", {} layers", report->layers.size()));
    }
    if (!opts->compare.empty()) {
      InputOptions other = opts->in;
      other.path = opts->compare;
      if (!opts->compare_animation.empty()) other.animation = opts->compare_animation;
      Motion o = resample(read_input(other, opts->json).motion, rate);
      // One clock, each clip at its own length: the shorter one stays on its last pose (a re-timed
      // or gait-styled result beside its source). Said, so a length mismatch is never a surprise.
      const std::string other_name = std::filesystem::path(opts->compare).filename().string();
      const int n = std::max(o.frame_count, result.frame_count);
      WorldPoses other_poses = forward_kinematics(o);
      if (o.frame_count != result.frame_count && !opts->json) {
        const bool result_shorter = result.frame_count < o.frame_count;
        fmt::print(stderr, "koma: note: {} has {} frames and {} {} at {:g} fps; {} holds its last pose from frame {}\n",
                   in_name, result.frame_count, other_name, o.frame_count, rate,
                   result_shorter ? in_name : other_name, std::min(o.frame_count, result.frame_count));
      }
      if (o.frame_count < n) other_poses = render::hold_last_pose(other_poses, n);
      if (cmp.result.poses.frame_count < n) cmp.result.poses = render::hold_last_pose(cmp.result.poses, n);
      cmp.original = render::Clip{o.skeleton, std::move(other_poses), other_name};
    } else if (report) {
      cmp.original = render::Clip{result.skeleton, poses, in_name + " - smooth"};
    }

    Progress progress("render", !opts->quiet && !opts->json);
    render::write_comparison_video(opts->out, cmp, camera, {}, cs, {},
                                   [&](double f) { progress.update(f); });
    progress.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int n = cmp.frame_count();
    const bool split = cmp.original && cs.layout == render::CompareLayout::side_by_side;
    const int width = split ? (camera.width / 2) * 2 : camera.width;
    const std::string fmt_name(render::to_string(render::video_format_for(opts->out)));
    if (opts->json) {
      nlohmann::json j{{"output", opts->out}, {"format", fmt_name}, {"frames", n}, {"fps", rate},
                       {"duration_s", n / rate}, {"width", width}, {"height", camera.height},
                       {"camera", std::string(render::to_string(camera.view))}, {"seconds", secs}};
      if (!cmp.kept_frames.empty()) j["drawings"] = cmp.kept_frames.size();
      print_json(j);
      return;
    }
    fmt::print("wrote {} ({}, {} frames at {:g} fps = {:.2f} s, {}x{}, {} camera{}) in {:.1f} s\n", opts->out,
               fmt_name, n, rate, n / rate, width, camera.height, render::to_string(camera.view),
               cmp.kept_frames.empty() ? "" : fmt::format(", {} drawings", cmp.kept_frames.size()), secs);
  });
}

}  // namespace koma::cli
