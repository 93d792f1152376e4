#include "koma/render/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "canvas.hpp"
#include "koma/core/error.hpp"
#include "koma/core/units.hpp"

namespace koma::render {

using detail::Align;
using detail::set_colour;
using detail::draw_text;

Rgba Image::pixel(int x, int y) const {
  KOMA_ASSERT(x >= 0 && y >= 0 && x < width && y < height);
  const std::uint8_t* p = rgba.data() + (static_cast<size_t>(y) * width + x) * 4;
  return {p[0] / 255.0, p[1] / 255.0, p[2] / 255.0, p[3] / 255.0};
}

// ---------------------------------------------------------------------------------------------
// Sides

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Body words that follow a one-letter side prefix in ASF/Daz/CMU names ("lhumerus", "rThigh").
bool is_body_word(std::string_view rest) {
  static constexpr std::array<std::string_view, 27> kWords = {
      "hand", "humerus", "femur", "tibia", "foot", "toe", "radius", "wrist", "clavicle",
      "finger", "thumb", "shoulder", "shldr", "hip", "collar", "eye", "thigh", "shin", "forearm",
      "arm", "leg", "knee", "elbow", "ankle", "buttock", "upleg", "index"};
  const std::string l = lower(rest);
  return std::any_of(kWords.begin(), kWords.end(), [&](std::string_view w) { return starts_with(l, w); });
}

Side side_of_letter(char c) {
  if (c == 'l' || c == 'L') return Side::left;
  if (c == 'r' || c == 'R') return Side::right;
  return Side::centre;
}

}  // namespace

Side limb_side(std::string_view name) noexcept {
  if (const auto colon = name.rfind(':'); colon != std::string_view::npos) name = name.substr(colon + 1);
  if (name.empty()) return Side::centre;
  const std::string l = lower(name);
  if (starts_with(l, "left")) return Side::left;
  if (starts_with(l, "right")) return Side::right;
  if (ends_with(l, "_left") || ends_with(l, ".left")) return Side::left;
  if (ends_with(l, "_right") || ends_with(l, ".right")) return Side::right;
  if (name.size() >= 2) {
    const Side s = side_of_letter(name[0]);
    if (s != Side::centre) {
      const char next = name[1];
      if (next == '_' || next == '.' || next == ' ') return s;
      if (std::isupper(static_cast<unsigned char>(next))) return s;
      if (is_body_word(name.substr(1))) return s;
    }
    const char last = name.back();
    const char before = name[name.size() - 2];
    if (before == '_' || before == '.' || before == ' ') {
      const Side e = side_of_letter(last);
      if (e != Side::centre) return e;
    }
  }
  return Side::centre;
}

// ---------------------------------------------------------------------------------------------
// Camera

std::string_view to_string(CameraView view) noexcept { return kCameraViewNames.name(view); }


std::optional<CameraView> parse_camera_view(std::string_view text) noexcept { return kCameraViewNames.parse(text); }

CameraSettings parse_camera_spec(std::string_view text, CameraSettings camera) {
  // Words between commas; nothing after a final comma (as std::getline splits).
  for (size_t start = 0; start < text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view w = text.substr(start, comma - start);
    start = comma + 1;
    if (w == "fixed") camera.follow = false;
    else if (w == "follow") camera.follow = true;
    else if (const auto view = parse_camera_view(w)) camera.view = *view;
    else
      throw Error(ErrorCode::invalid_settings, "camera",
                  fmt::format("unknown camera '{}'; expected {} and/or fixed or follow (e.g. side,follow)", w,
                              kCameraViewNames.names()));
  }
  return camera;
}

std::pair<int, int> parse_frame_size(std::string_view text) {
  int w = 0, h = 0;
  char x = 0;
  char rest = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%d%c%d%c", &w, &x, &h, &rest) != 3 || (x != 'x' && x != 'X') || w <= 0 || h <= 0 ||
      w > 8192 || h > 8192) {
    throw Error(ErrorCode::invalid_settings, "size",
                fmt::format("'{}' is not a frame size; expected WIDTHxHEIGHT, e.g. 1280x720 (1 .. 8192 each)", text));
  }
  return {w, h};
}

