#include "koma/io/kept_frames.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::io {

namespace {

using nlohmann::json;

std::optional<double> find_rate(const json& obj) {
  for (const char* key : {"output_fps", "output_rate", "fps", "frame_rate"}) {
    auto it = obj.find(key);
    if (it != obj.end() && it->is_number() && it->get<double>() > 0 && std::isfinite(it->get<double>())) {
      return it->get<double>();
    }
  }
  return std::nullopt;
}

std::optional<int> find_count(const json& obj) {
  // "frames" counts output frames in a koma keys report (it selects on the resampled motion).
  for (const char* key : {"output_frames", "output_frame_count", "frames"}) {
    auto it = obj.find(key);
    if (it != obj.end() && it->is_number_integer() && it->get<long long>() >= 0) {
      return static_cast<int>(it->get<long long>());
    }
  }
  return std::nullopt;
}

std::vector<std::pair<int, double>> find_curve(const json& doc) {
  std::vector<std::pair<int, double>> out;
  auto layers = doc.find("layers");
  if (layers == doc.end() || !layers->is_array() || layers->empty() || !(*layers)[0].is_object()) return out;
  auto curve = (*layers)[0].find("curve");
  if (curve == (*layers)[0].end() || !curve->is_array()) return out;
  for (const json& p : *curve) {
    if (!p.is_object()) continue;
    auto k = p.find("keys");
    auto e = p.find("error_m2");
    if (k == p.end() || e == p.end() || !k->is_number_integer() || !e->is_number()) continue;
    const double err = e->get<double>();
    if (std::isfinite(err) && err >= 0) out.emplace_back(k->get<int>(), err);
  }
  return out;
}

// The frame numbers of one array, each checked (`field` names it in errors).
std::vector<int> frame_list(const json& arr, const std::string& where, const std::string& field) {
  if (!arr.is_array()) throw Error(ErrorCode::bad_file, where, fmt::format("{} is not an array", field));
  std::vector<int> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& v = arr[i];
    const double d = v.is_number() ? v.get<double>() : NAN;
    if (!(d >= 0) || d != std::floor(d) || d > 1e9) {
      throw Error(ErrorCode::bad_file, fmt::format("{}: {}[{}]", where, field, i),
                  fmt::format("{} is not a frame number (a non-negative integer)", v.dump()));
    }
    out.push_back(static_cast<int>(d));
  }
  return out;
}

// A layered report's layers (two or more with "joints" and "keys"), else none.
std::vector<KeptFramesReport::Layer> read_layers(const json& doc, const std::string& where) {
  std::vector<KeptFramesReport::Layer> out;
  auto it = doc.find("layers");
  if (it == doc.end() || !it->is_array() || it->size() < 2) return out;
  for (size_t l = 0; l < it->size(); ++l) {
    const json& L = (*it)[l];
    if (!L.is_object() || !L.contains("keys") || !L.contains("joints") || !L["joints"].is_array()) return {};
    KeptFramesReport::Layer layer;
    if (L.contains("name") && L["name"].is_string()) layer.name = L["name"].get<std::string>();
    for (const json& n : L["joints"]) {
      if (!n.is_string()) throw Error(ErrorCode::bad_file, fmt::format("{}: layers[{}].joints", where, l), "expected joint names");
      layer.joints.push_back(n.get<std::string>());
    }
    layer.keys = frame_list(L["keys"], where, fmt::format("layers[{}].keys", l));
    out.push_back(std::move(layer));
  }
  return out;
}

// The frames of a spaced report's drawings ("spacing"."drawings"[]."frame"), else none.
std::vector<int> spacing_drawings(const json& doc, const std::string& where) {
  auto sp = doc.find("spacing");
  if (sp == doc.end() || !sp->is_object() || !sp->contains("drawings")) return {};
  const json& drawings = (*sp)["drawings"];
  if (!drawings.is_array()) throw Error(ErrorCode::bad_file, where, "spacing.drawings is not an array");
  json frames = json::array();
  for (size_t i = 0; i < drawings.size(); ++i) {
    if (!drawings[i].is_object() || !drawings[i].contains("frame")) {
      throw Error(ErrorCode::bad_file, fmt::format("{}: spacing.drawings[{}]", where, i), "expected an object with a \"frame\"");
    }
    frames.push_back(drawings[i]["frame"]);
  }
  return frame_list(frames, where, "spacing.drawings[].frame");
}

}  // namespace

KeptFramesReport parse_kept_frames_report(std::string_view text, std::string_view name) {
  const std::string where(name);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e999999
    throw Error(ErrorCode::bad_file, where, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) throw Error(ErrorCode::bad_file, where, "expected a JSON object (a koma keys report)");
  const json* holder = nullptr;
  if (doc.contains("kept_frames")) {
    holder = &doc;
  } else {
    for (const auto& [key, value] : doc.items()) {
      if (value.is_object() && value.contains("kept_frames")) {
        holder = &value;
        break;
      }
    }
  }
  // Reports of `koma keys` that list keys per body-part layer: the first layer is the whole body.
  const json* arr_ptr = holder ? &(*holder)["kept_frames"] : nullptr;
  if (!holder) {
    auto layers = doc.find("layers");
    if (layers != doc.end() && layers->is_array() && !layers->empty() && (*layers)[0].is_object() &&
        (*layers)[0].contains("keys")) {
      holder = &doc;
      arr_ptr = &(*layers)[0]["keys"];
    }
  }
  if (!holder) {
    throw Error(ErrorCode::bad_file, where,
                "no \"kept_frames\" field: expected the key selection report that koma keys writes");
  }
  const json& arr = *arr_ptr;
  if (!arr.is_array()) throw Error(ErrorCode::bad_file, where, "the kept frames are not an array");
  KeptFramesReport r;
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& v = arr[i];
    double d = v.is_number() ? v.get<double>() : NAN;
    if (!(d >= 0) || d != std::floor(d) || d > 1e9) {
      throw Error(ErrorCode::bad_file, fmt::format("{}: kept_frames[{}]", where, i),
                  fmt::format("{} is not a frame number (a non-negative integer)", v.dump()));
    }
    r.kept_frames.push_back(static_cast<int>(d));
  }
  r.layers = read_layers(doc, where);
  if (!r.layers.empty()) {
    std::vector<int> all;
    for (const auto& L : r.layers) all.insert(all.end(), L.keys.begin(), L.keys.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    r.kept_frames = std::move(all);
  }
  // A spaced run (koma keys --chart): its drawings are the keys and the inbetweens between them.
  if (r.layers.empty()) {
    if (std::vector<int> drawn = spacing_drawings(doc, where); !drawn.empty()) r.kept_frames = std::move(drawn);
  }
  r.frame_rate = find_rate(*holder);
  if (!r.frame_rate) r.frame_rate = find_rate(doc);
  r.frame_count = find_count(*holder);
  if (!r.frame_count) r.frame_count = find_count(doc);
  r.curve = find_curve(doc);
  return r;
}

KeptFramesReport read_kept_frames_report(const std::filesystem::path& path) {
  return parse_kept_frames_report(read_file(path), path.string());
}

}  // namespace koma::io
