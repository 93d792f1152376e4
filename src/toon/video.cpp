// Toon pictures: the clip painter with its hold cache, comparison videos, cels, contact sheets.
#include "koma/toon/video.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "koma/core/error.hpp"
#include "koma/render/encode.hpp"

namespace koma::toon {

namespace {

// The parts of a camera that decide its pixels.
std::vector<double> camera_key(const render::Camera& c, const Vec3& shift) {
  std::vector<double> k{static_cast<double>(c.width), static_cast<double>(c.height), c.scale, c.offset_x, c.offset_y,
                        c.perspective ? 1.0 : 0.0, c.ground_y, c.figure_height};
  for (const Vec3* v : {&c.right, &c.up, &c.forward, &c.eye, &c.box_min, &c.box_max, &shift})
    k.insert(k.end(), {v->x(), v->y(), v->z()});
  return k;
}

struct Cached {
  std::vector<float> bones, previous;
  std::vector<double> camera;
  render::Image image;
};

// The first frame of the hold `frame` is in: going back while the pose (every local rotation,
// translation and scale) equals the frame before's, exactly as held_motion copies it.
int hold_start(const Motion& m, int frame) {
  const size_t nj = static_cast<size_t>(m.joint_count());
  auto same = [&](int a, int b) {
    const size_t ia = static_cast<size_t>(a) * nj, ib = static_cast<size_t>(b) * nj;
    for (size_t j = 0; j < nj; ++j) {
      if (m.rotations[ia + j].coeffs() != m.rotations[ib + j].coeffs() ||
          m.translations[ia + j] != m.translations[ib + j] || (!m.scales.empty() && m.scales[ia + j] != m.scales[ib + j]))
        return false;
    }
    return true;
  };
  while (frame > 0 && same(frame, frame - 1)) --frame;
  return frame;
}

}  // namespace

std::vector<Vec3> mesh_reach(const ToonClip& clip) {
  const Motion& m = clip.motion;
  const io::CharacterMesh& mesh = clip.character.mesh;
  std::vector<Eigen::Matrix4d> joints(static_cast<size_t>(m.joint_count()));
  std::vector<Eigen::Matrix4d> bones(mesh.bones.size());
  std::vector<Vec3> out;
  out.reserve(static_cast<size_t>(m.frame_count) * 8);
  // Every vertex on a coarse stride: the box is what matters, not each vertex.
  size_t total = 0;
  for (const auto& p : mesh.parts) total += static_cast<size_t>(p.vertex_count());
  const size_t stride = std::max<size_t>(1, total / 2000);
  for (int f = 0; f < m.frame_count; ++f) {
    joint_transforms(m, f, joints);
    for (size_t b = 0; b < bones.size(); ++b)
      bones[b] = joints[static_cast<size_t>(mesh.bones[b].joint)] * mesh.bones[b].inverse_bind;
    Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY);
    for (const auto& p : mesh.parts) {
      for (size_t v = 0; v < static_cast<size_t>(p.vertex_count()); v += stride) {
        const Eigen::Vector4d x(p.positions[v * 3], p.positions[v * 3 + 1], p.positions[v * 3 + 2], 1.0);
        Eigen::Vector4d y = Eigen::Vector4d::Zero();
        for (size_t k = 0; k < 4; ++k) {
          const float w = p.weights[v * 4 + k];
          if (w > 0) y += w * (bones[p.bones[v * 4 + k]] * x);
        }
        lo = lo.cwiseMin(y.head<3>());
        hi = hi.cwiseMax(y.head<3>());
      }
    }
    if (!lo.allFinite() || !hi.allFinite()) lo = hi = joints[0].topRightCorner<3, 1>();
    for (int i = 0; i < 8; ++i)
      out.emplace_back((i & 1) ? hi.x() : lo.x(), (i & 2) ? hi.y() : lo.y(), (i & 4) ? hi.z() : lo.z());
  }
  return out;
}