Rgba parse_colour(std::string_view text, std::string_view field) {
  const std::string hex(text.starts_with("#") ? text.substr(1) : text);
  unsigned r = 0, g = 0, b = 0;
  char rest = 0;
  if (hex.size() != 6 || std::sscanf(hex.c_str(), "%2x%2x%2x%c", &r, &g, &b, &rest) != 3)
    throw Error(ErrorCode::invalid_settings, std::string(field),
                fmt::format("'{}' is not a colour; expected #RRGGBB", text));
  return {r / 255.0, g / 255.0, b / 255.0, 1.0};
}


void CameraSettings::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("camera.") + field, why);
  };
  if (width <= 0 || height <= 0 || width > 8192 || height > 8192) {
    bad("size", fmt::format("{}x{} is not a frame size; expected 1 .. 8192 pixels on each side", width, height));
  }
  if (!(margin >= 0 && margin < 0.45)) bad("margin", fmt::format("{} is outside [0, 0.45)", margin));
  if (!std::isfinite(persp_yaw_deg)) bad("persp_yaw_deg", "must be finite");
  if (!(persp_pitch_deg > -89 && persp_pitch_deg < 89)) bad("persp_pitch_deg", "must be in (-89, 89)");
  if (!(persp_fov_deg > 1 && persp_fov_deg < 120)) bad("persp_fov_deg", "must be in (1, 120)");
}

Vec3 Camera::project(const Vec3& p) const noexcept {
  if (!perspective) {
    return {offset_x + scale * right.dot(p), offset_y - scale * up.dot(p), forward.dot(p)};
  }
  const Vec3 q = p - eye;
  const double z = std::max(forward.dot(q), 1e-6);
  return {offset_x + scale * right.dot(q) / z, offset_y - scale * up.dot(q) / z, z};
}

double Camera::pixels_per_metre(double depth) const noexcept {
  return perspective ? scale / std::max(depth, 1e-6) : scale;
}

namespace {

// The character's facing (horizontal unit vector) from its hips in the first frame.
Vec3 facing_of(const Skeleton& skeleton, std::span<const Vec3> first) {
  if (static_cast<int>(first.size()) != skeleton.point_count()) return Vec3::UnitZ();
  auto is_hip = [](const std::string& n) {
    const std::string l = lower(n);
    for (std::string_view w : {"hip", "upleg", "thigh", "femur", "buttock", "upperleg"}) {
      if (l.find(w) != std::string::npos && l != "hips") return true;
    }
    return false;
  };
  // The first left/right pair of hip joints that are apart: CMU's LHipJoint / RHipJoint sit at the
  // pelvis centre (zero offsets), so the pair is LeftUpLeg / RightUpLeg there.
  const double apart = 1e-3 * std::max(skeleton.rest_extent(), 1e-6);
  std::vector<int> lefts, rights;
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    if (!is_hip(skeleton.names[j])) continue;
    const Side s = limb_side(skeleton.names[j]);
    if (s == Side::left) lefts.push_back(j);
    if (s == Side::right) rights.push_back(j);
  }
  Vec3 lateral = Vec3::Zero();
  for (size_t i = 0; i < std::min(lefts.size(), rights.size()) && lateral.norm() <= apart; ++i) {
    lateral = first[lefts[i]] - first[rights[i]];
    lateral.y() = 0;
  }
  if (lateral.norm() <= apart) {  // no hips apart: the mean of every left point minus every right one
    Vec3 l = Vec3::Zero(), r = Vec3::Zero();
    int nl = 0, nr = 0;
    for (int p = 0; p < skeleton.point_count(); ++p) {
      const int j = p < skeleton.joint_count() ? p : skeleton.point_parent(p);
      const Side s = limb_side(skeleton.names[j]);
      if (s == Side::left) l += first[p], ++nl;
      if (s == Side::right) r += first[p], ++nr;
    }
    if (nl == 0 || nr == 0) return Vec3::UnitZ();
    lateral = l / nl - r / nr;
    lateral.y() = 0;
  }
  if (lateral.norm() <= apart) return Vec3::UnitZ();
  lateral.normalize();
  // left = up x facing  =>  facing = left x up.
  Vec3 f = lateral.cross(Vec3::UnitY());
  f.y() = 0;
  return f.normalized();
}

}  // namespace

