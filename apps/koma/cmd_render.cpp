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
#include "koma/toon/video.hpp"

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

// --camera: a view (front, side, top, persp) and/or a framing (fixed, follow), comma-separated.
void parse_camera(const std::string& text, render::CameraSettings& camera) {
  std::stringstream words(text);
  std::string w;
  while (std::getline(words, w, ',')) {
    if (w == "fixed") camera.follow = false;
    else if (w == "follow") camera.follow = true;
    else if (const auto view = render::parse_camera_view(w)) camera.view = *view;
    else
      throw Error(ErrorCode::invalid_settings, "--camera",
                  fmt::format("unknown camera '{}'; expected {} and/or fixed or follow (e.g. side,follow)", w,
                              render::kCameraViewNames.names()));
  }
}

// "#1a171f" or "1a171f" -> a colour.
render::Rgba parse_colour(const std::string& text, const char* option) {
  std::string hex = text.starts_with("#") ? text.substr(1) : text;
  unsigned r = 0, g = 0, b = 0;
  char rest = 0;
  if (hex.size() != 6 || std::sscanf(hex.c_str(), "%2x%2x%2x%c", &r, &g, &b, &rest) != 3)
    throw Error(ErrorCode::invalid_settings, option, fmt::format("'{}' is not a colour; expected #RRGGBB", text));
  return {r / 255.0, g / 255.0, b / 255.0, 1.0};
}

// The toon look's clips: the result held on its drawings (every joint on its layer's keys), the
// original as it is; each with the character its file carries or a generated body.
toon::ToonClip toon_clip(const Motion& motion, const std::shared_ptr<const io::GltfScene>& scene,
                         const std::string& file, int frames, const std::vector<int>& joint_layer,
                         const std::vector<std::vector<int>>& layer_keys, bool quiet) {
  toon::ToonClip c;
  c.motion = layer_keys.empty() ? motion : toon::held_motion(motion, joint_layer, layer_keys);
  if (c.motion.frame_count < frames) {
    // One clock for both clips: the shorter one holds its last pose.
    std::vector<int> last(static_cast<size_t>(c.motion.joint_count()), 0);
    Motion longer = rest_motion(c.motion.skeleton, c.motion.frame_rate, frames);
    for (int f = 0; f < frames; ++f) {
      const int src = std::min(f, c.motion.frame_count - 1);
      std::copy_n(c.motion.frame_rotations(src).begin(), c.motion.joint_count(), longer.frame_rotations(f).begin());
      std::copy_n(c.motion.frame_translations(src).begin(), c.motion.joint_count(),
                  longer.frame_translations(f).begin());
    }
    if (!c.motion.scales.empty()) {
      longer.scales.resize(longer.rotations.size());
      for (int f = 0; f < frames; ++f)
        for (int j = 0; j < c.motion.joint_count(); ++j)
          longer.scales[static_cast<size_t>(f) * c.motion.joint_count() + j] =
              c.motion.scales[static_cast<size_t>(std::min(f, c.motion.frame_count - 1)) * c.motion.joint_count() + j];
    }
    c.motion = std::move(longer);
  }
  c.character = toon::make_character(c.motion, scene, file);
  if (!quiet)
    for (const auto& w : c.character.warnings) fmt::print(stderr, "koma: warning: {}\n", w);
  return c;
}

// The options of `koma render`.
struct RenderOptions {
  InputOptions in;
  std::string compare, compare_animation, keys, out, camera = "side", size = "1280x720", fps, layout = "side";
  std::string look = "toon", shading = "cel", ink = "#1a171f";
  int onion = 0, tones = 2;
  double line_width = 3.0, smear_threshold = 12.0;
  bool json = false, quiet = false, transparent = false, smear = false, multiples = false;

};