struct ClipPainter::Impl {
  ToonStyle style;
  std::vector<const ToonClip*> clips;
  std::vector<bool> smears;  // per clip
  struct Sized {
    std::unique_ptr<Renderer> renderer;
    std::vector<int> handles;  // per clip
  };
  std::map<std::pair<int, int>, Sized> by_size;
  std::vector<std::vector<Cached>> cache;  // per clip, the most recent pictures (a few)
  std::vector<Eigen::Matrix4d> joints;
  std::vector<float> bones, previous;
  std::vector<Vec3> joint_positions;

  // The skinning matrices of `clip`'s pose at `frame`, the figure moved by `shift`, into `out`.
  void pose(const ToonClip& clip, int frame, const Vec3& shift, std::vector<float>& out) {
    joints.resize(static_cast<size_t>(clip.motion.joint_count()));
    joint_transforms(clip.motion, frame, joints);
    if (!shift.isZero()) {
      for (auto& w : joints) w.topRightCorner<3, 1>() += shift;
    }
    out.resize(clip.character.mesh.bones.size() * 16);
    bone_matrices(clip.character.mesh, joints, out);
  }

  Sized& sized(int w, int h) {
    Sized& s = by_size[{w, h}];
    if (!s.renderer) s.renderer = std::make_unique<Renderer>(w, h, style);
    while (s.handles.size() < clips.size()) s.handles.push_back(s.renderer->add_character(clips[s.handles.size()]->character.mesh));
    return s;
  }
};

ClipPainter::ClipPainter(const ToonStyle& style) : impl_(std::make_unique<Impl>()) {
  style.validate();
  impl_->style = style;
}

ClipPainter::~ClipPainter() = default;

int ClipPainter::add(const ToonClip& clip, bool smears) {
  clip.character.mesh.validate(clip.motion.joint_count());
  impl_->clips.push_back(&clip);
  impl_->smears.push_back(smears && impl_->style.smear != Smear::off);
  impl_->cache.emplace_back();
  return static_cast<int>(impl_->clips.size()) - 1;
}

std::string ClipPainter::gl_renderer() { return impl_->sized(16, 16).renderer->gl_renderer(); }

void ClipPainter::paint(int clip, int frame, const render::Camera& camera, render::Image& out, const Vec3& shift) {
  Impl& m = *impl_;
  KOMA_ASSERT(clip >= 0 && clip < static_cast<int>(m.clips.size()));
  const ToonClip& c = *m.clips[static_cast<size_t>(clip)];
  if (frame < 0 || frame >= c.motion.frame_count)
    throw Error(ErrorCode::invalid_settings, "frame",
                fmt::format("frame {} is outside 0 .. {}", frame, c.motion.frame_count - 1));
  // Smears: the previous drawing is the pose before the first frame of this frame's hold.
  m.previous.clear();
  if (m.smears[static_cast<size_t>(clip)]) {
    const int start = hold_start(c.motion, frame);
    if (start > 0) m.pose(c, start - 1, shift, m.previous);
  }
  m.pose(c, frame, shift, m.bones);  // last: m.joints stay this frame's, for the shadow
  const std::vector<double> key = camera_key(camera, shift);
  auto& cache = m.cache[static_cast<size_t>(clip)];
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (it->camera == key && it->bones == m.bones && it->previous == m.previous) {
      out = it->image;
      std::rotate(cache.begin(), it, it + 1);  // most recent first
      return;
    }
  }
  Impl::Sized& s = m.sized(camera.width, camera.height);
  // The shadow falls under the body: a ground reference root (Bandai-Namco's) stays out.
  const int first = render::is_reference_root(c.motion.skeleton) ? 1 : 0;
  const int nj = c.motion.joint_count();
  m.joint_positions.clear();
  for (int j = first; j < nj; ++j) m.joint_positions.push_back(m.joints[static_cast<size_t>(j)].topRightCorner<3, 1>());
  const ContactShadow shadow = contact_shadow(m.joint_positions, camera, m.style.shadow_opacity);
  const Draw draw{s.handles[static_cast<size_t>(clip)], m.bones, m.previous};
  s.renderer->render(std::span<const Draw>(&draw, 1), camera, shadow, camera.figure_height, out);
  constexpr size_t kKeep = 6;
  if (cache.size() >= kKeep) cache.pop_back();
  cache.insert(cache.begin(), Cached{m.bones, m.previous, key, out});
}

