// The selection options of `koma keys`, shared with `koma batch keys` (moved from cmd_keys.cpp).
#include "keys_options.hpp"

#include <fmt/format.h>

#include <sstream>

#include "koma/core/error.hpp"

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

// Spacing (docs/keys.md#spacing): inbetweens between the keys, when a key count is given together
// with --on or a chart; then --on is the inbetweens' step and no longer sets the key count.
void set_spacing(const KeysOptions& o, const CLI::App& cmd, batch::KeysJob& job) {
  const keys::Chart chart = keys::parse_chart(o.chart);
  const bool count = o.keys != 0 || o.ratio != 0 || o.max_error >= 0;
  const bool charted = chart.kind != keys::ChartKind::source || !o.chart_sheet.empty();
  const bool on = cmd.count("--on") > 0;
  if (!count && charted) {
    throw Error(ErrorCode::invalid_settings, o.chart_sheet.empty() ? "--chart" : "--chart-sheet",
                "a chart spaces the drawings between key poses: give their number with --keys, --ratio or --max-error "
                "(--on then sets the inbetweens' step, default 2)");
  }
  if (!count || (!charted && !on)) return;  // the keys held: today's output
  if (o.keys == 1) {
    throw Error(ErrorCode::invalid_settings, charted ? "--chart" : "--on",
                "a chart spaces the drawings between key poses; --keys 1 keeps 1 key pose, which gives no gap: keep at "
                "least 2");
  }
  keys::SpacingSettings sp;
  sp.on = on ? o.on : 2;
  sp.chart = chart;
  job.spacing = sp;
  job.keys.on = 0;  // the step of the inbetweens, not a key count
  job.chart_sheet = o.chart_sheet;
}

}  // namespace

void add_keys_options(CLI::App& cmd, KeysOptions& o) {
  cmd.add_option("--fps", o.fps, "Output frame rate, or 'source'")->capture_default_str();
  cmd.add_option("--keys", o.keys, "Keep N keys (first and last included)");
  cmd.add_option("--ratio", o.ratio, "Keep round(R * frames) keys, R in (0, 1]");
  cmd.add_option("--on", o.on,
                 "Animate on Ns: as many keys as on Ns, and no drawing held shorter than N output frames "
                 "(default: on 2s, so no 1-frame holds; see --allow-ones)");
  cmd.add_flag("--allow-ones", o.allow_ones,
               "With --on (or the default on 2s) and --layers: let fast action take shorter holds (1s on 2s), "
               "the optimiser trading them for longer holds where the motion is slow");
  cmd.add_option("--offset", o.offset, "With --on and --selector uniform: first inner key frame");
  cmd.add_option("--max-error", o.max_error, "Keep the fewest keys whose mean squared error is <= E (file unit^2)");
  cmd.add_option("--selector", o.selector, "exact | anneal | cumsum | cumsum+anneal | uniform")->capture_default_str();
  cmd.add_option("--metric", o.metric, "position | velocity | acceleration | hold")->capture_default_str();
  cmd.add_option("--interp", o.interp, "linear | cubic | slerp")->capture_default_str();
  cmd.add_option("--min-hold", o.min_hold, "Shortest hold in output frames")->capture_default_str();
  cmd.add_option("--max-hold", o.max_hold,
                  "Longest hold in output frames. Default: 2 s of output (48 frames at 24 fps), 240 frames at "
                  "--fps source on a 120 fps take, raised to twice the mean hold when few keys are asked for; 0 = unlimited. "
                  "Time and memory grow with frames x hold: on a million-frame take at its source rate, "
                  "--max-hold 48 runs in seconds (docs/perf.md)");
  cmd.add_option("--exact-method", o.exact_method,
                  "Exact selector: auto (level DP on short clips, which also gives the whole error curve; "
                  "Lagrangian search on long ones) | levels | lagrange")->capture_default_str();
  cmd.add_option("--lock", o.lock, "Output frames that must be keys, e.g. 0,12,40");
  cmd.add_flag("--keep-contacts", o.keep_contacts, "Key every foot plant's touch-down");
  cmd.add_flag("--keep-extremes", o.keep_extremes, "Key every direction reversal of hands, feet and head");
  cmd.add_option("--layers", o.layers, "Per-body-part timing, e.g. legs:3,arms:2+1 (group:on[+offset])");
  cmd.add_option("--camera", o.camera, "Measure on a rendered plane: front | side | top | persp:EX,EY,EZ:TX,TY,TZ[:FOV]");
  cmd.add_option("--weights", o.weights, "Point weights: equal | bone")->capture_default_str();
  cmd.add_option("--seed", o.seed, "Annealing random seed")->capture_default_str();
  cmd.add_option("--iterations", o.iterations, "Annealing moves")->capture_default_str();
  cmd.add_option("--schedule", o.schedule, "Annealing temperature schedule: geometric | linear")->capture_default_str();
  cmd.add_option("--anneal-eval", o.anneal_eval,
                  "Annealing: measure a move by its segments (delta), the whole selection (segments) or the "
                  "whole re-interpolated motion (patent, slow)")->capture_default_str();
  cmd.add_option("--chart", o.chart,
                 "Spacing of the inbetweens between key poses (with --keys, --ratio or --max-error; an inbetween every "
                 "--on frames, default 2): source (the capture's own poses), even, slow-in, slow-out, slow-in-out, "
                 "halves, or fractions of the way to the next key, e.g. 0.1,0.4,0.8 (docs/keys.md#spacing)")
      ->capture_default_str();
  cmd.add_option("--chart-sheet", o.chart_sheet,
                 "Per-gap charts from an exposure sheet (a spaced run's --xsheet with its gap_chart cells edited); "
                 "the other gaps take --chart");
  add_input_options(cmd, o.in);
  add_output_options(cmd, o.out);
}

