// `koma render`: options -> koma::batch::RenderJob, the library's render pipeline
// (koma/batch/render_file.hpp), then the summary. Parsing and reporting only.
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "common.hpp"
#include "koma/batch/render_file.hpp"
#include "koma/core/error.hpp"

namespace koma::cli {

namespace {

// The options of `koma render`.
struct RenderOptions {
  InputOptions in;
  std::string compare, compare_animation, keys, out, camera = "side", size = "1280x720", fps, layout = "side";
  std::string look = "toon", shading = "cel", ink = "#1a171f";
  int onion = 0, tones = 2;
  double line_width = 3.0, smear_threshold = 12.0;
  bool json = false, quiet = false, transparent = false, smear = false, multiples = false;
};

// The pipeline's settings from the options. Throws Error(invalid_settings, "--flag") for a value
// that does not parse; the pipeline checks the settings against each other.
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

void run_render(const RenderOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  batch::RenderJob job = render_job(o);
  // Warnings and notes as they arise; with --json only the fall-back to sticks (after the run).
  if (!o.json) {
    job.on_warning = print_warning;
    job.on_note = [](const std::string& n) { fmt::print(stderr, "koma: note: {}\n", n); };
  }
  Progress progress("render", !o.quiet && !o.json);
  batch::RenderFileResult r;
  try {
    r = batch::run_render_file(o.in.path, o.out, job, [&](double f) { progress.update(f); });
  } catch (const Error& e) {
    // Fields set by a flag that depends on the options (or named outside invalid_settings).
    if (e.context() == "toon.smear" && o.multiples) throw Error(e.code(), "--multiples", e.message());
    if (e.context() == "toon.transparent") throw Error(e.code(), "--transparent", e.message());
    throw;
  }
  progress.finish();
  if (o.json && !r.fallback.empty()) print_warning(r.fallback);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.json) {
    nlohmann::json j = batch::render_figures(r);
    j["output"] = o.out;
    j["seconds"] = secs;
    print_json(j);
    return;
  }
  fmt::print("wrote {} ({}, {} frames at {:g} fps = {:.2f} s, {}x{}, {} camera{}) in {:.1f} s\n", o.out,
             render::to_string(r.format), r.frames, r.frame_rate, r.frames / r.frame_rate, r.width, r.height,
             render::to_string(r.view), r.drawings == 0 ? "" : fmt::format(", {} drawings", r.drawings), secs);
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
