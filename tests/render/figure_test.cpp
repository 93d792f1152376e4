#include "koma/render/figure.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/render/compare.hpp"
#include "test_support.hpp"

namespace koma::render {
namespace {

double colour_distance(const Rgba& a, const Rgba& b) {
  return std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)});
}

TEST(LimbSide, NamesOfEveryExporterInTheCorpus) {
  for (const char* n : {"LeftArm", "leftHand", "L_Foot", "l_knee", "LHipJoint", "lThigh", "lhumerus", "lfemur",
                        "mixamorig:LeftUpLeg", "UpperLeg_L", "Hand.L", "lShldr", "lButtock", "LThumb", "lIndex1"}) {
    EXPECT_EQ(limb_side(n), Side::left) << n;
  }
  for (const char* n : {"RightArm", "rightHand", "R_Foot", "RHipJoint", "rThigh", "rhumerus", "rfemur",
                        "mixamorig:RightHand", "Foot_R", "Hand.R", "rShin", "RFingers"}) {
    EXPECT_EQ(limb_side(n), Side::right) << n;
  }
  for (const char* n : {"Hips", "Spine", "lowerback", "LowerBack", "Neck1", "Head", "root", "Chest2",
                        "mixamorig:Hips", "hip", "abdomen", "neckDummy", "joint_Root", "Ab", ""}) {
    EXPECT_EQ(limb_side(n), Side::centre) << n;
  }
}

// Root at (0, 1, 0); a left bone along +X, a right bone along -X, a centre bone up +Y, each 1 m.
Skeleton cross_skeleton() {
  Skeleton s;
  s.names = {"Hips", "LeftArm", "RightArm", "Spine"};
  s.parents = {-1, 0, 0, 0};
  s.offsets = {Vec3(0, 1, 0), Vec3(0.1, 0, 0), Vec3(-0.1, 0, 0), Vec3(0, 0.1, 0)};
  s.channels = {{}, {}, {}, {}};
  s.end_sites = {{1, Vec3(1, 0, 0)}, {2, Vec3(-1, 0, 0)}, {3, Vec3(0, 1, 0)}};
  return s;
}

TEST(RenderFigure, KnownPoseShowsBoneColourOnTheBoneAndBackgroundElsewhere) {
  const Skeleton s = cross_skeleton();
  const WorldPoses w = forward_kinematics(rest_motion(s, 24, 1));
  FigureStyle style;
  style.show_grid = false;
  style.show_shadow = false;
  style.joint_radius = 0;
  style.far_side_dim = 0;  // exact colours at every depth
  CameraSettings cs;
  cs.width = 320;
  cs.height = 240;
  for (CameraView view : {CameraView::front, CameraView::perspective}) {
    cs.view = view;
    const Camera cam = fit_camera(w.positions, s, w.frame_positions(0), cs);
    const Image img = render_pose(s, w.frame_positions(0), cam, style);
    ASSERT_EQ(img.width, 320);
    ASSERT_EQ(img.height, 240);
    // Sample along each bone (LeftArm -> its end site, etc.), away from the rounded ends.
    struct Case {
      int from, to;
      Rgba colour;
    };
    for (const Case& c : {Case{1, 4, style.left}, Case{2, 5, style.right}, Case{3, 6, style.centre}}) {
      for (double t : {0.3, 0.5, 0.7}) {
        const Vec3 p = cam.project(w.position(0, c.from) * (1 - t) + w.position(0, c.to) * t);
        const Rgba got = img.pixel(static_cast<int>(p.x()), static_cast<int>(p.y()));
        EXPECT_LT(colour_distance(got, c.colour), 0.06)
            << to_string(view) << " bone " << s.point_name(c.to) << " t=" << t;
      }
    }
    // 40 px above the left bone (far from every bone) is paper.
    const Vec3 mid = cam.project((w.position(0, 1) + w.position(0, 4)) / 2);
    EXPECT_LT(colour_distance(img.pixel(static_cast<int>(mid.x()), static_cast<int>(mid.y()) - 40), style.background),
              0.01);
    EXPECT_LT(colour_distance(img.pixel(2, 2), style.background), 0.01);
  }
}

