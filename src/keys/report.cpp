#include "koma/keys/report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "koma/core/drawings.hpp"
#include "koma/core/error.hpp"

namespace koma::keys {

std::string report_json(const KeySelection& sel, const Skeleton& sk, LengthUnit unit, const KeySettings& st,
                        std::string_view input) {
  return report_json(sel, sk, metres_per_unit(unit), to_string(unit), st, input);
}

namespace {

nlohmann::json report_doc(const KeySelection& sel, const Skeleton& sk, double m_per_u, std::string_view unit_label,
                          const KeySettings& st, std::string_view input) {
  using nlohmann::json;
  const double to_unit2 = 1.0 / (m_per_u * m_per_u);
  auto err = [&](double m2) { return json{{"m2", m2}, {"unit2", m2 * to_unit2}}; };
  json doc;
  doc["input"] = std::string(input);
  doc["unit"] = std::string(unit_label);
  doc["frames"] = sel.frames;
  doc["fps"] = sel.frame_rate;
  json s;
  s["selector"] = std::string(to_string(st.selector));
  s["metric"] = std::string(to_string(st.metric));
  s["interpolation"] = std::string(to_string(st.interpolation));
  s["keys"] = st.keys;
  s["ratio"] = st.ratio;
  s["on"] = st.on;
  s["allow_ones"] = st.allow_ones;
  s["offset"] = st.offset;
  s["max_error_m2"] = st.max_error;
  s["min_hold"] = st.constraints.min_hold;
  s["max_hold"] = st.constraints.max_hold;
  s["max_hold_seconds"] = st.max_hold_seconds;
  s["exact_method"] = std::string(to_string(st.exact.method));
  s["locked"] = st.constraints.locked;
  s["keep_contacts"] = st.keep_contacts;
  s["keep_extremes"] = st.keep_extremes;
  s["weights"] = std::string(to_string(st.features.weights));
  s["camera"] = {{"projection", std::string(to_string(st.features.camera.projection))},
                 {"position", {st.features.camera.position.x(), st.features.camera.position.y(), st.features.camera.position.z()}},
                 {"target", {st.features.camera.target.x(), st.features.camera.target.y(), st.features.camera.target.z()}},
                 {"fov_degrees", st.features.camera.fov_degrees}};
  s["anneal"] = {{"seed", st.anneal.seed}, {"iterations", st.anneal.iterations},
                 {"initial_temperature", st.anneal.initial_temperature}, {"final_ratio", st.anneal.final_ratio},
                 {"schedule", st.anneal.schedule == Schedule::geometric ? "geometric" : "linear"},
                 {"evaluation", std::string(to_string(st.anneal.evaluation))}};
  s["cumsum"] = {{"carry_remainder", st.cumsum.carry_remainder}, {"bisection_steps", st.cumsum.bisection_steps}};
  json layers = json::array();
  for (const BodyPartLayer& l : st.layers) layers.push_back({{"group", l.group}, {"on", l.on}, {"offset", l.offset}});
  s["layers"] = layers;
  doc["settings"] = s;
  doc["error"] = err(sel.error);
  doc["worst"] = {{"error", err(sel.worst_error)}, {"frame", sel.worst_frame}, {"point", sk.point_name(sel.worst_point)}};
  json out_layers = json::array();
  for (const LayerSelection& L : sel.layers) {
    json j;
    j["name"] = L.name;
    json names = json::array();
    for (int q : L.joints) names.push_back(sk.names[q]);
    j["joints"] = names;
    j["target_keys"] = L.target_keys;
    j["key_count"] = L.keys.size();
    j["keys"] = L.keys;
    j["auto_locked"] = L.auto_locked;
    json segs = json::array();
    for (size_t a = 0; a + 1 < L.keys.size(); ++a) {
      segs.push_back({{"from", L.keys[a]}, {"to", L.keys[a + 1]}, {"hold", L.keys[a + 1] - L.keys[a]},
                      {"error_m2", L.segment_errors[a]}, {"error_unit2", L.segment_errors[a] * to_unit2}});
    }
    j["segments"] = segs;
    j["error"] = err(L.error);
    j["worst"] = {{"error", err(L.worst_error)}, {"frame", L.worst_frame}, {"point", sk.point_name(L.worst_point)}};
    json curve = json::array();
    for (const CurvePoint& c : L.curve) {
      json pt = {{"keys", c.keys}, {"error_m2", c.error}, {"error_unit2", c.error * to_unit2}};
      if (c.hull) pt["hull"] = true;
      if (!c.frames.empty()) pt["frames"] = c.frames;
      curve.push_back(std::move(pt));
    }
    j["curve"] = curve;
    j["iterations"] = L.iterations;
    j["max_hold"] = L.max_hold;
    j["min_hold"] = L.min_hold;
    if (st.selector == Selector::exact) {
      // The certificate: no selection with this many keys has a total below lower_bound.
      j["certificate"] = {{"optimal", L.optimal},
                          {"lower_bound_m2", L.normaliser > 0 ? L.lower_bound / L.normaliser : 0.0},
                          {"gap_m2", L.normaliser > 0 ? (L.total - L.lower_bound) / L.normaliser : 0.0},
                          {"solves", L.solves}};
    }
    out_layers.push_back(j);
  }
  doc["layers"] = out_layers;
  return doc;
}

nlohmann::json chart_json(const Chart& c) {
  if (c.kind == ChartKind::custom) return c.fractions;
  return std::string(to_string(c.kind));
}

nlohmann::json spacing_json(const Spacing& sp) {
  using nlohmann::json;
  json gaps = json::array();
  for (const GapSpacing& g : sp.gaps) {
    gaps.push_back({{"from", g.start}, {"to", g.end}, {"chart", chart_json(g.chart)}, {"inbetweens", g.inbetweens},
                    {"held", g.held}, {"path_m", g.path}});
  }
  json drawings = json::array();
  for (const Drawing& d : sp.drawings) {
    drawings.push_back({{"frame", d.frame}, {"source_time", d.source_time}, {"kind", std::string(to_string(d.kind))},
                        {"chart", d.chart}});
  }
  return {{"on", sp.on}, {"drawing_count", sp.drawings.size()}, {"gaps", gaps}, {"drawings", drawings}};
}

}  // namespace

std::string report_json(const KeySelection& sel, const Skeleton& sk, double m_per_u, std::string_view unit_label,
                        const KeySettings& st, std::string_view input) {
  return report_doc(sel, sk, m_per_u, unit_label, st, input).dump(2) + "\n";
}

std::string report_json(const KeySelection& sel, const Skeleton& sk, double m_per_u, std::string_view unit_label,
                        const KeySettings& st, std::string_view input, const Spacing& spacing) {
  nlohmann::json doc = report_doc(sel, sk, m_per_u, unit_label, st, input);
  doc["spacing"] = spacing_json(spacing);
  return doc.dump(2) + "\n";
}

std::string exposure_sheet_csv(const KeySelection& sel) {
  std::string out = "frame,sheet_frame,time_s";
  std::vector<std::vector<int>> cols;
  for (const LayerSelection& L : sel.layers) {
    out += "," + L.name;
    cols.push_back(drawing_numbers(L.keys, sel.frames));
  }
  out += "\n";
  for (int f = 0; f < sel.frames; ++f) {
    out += fmt::format("{},{},{:.6f}", f, f + 1, f / sel.frame_rate);
    for (const auto& c : cols) out += fmt::format(",{}", c[f]);
    out += "\n";
  }
  return out;
}

std::string exposure_sheet_csv(const Spacing& sp) {
  std::string out = "frame,sheet_frame,time_s,main,kind,chart,source_time_s,gap_chart\n";
  size_t d = 0;
  for (int f = 0; f < sp.frames; ++f) {
    while (d + 1 < sp.drawings.size() && sp.drawings[d + 1].frame <= f) ++d;
    const Drawing& dr = sp.drawings[d];
    out += fmt::format("{},{},{:.6f},{}", f, f + 1, f / sp.frame_rate, d + 1);
    if (dr.frame == f) {
      const bool opens = dr.kind == DrawingKind::key && static_cast<size_t>(dr.gap) < sp.gaps.size();
      out += fmt::format(",{},{:.4f},{:.6f},{}", to_string(dr.kind), dr.chart, dr.source_time,
                         opens ? sp.gaps[static_cast<size_t>(dr.gap)].chart.name() : std::string());
    } else {
      out += ",,,,";
    }
    out += "\n";
  }
  return out;
}

namespace {

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> cells(1);
  for (char c : line) {
    if (c == ',') cells.emplace_back();
    else if (c != '\r') cells.back() += c;
  }
  for (std::string& c : cells) {
    const size_t a = c.find_first_not_of(" \t"), b = c.find_last_not_of(" \t");
    c = a == std::string::npos ? std::string() : c.substr(a, b - a + 1);
  }
  return cells;
}

}  // namespace

