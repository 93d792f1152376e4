#include "koma/timing/report.hpp"

#include <string>

namespace koma::timing {

using nlohmann::json;

json key_times_report(const Motion& motion, const body::JointRoles& roles, const KeyTimeReport& r) {
  json j;
  j["frames"] = motion.frame_count;
  j["fps"] = motion.frame_rate;
  auto& roles_j = j["roles"] = json::object();
  for (int k = 0; k < body::kRoleCount; ++k) {
    if (roles.points[static_cast<size_t>(k)] >= 0) {
      roles_j[std::string(body::role_name(static_cast<body::Role>(k)))] = motion.skeleton.point_name(roles.points[static_cast<size_t>(k)]);
    }
  }
  auto& eff = j["effectors"] = json::array();
  for (const auto& e : r.effectors) {
    json keys = json::array();
    for (const auto& k : e.keys) {
      keys.push_back({{"frame", k.frame}, {"time", k.frame / motion.frame_rate}, {"begin", k.begin}, {"end", k.end},
                      {"confidence", k.confidence}});
    }
    json item = {{"name", e.name}, {"kind", to_string(e.kind)}, {"keys", keys}};
    if (e.kind != KeyKind::contact) {
      json ext = json::array();
      for (const auto& k : e.extremes)
        ext.push_back({{"frame", k.frame}, {"time", k.frame / motion.frame_rate}, {"sharpness", k.confidence}});
      item["extremes"] = ext;
      item["still"] = e.still;
      if (!e.note.empty()) item["note"] = e.note;
    }
    eff.push_back(std::move(item));
  }
  const Beat& b = r.beat;
  j["beat"] = b.found() ? json{{"tempo_bpm", b.tempo_bpm}, {"period", b.period}, {"phase", b.phase},
                               {"confidence", b.confidence}, {"keys", b.keys}, {"on_beat", b.on_beat},
                               {"rms_seconds", b.rms_seconds}}
                        : json{{"tempo_bpm", nullptr}, {"keys", b.keys}, {"confidence", 0.0}};
  auto& tried = j["contact_thresholds_tried"] = json::array();
  for (const auto& t : r.attempts) {
    tried.push_back({{"height_fraction", t.height_fraction}, {"speed_threshold", t.speed_threshold},
                     {"contacts", t.contacts}});
  }
  return j;
}

json timing_source_summary(const TimingSource& source) {
  return {{"examples", source.examples},
          {"segments", source.segments.size()},
          {"mean_cycle_seconds", source.mean_cycle_seconds},
          {"lags", source.lags.size()}};
}

json retime_report(const RetimeReport& r, const TimingSource& source, bool with_warp) {
  json j;
  j["examples"] = source.examples;
  j["input_frames"] = r.input_frames;
  j["output_frames"] = r.output_frames;
  j["input_fps"] = r.input_rate;
  j["output_fps"] = r.output_rate;
  j["path_length_m"] = r.path_length;
  j["path_deviation_m"] = r.path_deviation;
  j["path_hausdorff_m"] = r.path_hausdorff;
  j["key_error_frames"] = r.key_error;
  j["cycle_error_frames"] = r.cycle_error;
  j["keys_unmatched"] = r.keys_unmatched;
  j["key_passes"] = r.key_passes;
  if (r.beat_period > 0) j["beat_period_s"] = r.beat_period;
  j["cadence"] = {{"speed_from", std::string(speed_from_name(r.speed))},
                  {"output_step_s", r.output_step},
                  {"example_step_s", r.source_step},
                  {"input_step_s", r.input_step},
                  {"output_speed_m_s", r.output_speed},
                  {"input_speed_m_s", r.input_speed}};
  auto& out_keys = j["output_keys"] = json::array();
  for (const auto& k : r.keys) {
    out_keys.push_back({{"foot", k.foot},
                        {"input_key", k.input_key},
                        {"input_frame", k.input_frame},
                        {"planned", k.planned},
                        {"detected", k.detected},
                        {"interior", k.interior}});
  }
  auto& keys = j["input_keys"] = json::array();
  for (const auto& k : r.input_keys) {
    keys.push_back({{"frame", k.frame},
                    {"foot", k.foot},
                    {"confidence", k.confidence},
                    {"contact_begin", k.begin},
                    {"contact_end", k.end}});
  }
  auto& segs = j["segments"] = json::array();
  for (const auto& s : r.segments) {
    segs.push_back({{"input_begin", s.input_begin},
                    {"input_end", s.input_end},
                    {"output_begin", s.output_begin},
                    {"output_end", s.output_end},
                    {"source_segment", s.source_segment},
                    {"pose_distance", s.pose_distance},
                    {"input_duration_s", s.input_duration},
                    {"output_duration_s", s.output_duration}});
  }
  auto& shifts = j["shifts"] = json::array();
  for (const auto& s : r.shifts) {
    shifts.push_back({{"parent", body::role_name(s.parent)},
                      {"child", body::role_name(s.child)},
                      {"source_lag_s", s.source_lag},
                      {"input_lag_s", s.input_lag},
                      {"correlation", s.correlation},
                      {"shift_s", s.shift}});
  }
  auto& amps = j["amplitudes"] = json::array();
  for (const auto& a : r.amplitudes) {
    amps.push_back({{"role", body::role_name(a.role)},
                    {"source_range_rad", a.source_range},
                    {"input_range_rad", a.input_range},
                    {"scale", a.scale}});
  }
  if (with_warp) j["warp"] = r.warp;
  return j;
}

}  // namespace koma::timing
