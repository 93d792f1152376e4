#include "koma/keys/report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace koma::keys {

std::string report_json(const KeySelection& sel, const Skeleton& sk, LengthUnit unit, const KeySettings& st,
                        std::string_view input) {
  return report_json(sel, sk, metres_per_unit(unit), to_string(unit), st, input);
}

std::string report_json(const KeySelection& sel, const Skeleton& sk, double m_per_u, std::string_view unit_label,
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

}  // namespace koma::keys
