#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/keys/keys.hpp"
#include "koma/keys/report.hpp"
#include "koma/render/encode.hpp"
#include "keys_sheets.hpp"
#ifdef KOMA_HAVE_VIDEO
#include "keys_video.hpp"
#include "koma/video/decode.hpp"
#endif

namespace koma::cli {

namespace {

std::vector<int> parse_int_list(const std::string& text, std::string_view option) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::logic_error&) {
      throw Error(ErrorCode::invalid_settings, std::string(option), fmt::format("'{}' is not a frame number", item));
    }
  }
  return out;
}

Vec3 parse_vec3(const std::string& text, double scale) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      v.push_back(std::stod(item) * scale);
    } catch (const std::logic_error&) {
      v.clear();
      break;
    }
  }
  if (v.size() != 3) throw Error(ErrorCode::invalid_settings, "--camera", fmt::format("'{}' is not x,y,z", text));
  return {v[0], v[1], v[2]};
}

// front | side | top | none | persp:EX,EY,EZ:TX,TY,TZ[:FOV]   (positions in the file's unit)
keys::Camera parse_camera(const std::string& text, double metres_per_file_unit) {
  keys::Camera c;
  if (text.empty() || text == "none") return c;
  if (text == "front") { c.projection = keys::Projection::front; return c; }
  if (text == "side") { c.projection = keys::Projection::side; return c; }
  if (text == "top") { c.projection = keys::Projection::top; return c; }
  if (text.rfind("persp:", 0) == 0) {
    std::vector<std::string> parts;
    std::stringstream ss(text.substr(6));
    std::string item;
    while (std::getline(ss, item, ':')) parts.push_back(item);
    if (parts.size() < 2 || parts.size() > 3) {
      throw Error(ErrorCode::invalid_settings, "--camera", "expected persp:EX,EY,EZ:TX,TY,TZ[:FOV]");
    }
    c.projection = keys::Projection::perspective;
    c.position = parse_vec3(parts[0], metres_per_file_unit);
    c.target = parse_vec3(parts[1], metres_per_file_unit);
    if (parts.size() == 3) {
      try {
        c.fov_degrees = std::stod(parts[2]);
      } catch (const std::logic_error&) {
        throw Error(ErrorCode::invalid_settings, "--camera", fmt::format("'{}' is not a field of view in degrees", parts[2]));
      }
    }
    c.validate();
    return c;
  }
  throw Error(ErrorCode::invalid_settings, "--camera",
              fmt::format("unknown camera '{}'; expected none, front, side, top or persp:EX,EY,EZ:TX,TY,TZ[:FOV]", text));
}

}  // namespace

