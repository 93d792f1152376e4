// The generated mannequin (see koma/toon/character.hpp): an artist's wooden figure built from
// tapered capsules and ellipsoids in each joint's frame, rigidly bound to that joint.
#include <fmt/format.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"
#include "koma/toon/character.hpp"

namespace koma::toon {

void MannequinSettings::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("mannequin.") + field, why);
  };
  if (!(limb > 0.2 && limb <= 4)) bad("limb", "must be in (0.2, 4]");
  if (!(torso > 0.2 && torso <= 4)) bad("torso", "must be in (0.2, 4]");
  if (!(head > 0 && head <= 0.3)) bad("head", "must be in (0, 0.3]");
  for (const auto& c : {body, left, right})
    for (float v : c)
      if (!(v >= 0 && v <= 1)) bad("colour", "components must be in [0, 1]");
}

namespace {

constexpr double kPi = 3.14159265358979323846;

enum Material : int { kBody = 0, kLeft = 1, kRight = 2 };

// Geometry in one joint's frame, appended to the part of its material.
struct Builder {
  io::CharacterMesh mesh;

  void vertex(io::CharacterPart& p, const Vec3& pos, const Vec3& n, int bone) {
    for (int c = 0; c < 3; ++c) {
      p.positions.push_back(static_cast<float>(pos[c]));
      p.normals.push_back(static_cast<float>(n[c]));
    }
    p.uvs.insert(p.uvs.end(), {0.0f, 0.0f});
    p.bones.insert(p.bones.end(), {static_cast<std::uint16_t>(bone), 0, 0, 0});
    p.weights.insert(p.weights.end(), {1.0f, 0.0f, 0.0f, 0.0f});
  }

  // A tapered capsule from a (radius ra) to b (radius rb) in joint `bone`'s frame, its cross-section
  // an ellipse `wide` times wider along `side` (projected off the axis) than across it.
  void capsule(int material, int bone, const Vec3& a, const Vec3& b, double ra, double rb, const Vec3& side,
               double wide = 1.0) {
    io::CharacterPart& p = mesh.parts[static_cast<size_t>(material)];
    Vec3 u = b - a;
    const double len = u.norm();
    if (!(len > 1e-9)) return;
    u /= len;
    Vec3 s = side - side.dot(u) * u;
    if (s.norm() < 1e-6) s = u.unitOrthogonal();
    s.normalize();
    const Vec3 t = u.cross(s);
    constexpr int kAround = 18, kCap = 5;
    // Rings: the cap at a (from its pole), then the cap at b (to its pole).
    std::vector<std::pair<Vec3, double>> ring;  // centre, radius; and the axial part of the normal
    std::vector<double> axial;
    for (int i = 0; i <= kCap; ++i) {
      const double th = -kPi / 2 + kPi / 2 * i / kCap;
      ring.emplace_back(a + u * (ra * std::sin(th)), ra * std::cos(th));
      axial.push_back(std::sin(th));
    }
    for (int i = 0; i <= kCap; ++i) {
      const double th = kPi / 2 * i / kCap;
      ring.emplace_back(b + u * (rb * std::sin(th)), rb * std::cos(th));
      axial.push_back(std::sin(th));
    }
    const auto base = static_cast<std::uint32_t>(p.vertex_count());
    for (size_t r = 0; r < ring.size(); ++r) {
      for (int k = 0; k < kAround; ++k) {
        const double ph = 2 * kPi * k / kAround;
        const double cs = std::cos(ph) * wide, sn = std::sin(ph);
        const Vec3 radial = s * cs + t * sn;
        const Vec3 pos = ring[r].first + radial * ring[r].second;
        const double ca = std::sqrt(std::max(0.0, 1 - axial[r] * axial[r]));
        Vec3 n = (s * (std::cos(ph) / wide) + t * sn).normalized() * ca + u * axial[r];
        vertex(p, pos, n.normalized(), bone);
      }
    }
    for (std::uint32_t r = 0; r + 1 < ring.size(); ++r)
      for (std::uint32_t k = 0; k < kAround; ++k) {
        const std::uint32_t k1 = (k + 1) % kAround;
        const std::uint32_t i0 = base + r * kAround + k, i1 = base + r * kAround + k1;
        const std::uint32_t j0 = i0 + kAround, j1 = i1 + kAround;
        p.indices.insert(p.indices.end(), {i0, i1, j1, i0, j1, j0});
      }
  }

