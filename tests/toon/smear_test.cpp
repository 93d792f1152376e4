// Smears and multiples in the toon renderer (issue 42), measured on transparent cels of shared
// takes held on 2s: the silhouette (opaque pixels) of every drawing with and without smears. Which
// drawings are fast is decided here independently of the shader: every vertex skinned on the CPU
// in the drawing's pose and in the previous drawing's, both projected through the camera.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/render/figure.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/character.hpp"
#include "koma/toon/renderer.hpp"
#include "koma/toon/video.hpp"
#include "test_support.hpp"

namespace koma::toon {
namespace {

#define KOMA_REQUIRE_GL()                                                                  \
  do {                                                                                     \
    if (const auto why = unavailable_reason()) GTEST_SKIP() << "no OpenGL here: " << *why; \
  } while (0)

using render::Image;

constexpr int kWidth = 640, kHeight = 360;

// A take at 24 fps held on 2s, with its character and one fixed side camera on the whole take.
struct Take {
  ToonClip clip;
  std::vector<int> drawings;  // first frame of each drawing
  render::Camera camera;
};

Take held_on_twos(const std::filesystem::path& path, const std::string& animation = "") {
  io::ReadOptions options;
  options.animation = animation;
  io::ReadResult r = io::read_motion(path, options);
  Take t;
  const Motion smooth = resample(r.motion, 24.0);
  for (int f = 0; f < smooth.frame_count; f += 2) t.drawings.push_back(f);
  t.clip.motion = held_motion(smooth, std::vector<int>(static_cast<size_t>(smooth.joint_count()), 0), {t.drawings});
  t.clip.character = make_character(t.clip.motion, r.gltf_scene, path.filename().string());
  const WorldPoses poses = forward_kinematics(t.clip.motion);
  std::vector<Vec3> pts = render::body_points(t.clip.motion.skeleton, poses);
  const std::vector<Vec3> reach = mesh_reach(t.clip);
  pts.insert(pts.end(), reach.begin(), reach.end());
  render::CameraSettings cs;
  cs.view = render::CameraView::side;
  cs.width = kWidth;
  cs.height = kHeight;
  t.camera = render::fit_camera(pts, t.clip.motion.skeleton, poses.frame_positions(0), cs);
  return t;
}

// Per vertex, its world position in the pose of `frame` (CPU skinning, as the vertex shader).
std::vector<Vec3> skinned(const ToonClip& clip, int frame) {
  const io::CharacterMesh& mesh = clip.character.mesh;
  std::vector<Eigen::Matrix4d> joints(static_cast<size_t>(clip.motion.joint_count()));
  joint_transforms(clip.motion, frame, joints);
  std::vector<float> bones(mesh.bones.size() * 16);
  bone_matrices(mesh, joints, bones);
  std::vector<Vec3> out;
  for (const auto& p : mesh.parts)
    for (size_t v = 0; v < static_cast<size_t>(p.vertex_count()); ++v) {
      const Eigen::Vector4f x(p.positions[v * 3], p.positions[v * 3 + 1], p.positions[v * 3 + 2], 1.0f);
      Eigen::Vector4f y = Eigen::Vector4f::Zero();
      for (size_t k = 0; k < 4; ++k)
        if (p.weights[v * 4 + k] > 0)
          y += p.weights[v * 4 + k] * (Eigen::Map<const Eigen::Matrix4f>(&bones[p.bones[v * 4 + k] * 16u]) * x);
      out.push_back(y.head<3>().cast<double>());
    }
  return out;
}

// The largest on-screen motion of any vertex (pixels) from the previous drawing to drawing `d`,
// and the mean screen motion of the vertices that moved more than `threshold` pixels.
struct Motion2d {
  double max_px = 0;
  Eigen::Vector2d fast_direction = Eigen::Vector2d::Zero();
};

Motion2d screen_motion(const Take& t, size_t d, double threshold) {
  const std::vector<Vec3> now = skinned(t.clip, t.drawings[d]), before = skinned(t.clip, t.drawings[d] - 1);
  Motion2d m;
  for (size_t v = 0; v < now.size(); ++v) {
    const Eigen::Vector2d a = t.camera.project(now[v]).head<2>(), b = t.camera.project(before[v]).head<2>();
    m.max_px = std::max(m.max_px, (a - b).norm());
    if ((a - b).norm() > threshold) m.fast_direction += a - b;
  }
  if (m.fast_direction.norm() > 0) m.fast_direction.normalize();
  return m;
}

// Every drawing's first frame as a transparent cel.
std::vector<Image> cels(const Take& t, Smear smear) {
  ToonStyle style;
  style.transparent = true;
  style.smear = smear;
  ClipPainter painter(style);
  const int c = painter.add(t.clip);
  std::vector<Image> out(t.drawings.size());
  for (size_t d = 0; d < t.drawings.size(); ++d) painter.paint(c, t.drawings[d], t.camera, out[d]);
  return out;
}

size_t silhouette(const Image& img, int min_alpha = 128) {
  size_t n = 0;
  for (size_t i = 3; i < img.rgba.size(); i += 4) n += img.rgba[i] >= min_alpha;
  return n;
}

double growth(const Image& with, const Image& without, int min_alpha = 128) {
  return static_cast<double>(silhouette(with, min_alpha)) / static_cast<double>(silhouette(without, min_alpha)) - 1.0;
}

// The threshold of the cels (12 px at 720 p) in their pixels.
constexpr double kThresholdPx = 12.0 * kHeight / 720.0;

}  // namespace

// The Bandai-Namco kick on 2s: some drawing's silhouette grows by 15 % or more with --smear, the
// growth lies behind the motion (toward where the part was), and every drawing where no vertex
// moved more than the threshold is pixel-identical with and without smears.
TEST(Smear, FastKickSmearsAndSlowDrawingsStay) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Take t = held_on_twos(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh");
  const std::vector<Image> plain = cels(t, Smear::off), smeared = cels(t, Smear::smear);
  double best = -1;
  size_t best_d = 0;
  int slow = 0, fast = 0, changed = 0;
  for (size_t d = 1; d < t.drawings.size(); ++d) {
    const Motion2d m = screen_motion(t, d, kThresholdPx);
    const bool differs = plain[d].rgba != smeared[d].rgba;
    changed += differs;
    // A margin for float rounding between this and the shader: clearly slow drawings only.
    if (m.max_px < 0.98 * kThresholdPx) {
      ++slow;
      EXPECT_FALSE(differs) << "drawing " << d << " (frame " << t.drawings[d] << ") moved at most " << m.max_px
                            << " px, under the threshold, yet changed";
    } else if (m.max_px > 1.02 * kThresholdPx) {
      ++fast;
    }
    const double g = growth(smeared[d], plain[d]);
    if (g > best) best = g, best_d = d;
  }
  EXPECT_FALSE(plain[0].rgba != smeared[0].rgba) << "the first drawing has no previous drawing";
  RecordProperty("largest_growth_percent", std::to_string(100 * best));
  std::printf("kick on 2s: %zu drawings, %d fast, %d slow, %d changed; largest growth %.1f %% (drawing %zu, frame %d)\n",
              t.drawings.size(), fast, slow, changed, 100 * best, best_d, t.drawings[best_d]);
  EXPECT_GE(best, 0.15) << "no drawing's silhouette grows by 15 % with smears";
  EXPECT_GT(slow, 0) << "the take has no slow drawing: the identity check proved nothing";
  EXPECT_GT(fast, 0);
  // The smear trails: the added pixels sit behind the drawing's own silhouette along the motion.
  const Motion2d m = screen_motion(t, best_d, kThresholdPx);
  Eigen::Vector2d added = Eigen::Vector2d::Zero(), own = Eigen::Vector2d::Zero();
  double n_added = 0, n_own = 0;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const size_t i = (static_cast<size_t>(y) * kWidth + x) * 4 + 3;
      const bool a = smeared[best_d].rgba[i] >= 128, b = plain[best_d].rgba[i] >= 128;
      if (b) own += Eigen::Vector2d(x, y), ++n_own;
      if (a && !b) added += Eigen::Vector2d(x, y), ++n_added;
    }
  ASSERT_GT(n_added, 0);
  const double behind = (added / n_added - own / n_own).dot(m.fast_direction);
  std::printf("the added pixels' centre is %.1f px along the motion from the drawing's centre\n", behind);
  EXPECT_LT(behind, 0) << "the smear does not trail the motion";
}