// The toon look's settings from the options, checked against each other and the output.
toon::ToonStyle toon_style(const RenderOptions& o) {
  toon::ToonStyle style;
  style.tones = o.tones;
  const auto shading = toon::kShadingNames.parse(o.shading);
  if (!shading)
    throw Error(ErrorCode::invalid_settings, "--shading",
                fmt::format("'{}': expected {}", o.shading, toon::kShadingNames.names()));
  style.shading = *shading;
  style.line_width = o.line_width;
  style.ink = parse_colour(o.ink, "--ink");
  style.transparent = o.transparent;
  if (o.smear && o.multiples)
    throw Error(ErrorCode::invalid_settings, "--smear", "give --smear or --multiples, not both");
  style.smear = o.smear ? toon::Smear::smear : o.multiples ? toon::Smear::multiples : toon::Smear::off;
  style.smear_threshold = o.smear_threshold;
  try {
    style.validate();
  } catch (const Error& e) {
    const std::string field = e.context() == "toon.tones"             ? "--tones"
                              : e.context() == "toon.smear_threshold" ? "--smear-threshold"
                                                                      : "--line-width";
    throw Error(ErrorCode::invalid_settings, field, e.message());
  }
  if (style.smear != toon::Smear::off && o.look != "toon")
    throw Error(ErrorCode::invalid_settings, o.smear ? "--smear" : "--multiples",
                "smears are drawn in the toon look only");
  if (o.transparent && o.look != "toon")
    throw Error(ErrorCode::invalid_settings, "--transparent", "transparent cels are drawn in the toon look only");
  if (o.transparent && (!o.compare.empty() || render::video_format_for(o.out) != render::VideoFormat::png_sequence))
    throw Error(ErrorCode::invalid_settings, "--transparent",
                "transparent cels are the result alone as PNG frames: give a folder ending in '/' and no --compare");
  return style;
}

// What `koma render` draws: the result (held on the report's drawings, each body part on its
// layer's keys) and the original beside it, on one clock at the output rate.
struct RenderClips {
  render::Comparison cmp;
  Motion result;
  io::ReadResult read;  // the result's file, with the character it carries
  std::optional<Motion> other_motion;
  std::shared_ptr<const io::GltfScene> other_scene;
  std::vector<int> joint_layer;
  std::vector<std::vector<int>> layer_keys;  // empty: the result is not held
  double rate = 24.0;
  std::string in_name;
};