Camera fit_camera(std::span<const Vec3> points, const Skeleton& skeleton, std::span<const Vec3> first_frame,
                  const CameraSettings& settings) {
  settings.validate();
  if (points.empty()) throw Error(ErrorCode::bad_data, "camera", "no points to frame");
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
  for (const Vec3& p : points) {
    if (!p.allFinite()) throw Error(ErrorCode::bad_data, "camera", "a point to frame is not finite");
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  Camera cam;
  cam.view = settings.view;
  cam.width = settings.width;
  cam.height = settings.height;
  cam.ground_y = lo.y();
  cam.box_min = lo;
  cam.box_max = hi;
  double fig = skeleton.rest_extent();
  if (!(fig > 1e-6)) fig = std::max((hi - lo).maxCoeff(), 1.0);
  cam.figure_height = fig;

  const Vec3 F = facing_of(skeleton, first_frame);
  const Vec3 Y = Vec3::UnitY();
  const Vec3 L = Y.cross(F);  // the character's left
  switch (settings.view) {
    case CameraView::front: cam.forward = -F; cam.up = Y; cam.right = L; break;
    case CameraView::side: cam.forward = L; cam.up = Y; cam.right = F; break;
    case CameraView::top: cam.forward = -Y; cam.up = F; cam.right = -L; break;
    case CameraView::perspective: {
      const double yaw = settings.persp_yaw_deg * kDegToRad, pitch = settings.persp_pitch_deg * kDegToRad;
      Vec3 d = F * std::cos(yaw) - L * std::sin(yaw);
      d = d * std::cos(pitch) + Y * std::sin(pitch);
      cam.forward = -d.normalized();
      cam.right = cam.forward.cross(Y).normalized();
      cam.up = cam.right.cross(cam.forward).normalized();
      cam.perspective = true;
      break;
    }
  }

  if (cam.perspective) {
    const Vec3 centre = (lo + hi) / 2;
    double radius = 0;
    for (const Vec3& p : points) radius = std::max(radius, (p - centre).norm());
    radius = std::max(radius, 0.5 * fig);
    const double dist = 1.1 * radius / std::sin(settings.persp_fov_deg * kDegToRad / 2);
    cam.eye = centre - cam.forward * dist;
    cam.reference_depth = dist;
  }
  // Fit the projected bounding box into the frame.
  cam.scale = 1.0;
  cam.offset_x = cam.offset_y = 0.0;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Vec3& p : points) {
    const Vec3 s = cam.project(p);
    x0 = std::min(x0, s.x()), x1 = std::max(x1, s.x());
    y0 = std::min(y0, s.y()), y1 = std::max(y1, s.y());
  }
  // A motionless point or a flat pose still gets a figure-sized frame.
  const double min_extent = (cam.perspective ? fig / cam.reference_depth : fig) * 0.5;
  const double w = std::max(x1 - x0, min_extent), h = std::max(y1 - y0, min_extent);
  const double m = settings.margin * std::min(settings.width, settings.height);
  const double avail_w = settings.width - 2 * m, avail_h = settings.height - 2 * m;
  cam.scale = std::min(avail_w / w, avail_h / h);
  cam.offset_x = settings.width / 2.0 - cam.scale * (x0 + x1) / 2;
  // Vertically, a quarter of the slack goes below the figure and the rest above: the floor sits
  // low in the frame, like a stage, instead of floating in the middle.
  const double slack = avail_h - cam.scale * (y1 - y0);
  cam.offset_y = settings.height - m - slack * 0.25 - cam.scale * y1;
  return cam;
}