namespace {

// `over` (straight alpha) composited onto the opaque `base` at `opacity`, its colour pulled toward
// `tint` by `tint_amount`.
void composite(render::Image& base, const render::Image& over, double opacity, const render::Rgba& tint,
               double tint_amount) {
  KOMA_ASSERT(base.rgba.size() == over.rgba.size());
  const double t[3] = {tint.r * 255, tint.g * 255, tint.b * 255};
  for (size_t i = 0; i < base.rgba.size(); i += 4) {
    const double a = over.rgba[i + 3] / 255.0 * opacity;
    if (a <= 0) continue;
    for (size_t c = 0; c < 3; ++c) {
      const double src = over.rgba[i + c] * (1 - tint_amount) + t[c] * tint_amount;
      base.rgba[i + c] = static_cast<std::uint8_t>(std::lround(base.rgba[i + c] * (1 - a) + src * a));
    }
  }
}

}  // namespace

render::FigurePainter figure_painter(ClipPainter& painter, const render::Comparison& cmp, const ToonClip& result,
                                     const ToonClip* original, const render::CompareSettings& settings,
                                     const ToonStyle& style) {
  const int r = painter.add(result);
  const int o = original ? painter.add(*original, false) : -1;  // the reference is never smeared
  // Ghosts (onion skins, the overlay's original) are transparent cels composited over the paper,
  // under the result's own cel.
  ToonStyle cel_style = style;
  cel_style.transparent = true;
  auto cels = std::make_shared<ClipPainter>(cel_style);
  const int rc = cels->add(result);
  const int oc = original ? cels->add(*original, false) : -1;
  const std::vector<int> kept = cmp.kept_frames;
  const std::vector<int> drawing = kept.empty() ? std::vector<int>{} : drawing_numbers(kept, cmp.frame_count());
  return [&painter, cels, settings, kept, drawing, r, o, rc, oc](render::Panel panel, int frame,
                                                                 const render::Camera& camera, render::Image& out) {
    if (panel == render::Panel::original) return painter.paint(o, frame, camera, out);
    painter.paint(r, frame, camera, out);
    const int d = drawing.empty() ? 0 : drawing[static_cast<size_t>(frame)];
    const int onions = std::min(settings.onion_skin, std::max(d - 1, 0));
    if (onions == 0 && (panel != render::Panel::overlay || oc < 0)) return;
    render::Image ghost, cel;
    if (panel == render::Panel::overlay && oc >= 0) {
      cels->paint(oc, frame, camera, ghost);
      composite(out, ghost, 0.45, settings.ghost, 0.55);
    }
    for (int back = onions; back >= 1; --back) {
      cels->paint(rc, kept[static_cast<size_t>(d - 1 - back)], camera, ghost);
      composite(out, ghost, 0.45 * (1.0 - (back - 1.0) / (settings.onion_skin + 1.0)), settings.onion, 0.6);
    }
    cels->paint(rc, frame, camera, cel);
    composite(out, cel, 1.0, settings.onion, 0.0);
  };
}