  // An ellipsoid with semi-axes along the columns of `axes` (scaled), centred at c.
  void ellipsoid(int material, int bone, const Vec3& c, const Eigen::Matrix3d& axes) {
    io::CharacterPart& p = mesh.parts[static_cast<size_t>(material)];
    constexpr int kAround = 20, kRings = 12;
    const auto base = static_cast<std::uint32_t>(p.vertex_count());
    const Eigen::Matrix3d normal_m = axes.inverse().transpose();
    for (int r = 0; r <= kRings; ++r) {
      const double th = -kPi / 2 + kPi * r / kRings;
      for (int k = 0; k < kAround; ++k) {
        const double ph = 2 * kPi * k / kAround;
        const Vec3 unit(std::cos(th) * std::cos(ph), std::sin(th), std::cos(th) * std::sin(ph));
        vertex(p, c + axes * unit, (normal_m * unit).normalized(), bone);
      }
    }
    for (std::uint32_t r = 0; r < kRings; ++r)
      for (std::uint32_t k = 0; k < kAround; ++k) {
        const std::uint32_t k1 = (k + 1) % kAround;
        const std::uint32_t i0 = base + r * kAround + k, i1 = base + r * kAround + k1;
        const std::uint32_t j0 = i0 + kAround, j1 = i1 + kAround;
        p.indices.insert(p.indices.end(), {i0, j1, i1, i0, j0, j1});
      }
  }
};

// What a bone (joint -> child point) is, for its thickness.
enum class Kind : std::uint8_t { skip, generic, thigh, shin, foot, upper_arm, forearm, hand, trunk, girdle, neck };

struct Plan {
  const Motion& motion;
  const MannequinSettings& st;
  body::JointRoles roles;
  std::vector<Eigen::Matrix4d> world;  // first frame
  std::vector<char> trunk;             // joints on the chain hips .. head
  std::vector<char> below_hand;        // fingers: drawn as the mitten
  std::vector<char> above_hips;        // a ground reference root above the pelvis: not drawn
  double fig = 1.0;
  Vec3 left_world = Vec3::UnitX();     // the character's left, first frame
  Vec3 front_world = Vec3::UnitZ();