// ---------------------------------------------------------------------------------------------
// Style

void FigureStyle::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("style.") + field, why);
  };
  for (const auto& [name, c] : {std::pair{"background", background}, {"centre", centre}, {"left", left},
                                {"right", right}, {"joint", joint}, {"outline", outline}, {"grid", grid},
                                {"shadow", shadow}}) {
    for (double v : {c.r, c.g, c.b, c.a}) {
      if (!(v >= 0 && v <= 1)) bad(name, "colour components must be in [0, 1]");
    }
  }
  if (!(bone_width > 0 && bone_width < 1000)) bad("bone_width", "must be in (0, 1000) pixels");
  if (!(taper > 0 && taper <= 1)) bad("taper", "must be in (0, 1]");
  if (!(outline_width >= 0 && outline_width < 100)) bad("outline_width", "must be in [0, 100) pixels");
  if (!(joint_radius >= 0 && joint_radius < 500)) bad("joint_radius", "must be in [0, 500) pixels");
  if (!(head_scale >= 0 && head_scale < 20)) bad("head_scale", "must be in [0, 20)");
  if (!(far_side_dim >= 0 && far_side_dim <= 1)) bad("far_side_dim", "must be in [0, 1]");
  if (!(grid_spacing > 0 && std::isfinite(grid_spacing))) bad("grid_spacing", "must be > 0 metres");
}

// ---------------------------------------------------------------------------------------------
// Drawing

namespace {

// Path of a capsule from circle (a, ra) to circle (b, rb): the two end caps joined by the outer
// tangents. Degenerates to the larger circle when one circle contains the other.
void capsule_path(cairo_t* cr, double ax, double ay, double ra, double bx, double by, double rb) {
  const double dx = bx - ax, dy = by - ay;
  const double d = std::hypot(dx, dy);
  cairo_new_sub_path(cr);
  if (d <= std::abs(ra - rb) + 1e-9) {
    if (ra >= rb) cairo_arc(cr, ax, ay, ra, 0, 2 * kPi);
    else cairo_arc(cr, bx, by, rb, 0, 2 * kPi);
    cairo_close_path(cr);
    return;
  }
  const double a = std::atan2(dy, dx);
  // Tangent points lie at angle a +/- beta from each centre, cos(beta) = (ra - rb) / d.
  const double beta = std::acos(std::clamp((ra - rb) / d, -1.0, 1.0));
  cairo_arc(cr, bx, by, rb, a - beta, a + beta);
  cairo_arc(cr, ax, ay, ra, a + beta, a - beta + 2 * kPi);
  cairo_close_path(cr);
}

struct Bone {
  int child = 0;   // point index
  int parent = 0;  // joint index
  double depth = 0;
  bool head = false;
};

}  // namespace

// A root that is a ground reference rather than the pelvis ("joint_Root", "Root", "reference"):
// its children carry their own position channels, so the "bone" from it to the hips is not a bone
// but a line across the floor. It is not drawn, and it casts no shadow.
bool is_reference_root(const Skeleton& sk) noexcept {
  if (sk.joint_count() < 2) return false;
  const std::string l = lower(sk.names[0]);
  if (l.find("hip") != std::string::npos || l.find("pelvis") != std::string::npos) return false;
  for (int j = 1; j < sk.joint_count(); ++j) {
    if (sk.parents[j] == 0 && sk.has_position_channels(j)) return true;
  }
  return false;
}

std::vector<Vec3> body_points(const Skeleton& sk, const WorldPoses& poses) {
  if (!is_reference_root(sk)) return poses.positions;
  std::vector<Vec3> out;
  out.reserve(poses.positions.size());
  for (int f = 0; f < poses.frame_count; ++f) {
    const auto fp = poses.frame_positions(f);
    out.insert(out.end(), fp.begin() + 1, fp.end());
  }
  return out;
}

