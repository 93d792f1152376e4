// `koma render`: options -> koma::batch::RenderJob, the library's render pipeline
// (koma/batch/render_file.hpp), then the summary. Parsing and reporting only.
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "common.hpp"
#include "koma/batch/render_file.hpp"
#include "koma/core/error.hpp"
#include "render_options.hpp"

namespace koma::cli {

namespace {

// The options of one `koma render` run.
struct RenderRun {
  RenderOptions r;
  std::string out;
  bool json = false, quiet = false;
};

}  // namespace

batch::RenderJob render_job(const RenderOptions& o) {
  batch::RenderJob job;
  job.read = read_options(o.in);
  job.keys = o.keys;
  job.compare = o.compare;
  job.compare_animation = o.compare_animation;
  job.camera = render::parse_camera_spec(o.camera, job.camera);
  const auto look = batch::kLookNames.parse(o.look);
  if (!look) throw Error(ErrorCode::invalid_settings, "--look", fmt::format("'{}': expected toon or sticks", o.look));
  job.look = *look;
  toon::ToonStyle& style = job.style;
  style.tones = o.tones;
  const auto shading = toon::kShadingNames.parse(o.shading);
  if (!shading)
    throw Error(ErrorCode::invalid_settings, "--shading",
                fmt::format("'{}': expected {}", o.shading, toon::kShadingNames.names()));
  style.shading = *shading;
  style.line_width = o.line_width;
  style.ink = render::parse_colour(o.ink, "--ink");
  style.transparent = o.transparent;
  if (o.smear && o.multiples)
    throw Error(ErrorCode::invalid_settings, "--smear", "give --smear or --multiples, not both");
  style.smear = o.smear ? toon::Smear::smear : o.multiples ? toon::Smear::multiples : toon::Smear::off;
  style.smear_threshold = o.smear_threshold;
  std::tie(job.camera.width, job.camera.height) = render::parse_frame_size(o.size);
  if (o.layout == "side") job.compare_settings.layout = render::CompareLayout::side_by_side;
  else if (o.layout == "overlay") job.compare_settings.layout = render::CompareLayout::overlay;
  else throw Error(ErrorCode::invalid_settings, "--layout", fmt::format("'{}': expected side or overlay", o.layout));
  job.compare_settings.onion_skin = o.onion;
  // 'source' is the pipeline's 0: the report's rate, else 24.
  if (!o.fps.empty()) job.output_rate = parse_fps_option(o.fps, 0.0, "--fps");
  return job;
}

nlohmann::json render_options_json(const RenderOptions& o) {
  return {{"compare", o.compare}, {"compare_animation", o.compare_animation}, {"keys", o.keys}, {"camera", o.camera},
          {"size", o.size}, {"fps", o.fps}, {"layout", o.layout}, {"look", o.look}, {"shading", o.shading},
          {"ink", o.ink}, {"onion", o.onion}, {"tones", o.tones}, {"line_width", o.line_width},
          {"smear_threshold", o.smear_threshold}, {"transparent", o.transparent}, {"smear", o.smear},
          {"multiples", o.multiples}, {"unit", o.in.unit}, {"animation", o.in.animation},
          {"asset_root", o.in.asset_root}};
}

namespace {

// A failure of a field whose flag depends on the options (or named outside invalid_settings), as the flag.
Error as_flag_error(const Error& e, const RenderOptions& o) {
  if (e.context() == "toon.smear" && o.multiples) return Error(e.code(), "--multiples", e.message());
  if (e.context() == "toon.transparent") return Error(e.code(), "--transparent", e.message());
  return e;
}

void run_render(const RenderRun& run) {
  const RenderOptions& o = run.r;
  const auto t0 = std::chrono::steady_clock::now();
  batch::RenderJob job = render_job(o);
  // Warnings and notes as they arise; with --json only the fall-back to sticks (after the run).
  if (!run.json) {
    job.on_warning = print_warning;
    job.on_note = [](const std::string& n) { fmt::print(stderr, "koma: note: {}\n", n); };
  }
  Progress progress("render", !run.quiet && !run.json);
  batch::RenderFileResult r;
  try {
    r = batch::run_render_file(o.in.path, run.out, job, [&](double f) { progress.update(f); });
  } catch (const Error& e) {
    throw as_flag_error(e, o);
  }
  progress.finish();
  if (run.json && !r.fallback.empty()) print_warning(r.fallback);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (run.json) {
    nlohmann::json j = batch::render_figures(r);
    j["output"] = run.out;
    j["seconds"] = secs;
    print_json(j);
    return;
  }
  fmt::print("wrote {} ({}, {} frames at {:g} fps = {:.2f} s, {}x{}, {} camera{}) in {:.1f} s\n", run.out,
             render::to_string(r.format), r.frames, r.frame_rate, r.frames / r.frame_rate, r.width, r.height,
             render::to_string(r.view), r.drawings == 0 ? "" : fmt::format(", {} drawings", r.drawings), secs);
}

}  // namespace

void add_render_options(CLI::App& cmd, RenderOptions& o, bool batch) {
  cmd.add_option("--compare", o.compare,
                 batch ? "Second motion (the original) shown beside or under each input: one file for all, or a "
                         "folder that mirrors the inputs (FOLDER/<relative path>, or the same name as .bvh/.glb/.gltf/.fbx)"
                       : "Second motion (the original) shown beside or under the input");
  cmd.add_option("--compare-animation", o.compare_animation,
                  "glTF or FBX --compare file: animation to read, by name or index (default: --animation's; "
                  "a take and its styled GLB name theirs differently)");
  cmd.add_option("--keys", o.keys,
                 batch ? "Folder of `koma keys` JSON reports that mirrors the inputs (FOLDER/<relative path>.json)"
                       : "JSON report of `koma keys` (reads its kept_frames)");
  cmd.add_option("--camera", o.camera,
                  "View front, side, top or persp, and framing fixed (default) or follow; e.g. side,follow")
      ->capture_default_str();
  cmd.add_option("--look", o.look, "toon (cel-shaded, outlined character) or sticks (skeleton)")
      ->capture_default_str();
  cmd.add_flag("--transparent", o.transparent,
                "Toon look: RGBA PNG cels of the result alone, no background, shadow, caption or timeline");
  cmd.add_option("--tones", o.tones, "Toon look: cel tones per material, 2 or 3")->capture_default_str();
  cmd.add_option("--shading", o.shading, "Toon look: cel, smooth (plain Lambert) or flat (unlit)")
      ->capture_default_str();
  cmd.add_option("--line-width", o.line_width, "Toon look: outline width in pixels at 720p (0 = none)")
      ->capture_default_str();
  cmd.add_option("--ink", o.ink, "Toon look: line colour #RRGGBB")->capture_default_str();
  cmd.add_flag("--smear", o.smear,
                "Toon look: stretch the trailing side of fast parts back toward the previous drawing");
  cmd.add_flag("--multiples", o.multiples, "Toon look: fading copies of fast parts instead of a smear");
  cmd.add_option("--smear-threshold", o.smear_threshold,
                  "Toon look: a part is fast when it moved more than this many pixels at 720p since the previous "
                  "drawing (fully smeared from 1.5x)")
      ->capture_default_str();
  cmd.add_option("--size", o.size, "Frame size WIDTHxHEIGHT")->capture_default_str();
  cmd.add_option("--fps", o.fps, "Output frame rate (default: the report's, else 24)");
  cmd.add_option("--layout", o.layout, "side (by side) or overlay, when there are two motions")
      ->capture_default_str();
  cmd.add_option("--onion", o.onion, "Onion skin: previous drawings shown as ghosts (0 .. 8)")
      ->capture_default_str();
  add_input_options(cmd, o.in);
}

void add_render_command(CLI::App& app) {
  auto opts = std::make_shared<RenderRun>();
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
  cmd->add_option("input", opts->r.in.path, "Motion to show (the result)")->required();
  cmd->add_option("-o,--output", opts->out, "Output .mp4, .gif, or folder/ for PNG frames")->required();
  add_render_options(*cmd, opts->r);
  cmd->add_flag("--json", opts->json, "Print a JSON summary");
  cmd->add_flag("-q,--quiet", opts->quiet, "No progress bar");
  cmd->callback([opts] { run_render(*opts); });
}

}  // namespace koma::cli