  Vec3 to_local(int j, const Vec3& dir) const {
    return world[static_cast<size_t>(j)].topLeftCorner<3, 3>().inverse() * dir;
  }
  Vec3 world_pos(int p) const {
    const Skeleton& sk = motion.skeleton;
    if (p < sk.joint_count()) return world[static_cast<size_t>(p)].topRightCorner<3, 1>();
    const auto& e = sk.end_sites[static_cast<size_t>(p - sk.joint_count())];
    return (world[static_cast<size_t>(e.parent)] * e.offset.homogeneous()).head<3>();
  }
  int role_of(int j) const {
    for (int r = 0; r < body::kRoleCount; ++r)
      if (roles.points[static_cast<size_t>(r)] == j) return r;
    return -1;
  }
};

Kind kind_of(const Plan& pl, int j, int child) {
  using body::Role;
  const auto is = [&](Role r) { return pl.roles[r] == j; };
  if (pl.below_hand[static_cast<size_t>(j)] || pl.above_hips[static_cast<size_t>(j)]) return Kind::skip;
  if (is(Role::left_hip) || is(Role::right_hip)) return Kind::thigh;
  if (is(Role::left_knee) || is(Role::right_knee)) return Kind::shin;
  if (is(Role::left_ankle) || is(Role::right_ankle)) return Kind::foot;
  if (is(Role::left_toe) || is(Role::right_toe)) return Kind::foot;
  if (is(Role::left_shoulder) || is(Role::right_shoulder)) return Kind::upper_arm;
  if (is(Role::left_elbow) || is(Role::right_elbow)) return Kind::forearm;
  if (is(Role::left_hand) || is(Role::right_hand)) return Kind::hand;
  const int nj = pl.motion.joint_count();
  const bool child_trunk = child < nj && pl.trunk[static_cast<size_t>(child)];
  if (pl.trunk[static_cast<size_t>(j)]) {
    if (is(Role::head)) return Kind::skip;  // the head is its own ellipsoid
    if (is(Role::neck) || (child < nj && pl.roles[Role::head] == child)) return Kind::neck;
    return child_trunk ? Kind::trunk : Kind::girdle;
  }
  if (pl.role_of(j) < 0 && pl.roles.has(Role::hips)) {
    // Clavicles and pelvis joints (CMU LHipJoint) between the trunk and a limb.
    return Kind::girdle;
  }
  return Kind::generic;
}

void add_bone(Builder& b, const Plan& pl, int j, int child, Kind kind) {
  const Skeleton& sk = pl.motion.skeleton;
  const Vec3 off = child < sk.joint_count() ? sk.offsets[static_cast<size_t>(child)]
                                           : sk.end_sites[static_cast<size_t>(child - sk.joint_count())].offset;
  const double len = off.norm();
  if (!(len > 0.015 * pl.fig)) return;
  const int side = body::name_side(sk.names[static_cast<size_t>(j)]);
  const int mat = side < 0 ? kLeft : side > 0 ? kRight : kBody;
  const double f = pl.fig, L = pl.st.limb, T = pl.st.torso;
  const Vec3 left = pl.to_local(j, pl.left_world), front = pl.to_local(j, pl.front_world);
  const Vec3 o = Vec3::Zero();
  switch (kind) {
    case Kind::skip: return;
    case Kind::thigh: b.capsule(mat, j, o, off, 0.060 * f * L, 0.044 * f * L, front); return;
    case Kind::shin: b.capsule(mat, j, o, off, 0.042 * f * L, 0.030 * f * L, front); return;
    case Kind::upper_arm: b.capsule(mat, j, o, off, 0.036 * f * L, 0.030 * f * L, front); return;
    case Kind::forearm: b.capsule(mat, j, o, off, 0.029 * f * L, 0.023 * f * L, front); return;
    case Kind::neck: b.capsule(kBody, j, o, off, 0.032 * f * T, 0.030 * f * T, left); return;
    case Kind::girdle: b.capsule(mat, j, o, off, 0.040 * f * T, 0.040 * f * T, front); return;
    case Kind::trunk: {
      // Wider side to side than front to back; the chest a little fuller than the waist.
      const Vec3 up = pl.to_local(j, Vec3::UnitY());
      const double chest = off.normalized().dot(up) > 0 ? 1.0 : 0.9;
      b.capsule(kBody, j, o, off, 0.080 * f * T, 0.088 * f * T * chest, left, 1.45);
      return;
    }
    case Kind::foot: {
      // A wedge: a capsule flattened top to bottom, from the heel to the toe.
      const Vec3 dir = off.normalized();
      b.capsule(mat, j, -dir * 0.025 * f, off, 0.030 * f * L, 0.024 * f * L, left, 1.35);
      return;
    }
    case Kind::hand: return;  // one mitten per hand (add_hand)
    case Kind::generic: {
      const double r = std::clamp(0.2 * len, 0.012 * f, 0.06 * f) * L;
      b.capsule(mat, j, o, off, r, 0.75 * r, front);
      return;
    }
  }
}

// A mitten hand: a flattened capsule from the wrist along the fingers' mean direction (or the
// forearm's line when the hand has no children).
void add_hand(Builder& b, const Plan& pl, int j) {
  const Skeleton& sk = pl.motion.skeleton;
  Vec3 dir = Vec3::Zero();
  for (int p = 0; p < sk.point_count(); ++p)
    if (sk.point_parent(p) == j) dir += pl.world_pos(p) - pl.world_pos(j);
  if (dir.norm() < 1e-9) {
    const int parent = sk.parents[static_cast<size_t>(j)];
    dir = parent >= 0 ? Vec3(pl.world_pos(j) - pl.world_pos(parent)) : Vec3::UnitY();
  }
  const Vec3 d = pl.to_local(j, dir.normalized()).normalized();
  const int side = body::name_side(sk.names[static_cast<size_t>(j)]);
  const int mat = side < 0 ? kLeft : side > 0 ? kRight : kBody;
  const double f = pl.fig, L = pl.st.limb;
  b.capsule(mat, j, d * 0.01 * f, d * 0.075 * f, 0.026 * f * L, 0.022 * f * L, pl.to_local(j, pl.front_world), 1.4);
}

// The head: an ellipsoid above the head joint (toward its end site), and a nose toward the front.
void add_head(Builder& b, const Plan& pl, int j) {
  const Skeleton& sk = pl.motion.skeleton;
  Vec3 up = Vec3::UnitY();
  for (int p = 0; p < sk.point_count(); ++p)
    if (sk.point_parent(p) == j && (pl.world_pos(p) - pl.world_pos(j)).norm() > 1e-6) {
      up = (pl.world_pos(p) - pl.world_pos(j)).normalized();
      break;
    }
  const Vec3 u = pl.to_local(j, up).normalized();
  Vec3 fr = pl.to_local(j, pl.front_world);
  fr = (fr - fr.dot(u) * u).normalized();
  const Vec3 side = fr.cross(u);  // (front, up, side) keeps the ellipsoid's faces pointing out
  const double r = pl.st.head * pl.fig;
  Eigen::Matrix3d axes;
  axes.col(0) = fr * r * 0.92;
  axes.col(1) = u * r * 1.12;
  axes.col(2) = side * r * 0.86;
  const Vec3 centre = u * r * 0.9;
  b.ellipsoid(kBody, j, centre, axes);
  b.ellipsoid(kBody, j, centre + fr * r * 0.85 - u * r * 0.1, Eigen::Matrix3d::Identity() * r * 0.2);
}

// The pelvis: an ellipsoid around the hips spanning both hip joints.
void add_pelvis(Builder& b, const Plan& pl) {
  using body::Role;
  const int h = pl.roles[Role::hips], lh = pl.roles[Role::left_hip], rh = pl.roles[Role::right_hip];
  if (h < 0 || lh < 0 || rh < 0) return;
  const Vec3 a = pl.world_pos(lh), c = pl.world_pos(rh), centre_w = (a + c) / 2;
  const Eigen::Matrix4d inv = pl.world[static_cast<size_t>(h)].inverse();
  const Vec3 centre = (inv * centre_w.homogeneous()).head<3>();
  const Vec3 across = pl.to_local(h, (a - c).normalized()).normalized();
  Vec3 up = pl.to_local(h, Vec3::UnitY());
  up = (up - up.dot(across) * across).normalized();
  const double half = 0.5 * (a - c).norm(), f = pl.fig, T = pl.st.torso;
  Eigen::Matrix3d axes;
  axes.col(0) = across * std::max(half + 0.045 * f, 0.085 * f) * T;
  axes.col(1) = up * 0.075 * f * T;
  axes.col(2) = across.cross(up) * 0.065 * f * T;
  b.ellipsoid(kBody, h, centre + up * 0.02 * f, axes);
}

Plan make_plan(const Motion& motion, const MannequinSettings& st) {
  using body::Role;
  Plan pl{motion, st, body::find_joint_roles(motion.skeleton), {}, {}, {}, {}, 1.0, Vec3::UnitX(), Vec3::UnitZ()};
  const Skeleton& sk = motion.skeleton;
  const int n = sk.joint_count();
  pl.world.resize(static_cast<size_t>(n));
  Motion first = motion;
  first.scales.clear();  // the body is built at unit scale; squash and stretch scale it per frame
  joint_transforms(first, 0, pl.world);
  pl.trunk.assign(static_cast<size_t>(n), 0);
  pl.below_hand.assign(static_cast<size_t>(n), 0);
  pl.above_hips.assign(static_cast<size_t>(n), 0);
  if (pl.roles.has(Role::hips))
    for (int j = sk.parents[static_cast<size_t>(pl.roles[Role::hips])]; j >= 0; j = sk.parents[static_cast<size_t>(j)])
      pl.above_hips[static_cast<size_t>(j)] = 1;
  // The figure's size: its first frame's box, without a ground reference root far from the body.
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
  for (int p = 0; p < sk.point_count(); ++p) {
    if (p < n && pl.above_hips[static_cast<size_t>(p)]) continue;
    lo = lo.cwiseMin(pl.world_pos(p)), hi = hi.cwiseMax(pl.world_pos(p));
  }
  pl.fig = lo.allFinite() ? std::max((hi - lo).maxCoeff(), 1e-3) : 1.0;
  // The trunk: from the head (else the neck) down to the hips.
  const int top = pl.roles.has(Role::head) ? pl.roles[Role::head] : pl.roles[Role::neck];
  if (top >= 0 && pl.roles.has(Role::hips)) {
    for (int j = top; j >= 0; j = sk.parents[static_cast<size_t>(j)]) {
      pl.trunk[static_cast<size_t>(j)] = 1;
      if (j == pl.roles[Role::hips]) break;
    }
  }
  for (int j = 0; j < n; ++j) {
    const int p = sk.parents[static_cast<size_t>(j)];
    if (p >= 0 && (pl.below_hand[static_cast<size_t>(p)] || p == pl.roles[Role::left_hand] ||
                   p == pl.roles[Role::right_hand]))
      pl.below_hand[static_cast<size_t>(j)] = 1;
  }
  const int lh = pl.roles[Role::left_hip], rh = pl.roles[Role::right_hip];
  if (lh >= 0 && rh >= 0 && (pl.world_pos(lh) - pl.world_pos(rh)).norm() > 1e-6) {
    Vec3 l = pl.world_pos(lh) - pl.world_pos(rh);
    l.y() = 0;
    if (l.norm() > 1e-6) {
      pl.left_world = l.normalized();
      pl.front_world = pl.left_world.cross(Vec3::UnitY()).normalized();
    }
  }
  return pl;
}

}  // namespace

