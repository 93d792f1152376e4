#include "koma/body/parts.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"

namespace koma::body {

namespace {

constexpr std::array<std::string_view, kBodyPartCount> kPartNames = {"root", "torso", "head", "arms", "legs"};

// Old words still accepted when parsing: the cartoon filter called the torso "spine".
struct Alias {
  std::string_view name;
  BodyPart part;
};
constexpr std::array<Alias, 1> kPartAliases = {{{"spine", BodyPart::torso}}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has_any(const std::string& name, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (name.find(w) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string_view part_name(BodyPart part) noexcept { return kPartNames[static_cast<int>(part)]; }

std::array<std::string_view, kBodyPartCount> part_names() noexcept { return kPartNames; }

std::optional<BodyPart> find_part(std::string_view name) noexcept {
  for (int p = 0; p < kBodyPartCount; ++p) {
    if (kPartNames[p] == name) return static_cast<BodyPart>(p);
  }
  for (const Alias& a : kPartAliases) {
    if (a.name == name) return a.part;
  }
  return std::nullopt;
}

BodyPart parse_part(std::string_view name) {
  if (const std::optional<BodyPart> part = find_part(name)) return *part;
  throw Error(ErrorCode::invalid_settings, fmt::format("part {}", name),
              fmt::format("unknown body part; valid parts are {} (spine = torso)", fmt::join(kPartNames, ", ")));
}

BodyPart body_part_of(std::string_view name) noexcept {
  const size_t colon = name.rfind(':');
  const std::string n = lower(colon == std::string_view::npos ? name : name.substr(colon + 1));
  if (has_any(n, {"head", "neck", "eye", "jaw", "nose"})) return BodyPart::head;
  if (has_any(n, {"arm", "hand", "wrist", "elbow", "shoulder", "shldr", "collar", "clavicle", "thumb", "index",
                  "middle", "ring", "pinky", "finger"}))
    return BodyPart::arms;
  if (has_any(n, {"leg", "thigh", "knee", "shin", "calf", "foot", "ankle", "toe", "buttock"})) return BodyPart::legs;
  if (has_any(n, {"hip"}) && name_side(name) != 0) return BodyPart::legs;
  return BodyPart::torso;
}

std::vector<BodyPart> joint_parts(const Skeleton& s) {
  std::vector<BodyPart> part(static_cast<size_t>(s.joint_count()), BodyPart::torso);
  for (int j = 1; j < s.joint_count(); ++j) {
    const BodyPart pp = part[s.parents[j]];
    if (pp != BodyPart::torso) {
      part[j] = pp;
      continue;
    }
    const std::string n = lower(s.names[j]);
    if (has_any(n, {"leg", "thigh", "knee", "shin", "calf", "foot", "toe", "ankle", "buttock", "hipjoint"})) {
      part[j] = BodyPart::legs;
    } else if (has_any(n, {"shoulder", "shldr", "collar", "clavicle", "arm", "elbow", "hand", "wrist", "finger",
                           "thumb"})) {
      part[j] = BodyPart::arms;
    } else if (has_any(n, {"head", "neck"})) {
      part[j] = BodyPart::head;
    }
  }
  return part;
}

}  // namespace koma::body