// Issue 19: eye joints (CMU-Daz leftEye) are not drawn as a beak, and the head keeps its ball.
TEST(RenderFigure, FaceJointsAreInsideTheHeadBall) {
  Skeleton s;
  s.names = {"Hips", "Neck", "Head", "leftEye"};
  s.parents = {-1, 0, 1, 2};
  s.offsets = {Vec3(0, 1, 0), Vec3(0, 0.5, 0), Vec3(0, 0.2, 0), Vec3(0.35, 0.02, 0)};
  s.channels = {{}, {}, {}, {}};
  s.end_sites = {{3, Vec3(0.01, 0, 0)}};
  const WorldPoses w = forward_kinematics(rest_motion(s, 24, 1));
  FigureStyle style;
  style.show_grid = false;
  style.show_shadow = false;
  style.joint_radius = 0;
  style.far_side_dim = 0;
  CameraSettings cs;
  cs.view = CameraView::front;
  cs.width = 320;
  cs.height = 240;
  const Camera cam = fit_camera(w.positions, s, w.frame_positions(0), cs);
  const Image img = render_pose(s, w.frame_positions(0), cam, style);
  auto at = [&](const Vec3& p) {
    const Vec3 q = cam.project(p);
    EXPECT_TRUE(q.x() >= 0 && q.y() >= 0 && q.x() < img.width && q.y() < img.height) << q.transpose();
    return img.pixel(std::clamp(static_cast<int>(q.x()), 0, img.width - 1), std::clamp(static_cast<int>(q.y()), 0, img.height - 1));
  };
  const Vec3 head = w.position(0, 2);
  // Inside the ball (centre 0.1 m above the head joint, radius ~0.1 m), above the top point.
  EXPECT_LT(colour_distance(at(head + Vec3(0, 0.04, 0)), style.centre), 0.06) << "the head ball is drawn";
  EXPECT_LT(colour_distance(at(head + Vec3(0.3, 0.02, 0)), style.background), 0.01) << "no bone out to the eye";
}

// Issue 19: the side camera looks across the character's heading, also for CMU rigs whose
// LHipJoint / RHipJoint sit at the pelvis centre (zero offsets) and a walk along world X.
TEST(RenderFigure, SideCameraFollowsTheHeadingOfACmuRig) {
  Skeleton s;
  s.names = {"Hips", "LHipJoint", "LeftUpLeg", "RHipJoint", "RightUpLeg", "Spine"};
  s.parents = {-1, 0, 1, 0, 3, 0};
  s.offsets = {Vec3(0, 1, 0), Vec3::Zero(), Vec3(0.1, -0.05, 0), Vec3::Zero(), Vec3(-0.1, -0.05, 0), Vec3(0, 0.3, 0)};
  s.channels = {{}, {}, {}, {}, {}, {}};
  s.end_sites = {{2, Vec3(0, -0.8, 0)}, {4, Vec3(0, -0.8, 0)}, {5, Vec3(0, 0.5, 0)}};
  Motion m = rest_motion(s, 24, 1);
  m.rotations[0] = Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));  // facing +Z turned to face +X
  const WorldPoses w = forward_kinematics(m);
  CameraSettings cs;
  cs.view = CameraView::side;
  const Camera cam = fit_camera(w.positions, s, w.frame_positions(0), cs);
  EXPECT_GT(cam.right.dot(Vec3::UnitX()), 0.99) << "the heading runs left to right across the screen";
  EXPECT_LT(std::abs(cam.forward.dot(Vec3::UnitX())), 0.01);
}

TEST(RenderFigure, FrontViewMirrorsTheCharacterAndSideViewWalksLeftToRight) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  const int lhand = m.skeleton.find("LeftHand"), rhand = m.skeleton.find("RightHand");
  CameraSettings cs;
  cs.view = CameraView::front;
  Camera cam = fit_camera(w.positions, m.skeleton, w.frame_positions(0), cs);
  // Facing the viewer, the character's left hand is on the screen's right.
  EXPECT_GT(cam.project(w.position(0, lhand)).x(), cam.project(w.position(0, rhand)).x());
  cs.view = CameraView::side;
  cam = fit_camera(w.positions, m.skeleton, w.frame_positions(0), cs);
  EXPECT_GT(cam.project(w.position(m.frame_count - 1, 0)).x(), cam.project(w.position(0, 0)).x() + 100);
  cs.view = CameraView::top;
  cam = fit_camera(w.positions, m.skeleton, w.frame_positions(0), cs);
  EXPECT_LT(cam.project(w.position(m.frame_count - 1, 0)).y(), cam.project(w.position(0, 0)).y() - 100)
      << "walking forward goes up the screen from above";
}