void add_keys_command(CLI::App& app) {
  struct Opts {
    InputOptions in;
    std::string out, fps = "24", selector = "exact", exact_method = "auto", metric = "position", interp = "linear", lock, layers, camera,
                      weights = "equal", report, xsheet, schedule = "geometric", anneal_eval = "delta";
    int keys = 0, on = 0, offset = 0, min_hold = 1, max_hold = 0, iterations = 200000;
    double ratio = 0, max_error = -1;
    std::uint64_t seed = 1;
    bool keep_contacts = false, keep_extremes = false, json = false, allow_ones = false;
    std::string regions = "auto", flow = "dis", contact_sheet, xsheet_png;
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
      "  koma keys clip.mp4 -o held.mp4 --on 2 --contact-sheet keys.png    # video: region flow (docs/video.md)");
  cmd->add_option("input", o->in.path, "Input motion file")->required();
  cmd->add_option("-o,--output", o->out, "Output stepped BVH")->required();
  cmd->add_option("--fps", o->fps, "Output frame rate, or 'source'")->capture_default_str();
  cmd->add_option("--keys", o->keys, "Keep N keys (first and last included)");
  cmd->add_option("--ratio", o->ratio, "Keep round(R * frames) keys, R in (0, 1]");
  cmd->add_option("--on", o->on,
                  "Animate on Ns: as many keys as on Ns, and no drawing held shorter than N output frames "
                  "(default: on 2s, so no 1-frame holds; see --allow-ones)");
  cmd->add_flag("--allow-ones", o->allow_ones,
                "With --on (or the default on 2s) and --layers: let fast action take shorter holds (1s on 2s), "
                "the optimiser trading them for longer holds where the motion is slow");
  cmd->add_option("--offset", o->offset, "With --on and --selector uniform: first inner key frame");
  cmd->add_option("--max-error", o->max_error, "Keep the fewest keys whose mean squared error is <= E (file unit^2)");
  cmd->add_option("--selector", o->selector, "exact | anneal | cumsum | cumsum+anneal | uniform")->capture_default_str();
  cmd->add_option("--metric", o->metric, "position | velocity | acceleration | hold")->capture_default_str();
  cmd->add_option("--interp", o->interp, "linear | cubic | slerp")->capture_default_str();
  cmd->add_option("--min-hold", o->min_hold, "Shortest hold in output frames")->capture_default_str();
  cmd->add_option("--max-hold", o->max_hold,
                  "Longest hold in output frames. Default: 2 s of output (48 frames at 24 fps), raised to twice "
                  "the mean hold when few keys are asked for; 0 = unlimited (memory grows with frames x hold)");
  cmd->add_option("--exact-method", o->exact_method,
                  "Exact selector: auto (level DP on short clips, which also gives the whole error curve; "
                  "Lagrangian search on long ones) | levels | lagrange")->capture_default_str();
  cmd->add_option("--lock", o->lock, "Output frames that must be keys, e.g. 0,12,40");
  cmd->add_flag("--keep-contacts", o->keep_contacts, "Key every foot plant's touch-down");
  cmd->add_flag("--keep-extremes", o->keep_extremes, "Key every direction reversal of hands, feet and head");
  cmd->add_option("--layers", o->layers, "Per-body-part timing, e.g. legs:3,arms:2+1 (group:on[+offset])");
  cmd->add_option("--camera", o->camera, "Measure on a rendered plane: front | side | top | persp:EX,EY,EZ:TX,TY,TZ[:FOV]");
  cmd->add_option("--weights", o->weights, "Point weights: equal | bone")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Annealing random seed")->capture_default_str();
  cmd->add_option("--iterations", o->iterations, "Annealing moves")->capture_default_str();
  cmd->add_option("--schedule", o->schedule, "Annealing temperature schedule: geometric | linear")->capture_default_str();
  cmd->add_option("--anneal-eval", o->anneal_eval,
                  "Annealing: measure a move by its segments (delta), the whole selection (segments) or the "
                  "whole re-interpolated motion (patent, slow)")->capture_default_str();
  cmd->add_option("--report", o->report, "Write the JSON report here");
  cmd->add_option("--xsheet", o->xsheet, "Write the exposure sheet (CSV) here");
  cmd->add_flag("--json", o->json, "Print a JSON summary on stdout");
  cmd->add_option("--regions", o->regions, "Video: auto, or region colours #ff0000,#00ff00")->capture_default_str();
  cmd->add_option("--flow", o->flow, "Video: optical flow dis | farneback")->capture_default_str();
  cmd->add_option("--contact-sheet", o->contact_sheet,
                  "Write a PNG contact sheet of the drawings (the pose each holds, its frame and hold length)");
  cmd->add_option("--xsheet-png", o->xsheet_png, "Write the exposure sheet as a PNG timesheet here (skeleton input)");
  add_input_options(*cmd, o->in);
  cmd->callback([o, cmd] {
#ifdef KOMA_HAVE_VIDEO
    if (video::is_video_path(o->in.path)) {  // video in, held video out (docs/video.md)
      const char* skel = !o->layers.empty() ? "--layers" : o->keep_contacts ? "--keep-contacts" : o->keep_extremes ? "--keep-extremes" : !o->camera.empty() ? "--camera"
                         : !o->xsheet_png.empty() ? "--xsheet-png" : o->allow_ones ? "--allow-ones" : !o->in.unit.empty() ? "--unit" : "";
      return run_video_keys({o->in.path, o->out, o->fps, o->selector, o->metric, o->interp, o->lock, o->schedule, o->report, o->xsheet,
                             o->contact_sheet, o->regions, o->flow, cmd->count("--metric") > 0, o->keys, o->on, o->min_hold,
                             o->max_hold, o->iterations, o->ratio, o->max_error, o->seed, o->anneal_eval, o->json, skel});
    }
#else
    (void)cmd;
#endif
    for (const char* video_only : {"--regions", "--flow"}) {
      if (cmd->count(video_only) > 0) {
        throw Error(ErrorCode::invalid_settings, video_only,
                    fmt::format("applies to video input only; {} is a skeleton clip", o->in.path));
      }
    }
    io::ReadResult r = read_input(o->in, o->json);
    Motion src = std::move(r.motion);
    const auto gltf_scene = r.gltf_scene;
    const double rate = parse_fps_option(o->fps, src.frame_rate, "--fps");
    const double mpu = src.source_metres_per_unit();
    keys::KeySettings st;
    auto sel = keys::parse_selector(o->selector);
    if (!sel) throw Error(ErrorCode::invalid_settings, "--selector", fmt::format("unknown selector '{}'", o->selector));
    st.selector = *sel;
    auto met = keys::parse_metric(o->metric);
    if (!met) throw Error(ErrorCode::invalid_settings, "--metric", fmt::format("unknown metric '{}'", o->metric));
    st.metric = *met;
    auto in = keys::parse_interpolation(o->interp);
    if (!in) throw Error(ErrorCode::invalid_settings, "--interp", fmt::format("unknown interpolation '{}'", o->interp));
    st.interpolation = *in;
    if (o->weights == "bone") st.features.weights = keys::WeightMode::bone_length;
    else if (o->weights != "equal") throw Error(ErrorCode::invalid_settings, "--weights", fmt::format("unknown weights '{}'; expected equal or bone", o->weights));
    st.features.camera = parse_camera(o->camera, mpu);
    st.keys = o->keys;
    st.ratio = o->ratio;
    st.on = o->on;
    st.allow_ones = o->allow_ones;
    st.offset = o->offset;
    if (o->max_error >= 0) st.max_error = o->max_error * mpu * mpu;
    else if (o->max_error != -1) throw Error(ErrorCode::invalid_settings, "--max-error", "must be >= 0");
    st.constraints.min_hold = o->min_hold;
    st.constraints.max_hold = o->max_hold;
    if (cmd->count("--max-hold") > 0 && o->max_hold == 0) st.max_hold_seconds = 0;  // explicitly unlimited
    auto em = keys::parse_exact_method(o->exact_method);
    if (!em) throw Error(ErrorCode::invalid_settings, "--exact-method", fmt::format("unknown method '{}'; expected auto, levels or lagrange", o->exact_method));
    st.exact.method = *em;
    if (!o->lock.empty()) st.constraints.locked = parse_int_list(o->lock, "--lock");
    st.keep_contacts = o->keep_contacts;
    st.keep_extremes = o->keep_extremes;
    if (!o->layers.empty()) st.layers = keys::parse_layers(o->layers);
    st.anneal.seed = o->seed;
    st.anneal.iterations = o->iterations;
    auto ev = keys::parse_anneal_evaluation(o->anneal_eval);
    if (!ev) throw Error(ErrorCode::invalid_settings, "--anneal-eval", fmt::format("unknown evaluation '{}'; expected delta, segments or patent", o->anneal_eval));
    st.anneal.evaluation = *ev;
    if (o->schedule == "linear") st.anneal.schedule = keys::Schedule::linear;
    else if (o->schedule != "geometric") throw Error(ErrorCode::invalid_settings, "--schedule", "expected geometric or linear");
    st.validate();

    // At the source rate the motion is used as read (no copy: long takes are gigabytes).
    Motion m = rate == src.frame_rate ? std::move(src) : resample(src, rate);
    src = Motion{};
    Progress progress("keys", !o->json);
    const auto t0 = std::chrono::steady_clock::now();
    const keys::KeySelection ks = keys::select_keys(m, st, [&](double f) { progress.update(f); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.finish();
    keys::hold_in_place(m, ks);  // m becomes the held motion (a take's poses are not copied)
    const Motion& held = m;
    // Only what was asked for (a long take's exposure sheet has a row per frame).
    const std::string report = o->report.empty() ? std::string() : keys::report_json(ks, m.skeleton, m.source_unit, st, o->in.path);
    const std::string sheet = o->xsheet.empty() ? std::string() : keys::exposure_sheet_csv(ks);
    const KeySheets pictures = render_key_sheets(held, ks, std::filesystem::path(o->in.path).filename().string(),
                                                 !o->contact_sheet.empty(), !o->xsheet_png.empty());
    // Everything is computed before anything is written.
    if (!o->report.empty()) write_file_atomic(o->report, report);
    if (!o->xsheet.empty()) write_file_atomic(o->xsheet, sheet);
    if (!o->contact_sheet.empty()) render::write_png(o->contact_sheet, pictures.contact);
    if (!o->xsheet_png.empty()) render::write_png(o->xsheet_png, pictures.xsheet);
    // glTF holds each drawing as one STEP key (BVH ignores this and stores every frame), on the
    // input's own character when it came from glTF.
    io::WriteOptions wo;
    wo.step_keys = keys::drawing_frames(ks);
    wo.gltf_scene = gltf_scene;
    io::write_motion(o->out, held, wo);

    const double u2 = 1.0 / (mpu * mpu);
    const std::string unit = unit_label(m);
    const std::string worst_name = m.skeleton.point_name(ks.worst_point);
    if (o->json) {
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& L : ks.layers) {
        nlohmann::json layer = {{"name", L.name}, {"keys", L.keys}, {"key_count", L.keys.size()}, {"error_m2", L.error},
                                {"max_hold", L.max_hold}};
        if (st.selector == keys::Selector::exact) {
          layer["certificate"] = {{"optimal", L.optimal}, {"lower_bound_m2", L.lower_bound / L.normaliser},
                                  {"solves", L.solves}};
        }
        layers.push_back(std::move(layer));
      }
      print_json({{"input", o->in.path}, {"output", o->out}, {"report", o->report}, {"xsheet", o->xsheet},
                  {"contact_sheet", o->contact_sheet}, {"xsheet_png", o->xsheet_png},
                  {"frames", m.frame_count}, {"fps", m.frame_rate}, {"selector", to_string(st.selector)},
                  {"metric", to_string(st.metric)}, {"interpolation", to_string(st.interpolation)},
                  {"key_count", ks.keys().size()}, {"keys", ks.keys()}, {"error_m2", ks.error},
                  {"error_unit2", ks.error * u2}, {"unit", unit},
                  {"worst", {{"error_m2", ks.worst_error}, {"error_unit2", ks.worst_error * u2}, {"frame", ks.worst_frame}, {"point", worst_name}}},
                  {"layers", layers},
                  {"seconds", seconds}});
      return;
    }
    fmt::print("koma keys: {} frames at {:g} fps -> {} keys ({}, {} / {})\n", m.frame_count, m.frame_rate, ks.keys().size(),
               to_string(st.selector), to_string(st.metric), to_string(st.interpolation));
    for (size_t l = 1; l < ks.layers.size(); ++l) fmt::print("  layer {}: {} keys\n", ks.layers[l].name, ks.layers[l].keys.size());
    fmt::print("  mean squared error {:.4g} {}^2, worst {:.4g} {}^2 at frame {} ({})\n", ks.error * u2, unit,
               ks.worst_error * u2, unit, ks.worst_frame, worst_name);
    if (st.selector == keys::Selector::exact) {
      const auto& L = ks.layers.front();
      if (L.optimal) {
        fmt::print("  optimal (certified){}; longest hold {} frames\n",
                   L.solves > 0 ? fmt::format(", {} shortest-path solves", L.solves) : std::string(), L.max_hold);
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