io::CharacterMesh make_mannequin(const Motion& motion, const MannequinSettings& settings) {
  settings.validate();
  if (motion.frame_count < 1 || motion.joint_count() < 1)
    throw Error(ErrorCode::bad_data, "mannequin", "the motion has no frames or no joints");
  const Plan pl = make_plan(motion, settings);
  Builder b;
  b.mesh.parts.resize(3);
  for (int m = 0; m < 3; ++m) b.mesh.parts[static_cast<size_t>(m)].material = m;
  b.mesh.materials = {{"mannequin body", settings.body}, {"mannequin left", settings.left},
                      {"mannequin right", settings.right}};
  const Skeleton& sk = motion.skeleton;
  for (int j = 0; j < sk.joint_count(); ++j) b.mesh.bones.push_back({j, Eigen::Matrix4d::Identity()});
  for (int p = 1; p < sk.point_count(); ++p) {
    const int j = sk.point_parent(p);
    if (j < 0) continue;
    add_bone(b, pl, j, p, kind_of(pl, j, p));
  }
  using body::Role;
  for (Role r : {Role::left_hand, Role::right_hand})
    if (pl.roles.has(r)) add_hand(b, pl, pl.roles[r]);
  if (pl.roles.has(Role::head)) add_head(b, pl, pl.roles[Role::head]);
  add_pelvis(b, pl);
  // Parts without triangles are dropped (a skeleton with no left or right side).
  std::erase_if(b.mesh.parts, [](const io::CharacterPart& p) { return p.indices.empty(); });
  if (b.mesh.parts.empty()) {
    // A skeleton of one point still gets something to see: a ball at the root.
    b.mesh.parts.resize(1);
    b.ellipsoid(0, 0, Vec3::Zero(), Eigen::Matrix3d::Identity() * 0.1 * pl.fig);
  }
  return b.mesh;
}

}  // namespace koma::toon
