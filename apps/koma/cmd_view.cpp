// koma view: a web viewer folder (index.html + assets) of a clip and its held result.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/kept_frames.hpp"
#include "koma/view/viewer.hpp"

namespace koma::cli {

namespace {

namespace fs = std::filesystem;

struct ViewOpts {
  InputOptions in;
  std::string compare, keys, out, fps, title, look = "toon";
  bool smear = false, multiples = false;
  bool json = false;
};

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// The result viewport: OTHER when given (cut to the original's length), else the original held
// on the report's drawings, else the original itself.
view::ViewClip result_clip(const ViewOpts& o, const view::ViewClip& original,
                           const std::optional<io::KeptFramesReport>& report, double rate) {
  view::ViewClip result;
  if (o.compare.empty()) {
    result = original;
    result.drawings = report ? report->kept_frames : view::held_drawings(original.motion);
    if (report) result.label = fmt::format("{} - {} drawings", original.label, report->kept_frames.size());
    return result;
  }
  InputOptions other = o.in;
  other.path = o.compare;
  other.animation.clear();  // OTHER's first animation: a held.glb of koma keys has one
  io::ReadResult r = read_input(other, o.json);
  result.motion = resample(r.motion, rate);
  result.scene = r.gltf_scene;
  result.label = file_name(o.compare);
  const int n = original.motion.frame_count;
  // Rounding of two durations may differ by a frame; more than that is a different clip.
  if (std::abs(result.motion.frame_count - n) > 2) {
    throw Error(ErrorCode::mismatch, o.compare,
                fmt::format("{} frames at {:g} fps, but {} has {}: compare motions of the same length",
                            result.motion.frame_count, rate, original.label, n));
  }
  if (result.motion.frame_count > n) result.motion = cut(result.motion, 0, n);
  if (result.motion.frame_count < n) {  // hold OTHER's last pose to the end
    std::vector<double> at(static_cast<size_t>(n));
    for (int f = 0; f < n; ++f) at[static_cast<size_t>(f)] = std::min(f, result.motion.frame_count - 1);
    result.motion = sample_at_frames(result.motion, at, rate);
  }
  // A held file read back has runs of equal poses: write them as STEP again.
  result.drawings = view::held_drawings(result.motion);
  return result;
}

}  // namespace

fs::path view_assets_dir() {
  if (const char* env = std::getenv("KOMA_VIEW_ASSETS"); env && *env) return env;
  return KOMA_VIEW_ASSETS_DIR;
}

void add_view_command(CLI::App& app) {
  auto o = std::make_shared<ViewOpts>();
  auto* cmd = app.add_subcommand("view", "Write a web viewer folder: the original and the held result side by side");
  cmd->footer(
      "Writes DIR/index.html and its assets (three.js, the page, the motion as a script); open index.html\n"
      "in any browser, offline, from the file system. glTF and FBX inputs show their own character; BVH\n"
      "gets a procedural figure. The look is toon (cel shading, ink lines, paper) unless --look says plain\n"
      "(smooth shading) or flat (unlit colours); the page's look menu, T, or index.html?look=plain switch it.\n"
      "--keys reads a `koma keys` report: the result is the input held on its drawings (STEP, no\n"
      "interpolation) and the page shows its error curve. --compare shows another file as the result\n"
      "instead (e.g. a held.glb written by koma keys). Frame rate: the report's, else --fps, else the input's.");
  cmd->add_option("input", o->in.path, "Input motion file (.glb, .gltf, .fbx, .bvh)")->required();
  cmd->add_option("--compare", o->compare, "Motion shown as the result (default: the input held on --keys)");
  cmd->add_option("--keys", o->keys, "JSON report of `koma keys` (kept frames and error curve)");
  cmd->add_option("-o,--output-dir", o->out, "Folder to write (index.html and assets)")->required();
  cmd->add_option("--fps", o->fps, "Viewer frame rate when there is no report, or 'source' (default)");
  cmd->add_option("--title", o->title, "Page title (default: the input's file name)");
  cmd->add_option("--look", o->look, "Look the page opens with: toon (cel shading and ink lines), plain, flat")
      ->check(CLI::IsMember({"toon", "plain", "flat"}))
      ->capture_default_str();
  cmd->add_flag("--smear", o->smear,
                "Open with smears on the result's fast drawings (as koma render --smear; the page's smear menu, S, or "
                "index.html?smear=off switch it)");
  cmd->add_flag("--multiples", o->multiples, "Open with multiples (fading copies) on the result's fast drawings");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  add_input_options(*cmd, o->in);
  cmd->callback([o] {
    std::optional<io::KeptFramesReport> report;
    if (!o->keys.empty()) report = io::read_kept_frames_report(o->keys);
    io::ReadResult r = read_input(o->in, o->json);
    double rate = r.motion.frame_rate;
    if (report && report->frame_rate) rate = *report->frame_rate;
    else if (!o->fps.empty()) rate = parse_fps_option(o->fps, rate, "--fps");

    view::ViewClip original{resample(r.motion, rate), r.gltf_scene, file_name(o->in.path), {}};
    if (report && report->frame_count && *report->frame_count != original.motion.frame_count) {
      throw Error(ErrorCode::mismatch, o->keys,
                  fmt::format("the report is for {} frames, but {} has {} at {:g} fps: it belongs to another clip",
                              *report->frame_count, original.label, original.motion.frame_count, rate));
    }
    if (report) view::check_drawings(report->kept_frames, original.motion.frame_count, o->keys);
    view::ViewClip result = result_clip(*o, original, report, rate);

    view::ViewerSettings vs;
    vs.look = o->look;
    if (o->smear && o->multiples)
      throw Error(ErrorCode::invalid_settings, "--multiples", "give --smear or --multiples, not both");
    vs.smear = o->smear ? "smear" : o->multiples ? "multiples" : "off";
    vs.title = o->title.empty() ? fmt::format("koma view - {}", original.label) : o->title;
    if (report) {
      vs.curve = report->curve;
      vs.chosen_keys = static_cast<int>(report->kept_frames.size());
      vs.source = file_name(o->keys);
    }
    const bool procedural = !original.scene || !result.scene;
    if (procedural && !o->json) {
      fmt::print(stderr, "koma: note: {} has no skinned character; the page draws a procedural figure\n",
                 !original.scene ? original.label : result.label);
    }
    const fs::path dir = o->out;
    view::write_viewer(dir, view_assets_dir(), original, result, vs);
    const std::string index = (dir / "index.html").string();
    if (o->json) {
      print_json({{"index", index}, {"frames", original.motion.frame_count}, {"fps", rate},
                  {"drawings", result.drawings.size()}, {"original", original.label}, {"result", result.label},
                  {"character", original.scene ? "gltf" : "procedural"}, {"look", vs.look}});
    } else {
      fmt::print("view: {} frames at {:g} fps, {} drawings in the result -> {}\n", original.motion.frame_count, rate,
                 result.drawings.size(), index);
    }
  });
}

}  // namespace koma::cli
