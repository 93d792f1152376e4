#include "koma/body/roles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "koma/core/error.hpp"

namespace koma::body {

namespace {

constexpr std::array<std::string_view, kRoleCount> kRoleNames = {
    "hips",           "spine",       "neck",      "head",           "left_shoulder", "left_elbow",
    "left_hand",      "right_shoulder", "right_elbow", "right_hand", "left_hip",      "left_knee",
    "left_ankle",     "left_toe",    "right_hip", "right_knee",     "right_ankle",   "right_toe"};

// The name without any namespace prefix ("mixamorig:LeftFoot" -> "LeftFoot").
std::string_view strip_namespace(std::string_view name) noexcept {
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::string& s, std::string_view word) { return s.find(word) != std::string::npos; }

bool is_finger(const std::string& n) {
  for (std::string_view w : {"thumb", "index", "middle", "ring", "pinky", "finger", "carpal"})
    if (contains(n, w)) return true;
  return false;
}

std::vector<int> depths(const Skeleton& s) {
  std::vector<int> d(static_cast<size_t>(s.joint_count()), 0);
  for (int j = 1; j < s.joint_count(); ++j) d[j] = s.parents[j] >= 0 ? d[s.parents[j]] + 1 : 0;
  return d;
}

// The shallowest joint whose lower-case name satisfies `pred` and whose side is `side`.
template <class Pred>
int shallowest(const Skeleton& s, const std::vector<int>& depth, int side, Pred pred) {
  int best = -1;
  for (int j = 0; j < s.joint_count(); ++j) {
    const std::string n = lower(strip_namespace(s.names[j]));
    if (name_side(s.names[j]) != side || !pred(n)) continue;
    if (best < 0 || depth[j] < depth[best]) best = j;
  }
  return best;
}

// Parent of `j`, skipping twist/roll helper joints.
int parent_skipping_helpers(const Skeleton& s, int j) {
  int p = j >= 0 ? s.parents[j] : -1;
  while (p >= 0) {
    const std::string n = lower(strip_namespace(s.names[p]));
    if (!contains(n, "twist") && !contains(n, "roll")) break;
    p = s.parents[p];
  }
  return p;
}

}  // namespace

std::string_view role_name(Role role) noexcept { return kRoleNames[static_cast<int>(role)]; }

std::array<std::string_view, kRoleCount> role_names() noexcept { return kRoleNames; }

Role parse_role(std::string_view name) {
  for (int r = 0; r < kRoleCount; ++r) {
    if (kRoleNames[r] == name) return static_cast<Role>(r);
  }
  throw Error(ErrorCode::invalid_settings, fmt::format("role {}", name),
              fmt::format("unknown role; valid roles are {}", fmt::join(kRoleNames, ", ")));
}

int name_side(std::string_view name) noexcept {
  const std::string_view base = strip_namespace(name);
  if (base.empty()) return 0;
  std::string n;
  n.reserve(base.size());
  for (char c : base) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.rfind("left", 0) == 0) return -1;
  if (n.rfind("right", 0) == 0) return 1;
  if (base.size() >= 2) {
    const char last = n.back(), sep = n[n.size() - 2];
    if (sep == '_' || sep == '.' || sep == '-' || sep == ' ') {
      if (last == 'l') return -1;
      if (last == 'r') return 1;
    }
    const char first = n[0], second = base[1];
    // "lFoot", "LHipJoint", "rShldr": a side letter followed by a capital.
    if (std::isupper(static_cast<unsigned char>(second)) || second == '_' || second == '.') {
      if (first == 'l') return -1;
      if (first == 'r') return 1;
    }
  }
  if (contains(n, "left")) return -1;
  if (contains(n, "right")) return 1;
  return 0;
}