// Multiples on the same kick: fading copies (translucent pixels at several opacities) where the
// smear grows the most, and the slow drawings untouched.
TEST(Smear, MultiplesDrawFadingCopies) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Take t = held_on_twos(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh");
  const std::vector<Image> plain = cels(t, Smear::off), copies = cels(t, Smear::multiples);
  double best = -1;
  size_t best_d = 0;
  for (size_t d = 1; d < t.drawings.size(); ++d) {
    const Motion2d m = screen_motion(t, d, kThresholdPx);
    if (m.max_px < 0.98 * kThresholdPx) {
      EXPECT_TRUE(plain[d].rgba == copies[d].rgba) << "slow drawing " << d << " changed";
    }
    const double g = growth(copies[d], plain[d], 1);
    if (g > best) best = g, best_d = d;
  }
  // Pixels the copies add, by opacity: each copy alone has its own (0.31, 0.53, 0.74 of 255).
  std::vector<int> levels(3, 0);
  size_t added = 0;
  for (size_t i = 3; i < plain[best_d].rgba.size(); i += 4) {
    if (plain[best_d].rgba[i] > 0 || copies[best_d].rgba[i] == 0) continue;
    ++added;
    for (size_t k = 0; k < 3; ++k)
      levels[k] += std::abs(copies[best_d].rgba[i] - 255.0 * (0.95 - 0.85 * kMultiples[k])) < 6;
  }
  std::printf("multiples: the largest growth %.1f %% (drawing %zu); added pixels %zu, at each copy's opacity %d %d %d\n",
              100 * best, best_d, added, levels[0], levels[1], levels[2]);
  EXPECT_GE(best, 0.15);
  EXPECT_GE(std::count_if(levels.begin(), levels.end(), [&](int n) { return n > 0.02 * static_cast<double>(added); }), 2)
      << "fewer than two fading copies";
}

