#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "common.hpp"
#include "flags.hpp"
#include "keys_options.hpp"
#include "koma/batch/pipelines.hpp"
#include "keys_sheets.hpp"
#include "koma/core/error.hpp"
#include "koma/render/encode.hpp"
#ifdef KOMA_HAVE_VIDEO
#include "keys_video.hpp"
#include "koma/video/decode.hpp"
#endif

namespace koma::cli {

namespace {

// "  spacing: 21 drawings (8 keys, 13 inbetweens on 2s), charts slow-in-out"
void print_spacing(const keys::Spacing& sp) {
  int inbetweens = 0;
  std::vector<std::string> charts;
  for (const keys::GapSpacing& g : sp.gaps) {
    inbetweens += g.inbetweens;
    if (std::find(charts.begin(), charts.end(), g.chart.name()) == charts.end()) charts.push_back(g.chart.name());
  }
  std::string names;
  for (const std::string& c : charts) names += (names.empty() ? "" : ", ") + c;
  fmt::print("  spacing: {} drawings ({} keys, {} inbetweens on {}s), chart{} {}\n", sp.drawings.size(),
             sp.drawings.size() - static_cast<size_t>(inbetweens), inbetweens, sp.on, charts.size() > 1 ? "s" : "", names);
}

}  // namespace

void add_keys_command(CLI::App& app) {
  struct Opts {
    KeysOptions k;  // the selection options, shared with `koma batch keys` (keys_options.hpp)
    std::string out, report, xsheet;
    bool json = false;
    std::string regions = "auto", flow = "dis", contact_sheet, xsheet_png, contact_sheet_smear = "off";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("keys", "Keep the key poses of a motion and hold them: limited (anime) animation");
  cmd->footer(
      "The motion is resampled to the output rate, the keys are chosen among the output frames, and\n"
      "every output frame shows the latest key pose exactly (stepped BVH). Errors are mean squared\n"
      "distances per point and frame; --max-error and camera positions are in the file's unit.\n"
      "Examples:\n"
      "  koma keys walk.bvh -o walk_on2s.bvh --on 2                        # on 2s: every drawing held >= 2 frames\n"
      "  koma keys walk.bvh -o k.bvh --on 2 --allow-ones                   # as many keys, 1s on fast action\n"
      "  koma keys walk.bvh -o k.bvh --keys 40 --min-hold 2 --max-hold 6 --report r.json --xsheet x.csv\n"
      "  koma keys walk.bvh -o k.bvh --max-error 4 --metric hold           # fewest keys within 4 cm^2\n"
      "  koma keys walk.bvh -o k.bvh --ratio 0.3 --keep-contacts --keep-extremes --camera front\n"
      "  koma keys walk.bvh -o k.bvh --on 2 --layers legs:3,arms:2+1 --selector uniform\n"
      "  koma keys walk.bvh -o k.bvh --keys 50 --selector anneal --seed 7 --json\n"
      "  koma keys punch.bvh -o p.bvh --keys 8 --on 2 --chart slow-in-out --xsheet-png x.png  # inbetweens by a chart\n"
      "  koma keys punch.bvh -o p.bvh --keys 8 --chart 0.1,0.5,0.9 --report r.json           # a chart of fractions\n"
      "  koma keys clip.mp4 -o held.mp4 --on 2 --contact-sheet keys.png    # video: region flow (docs/video.md)");
  cmd->add_option("input", o->k.in.path, "Input motion file")->required();
  cmd->add_option("-o,--output", o->out, "Output stepped BVH")->required();
  add_keys_options(*cmd, o->k);
  cmd->add_option("--report", o->report, "Write the JSON report here");
  cmd->add_option("--xsheet", o->xsheet, "Write the exposure sheet (CSV) here");
  cmd->add_flag("--json", o->json, "Print a JSON summary on stdout");
  cmd->add_option("--regions", o->regions, "Video: auto, or region colours #ff0000,#00ff00")->capture_default_str();
  cmd->add_option("--flow", o->flow, "Video: optical flow dis | farneback")->capture_default_str();
  cmd->add_option("--contact-sheet", o->contact_sheet,
                  "Write a PNG contact sheet of the drawings (the pose each holds, its frame and hold length)");
  cmd->add_option("--contact-sheet-smear", o->contact_sheet_smear,
                  "Contact sheet: draw the fast drawings smeared (smear) or as fading copies (multiples), as "
                  "koma render --smear / --multiples (skeleton input)")
      ->capture_default_str();
  cmd->add_option("--xsheet-png", o->xsheet_png, "Write the exposure sheet as a PNG timesheet here (skeleton input)");
  cmd->callback([o, cmd] {
#ifdef KOMA_HAVE_VIDEO
    if (video::is_video_path(o->k.in.path)) {  // video in, held video out (docs/video.md)
      const char* skel = !o->k.layers.empty() ? "--layers" : o->k.keep_contacts ? "--keep-contacts" : o->k.keep_extremes ? "--keep-extremes" : !o->k.camera.empty() ? "--camera"
                         : !o->xsheet_png.empty() ? "--xsheet-png" : o->k.allow_ones ? "--allow-ones" : !o->k.in.unit.empty() ? "--unit"
                         : cmd->count("--chart") > 0 ? "--chart" : !o->k.chart_sheet.empty() ? "--chart-sheet" : cmd->count("--contact-sheet-smear") > 0 ? "--contact-sheet-smear" : "";
      return run_video_keys({o->k.in.path, o->out, o->k.fps, o->k.selector, o->k.metric, o->k.interp, o->k.lock, o->k.schedule, o->report, o->xsheet,
                             o->contact_sheet, o->regions, o->flow, cmd->count("--metric") > 0, o->k.keys, o->k.on, o->k.min_hold,
                             o->k.max_hold, o->k.iterations, o->k.ratio, o->k.max_error, o->k.seed, o->k.anneal_eval, o->json, skel,
                             cmd->count("--max-hold") > 0});
    }
#else
    (void)cmd;
#endif
    for (const char* video_only : {"--regions", "--flow"}) {
      if (cmd->count(video_only) > 0) {
        throw Error(ErrorCode::invalid_settings, video_only,
                    fmt::format("applies to video input only; {} is a skeleton clip", o->k.in.path));
      }
    }
    const auto smear = toon::kSmearNames.parse(o->contact_sheet_smear);
    if (!smear)
      throw Error(ErrorCode::invalid_settings, "--contact-sheet-smear",
                  fmt::format("'{}': expected {}", o->contact_sheet_smear, toon::kSmearNames.names()));
    batch::KeysJob job = keys_job(o->k, *cmd);
    if (!o->contact_sheet.empty() || !o->xsheet_png.empty()) {
      // Rendered from the held motion before anything is written (a failure writes nothing).
      job.on_held = [o, smear](const Motion& held, const keys::KeySelection& ks, const std::optional<keys::Spacing>& spacing,
                        OutputBatch& outputs, const std::shared_ptr<const io::GltfScene>& character) {
        const KeySheets pictures =
            render_key_sheets(held, character, ks, spacing, std::filesystem::path(o->k.in.path).filename().string(),
                              !o->contact_sheet.empty(), !o->xsheet_png.empty(), *smear);
        if (!o->contact_sheet.empty()) render::write_png(outputs.stage(o->contact_sheet), pictures.contact);
        if (!o->xsheet_png.empty()) render::write_png(outputs.stage(o->xsheet_png), pictures.xsheet);
      };
    }
    job.report = o->report;
    job.xsheet = o->xsheet;
    job.input_label = o->k.in.path;
    Progress progress("keys", !o->json);
    // Read, resample, select, hold, write: the same pipeline as `koma batch keys` (koma/batch/pipelines.hpp).
    const batch::KeysFileResult res = batch::run_keys_file(o->k.in.path, o->out, job, [&](double f) { progress.update(f); });
    progress.finish();
    if (!o->json) {
      for (const auto& w : res.warnings) fmt::print(stderr, "koma: warning: {}\n", with_flags(w));
    }
    const keys::KeySelection& ks = res.selection;
    const keys::KeySettings& st = res.settings;
    const double seconds = res.seconds;
    const double mpu = res.metres_per_unit;
    const double u2 = 1.0 / (mpu * mpu);
    const std::string& unit = res.unit_label;
    const std::string& worst_name = res.worst_point;
    if (o->json) {
      nlohmann::json doc = batch::keys_figures(res);
      doc.update({{"input", o->k.in.path}, {"output", o->out}, {"report", o->report}, {"xsheet", o->xsheet},
                  {"contact_sheet", o->contact_sheet}, {"xsheet_png", o->xsheet_png}, {"seconds", seconds}});
      print_json(doc);
      return;
    }
    fmt::print("koma keys: {} frames at {:g} fps -> {} keys ({}, {} / {})\n", res.frames, res.frame_rate, ks.keys().size(),
               to_string(st.selector), to_string(st.metric), to_string(st.interpolation));
    for (size_t l = 1; l < ks.layers.size(); ++l) fmt::print("  layer {}: {} keys\n", ks.layers[l].name, ks.layers[l].keys.size());
    if (res.spacing) print_spacing(*res.spacing);
    fmt::print("  mean squared error {:.4g} {}^2, worst {:.4g} {}^2 at frame {} ({})\n", ks.error * u2, unit,
               ks.worst_error * u2, unit, ks.worst_frame, worst_name);
    if (st.selector == keys::Selector::exact) {
      const auto& L = ks.layers.front();
      if (L.optimal) {
        // The longest hold the selection produced (frames between consecutive keys), and the limit.
        int longest = 1;
        for (size_t i = 1; i < L.keys.size(); ++i) longest = std::max(longest, L.keys[i] - L.keys[i - 1]);
        fmt::print("  optimal (certified){}; longest hold {} frames{}\n",
                   L.solves > 0 ? fmt::format(", {} shortest-path solves", L.solves) : std::string(), longest,
                   L.max_hold > 0 ? fmt::format(" (limit {})", L.max_hold) : std::string());
      } else {
        fmt::print("  within {:.4g} {}^2 of the optimum (certified lower bound {:.4g} {}^2)\n",
                   (L.total - L.lower_bound) / L.normaliser * u2, unit, L.lower_bound / L.normaliser * u2, unit);
      }
    }
    const auto& curve = ks.layers.front().curve;
    if (curve.size() > 1) {
      // A few points of the optimal error-vs-n curve, to help choose n (the report has all of it).
      std::string pts;
      for (int q = 0; q < 6; ++q) {
        const auto& c = curve[static_cast<size_t>(q) * (curve.size() - 1) / 5];
        pts += fmt::format("{}{}: {:.3g}", q ? ", " : "", c.keys, c.error * u2);
      }
      fmt::print("  optimal error by key count ({}^2{}): {}\n", unit, curve.front().hull ? ", convex-hull points" : "", pts);
    }
    fmt::print("  time: {:.3f} s\n", seconds);
    fmt::print("  wrote {}\n", o->out);
    if (!o->report.empty()) fmt::print("  wrote {}\n", o->report);
    if (!o->xsheet.empty()) fmt::print("  wrote {}\n", o->xsheet);
    if (!o->contact_sheet.empty()) fmt::print("  wrote {}\n", o->contact_sheet);
    if (!o->xsheet_png.empty()) fmt::print("  wrote {}\n", o->xsheet_png);
  });
}

}  // namespace koma::cli
