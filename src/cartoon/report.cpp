#include "koma/cartoon/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "koma/core/rotation.hpp"

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

constexpr double kDegree = kPi / 180.0;

// The bound held this joint back visibly: by more than 1 degree (1 cm for a translation).
bool visibly_bounded(const BoundReport& b) { return b.requested - b.bound > (b.translation ? 0.01 : kDegree); }

std::string frame_ranges(const std::vector<Segment>& frames, size_t most) {
  std::string out;
  for (size_t i = 0; i < std::min(frames.size(), most); ++i) {
    if (i > 0) out += ", ";
    out += frames[i].end - frames[i].begin == 1 ? fmt::format("{}", frames[i].begin)
                                                : fmt::format("{}-{}", frames[i].begin, frames[i].end - 1);
  }
  if (frames.size() > most) out += fmt::format(" and {} more", frames.size() - most);
  return out;
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
  j["segments"] = r.segments.size();
  int bounded = 0;
  for (const BoundReport& b : r.bounded) bounded += visibly_bounded(b) ? 1 : 0;
  j["bounded"] = bounded;
  return j;
}

json cartoon_report(const CartoonResult& r, const CartoonSettings& settings) {
  json j = cartoon_summary(r, settings);
  j["root_sigma_frames"] = r.root_sigma;
  json segments = json::array();
  for (const Segment& s : r.segments) segments.push_back({{"begin", s.begin}, {"end", s.end}});
  j["segments"] = segments;
  json bounded = json::array();
  for (const BoundReport& b : r.bounded) {
    json frames = json::array();
    for (const Segment& s : b.frames) frames.push_back({s.begin, s.end});
    const double unit = b.translation ? 1.0 : 1.0 / kDegree;
    bounded.push_back({{"joint", r.motion.skeleton.names[static_cast<size_t>(b.joint)]},
                       {"translation", b.translation},
                       {"frames", frames},
                       {"range", b.range * unit},
                       {"bound", b.bound * unit},
                       {"requested", b.requested * unit},
                       {"requested_frame", b.requested_frame}});
  }
  j["bounded"] = bounded;
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

std::string bound_warning(const CartoonResult& r, const CartoonSettings& settings) {
  std::vector<const BoundReport*> held;
  for (const BoundReport& b : r.bounded) {
    if (visibly_bounded(b)) held.push_back(&b);
  }
  if (held.empty()) return "";
  std::stable_sort(held.begin(), held.end(), [](const BoundReport* a, const BoundReport* b) {
    return a->requested / std::max(a->bound, 1e-300) > b->requested / std::max(b->bound, 1e-300);
  });
  std::string text = fmt::format(
      "these settings would throw {} joint(s) past the bound (`bound_share` {:g} of each joint's own range); "
      "held at the bound:",
      held.size(), settings.bound_share);
  constexpr size_t kListed = 5;
  for (size_t i = 0; i < std::min(held.size(), kListed); ++i) {
    const BoundReport& b = *held[i];
    const std::string& name = r.motion.skeleton.names[static_cast<size_t>(b.joint)];
    const bool t = b.translation;
    text += fmt::format(" {}{} frames {} (asked {:.1f} {}, kept {:.1f} at frame {});", name, t ? " translation" : "",
                        frame_ranges(b.frames, 3), t ? b.requested * 100 : b.requested / kDegree, t ? "cm" : "deg",
                        t ? b.bound * 100 : b.bound / kDegree, b.requested_frame);
  }
  if (held.size() > kListed) text += fmt::format(" and {} more (the report lists them)", held.size() - kListed);
  if (text.back() == ';') text.back() = '.';
  return text;
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