TEST(RenderFigure, AutomaticFramingKeepsEveryPointOfEveryFrameInside) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  for (CameraView view : {CameraView::front, CameraView::side, CameraView::top, CameraView::perspective}) {
    CameraSettings cs;
    cs.view = view;
    cs.width = 640;
    cs.height = 360;
    const Camera cam = fit_camera(w.positions, m.skeleton, w.frame_positions(0), cs);
    double x0 = 1e9, x1 = -1e9, y0 = 1e9, y1 = -1e9;
    for (const Vec3& p : w.positions) {
      const Vec3 q = cam.project(p);
      x0 = std::min(x0, q.x()), x1 = std::max(x1, q.x()), y0 = std::min(y0, q.y()), y1 = std::max(y1, q.y());
    }
    const double margin = cs.margin * 360 - 0.5;
    EXPECT_GE(x0, margin) << to_string(view);
    EXPECT_LE(x1, 640 - margin) << to_string(view);
    EXPECT_GE(y0, margin) << to_string(view);
    EXPECT_LE(y1, 360 - margin) << to_string(view);
    // And it is a fit, not a thumbnail: one side is filled to the margins.
    EXPECT_TRUE(x1 - x0 > 640 - 2 * margin - 2 || y1 - y0 > 360 - 2 * margin - 2) << to_string(view);
  }
}

TEST(RenderFigure, ShadowIsDarkUnderTheFeetAndFadesInTheJump) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  CameraSettings cs;
  cs.view = CameraView::side;
  cs.width = 640;
  cs.height = 360;
  const Camera cam = fit_camera(w.positions, m.skeleton, w.frame_positions(0), cs);
  FigureStyle style;
  style.show_grid = false;
  // The frame where the feet are highest (the jump's apex) versus the first frame (standing).
  int apex = 0;
  double best = -1;
  for (int f = 0; f < m.frame_count; ++f) {
    double low = 1e9;
    for (const Vec3& p : w.frame_positions(f)) low = std::min(low, p.y());
    if (low > best) best = low, apex = f;
  }
  ASSERT_GT(best, 0.05) << "the sample motion jumps";
  auto darkness_under_root = [&](int f) {
    const Image img = render_pose(m.skeleton, w.frame_positions(f), cam, style);
    const Vec3 g = cam.project(Vec3(w.position(f, 0).x(), cam.ground_y, w.position(f, 0).z()));
    const Rgba p = img.pixel(static_cast<int>(g.x()), static_cast<int>(g.y()) + 1);
    return style.background.r - p.r;
  };
  EXPECT_GT(darkness_under_root(0), darkness_under_root(apex));
}

TEST(RenderFigure, BadInputsAreClearErrors) {
  const Skeleton s = cross_skeleton();
  const WorldPoses w = forward_kinematics(rest_motion(s, 24, 1));
  CameraSettings cs;
  cs.width = 0;
  cs.height = 0;
  try {
    fit_camera(w.positions, s, w.frame_positions(0), cs);
    FAIL() << "zero-size frames must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(std::string(e.what()).find("0x0"), std::string::npos) << e.what();
  }
  cs = {};
  const Camera cam = fit_camera(w.positions, s, w.frame_positions(0), cs);
  std::vector<Vec3> too_few(3, Vec3::Zero());
  EXPECT_THROW(render_pose(s, too_few, cam), Error);
  EXPECT_THROW(fit_camera(std::span<const Vec3>{}, s, {}, cs), Error);
  FigureStyle bad;
  bad.taper = 0;
  EXPECT_THROW(render_pose(s, w.frame_positions(0), cam, bad), Error);
  EXPECT_FALSE(parse_camera_view("fisheye").has_value());
  EXPECT_EQ(parse_camera_view("persp"), CameraView::perspective);
}