void write_comparison_video(const std::filesystem::path& path, const render::Comparison& comparison,
                            const ToonClip& result, const ToonClip* original, const render::CameraSettings& camera,
                            const ToonStyle& style, const render::CompareSettings& settings,
                            const render::EncodeSettings& encode, const render::ProgressFn& progress) {
  comparison.validate();
  if (result.motion.frame_count != comparison.frame_count() ||
      (original && original->motion.frame_count != comparison.frame_count()) ||
      (comparison.original.has_value() != (original != nullptr)))
    throw Error(ErrorCode::mismatch, "toon comparison", "the clips and the comparison differ in frames or clips");
  render::Comparison framed = comparison;
  framed.reach = mesh_reach(result);
  framed.reach_per_frame = 8;
  if (original) {
    const std::vector<Vec3> o = mesh_reach(*original);
    std::vector<Vec3> both;
    for (int f = 0; f < framed.frame_count(); ++f) {
      both.insert(both.end(), framed.reach.begin() + f * 8, framed.reach.begin() + f * 8 + 8);
      both.insert(both.end(), o.begin() + f * 8, o.begin() + f * 8 + 8);
    }
    framed.reach = std::move(both);
    framed.reach_per_frame = 16;
  }
  ClipPainter painter(style);
  render::FigureStyle fs;
  fs.background = style.paper;
  render::write_comparison_video(path, framed, camera, fs, settings, encode, progress,
                                 figure_painter(painter, framed, result, original, settings, style));
}

void write_cels(const std::filesystem::path& path, const render::Comparison& comparison, const ToonClip& clip,
                const render::CameraSettings& camera, const ToonStyle& style, const render::ProgressFn& progress) {
  comparison.validate();
  if (clip.motion.frame_count != comparison.frame_count())
    throw Error(ErrorCode::mismatch, "toon cels", "the clip and the comparison differ in frames");
  if (render::video_format_for(path) != render::VideoFormat::png_sequence)
    throw Error(ErrorCode::invalid_settings, path.string(),
                "transparent cels are PNG frames: give a folder (ending in '/'), not a video file");
  render::CompareSettings cs;
  cs.timeline = false;
  render::Comparison alone = comparison;
  alone.original.reset();
  alone.reach = mesh_reach(clip);
  alone.reach_per_frame = 8;
  const render::ComparisonFraming framing = render::frame_comparison(alone, camera, cs);
  ToonStyle cel = style;
  cel.transparent = true;
  ClipPainter painter(cel);
  const int c = painter.add(clip);
  render::VideoWriter writer(path, framing.result.width, framing.result.height);
  const int n = comparison.frame_count();
  const bool follow = static_cast<int>(framing.per_frame.size()) == n;
  render::Image frame;
  for (int f = 0; f < n; ++f) {
    painter.paint(c, f, follow ? framing.per_frame[static_cast<size_t>(f)] : framing.result, frame);
    writer.add_frame(frame);
    if (progress) progress((f + 1.0) / n);
  }
  writer.finish();
}

render::Image render_contact_sheet(const ToonClip& clip, const WorldPoses& poses, std::span<const int> kept,
                                   const render::ContactSheetSettings& settings, const ToonStyle& style) {
  ClipPainter painter(style);
  const int c = painter.add(clip);
  std::vector<int> frames(kept.begin(), kept.end());
  render::ContactSheetSettings s = settings;
  s.style.background = style.paper;
  // The cells frame the mesh as well as the joints (a head reaches above its head joint).
  const std::vector<Vec3> all = mesh_reach(clip);
  std::vector<Vec3> reach;
  for (int f : frames)
    if (f >= 0 && static_cast<size_t>(f + 1) * 8 <= all.size())
      reach.insert(reach.end(), all.begin() + f * 8, all.begin() + f * 8 + 8);
  if (reach.size() != frames.size() * 8) reach.clear();  // bad kept frames: render's check says why
  return render::render_contact_sheet(
      clip.motion.skeleton, poses, kept, s,
      [&](int key, const Vec3& shift, const render::Camera& cam, render::Image& out) {
        painter.paint(c, frames[static_cast<size_t>(key)], cam, out, shift);
      },
      reach);
}

}  // namespace koma::toon