JointRoles find_joint_roles(const Skeleton& s) {
  JointRoles roles;
  if (s.joint_count() == 0) return roles;
  const std::vector<int> depth = depths(s);

  int hips = shallowest(s, depth, 0, [](const std::string& n) {
    return n == "hips" || n == "hip" || n == "pelvis" || n == "joint_hips";
  });
  if (hips < 0) hips = 0;
  roles.set(Role::hips, hips);

  const int head = shallowest(s, depth, 0, [](const std::string& n) {
    return contains(n, "head") && !contains(n, "top") && !contains(n, "end");
  });
  roles.set(Role::head, head);
  roles.set(Role::neck, shallowest(s, depth, 0, [](const std::string& n) { return contains(n, "neck"); }));
  // Spine: the head's ancestor whose parent is the hips.
  for (int j = head; j >= 0; j = s.parents[j]) {
    if (s.parents[j] == hips) {
      roles.set(Role::spine, j);
      break;
    }
  }

  struct Limb {
    int side;
    Role hand, elbow, shoulder, ankle, knee, hip, toe;
  };
  for (const Limb& l : {Limb{-1, Role::left_hand, Role::left_elbow, Role::left_shoulder, Role::left_ankle,
                             Role::left_knee, Role::left_hip, Role::left_toe},
                        Limb{1, Role::right_hand, Role::right_elbow, Role::right_shoulder, Role::right_ankle,
                             Role::right_knee, Role::right_hip, Role::right_toe}}) {
    // "Palm.L": Blender rigs (Quaternius) name the hand bone for its palm.
    const int hand = shallowest(s, depth, l.side, [](const std::string& n) {
      return (contains(n, "hand") || contains(n, "wrist") || contains(n, "palm")) && !is_finger(n);
    });
    if (hand >= 0) {
      roles.set(l.hand, hand);
      const int elbow = parent_skipping_helpers(s, hand);
      roles.set(l.elbow, elbow);
      roles.set(l.shoulder, parent_skipping_helpers(s, elbow));
    }
    const int ankle = shallowest(s, depth, l.side, [](const std::string& n) {
      return (contains(n, "foot") || contains(n, "ankle")) && !contains(n, "toe");
    });
    if (ankle < 0) continue;
    roles.set(l.ankle, ankle);
    int knee = parent_skipping_helpers(s, ankle);
    // An IK rig's foot can hang from the root (Blender "Foot.L" beside "UpperLeg.L", moved by IK
    // with the leg chain ending in a tail): then the knee is the lower leg found by name.
    if (knee < 0 || depth[knee] <= depth[hips]) {
      const int lower = shallowest(s, depth, l.side, [](const std::string& n) {
        return contains(n, "lowerleg") || contains(n, "shin") || contains(n, "calf") || contains(n, "knee");
      });
      if (lower >= 0) knee = lower;
    }
    roles.set(l.knee, knee);
    roles.set(l.hip, parent_skipping_helpers(s, knee));
    int toe = -1;
    for (int j = ankle + 1; j < s.joint_count(); ++j) {
      if (s.parents[j] != ankle) continue;
      const bool toe_named = contains(lower(strip_namespace(s.names[j])), "toe");
      if (toe < 0 || (toe_named && !contains(lower(strip_namespace(s.names[toe])), "toe"))) toe = j;
    }
    if (toe < 0) {
      for (int e = 0; e < s.end_site_count(); ++e) {
        if (s.end_sites[e].parent == ankle) {
          toe = s.joint_count() + e;
          break;
        }
      }
    }
    roles.set(l.toe, toe);
  }
  return roles;
}

void assign_role(JointRoles& roles, const Skeleton& skeleton, std::string_view role, std::string_view joint_name) {
  const Role r = parse_role(role);
  const bool point_role = r == Role::left_toe || r == Role::right_toe;
  const int count = point_role ? skeleton.point_count() : skeleton.joint_count();
  for (int p = 0; p < count; ++p) {
    if (skeleton.point_name(p) == joint_name) {
      roles.set(r, p);
      return;
    }
  }
  throw Error(ErrorCode::mismatch, fmt::format("role {}", role),
              fmt::format("the skeleton has no {} named '{}'", point_role ? "joint or end site" : "joint",
                          joint_name));
}

}  // namespace koma::body