RenderClips load_clips(const RenderOptions& o) {
  std::optional<io::KeptFramesReport> report;
  if (!o.keys.empty()) report = io::read_kept_frames_report(o.keys);
  double rate = 24.0;
  if (report && report->frame_rate) rate = *report->frame_rate;
  if (!o.fps.empty()) rate = parse_fps_option(o.fps, rate, "--fps");

  io::ReadResult r = read_input(o.in, o.json);
  Motion result = resample(r.motion, rate);
  if (result.frame_count < 2) {
    throw Error(ErrorCode::bad_data, o.in.path,
                fmt::format("{} frame(s) at {:g} fps: a video needs at least 2 frames", result.frame_count, rate));
  }
  render::Comparison cmp;
  cmp.frame_rate = rate;
  std::vector<int> joint_layer(static_cast<size_t>(result.joint_count()), 0);
  std::vector<std::vector<int>> layer_keys;  // empty: the result is not held
  const WorldPoses poses = forward_kinematics(result);
  const std::string in_name = std::filesystem::path(o.in.path).filename().string();
  cmp.result = {result.skeleton, poses, in_name};
  if (report) {
    const std::string ctx = o.keys;
    if (report->frame_count && *report->frame_count != result.frame_count) {
      throw Error(ErrorCode::mismatch, ctx,
                  fmt::format("the report is for {} output frames, {} has {} at {:g} fps", *report->frame_count,
                              in_name, result.frame_count, rate));
    }
    check_kept_frames(report->kept_frames, result.frame_count, ctx);
    cmp.kept_frames = report->kept_frames;
    if (report->layers.empty()) {
      cmp.result.poses = render::hold_poses(poses, cmp.kept_frames);
      layer_keys = {cmp.kept_frames};
    } else {
      // A layered report: every body part held on its own layer's keys, as koma keys wrote it.
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
  std::optional<Motion> other_motion;
  std::shared_ptr<const io::GltfScene> other_scene;
  if (!o.compare.empty()) {
    InputOptions other = o.in;
    other.path = o.compare;
    if (!o.compare_animation.empty()) other.animation = o.compare_animation;
    io::ReadResult other_read = read_input(other, o.json);
    Motion m = resample(other_read.motion, rate);
    // One clock, each clip at its own length: the shorter one stays on its last pose (a re-timed
    // or gait-styled result beside its source). Said, so a length mismatch is never a surprise.
    const std::string other_name = std::filesystem::path(o.compare).filename().string();
    const int n = std::max(m.frame_count, result.frame_count);
    WorldPoses other_poses = forward_kinematics(m);
    if (m.frame_count != result.frame_count && !o.json) {
      const bool result_shorter = result.frame_count < m.frame_count;
      fmt::print(stderr, "koma: note: {} has {} frames and {} {} at {:g} fps; {} holds its last pose from frame {}\n",
                 in_name, result.frame_count, other_name, m.frame_count, rate,
                 result_shorter ? in_name : other_name, std::min(m.frame_count, result.frame_count));
    }
    if (m.frame_count < n) other_poses = render::hold_last_pose(other_poses, n);
    if (cmp.result.poses.frame_count < n) cmp.result.poses = render::hold_last_pose(cmp.result.poses, n);
    cmp.original = render::Clip{m.skeleton, std::move(other_poses), other_name};
    other_motion = std::move(m);
    other_scene = std::move(other_read.gltf_scene);
  } else if (report) {
    cmp.original = render::Clip{result.skeleton, poses, in_name + " - smooth"};
  }
  return RenderClips{std::move(cmp), std::move(result), std::move(r), std::move(other_motion), std::move(other_scene),
                     std::move(joint_layer), std::move(layer_keys), rate, in_name};
}

// Draws the video (or the cels); returns whether the toon look was drawn (false: sticks).
bool draw_render(const RenderOptions& o, const RenderClips& c, const render::CameraSettings& camera,
                 const toon::ToonStyle& style, const render::CompareSettings& cs) {
  const render::Comparison& cmp = c.cmp;
  const Motion& result = c.result;
  const io::ReadResult& r = c.read;
  const std::string& in_name = c.in_name;
  const auto& joint_layer = c.joint_layer;
  const auto& layer_keys = c.layer_keys;
  const auto& other_motion = c.other_motion;
  const auto& other_scene = c.other_scene;
  // The toon look needs OpenGL; without it, say what to install and draw sticks.
  bool toon_look = o.look == "toon";
  if (toon_look) {
    if (const auto why = toon::unavailable_reason()) {
      if (o.transparent) throw Error(ErrorCode::io, "--transparent", *why);
      fmt::print(stderr, "koma: warning: the toon look needs OpenGL: {}; drawing --look sticks instead\n", *why);
      toon_look = false;
    }
  }
  Progress progress("render", !o.quiet && !o.json);
  const auto on_progress = [&](double f) { progress.update(f); };
  if (toon_look) {
    const int n_out = cmp.frame_count();
    const toon::ToonClip result_clip =
        toon_clip(result, r.gltf_scene, in_name, n_out, joint_layer, layer_keys, o.json);
    std::optional<toon::ToonClip> original_clip;
    if (other_motion) {
      original_clip = toon_clip(*other_motion, other_scene, std::filesystem::path(o.compare).filename().string(),
                                n_out, {}, {}, o.json);
    } else if (cmp.original) {
      original_clip = toon_clip(result, r.gltf_scene, in_name, n_out, {}, {}, true);
    }
    if (o.transparent) {
      toon::write_cels(o.out, cmp, result_clip, camera, style, on_progress);
    } else {
      toon::write_comparison_video(o.out, cmp, result_clip, original_clip ? &*original_clip : nullptr, camera,
                                   style, cs, {}, on_progress);
    }
  } else {
    render::write_comparison_video(o.out, cmp, camera, {}, cs, {}, on_progress);
  }
  progress.finish();
  return toon_look;
}

void run_render(const RenderOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  render::CameraSettings camera;
  camera.view = render::CameraView::side;
  parse_camera(o.camera, camera);
  if (o.look != "toon" && o.look != "sticks")
    throw Error(ErrorCode::invalid_settings, "--look", fmt::format("'{}': expected toon or sticks", o.look));
  const toon::ToonStyle style = toon_style(o);
  std::tie(camera.width, camera.height) = parse_size(o.size);
  render::CompareSettings cs;
  if (o.layout == "side") cs.layout = render::CompareLayout::side_by_side;
  else if (o.layout == "overlay") cs.layout = render::CompareLayout::overlay;
  else throw Error(ErrorCode::invalid_settings, "--layout", fmt::format("'{}': expected side or overlay", o.layout));
  cs.onion_skin = o.onion;
  cs.validate();
  // Check the output path before the work: format and folder.
  render::video_format_for(o.out);

  const RenderClips c = load_clips(o);
  const render::Comparison& cmp = c.cmp;
  const double rate = c.rate;
  const bool toon_look = draw_render(o, c, camera, style, cs);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int n = cmp.frame_count();
  const bool split = cmp.original && cs.layout == render::CompareLayout::side_by_side;
  const int width = split ? (camera.width / 2) * 2 : camera.width;
  const std::string fmt_name(render::to_string(render::video_format_for(o.out)));
  if (o.json) {
    nlohmann::json j{{"output", o.out}, {"format", fmt_name}, {"frames", n}, {"fps", rate},
                     {"duration_s", n / rate}, {"width", width}, {"height", camera.height},
                     {"camera", std::string(render::to_string(camera.view))},
                     {"framing", camera.follow ? "follow" : "fixed"}, {"look", toon_look ? "toon" : "sticks"},
                     {"smear", std::string(toon_look ? toon::kSmearNames.name(style.smear) : "off")},
                     {"seconds", secs}};
    if (!cmp.kept_frames.empty()) j["drawings"] = cmp.kept_frames.size();
    print_json(j);
    return;
  }
  fmt::print("wrote {} ({}, {} frames at {:g} fps = {:.2f} s, {}x{}, {} camera{}) in {:.1f} s\n", o.out,
             fmt_name, n, rate, n / rate, width, camera.height, render::to_string(camera.view),
             cmp.kept_frames.empty() ? "" : fmt::format(", {} drawings", cmp.kept_frames.size()), secs);
}

}  // namespace

void add_render_command(CLI::App& app) {
  auto opts = std::make_shared<RenderOptions>();
  auto* cmd = app.add_subcommand("render", "Render a motion (or a comparison of two) to MP4, GIF or PNG frames");
  cmd->footer(
      "The look (--look toon, the default): the character as cel animation - flat tones (2, or 3\n"
      "with --tones 3) from its materials and textures, ink outlines and inner lines, a contact\n"
      "shadow on paper. glTF and FBX files draw their own character; BVH takes get a generated\n"
      "mannequin (left limbs vermilion, right limbs cobalt). --look sticks draws the skeleton as\n"
      "tapered bones on a ground grid, for analysis. The toon look runs on OpenGL through EGL\n"
      "(llvmpipe on the CPU where there is no GPU); without it koma warns and draws sticks.\n"
      "The camera is fixed and frames the whole take, so a held drawing is pixel-identical for\n"
      "its hold; --camera side,follow pans with a travelling figure, moving only when a new\n"
      "drawing appears. Output format by name: .mp4 (H.264), .gif, or a folder ending in '/'\n"
      "for PNG frames. --transparent writes RGBA PNG cels of the result alone (no background,\n"
      "shadow, caption or timeline) for compositing. Written atomically.\n"
      "--smear draws the result's fast drawings as an animator draws a fast move in one drawing:\n"
      "where a part moved more than --smear-threshold pixels (at 720p) since the previous drawing,\n"
      "its trailing side is stretched back toward where it was; --multiples draws fading copies\n"
      "back along the motion instead. Drawings are compared as drawn (held on --keys), so only\n"
      "the fast ones change; the original beside it is never smeared. As koma view --smear.\n"
      "--keys reads \"kept_frames\" (output frames that start a new drawing) from the JSON report of\n"
      "`koma keys`: the input is shown held on those frames beside the smooth input (or beside\n"
      "--compare), with NEW/HOLD markers and a timeline of the kept frames.\n"
      "Examples:\n"
      "  koma render walk.bvh -o walk.mp4\n"
      "  koma render walk.bvh --keys keys.json -o compare.mp4 --onion 2\n"
      "  koma render cartoon.bvh --compare walk.bvh -o cmp.gif --camera persp --size 960x540\n"
      "  koma render tired_hero.glb --compare hero.fbx --compare-animation \"Armature|Walk\" -o cmp.mp4 --layout overlay\n"
      "  koma render walk.bvh -o frames/ --size 640x360\n"
      "  koma render Fox.glb --keys keys.json --transparent -o cels/\n"
      "  koma render kick.bvh --keys keys.json --smear -o smear.mp4\n"
      "  koma render walk.bvh --look sticks --camera persp -o sticks.mp4");
  cmd->add_option("input", opts->in.path, "Motion to show (the result)")->required();
  cmd->add_option("--compare", opts->compare, "Second motion (the original) shown beside or under the input");
  cmd->add_option("--compare-animation", opts->compare_animation,
                  "glTF or FBX --compare file: animation to read, by name or index (default: --animation's; "
                  "a take and its styled GLB name theirs differently)");
  cmd->add_option("--keys", opts->keys, "JSON report of `koma keys` (reads its kept_frames)");
  cmd->add_option("-o,--output", opts->out, "Output .mp4, .gif, or folder/ for PNG frames")->required();
  cmd->add_option("--camera", opts->camera,
                  "View front, side, top or persp, and framing fixed (default) or follow; e.g. side,follow")
      ->capture_default_str();
  cmd->add_option("--look", opts->look, "toon (cel-shaded, outlined character) or sticks (skeleton)")
      ->capture_default_str();
  cmd->add_flag("--transparent", opts->transparent,
                "Toon look: RGBA PNG cels of the result alone, no background, shadow, caption or timeline");
  cmd->add_option("--tones", opts->tones, "Toon look: cel tones per material, 2 or 3")->capture_default_str();
  cmd->add_option("--shading", opts->shading, "Toon look: cel, smooth (plain Lambert) or flat (unlit)")
      ->capture_default_str();
  cmd->add_option("--line-width", opts->line_width, "Toon look: outline width in pixels at 720p (0 = none)")
      ->capture_default_str();
  cmd->add_option("--ink", opts->ink, "Toon look: line colour #RRGGBB")->capture_default_str();
  cmd->add_flag("--smear", opts->smear,
                "Toon look: stretch the trailing side of fast parts back toward the previous drawing");
  cmd->add_flag("--multiples", opts->multiples, "Toon look: fading copies of fast parts instead of a smear");
  cmd->add_option("--smear-threshold", opts->smear_threshold,
                  "Toon look: a part is fast when it moved more than this many pixels at 720p since the previous "
                  "drawing (fully smeared from 1.5x)")
      ->capture_default_str();
  cmd->add_option("--size", opts->size, "Frame size WIDTHxHEIGHT")->capture_default_str();
  cmd->add_option("--fps", opts->fps, "Output frame rate (default: the report's, else 24)");
  cmd->add_option("--layout", opts->layout, "side (by side) or overlay, when there are two motions")
      ->capture_default_str();
  cmd->add_option("--onion", opts->onion, "Onion skin: previous drawings shown as ghosts (0 .. 8)")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress bar");
  add_input_options(*cmd, opts->in);
  cmd->callback([opts] { run_render(*opts); });
}

}  // namespace koma::cli
