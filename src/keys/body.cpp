#include "koma/keys/body.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"

namespace koma::keys {

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& ch : o) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return o;
}

bool has_any(const std::string& name, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (name.find(w) != std::string::npos) return true;
  }
  return false;
}

// Topmost joints whose name contains one of `words` (their parent's name does not).
std::vector<int> chain_tops(const Skeleton& s, std::initializer_list<const char*> words) {
  std::vector<int> out;
  for (int j = 0; j < s.joint_count(); ++j) {
    if (!has_any(lower(s.names[j]), words)) continue;
    const int p = s.parents[j];
    if (p >= 0 && has_any(lower(s.names[p]), words)) continue;
    out.push_back(j);
  }
  return out;
}

std::vector<int> subtree(const Skeleton& s, int root) {
  std::vector<char> in(static_cast<size_t>(s.joint_count()), 0);
  std::vector<int> out;
  for (int j = root; j < s.joint_count(); ++j) {
    if (j == root || (s.parents[j] >= 0 && in[s.parents[j]])) {
      in[j] = 1;
      out.push_back(j);
    }
  }
  return out;
}

}  // namespace

std::vector<int> group_joints(const Skeleton& s, std::string_view group) {
  // "root" names the root translation in body::BodyPart; layers key joints, so here it stays a joint name.
  const std::optional<body::BodyPart> part = body::find_part(group);
  if (part && *part != body::BodyPart::root) {
    const std::vector<body::BodyPart> parts = body::joint_parts(s);
    std::vector<int> out;
    for (int j = 0; j < s.joint_count(); ++j) {
      if (parts[j] == *part) out.push_back(j);
    }
    if (out.empty()) {
      throw Error(ErrorCode::invalid_settings, "layers", fmt::format("no joint of this skeleton is in the body part '{}'", group));
    }
    return out;
  }
  const int j = s.find(group);
  if (j < 0) {
    throw Error(ErrorCode::invalid_settings, "layers",
                fmt::format("unknown joint or body part '{}' (body parts: legs, arms, head, torso)", group));
  }
  return subtree(s, j);
}

std::vector<BodyPartLayer> parse_layers(std::string_view text) {
  std::vector<BodyPartLayer> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) {
      if (end == text.size()) break;
      throw Error(ErrorCode::invalid_settings, "layers", "empty layer in the list");
    }
    const size_t colon = item.rfind(':');
    auto bad = [&] {
      return Error(ErrorCode::invalid_settings, "layers",
                   fmt::format("'{}' is not group:on[+offset] (e.g. legs:3 or arms:2+1)", item));
    };
    if (colon == std::string_view::npos || colon == 0) throw bad();
    BodyPartLayer l;
    l.group = std::string(item.substr(0, colon));
    const std::string rest(item.substr(colon + 1));
    const size_t plus = rest.find('+');
    try {
      size_t used = 0;
      l.on = std::stoi(rest.substr(0, plus), &used);
      if (used != (plus == std::string::npos ? rest.size() : plus)) throw bad();
      if (plus != std::string::npos) {
        l.offset = std::stoi(rest.substr(plus + 1), &used);
        if (used != rest.size() - plus - 1) throw bad();
      }
    } catch (const std::logic_error&) {
      throw bad();
    }
    if (l.on < 1 || l.offset < 0) throw bad();
    out.push_back(std::move(l));
    if (end == text.size()) break;
  }
  if (out.empty()) throw Error(ErrorCode::invalid_settings, "layers", "no layer given");
  return out;
}

std::vector<KeyEvent> contact_keys(const Motion& motion, const body::ContactSettings& settings) {
  const body::ContactReport report = body::detect_foot_contacts(motion, settings);
  std::vector<KeyEvent> out;
  for (const body::EffectorContacts& foot : report.effectors) {
    for (const body::Contact& c : foot.contacts) {
      if (c.begin > 0) out.push_back({c.begin, foot.effector.points.front()});
    }
  }
  std::sort(out.begin(), out.end(), [](const KeyEvent& a, const KeyEvent& b) { return a.frame < b.frame; });
  return out;
}

std::vector<KeyEvent> detect_extremes(const Motion& motion, const ExtremeSettings& st) {
  st.validate();
  const Skeleton& s = motion.skeleton;
  const WorldPoses w = forward_kinematics(motion);
  const int N = motion.frame_count;
  const double size = body::body_size(s);
  std::vector<int> effectors = chain_tops(s, {"hand", "wrist"});
  for (int j : chain_tops(s, {"foot", "ankle"})) effectors.push_back(j);
  for (int j : chain_tops(s, {"head"})) effectors.push_back(j);
  std::vector<KeyEvent> out;
  std::vector<Vec3> rel(static_cast<size_t>(std::max(N, 0)));
  for (int j : effectors) {
    for (int f = 0; f < N; ++f) rel[static_cast<size_t>(f)] = w.position(f, j) - w.position(f, 0);
    for (const body::Reversal& r : body::direction_reversals(rel, motion.frame_rate, size, st)) out.push_back({r.frame, j});
  }
  std::sort(out.begin(), out.end(), [](const KeyEvent& a, const KeyEvent& b) { return a.frame < b.frame; });
  return out;
}

}  // namespace koma::keys
