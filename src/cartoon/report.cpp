#include "koma/cartoon/report.hpp"

#include <string>

namespace koma::cartoon {

namespace {

using nlohmann::json;

// "strength" is the rate-independent knob (null when per-frame settings were given) and
// "strength_per_frame" the A applied to x'' per frame^2 at the input's rate.
json settings_json(const CartoonSettings& settings, const FilterSettings& applied) {
  json parts;
  for (int p = 0; p < body::kBodyPartCount; ++p) {
    parts[std::string(body::part_name(static_cast<body::BodyPart>(p)))] = settings.part_strength[static_cast<size_t>(p)];
  }
  return {{"strength", settings.per_frame ? json(nullptr) : json(settings.strength)},
          {"strength_per_frame", applied.strength},
          {"parts", parts}};
}

json stats_json(double lo, double mean, double hi, double scale) {
  return {{"min", lo * scale}, {"mean", mean * scale}, {"max", hi * scale}};
}

}  // namespace

json cartoon_summary(const CartoonResult& r, const CartoonSettings& settings) {
  json j = settings_json(settings, r.filter);
  const Skeleton& sk = r.motion.skeleton;
  j["frames"] = r.motion.frame_count;
  j["fps"] = r.motion.frame_rate;
  j["sigma_frames"] = stats_json(r.sigma_min, r.sigma_mean, r.sigma_max, 1.0);
  j["sigma_seconds"] = stats_json(r.sigma_min, r.sigma_mean, r.sigma_max, r.frame_rate > 0 ? 1.0 / r.frame_rate : 0.0);
  j["body_change_mm"] = {{"mean", 1000 * r.body_change_m},
                         {"max", 1000 * r.max_change_m},
                         {"worst_joint", sk.joint_count() > 0 ? sk.names[static_cast<size_t>(r.max_change_joint)] : ""},
                         {"worst_frame", r.max_change_frame}};
  if (settings.keep_feet) {
    j["contacts"] = r.contacts.contact_count();
    j["skating_mm_per_frame"] = {{"input", r.skating_input_mm}, {"output", r.skating_output_mm}};
    j["ik_unreachable_leg_frames"] = r.unreachable_frames;
  }
  return j;
}

json cartoon_report(const CartoonResult& r, const CartoonSettings& settings) {
  json j = cartoon_summary(r, settings);
  j["root_sigma_frames"] = r.root_sigma;
  if (settings.keep_feet) {
    json contacts = json::array();
    for (const auto& ec : r.contacts.effectors) {
      for (const auto& c : ec.contacts) {
        contacts.push_back({{"effector", ec.effector.name}, {"begin", c.begin}, {"end", c.end},
                            {"key_frame", c.key_frame}, {"confidence", c.confidence}});
      }
    }
    j["contacts"] = contacts;
  }
  if (!r.squash.empty()) {
    json sq = json::array();
    for (const auto& s : r.squash) {
      sq.push_back({{"stretch", s.stretch},
                    {"direction", {s.direction.x(), s.direction.y(), s.direction.z()}},
                    {"axis_scale", {s.axis_scale.x(), s.axis_scale.y(), s.axis_scale.z()}}});
    }
    j["squash_joint"] = settings.squash_joint.empty() ? r.motion.skeleton.names[0] : settings.squash_joint;
    j["squash"] = sq;
  }
  return j;
}

json cartoon_points_summary(int frames, int points, double frame_rate, const CartoonSettings& settings) {
  const FilterSettings applied = settings.filter_at(frame_rate);
  json j = settings_json(settings, applied);
  j["frames"] = frames;
  j["points"] = points;
  j["fps"] = frame_rate;
  j["sigma_frames"] = applied.sigma_frames > 0 ? json(applied.sigma_frames) : json("auto");
  return j;
}

}  // namespace koma::cartoon