batch::KeysJob keys_job(const KeysOptions& o, const CLI::App& cmd) {
  batch::KeysJob job;
  job.output_rate = o.fps == "source" ? 0.0 : parse_fps_option(o.fps, 1.0, "--fps");
  if (!o.in.unit.empty()) parse_input_unit(o.in.unit, job.read);
  job.read.animation = o.in.animation;
  job.read.asset_root = o.in.asset_root;
  job.write = write_options(o.out);
  job.lengths_in_file_unit = true;
  keys::KeySettings& st = job.keys;
  auto sel = keys::parse_selector(o.selector);
  if (!sel) throw Error(ErrorCode::invalid_settings, "--selector", fmt::format("unknown selector '{}'", o.selector));
  st.selector = *sel;
  auto met = keys::parse_metric(o.metric);
  if (!met) throw Error(ErrorCode::invalid_settings, "--metric", fmt::format("unknown metric '{}'", o.metric));
  st.metric = *met;
  auto in = keys::parse_interpolation(o.interp);
  if (!in) throw Error(ErrorCode::invalid_settings, "--interp", fmt::format("unknown interpolation '{}'", o.interp));
  st.interpolation = *in;
  if (o.weights == "bone") st.features.weights = keys::WeightMode::bone_length;
  else if (o.weights != "equal") throw Error(ErrorCode::invalid_settings, "--weights", fmt::format("unknown weights '{}'; expected equal or bone", o.weights));
  st.features.camera = parse_camera(o.camera, 1.0);  // file units: converted per file
  // 0 means "not given" in the settings; given explicitly it is a mistake, not the default.
  if (cmd.count("--keys") > 0 && o.keys < 1)
    throw Error(ErrorCode::invalid_settings, "--keys", fmt::format("{} keys; expected 1 or more (leave it out for the default)", o.keys));
  if (cmd.count("--ratio") > 0 && !(o.ratio > 0 && o.ratio <= 1))
    throw Error(ErrorCode::invalid_settings, "--ratio", fmt::format("ratio {:g}; expected a number in (0, 1]", o.ratio));
  if (cmd.count("--on") > 0 && o.on < 1)
    throw Error(ErrorCode::invalid_settings, "--on", fmt::format("on {}s; expected 1 or more (2 is on 2s)", o.on));
  st.keys = o.keys;
  st.ratio = o.ratio;
  st.on = o.on;
  st.allow_ones = o.allow_ones;
  st.offset = o.offset;
  if (o.max_error >= 0) st.max_error = o.max_error;  // file unit^2: converted per file
  else if (o.max_error != -1) throw Error(ErrorCode::invalid_settings, "--max-error", "must be >= 0");
  st.constraints.min_hold = o.min_hold;
  st.constraints.max_hold = o.max_hold;
  if (cmd.count("--max-hold") > 0 && o.max_hold == 0) st.max_hold_seconds = 0;  // explicitly unlimited
  auto em = keys::parse_exact_method(o.exact_method);
  if (!em) throw Error(ErrorCode::invalid_settings, "--exact-method", fmt::format("unknown method '{}'; expected auto, levels or lagrange", o.exact_method));
  st.exact.method = *em;
  if (!o.lock.empty()) st.constraints.locked = parse_int_list(o.lock, "--lock");
  st.keep_contacts = o.keep_contacts;
  st.keep_extremes = o.keep_extremes;
  if (!o.layers.empty()) st.layers = keys::parse_layers(o.layers);
  set_spacing(o, cmd, job);
  st.anneal.seed = o.seed;
  st.anneal.iterations = o.iterations;
  auto ev = keys::parse_anneal_evaluation(o.anneal_eval);
  if (!ev) throw Error(ErrorCode::invalid_settings, "--anneal-eval", fmt::format("unknown evaluation '{}'; expected delta, segments or patent", o.anneal_eval));
  st.anneal.evaluation = *ev;
  if (o.schedule == "linear") st.anneal.schedule = keys::Schedule::linear;
  else if (o.schedule != "geometric") throw Error(ErrorCode::invalid_settings, "--schedule", "expected geometric or linear");
  st.validate();
  return job;
}

nlohmann::json keys_options_json(const KeysOptions& o) {
  nlohmann::json doc = {{"fps", o.fps}, {"selector", o.selector}, {"exact_method", o.exact_method}, {"metric", o.metric},
          {"interp", o.interp}, {"lock", o.lock}, {"layers", o.layers}, {"camera", o.camera}, {"weights", o.weights},
          {"schedule", o.schedule}, {"anneal_eval", o.anneal_eval}, {"keys", o.keys}, {"on", o.on},
          {"offset", o.offset}, {"min_hold", o.min_hold}, {"max_hold", o.max_hold}, {"iterations", o.iterations},
          {"ratio", o.ratio}, {"max_error", o.max_error}, {"seed", o.seed}, {"keep_contacts", o.keep_contacts},
          {"keep_extremes", o.keep_extremes}, {"allow_ones", o.allow_ones}, {"unit", o.in.unit}, {"animation", o.in.animation}};
  // Spacing options only when given (a run without them reports as before).
  if (o.chart != "source") doc["chart"] = o.chart;
  if (!o.chart_sheet.empty()) doc["chart_sheet"] = o.chart_sheet;
  return doc;
}

}  // namespace koma::cli