namespace {

bool is_head_name(const std::string& name) {
  const std::string l = lower(name);
  return l == "head" || ends_with(l, ":head") || l == "head_end" || l == "headtop_end";
}

// Face joints (CMU-Daz leftEye / rightEye, jaws, tongues, noses, brows) are inside the head ball:
// drawn as bones they stick out of the face like a beak.
bool is_face_name(const std::string& name) {
  const std::string l = lower(name);
  for (const char* w : {"eye", "jaw", "tongue", "nose", "brow", "teeth"}) {
    if (l.find(w) != std::string::npos) return true;
  }
  return false;
}

void draw_ground(cairo_t* cr, const Camera& cam, const FigureStyle& st, double k) {
  if (!st.show_grid) return;
  if (cam.view == CameraView::front || cam.view == CameraView::side) {
    // The floor seen edge-on: a line, a faint floor tone below it and ticks at grid spacing.
    const double gy = cam.offset_y - cam.scale * cam.ground_y;
    set_colour(cr, detail::mix(st.background, st.grid, 0.25), 1.0);
    cairo_rectangle(cr, 0, gy, cam.width, cam.height - gy);
    cairo_fill(cr);
    set_colour(cr, st.grid, 1.6);
    cairo_set_line_width(cr, 1.5 * k);
    cairo_move_to(cr, 0, gy);
    cairo_line_to(cr, cam.width, gy);
    cairo_stroke(cr);
    // Ticks where grid lines cross the view plane: world coordinate along `right`.
    const double step = st.grid_spacing;
    const double u0 = (0 - cam.offset_x) / cam.scale, u1 = (cam.width - cam.offset_x) / cam.scale;
    if ((u1 - u0) / step > 400) return;
    cairo_set_line_width(cr, 1.0 * k);
    for (double u = std::floor(u0 / step) * step; u <= u1; u += step) {
      const double x = cam.offset_x + cam.scale * u;
      cairo_move_to(cr, x, gy);
      cairo_line_to(cr, x, gy + 7 * k);
    }
    cairo_stroke(cr);
    return;
  }
  // Top and perspective: grid lines on the ground plane around the motion's extent.
  const double step = st.grid_spacing;
  const double reach = 0.8 * cam.figure_height;
  // Range on the ground: project the frame corners for top; use a square around the eye target
  // for perspective.
  double x0, x1, z0, z1;
  if (!cam.perspective) {
    // Invert the top-view mapping at the four corners.
    x0 = z0 = INFINITY;
    x1 = z1 = -INFINITY;
    for (double px : {0.0, double(cam.width)}) {
      for (double py : {0.0, double(cam.height)}) {
        const double ur = (px - cam.offset_x) / cam.scale, uu = (cam.offset_y - py) / cam.scale;
        const Vec3 w = cam.right * ur + cam.up * uu;
        x0 = std::min(x0, w.x()), x1 = std::max(x1, w.x());
        z0 = std::min(z0, w.z()), z1 = std::max(z1, w.z());
      }
    }
  } else {
    x0 = cam.box_min.x() - reach, x1 = cam.box_max.x() + reach;
    z0 = cam.box_min.z() - reach, z1 = cam.box_max.z() + reach;
  }
  if ((x1 - x0) / step > 400 || (z1 - z0) / step > 400) return;
  const double near = cam.perspective ? 0.05 * cam.reference_depth : -INFINITY;
  auto line = [&](const Vec3& a, const Vec3& b) {
    // Clip to the near plane so lines behind the eye are never drawn.
    const double da = cam.forward.dot(a - cam.eye), db = cam.forward.dot(b - cam.eye);
    Vec3 p = a, q = b;
    if (cam.perspective) {
      if (da < near && db < near) return;
      if (da < near) p = a + (b - a) * ((near - da) / (db - da));
      if (db < near) q = b + (a - b) * ((near - db) / (da - db));
    }
    const Vec3 sp = cam.project(p), sq = cam.project(q);
    cairo_move_to(cr, sp.x(), sp.y());
    cairo_line_to(cr, sq.x(), sq.y());
  };
  const double gy = cam.ground_y;
  set_colour(cr, st.grid);
  cairo_set_line_width(cr, 1.0 * k);
  for (double x = std::floor(x0 / step) * step; x <= x1; x += step) line({x, gy, z0}, {x, gy, z1});
  for (double z = std::floor(z0 / step) * step; z <= z1; z += step) line({x0, gy, z}, {x1, gy, z});
  cairo_stroke(cr);
}

// A soft elliptical blob on the ground centred at `c` with world radius r (metres).
void ground_blob(cairo_t* cr, const Camera& cam, const Vec3& c, double r, const Rgba& colour, double strength) {
  const Vec3 sc = cam.project(c);
  Vec3 ax_r = cam.right, ax_d = cam.forward;
  ax_r.y() = 0;
  ax_d.y() = 0;
  if (ax_r.norm() < 1e-9) ax_r = Vec3::UnitX();
  ax_r.normalize();
  Vec3 e1 = cam.project(c + ax_r * r) - sc;
  Vec3 e2;
  if (cam.view == CameraView::front || cam.view == CameraView::side) {
    e2 = Vec3(0, 0.18 * e1.norm(), 0);  // edge-on floor: a flattened ellipse reads as a shadow
  } else {
    if (ax_d.norm() < 1e-9) ax_d = cam.up;  // top view: the other ground axis
    ax_d.y() = 0;
    ax_d = ax_d.normalized();
    e2 = cam.project(c + ax_d * r) - sc;
  }
  if (std::abs(e1.x() * e2.y() - e1.y() * e2.x()) < 1e-6) return;
  cairo_save(cr);
  cairo_matrix_t m;
  cairo_matrix_init(&m, e1.x(), e1.y(), e2.x(), e2.y(), sc.x(), sc.y());
  cairo_transform(cr, &m);
  cairo_pattern_t* g = cairo_pattern_create_radial(0, 0, 0, 0, 0, 1);
  cairo_pattern_add_color_stop_rgba(g, 0, colour.r, colour.g, colour.b, colour.a * strength);
  cairo_pattern_add_color_stop_rgba(g, 0.55, colour.r, colour.g, colour.b, colour.a * strength * 0.7);
  cairo_pattern_add_color_stop_rgba(g, 1, colour.r, colour.g, colour.b, 0);
  cairo_set_source(cr, g);
  cairo_arc(cr, 0, 0, 1, 0, 2 * kPi);
  cairo_fill(cr);
  cairo_pattern_destroy(g);
  cairo_restore(cr);
}

void draw_shadow(cairo_t* cr, const Skeleton& sk, std::span<const Vec3> pts, const Camera& cam,
                 const FigureStyle& st) {
  if (!st.show_shadow || pts.empty()) return;
  const double fh = cam.figure_height;
  Vec3 mean = Vec3::Zero();
  double lowest = INFINITY;
  const size_t first = is_reference_root(sk) ? 1 : 0;
  for (size_t i = first; i < pts.size(); ++i) mean += pts[i], lowest = std::min(lowest, pts[i].y());
  mean /= static_cast<double>(pts.size() - first);
  const double air = std::max(0.0, lowest - cam.ground_y);
  // The body's shadow: shrinks and fades as the figure leaves the ground.
  const double lift = std::clamp(air / (0.4 * fh), 0.0, 1.0);
  ground_blob(cr, cam, {mean.x(), cam.ground_y, mean.z()}, 0.24 * fh * (1 - 0.3 * lift), st.shadow, 1 - 0.6 * lift);
  // Contact shadows: a small dark spot under every point close to the ground.
  for (int p = static_cast<int>(first); p < sk.point_count(); ++p) {
    const double h = pts[p].y() - cam.ground_y;
    const double near = 0.08 * fh;
    if (h > near) continue;
    const double s = 1 - h / near;
    ground_blob(cr, cam, {pts[p].x(), cam.ground_y, pts[p].z()}, 0.05 * fh, st.shadow, 0.9 * s);
  }
}

void draw_layer(cairo_t* cr, const Skeleton& sk, const FigureLayer& layer, const Camera& cam, const FigureStyle& st,
                double k) {
  const int n = sk.point_count();
  std::vector<Vec3> scr(n);
  for (int p = 0; p < n; ++p) scr[p] = cam.project(layer.points[p]);
  std::vector<Side> side(n);
  for (int p = 0; p < n; ++p) {
    const int j = p < sk.joint_count() ? p : sk.point_parent(p);
    side[p] = limb_side(sk.names[j]);
  }
  // Leaf joints (no child joint, no end site): "HeadTop_End"-style joints end the head bone.
  std::vector<bool> leaf(n, true);
  for (int p = 1; p < n; ++p) {
    const int parent = sk.point_parent(p);
    if (parent >= 0) leaf[parent] = false;
  }
  std::vector<Bone> bones;
  bones.reserve(n);
  int head_joint = -1;
  for (int j = 0; j < sk.joint_count(); ++j) {
    if (is_head_name(sk.names[j])) head_joint = j;
  }
  const bool skip_root = is_reference_root(sk);
  bool head_drawn = false;
  for (int p = 1; p < n; ++p) {
    const int parent = sk.point_parent(p);
    if (parent < 0 || (skip_root && parent == 0)) continue;
    if (is_face_name(sk.names[p < sk.joint_count() ? p : parent])) continue;
    Bone b{p, parent, (scr[p].z() + scr[parent].z()) / 2, false};
    b.head = parent == head_joint && (p >= sk.joint_count() || leaf[p]);
    head_drawn |= b.head;
    bones.push_back(b);
  }
  // A head whose only children are face joints still gets its ball (zero-length head bone: the
  // ball continues the neck's direction, as for a zero-length end site).
  if (head_joint > 0 && !head_drawn) bones.push_back(Bone{head_joint, head_joint, scr[head_joint].z(), true});
  std::stable_sort(bones.begin(), bones.end(), [](const Bone& a, const Bone& b) { return a.depth > b.depth; });
  int body = 0;  // the pelvis: the root, or the first child of a reference root
  if (skip_root) {
    for (int j = 1; j < sk.joint_count(); ++j) {
      if (sk.parents[j] == 0) {
        body = j;
        break;
      }
    }
  }
  const double root_depth = scr[body].z();

  const bool group = layer.opacity < 1.0;
  if (group) cairo_push_group(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  auto colour_of = [&](int p, double depth) {
    Rgba c = layer.tinted ? layer.tint
             : side[p] == Side::left ? st.left
             : side[p] == Side::right ? st.right
                                      : st.centre;
    const double t = std::clamp((depth - root_depth) / (0.25 * cam.figure_height), 0.0, 1.0) * st.far_side_dim;
    return detail::mix(c, st.background, t);
  };
  auto dot = [&](int p) {
    if (st.joint_radius <= 0 || p >= sk.joint_count()) return;
    const double r = st.joint_radius * k * cam.pixels_per_metre(scr[p].z()) / cam.pixels_per_metre(cam.reference_depth);
    cairo_arc(cr, scr[p].x(), scr[p].y(), r, 0, 2 * kPi);
    set_colour(cr, layer.tinted ? detail::mix(layer.tint, st.background, 0.5) : st.joint);
    cairo_fill_preserve(cr);
    set_colour(cr, st.outline);
    cairo_set_line_width(cr, st.outline_width * k * 0.8);
    cairo_stroke(cr);
  };
  const double ref_ppm = cam.pixels_per_metre(cam.reference_depth);
  if (!skip_root) dot(0);
  for (const Bone& b : bones) {
    const Vec3& a = scr[b.parent];
    const Vec3& c = scr[b.child];
    double len3 = (layer.points[b.child] - layer.points[b.parent]).norm();
    Vec3 a_head = a, c_head = c;
    if (b.head && len3 < 1e-6 && sk.parents[b.parent] >= 0) {
      // A zero-length head end site: continue the neck's direction by the neck's length.
      const Vec3& neck = layer.points[sk.parents[b.parent]];
      const Vec3& head = layer.points[b.parent];
      len3 = (head - neck).norm();
      if (len3 < 1e-6) continue;
      c_head = cam.project(head + (head - neck) * 1.0);
      a_head = a;
    } else if (len3 < 1e-6) {
      continue;
    }
    const double depth_scale = cam.pixels_per_metre(b.depth) / ref_ppm;
    // Short bones (fingers, toes) get thinner so they stay bones, not blobs.
    const double w = std::min(st.bone_width * k * depth_scale, 0.45 * len3 * cam.pixels_per_metre(b.depth));
    const Rgba col = colour_of(b.child, b.depth);
    if (b.head) {
      // At least head_scale bone widths across, whatever the length of the head bone.
      const double r = std::max(0.5 * len3 * cam.pixels_per_metre(b.depth) * 1.05,
                                0.5 * st.head_scale * st.bone_width * k * depth_scale);
      cairo_new_path(cr);
      cairo_arc(cr, (a_head.x() + c_head.x()) / 2, (a_head.y() + c_head.y()) / 2, r, 0, 2 * kPi);
    } else {
      cairo_new_path(cr);
      capsule_path(cr, a.x(), a.y(), w / 2, c.x(), c.y(), w / 2 * st.taper);
    }
    set_colour(cr, col);
    cairo_fill_preserve(cr);
    if (st.outline_width > 0) {
      set_colour(cr, layer.tinted ? detail::mix(layer.tint, st.outline, 0.3) : st.outline);
      cairo_set_line_width(cr, st.outline_width * k);
      cairo_stroke(cr);
    }
    cairo_new_path(cr);
    dot(b.child);
  }
  if (group) {
    cairo_pop_group_to_source(cr);
    cairo_paint_with_alpha(cr, std::clamp(layer.opacity, 0.0, 1.0));
  }
}

}  // namespace

namespace detail {
// Draws background, ground, shadow and layers on an existing context (used by the comparison and
// contact sheet renderers, which compose several panels on one canvas).
void draw_figure(cairo_t* cr, const Skeleton& skeleton, std::span<const FigureLayer> layers, const Camera& camera,
                 const FigureStyle& style, bool background) {
  const double k = camera.height / 720.0;
  if (background) {
    set_colour(cr, style.background);
    cairo_rectangle(cr, 0, 0, camera.width, camera.height);
    cairo_fill(cr);
  }
  draw_ground(cr, camera, style, k);
  if (!layers.empty()) draw_shadow(cr, skeleton, layers.back().points, camera, style);
  for (const FigureLayer& l : layers) draw_layer(cr, skeleton, l, camera, style, k);
}
}  // namespace detail

Image render_figure(const Skeleton& skeleton, std::span<const FigureLayer> layers, const Camera& camera,
                    const FigureStyle& style) {
  style.validate();
  for (size_t i = 0; i < layers.size(); ++i) {
    if (static_cast<int>(layers[i].points.size()) != skeleton.point_count()) {
      throw Error(ErrorCode::mismatch, fmt::format("figure layer {}", i),
                  fmt::format("{} points for a skeleton of {} points", layers[i].points.size(),
                              skeleton.point_count()));
    }
  }
  detail::Canvas canvas = detail::make_canvas(camera.width, camera.height);
  detail::draw_figure(canvas.cr.get(), skeleton, layers, camera, style, true);
  detail::check(canvas.cr.get(), "figure");
  return detail::to_image(canvas);
}

Image render_pose(const Skeleton& skeleton, std::span<const Vec3> points, const Camera& camera,
                  const FigureStyle& style) {
  const FigureLayer layer{points};
  return render_figure(skeleton, std::span<const FigureLayer>(&layer, 1), camera, style);
}

}  // namespace koma::render