SheetCharts read_sheet_charts(std::string_view csv, std::string_view context) {
  SheetCharts out;
  int line_no = 0, col_frame = -1, col_kind = -1, col_chart = -1;
  size_t pos = 0;
  while (pos < csv.size()) {
    const size_t end = std::min(csv.find('\n', pos), csv.size());
    const std::vector<std::string> cells = split_csv_line(csv.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    const std::string where = fmt::format("{}:{}", context, line_no);
    if (line_no == 1) {
      for (size_t c = 0; c < cells.size(); ++c) {
        if (cells[c] == "frame") col_frame = static_cast<int>(c);
        if (cells[c] == "kind") col_kind = static_cast<int>(c);
        if (cells[c] == "gap_chart") col_chart = static_cast<int>(c);
      }
      if (col_frame < 0 || col_kind < 0 || col_chart < 0) {
        throw Error(ErrorCode::bad_file, where,
                    "an exposure sheet with charts has the columns frame, kind and gap_chart (as a spaced run's "
                    "exposure sheet writes them)");
      }
      continue;
    }
    if (cells.size() == 1 && cells[0].empty()) continue;  // blank line
    auto cell = [&](int c) { return static_cast<size_t>(c) < cells.size() ? cells[static_cast<size_t>(c)] : std::string(); };
    if (cell(col_kind) != "key") continue;
    int frame = -1;
    try {
      size_t used = 0;
      frame = std::stoi(cell(col_frame), &used);
      if (used != cell(col_frame).size()) frame = -1;
    } catch (const std::logic_error&) {
      frame = -1;
    }
    if (frame < 0) throw Error(ErrorCode::bad_file, where, fmt::format("frame '{}' is not a frame number", cell(col_frame)));
    if (!out.keys.empty() && frame <= out.keys.back()) {
      throw Error(ErrorCode::bad_file, where, fmt::format("key frame {} is not after the key before it ({})", frame, out.keys.back()));
    }
    out.keys.push_back(frame);
    if (cell(col_chart).empty()) continue;
    try {
      out.gaps.push_back({frame, parse_chart(cell(col_chart))});
    } catch (const Error& e) {
      throw Error(ErrorCode::bad_file, where, fmt::format("gap_chart: {}", e.message()));
    }
  }
  if (line_no == 0) throw Error(ErrorCode::bad_file, std::string(context), "the exposure sheet is empty");
  return out;
}

}  // namespace koma::keys