// What users write (koma render --camera/--size/--ink, Python koma.render_file): parsed once here.
TEST(RenderFigure, CameraSizeAndColourAsUsersWriteThem) {
  CameraSettings base;
  base.view = CameraView::side;
  base.width = 320;
  CameraSettings c = parse_camera_spec("persp,follow", base);
  EXPECT_EQ(c.view, CameraView::perspective);
  EXPECT_TRUE(c.follow);
  EXPECT_EQ(c.width, 320);  // what the text leaves out stays
  c = parse_camera_spec("follow", base);
  EXPECT_EQ(c.view, CameraView::side);
  EXPECT_TRUE(parse_camera_spec("TOP,follow,fixed,", base).view == CameraView::top);
  EXPECT_FALSE(parse_camera_spec("top,follow,fixed", base).follow);  // the last framing wins
  EXPECT_EQ(parse_camera_spec("", base).view, CameraView::side);
  for (const char* bad : {"fisheye", "side,,follow", ",side", "side follow"}) {
    try {
      parse_camera_spec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
      EXPECT_EQ(e.context(), "camera");
      EXPECT_NE(e.message().find("front, side, top or persp"), std::string::npos) << e.message();
    }
  }
  EXPECT_EQ(parse_frame_size("1280x720"), std::make_pair(1280, 720));
  EXPECT_EQ(parse_frame_size("64X36"), std::make_pair(64, 36));
  EXPECT_EQ(parse_frame_size("8192x1"), std::make_pair(8192, 1));
  for (const char* bad : {"0x0", "1280", "1280x720x3", "1280 x 720", "8193x10", "-5x10", "axb", ""}) {
    try {
      parse_frame_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.context(), "size");
    }
  }
  const Rgba ink = parse_colour("#ff8000", "toon.ink");
  EXPECT_DOUBLE_EQ(ink.r, 1.0);
  EXPECT_DOUBLE_EQ(ink.g, 128 / 255.0);
  EXPECT_DOUBLE_EQ(ink.b, 0.0);
  EXPECT_DOUBLE_EQ(ink.a, 1.0);
  EXPECT_DOUBLE_EQ(parse_colour("0000FF", "x").b, 1.0);
  for (const char* bad : {"red", "#ff80", "#ff800000", "#gg0000", ""}) {
    try {
      parse_colour(bad, "toon.ink");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.context(), "toon.ink");
      EXPECT_NE(e.message().find("expected #RRGGBB"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace koma::render

namespace koma::render {
namespace {

// Every exporter dialect in the corpus: the limbs split evenly into left and right by name.
TEST(RealFiles, EverySkeletonHasAsManyLeftAsRightJoints) {
  KOMA_REQUIRE_SHARED_DATA();
  const std::vector<std::filesystem::path> files = test::shared_bvh_files();
  ASSERT_FALSE(files.empty());
  int checked = 0;
  for (const auto& f : files) {
    const Skeleton s = io::read_motion(f).motion.skeleton;
    int left = 0, right = 0;
    for (const auto& n : s.names) left += limb_side(n) == Side::left, right += limb_side(n) == Side::right;
    EXPECT_GT(left, 3) << f;
    EXPECT_EQ(left, right) << f;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()));
}

// Bandai-Namco files root the hierarchy at a ground reference ("joint_Root") with the hips moving
// away from it: no bone may be drawn across the floor between them.
TEST(RealFiles, ReferenceRootDrawsNoBoneToTheHips) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto path = test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_walk_happy_001.bvh";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  const Motion m = io::read_motion(path).motion;
  const WorldPoses w = forward_kinematics(m);
  const int f = m.frame_count - 1;  // the hips are far from the root by the end of the walk
  const int hips = m.skeleton.find("Hips");
  ASSERT_GE(hips, 0);
  ASSERT_EQ(m.skeleton.parents[hips], 0);
  ASSERT_GT((w.position(f, hips) - w.position(f, 0)).norm(), 1.0);
  CameraSettings cs;
  cs.view = CameraView::top;  // the root-to-hips line would lie flat across the picture
  cs.width = 320;
  cs.height = 240;
  FigureStyle style;
  style.show_grid = false;
  style.show_shadow = false;
  const Camera cam = fit_camera(w.frame_positions(f), m.skeleton, w.frame_positions(0), cs);
  const Image img = render_pose(m.skeleton, w.frame_positions(f), cam, style);
  // Sample the middle of the would-be bone: paper.
  const Vec3 mid = cam.project((w.position(f, 0) + w.position(f, hips)) / 2);
  EXPECT_LT(colour_distance(img.pixel(static_cast<int>(mid.x()), static_cast<int>(mid.y())), style.background), 0.01);
  // Framing leaves the reference root out: following the walk, the body fills the frame's height.
  EXPECT_EQ(body_points(m.skeleton, w).size(), static_cast<size_t>(m.frame_count) * (w.point_count - 1));
  Comparison c;
  c.result = {m.skeleton, w, "walk"};
  CameraSettings side;
  side.view = CameraView::side;
  EXPECT_TRUE(frame_comparison(c, side).per_frame.empty()) << "by default one fixed camera frames the take";
  side.follow = true;
  const ComparisonFraming fr = frame_comparison(c, side);
  ASSERT_EQ(static_cast<int>(fr.per_frame.size()), m.frame_count) << "a walk across the room is followed";
  const Camera& cf = fr.per_frame[f];
  double top = 1e9, bottom = -1e9;
  for (int p = 1; p < w.point_count; ++p) {
    top = std::min(top, cf.project(w.position(f, p)).y());
    bottom = std::max(bottom, cf.project(w.position(f, p)).y());
  }
  EXPECT_GT(bottom - top, 0.4 * side.height);
}

}  // namespace
}  // namespace koma::render