// A slow idle on 2s (Quaternius): no drawing's silhouette changes by more than 3 %.
TEST(Smear, SlowIdleUnchanged) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Take t = held_on_twos(test::shared_data() / "fbx/quaternius_AnimatedHuman.fbx", "Human Armature|Idle");
  for (Smear smear : {Smear::smear, Smear::multiples}) {
    const std::vector<Image> plain = cels(t, Smear::off), with = cels(t, smear);
    double worst = 0;
    int changed = 0;
    for (size_t d = 0; d < t.drawings.size(); ++d) {
      worst = std::max(worst, std::abs(growth(with[d], plain[d], smear == Smear::smear ? 128 : 1)));
      changed += plain[d].rgba != with[d].rgba;
    }
    std::printf("idle on 2s, %s: %zu drawings, %d changed, the largest silhouette change %.2f %%\n",
                std::string(kSmearNames.name(smear)).c_str(), t.drawings.size(), changed, 100 * worst);
    EXPECT_LE(worst, 0.03);
  }
}

// The contact sheet shares the renderer: the kick's sheet changes with smears, the idle's does not.
TEST(Smear, ContactSheet) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  for (const auto& [file, animation, fast] :
       {std::tuple{"bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh", "", true},
        std::tuple{"fbx/quaternius_AnimatedHuman.fbx", "Human Armature|Idle", false}}) {
    SCOPED_TRACE(file);
    const Take t = held_on_twos(test::shared_data() / file, animation);
    const WorldPoses poses = forward_kinematics(t.clip.motion);
    render::ContactSheetSettings cs;
    cs.cell_width = 100;
    cs.cell_height = 130;
    ToonStyle smear;
    smear.smear = Smear::smear;
    const Image a = render_contact_sheet(t.clip, poses, t.drawings, cs), b = render_contact_sheet(t.clip, poses, t.drawings, cs, smear);
    EXPECT_EQ(a.rgba != b.rgba, fast);
  }
}

TEST(Smear, RejectsBadThreshold) {
  ToonStyle s;
  s.smear_threshold = 0;
  try {
    s.validate();
    FAIL() << "a threshold of 0 px was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.context(), "toon.smear_threshold");
  }
  s.smear_threshold = 12;
  s.smear = static_cast<Smear>(7);
  EXPECT_THROW(s.validate(), Error);
}

}  // namespace koma::toon
