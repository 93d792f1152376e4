// FBX output (koma's own FBX 7.4 writer) read back by koma's FBX reader (assimp), and animation
// names: --animation resolution and the name every writer keeps.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/motion_file.hpp"
#include "gltf_check.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

namespace fs = std::filesystem;

Motion sample(double rate = 24.0) {
  SampleSettings s;
  s.frame_rate = rate;
  s.walk_cycles = 1;
  s.jump = false;
  Motion m = make_sample_motion(s);
  m.name = "walk";
  return m;
}

// Largest distance between the same point of two motions over all frames (metres).
double worst_point_distance(const Motion& a, const Motion& b) {
  const WorldPoses pa = forward_kinematics(a), pb = forward_kinematics(b);
  EXPECT_EQ(pa.frame_count, pb.frame_count);
  EXPECT_EQ(pa.point_count, pb.point_count);
  double worst = 0;
  for (int f = 0; f < std::min(pa.frame_count, pb.frame_count); ++f)
    for (int p = 0; p < std::min(pa.point_count, pb.point_count); ++p)
      worst = std::max(worst, (pa.position(f, p) - pb.position(f, p)).norm());
  return worst;
}

std::string error_of(const std::function<void()>& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(AnimationNames, ExactIndexOrTheUniquePartAfterTheLastBar) {
  const std::vector<std::string> names = {"Zombie|ZombieIdle", "Zombie|ZombieWalk", "Run", "2", "Hero|Run"};
  EXPECT_EQ(io::choose_animation(names, "Zombie|ZombieWalk", "f"), 1);
  EXPECT_EQ(io::choose_animation(names, "ZombieWalk", "f"), 1);
  EXPECT_EQ(io::choose_animation(names, "Run", "f"), 2);  // exact beats the part after '|'
  EXPECT_EQ(io::choose_animation(names, "2", "f"), 3);    // exact beats the index
  EXPECT_EQ(io::choose_animation(names, "4", "f"), 4);
  const std::string missing = error_of([&] { io::choose_animation(names, "Jump", "hero.fbx"); }, ErrorCode::bad_file);
  EXPECT_NE(missing.find("no animation 'Jump'; the file has 5: 0 'Zombie|ZombieIdle'"), std::string::npos) << missing;
  const std::vector<std::string> twice = {"A|Walk", "B|Walk", "Idle"};
  const std::string ambiguous = error_of([&] { io::choose_animation(twice, "Walk", "two.fbx"); }, ErrorCode::bad_file);
  EXPECT_NE(ambiguous.find("two.fbx"), std::string::npos) << ambiguous;
  EXPECT_NE(ambiguous.find("ambiguous"), std::string::npos) << ambiguous;
  EXPECT_NE(ambiguous.find("0 'A|Walk', 1 'B|Walk'"), std::string::npos) << ambiguous;
  EXPECT_EQ(ambiguous.find("Idle"), std::string::npos) << ambiguous;  // only the candidates
}

TEST(AnimationNames, ClipNameFromPathAndStagedOutputs) {
  EXPECT_EQ(io::clip_name_from_path("mocap/walk.bvh"), "walk");
  EXPECT_EQ(io::clip_name_from_path("out/.walk_on2s.glb.koma-29549-bd9d9254.tmp"), "walk_on2s");
  EXPECT_EQ(io::clip_name_from_path("out/.walk_on2s.glb.koma-29549-3.tmp.glb"), "walk_on2s");
  EXPECT_EQ(io::clip_name_from_path(".hidden.bvh"), ".hidden");
}

// Every writer keeps the motion's name; a name given in the options wins; a staged path (the
// pipelines write `.x.glb.koma-PID-N.tmp.glb`) never names the clip.
TEST(AnimationNames, WritersKeepTheClipName) {
  const fs::path d = test::temp_dir("fbx_names");
  Motion m = sample();
  io::write_motion(d / ".out.glb.koma-1-2.tmp.glb", m);
  EXPECT_EQ(io::list_gltf_animations(d / ".out.glb.koma-1-2.tmp.glb").at(0).name, "walk");
  io::write_motion(d / "x.fbx", m);
  EXPECT_EQ(io::list_fbx_animations(d / "x.fbx").at(0).name, "walk");
  EXPECT_EQ(io::read_motion(d / "x.fbx").motion.name, "walk");
  io::WriteOptions wo;
  wo.animation_name = "run";
  io::write_motion(d / "y.glb", m, wo);
  io::write_motion(d / "y.fbx", m, wo);
  EXPECT_EQ(io::read_motion(d / "y.glb").motion.name, "run");
  EXPECT_EQ(io::read_motion(d / "y.fbx").motion.name, "run");
  m.name.clear();
  io::write_motion(d / ".z.glb.koma-1-3.tmp.glb", m);
  EXPECT_EQ(io::read_motion(d / ".z.glb.koma-1-3.tmp.glb").motion.name, "z");
  // Read names survive resampling and cutting; BVH names the clip after its file.
  io::write_motion(d / "take.bvh", sample());
  const Motion bvh = io::read_motion(d / "take.bvh").motion;
  EXPECT_EQ(bvh.name, "take");
  EXPECT_EQ(resample(bvh, 30.0).name, "take");
  EXPECT_EQ(cut(bvh, 2, 9).name, "take");
}

// Written and read back: every point within float precision, at the same rate, in every unit and
// axis system and in both encodings; the file says what it holds.
TEST(FbxWrite, ReadBackGivesTheSameMotionInEveryUnitAxesAndEncoding) {
  const fs::path d = test::temp_dir("fbx_roundtrip");
  for (double rate : {24.0, 30.0, 14.985}) {
    const Motion m = resample(sample(), rate);
    for (LengthUnit unit : {LengthUnit::centimetre, LengthUnit::metre, LengthUnit::inch})
      for (io::FbxUpAxis up : {io::FbxUpAxis::y, io::FbxUpAxis::z})
        for (bool ascii : {false, true}) {
          io::FbxWriteOptions o;
          o.unit = unit;
          o.up = up;
          o.ascii = ascii;
          const fs::path p = d / "walk.fbx";
          io::write_fbx(p, m, o);
          const std::string what = fmt::format("{} fps, {}, {}, {}", rate, to_string(unit), up == io::FbxUpAxis::z ? "z-up" : "y-up", ascii ? "ascii" : "binary");
          const io::ReadResult r = io::read_fbx(p);
          EXPECT_EQ(r.motion.frame_count, m.frame_count) << what;
          EXPECT_NEAR(r.motion.frame_rate, rate, 1e-6 * rate) << what;
          EXPECT_EQ(r.motion.source_unit, unit) << what;
          EXPECT_EQ(r.motion.skeleton.names, m.skeleton.names) << what;
          EXPECT_EQ(r.motion.skeleton.end_site_count(), m.skeleton.end_site_count()) << what;
          EXPECT_LT(worst_point_distance(r.motion, m), 2e-5) << what;  // float32 keys on a 1.75 m figure
          EXPECT_EQ(r.motion.name, "walk") << what;
          std::ifstream in(p, std::ios::binary);
          std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          EXPECT_EQ(bytes.rfind(ascii ? "; FBX 7.4.0 project file" : "Kaydara FBX Binary  ", 0), 0u) << what;
        }
  }
}

// A held result: keyed at every frame, with constant interpolation; read back, the drawings are
// exactly the kept frames' poses and their number is the number of distinct poses.
TEST(FbxWrite, HeldMotionKeepsItsDrawings) {
  const fs::path d = test::temp_dir("fbx_held");
  Motion m = sample();
  const std::vector<int> keys = {0, 3, 5, 9, 14, m.frame_count - 1};
  for (int f = 0; f < m.frame_count; ++f) {
    const int k = *std::prev(std::upper_bound(keys.begin(), keys.end(), f));
    for (int j = 0; j < m.joint_count(); ++j) {
      m.rotations[static_cast<size_t>(f * m.joint_count() + j)] = m.rotation(k, j);
      m.translations[static_cast<size_t>(f * m.joint_count() + j)] = m.translation(k, j);
    }
  }
  io::FbxWriteOptions o;
  o.step_keys = keys;
  io::write_fbx(d / "held.fbx", m, o);
  const Motion r = io::read_fbx(d / "held.fbx").motion;
  EXPECT_LT(worst_point_distance(r, m), 2e-5);
  const WorldPoses w = forward_kinematics(r);
  int distinct = 1;
  for (int f = 1; f < w.frame_count; ++f) {
    double moved = 0;
    for (int p = 0; p < w.point_count; ++p) moved = std::max(moved, (w.position(f, p) - w.position(f - 1, p)).norm());
    distinct += moved > 1e-6 ? 1 : 0;
  }
  EXPECT_EQ(distinct, static_cast<int>(keys.size()));
  // Every curve's keys are constant (flag 0x2), none linear: the ASCII form shows the flags.
  o.ascii = true;
  const std::string text = io::fbx_bytes(m, o);
  EXPECT_NE(text.find("KeyAttrFlags: *1 {\n\t\t\ta: 2\n"), std::string::npos);
  EXPECT_EQ(text.find("KeyAttrFlags: *1 {\n\t\t\ta: 4\n"), std::string::npos);
  EXPECT_NE(text.find(fmt::format("KeyTime: *{} ", m.frame_count)), std::string::npos);  // every frame keyed
  o.step_keys = {0, 5, 3};
  error_of([&] { io::fbx_bytes(m, o); }, ErrorCode::invalid_settings);
}

TEST(FbxWrite, NonAsciiNamesComeBackIntact) {
  const fs::path d = test::temp_dir("fbx_utf8");
  Motion m = sample();
  m.name = "歩き|Gehen — «walk»";
  m.skeleton.names[1] = "背骨";
  for (bool ascii : {false, true}) {
    io::FbxWriteOptions o;
    o.ascii = ascii;
    io::write_fbx(d / "名前.fbx", m, o);
    const io::ReadResult r = io::read_fbx(d / "名前.fbx");
    EXPECT_EQ(r.motion.name, m.name);
    EXPECT_EQ(r.motion.skeleton.names[1], "背骨");
    EXPECT_EQ(io::read_fbx(d / "名前.fbx", {"Gehen — «walk»", 0.0}).motion.name, m.name);  // after the last '|'
  }
}

TEST(FbxWrite, BadInputWritesNothing) {
  const fs::path d = test::temp_dir("fbx_bad");
  Motion m = sample();
  // No skeleton: a clear error, no file.
  Motion none;
  none.frame_count = 1;
  const std::string msg = error_of([&] { io::write_fbx(d / "none.fbx", none); }, ErrorCode::bad_data);
  EXPECT_NE(msg.find("no skeleton"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(d / "none.fbx"));
  // A character of another skeleton: mismatch, and an existing file is left as it was.
  const fs::path glb = d / "other.glb";
  io::write_motion(glb, sample());
  const io::ReadResult other = io::read_motion(glb);
  Motion fewer = m;
  fewer.skeleton.names[2] = "Other";
  std::ofstream(d / "keep.fbx") << "old";
  io::FbxWriteOptions o;
  o.scene = other.gltf_scene;
  error_of([&] { io::write_fbx(d / "keep.fbx", fewer, o); }, ErrorCode::mismatch);
  std::ifstream in(d / "keep.fbx");
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "old");
  // A folder that does not exist: io error, nothing left behind.
  error_of([&] { io::write_fbx(d / "no/such/dir/x.fbx", m); }, ErrorCode::io);
  for (const auto& e : fs::directory_iterator(d)) EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

// The shared glTF character through FBX: koma reads back the same joints at every frame and the
// same mesh (triangles), and the take keeps its name.
TEST(FbxWrite, SharedCharacterThroughFbx) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path d = test::temp_dir("fbx_fox");
  const fs::path fox = test::shared_data() / "gltf/Fox/Fox.glb";
  const io::ReadResult in = io::read_motion(fox, {std::nullopt, "Walk", 0.0, 0.0, {}});
  EXPECT_EQ(in.motion.name, "Walk");
  io::WriteOptions wo;
  wo.gltf_scene = in.gltf_scene;
  io::write_motion(d / "fox.fbx", in.motion, wo);
  const io::ReadResult back = io::read_motion(d / "fox.fbx");
  EXPECT_EQ(back.motion.name, "Walk");
  ASSERT_TRUE(back.gltf_scene);
  const double height = in.motion.skeleton.rest_extent();
  EXPECT_LT(worst_point_distance(back.motion, in.motion), 1e-3 * height);
  // The character came along: writing it again as glTF gives a mesh (koma's glTF lists it).
  wo.gltf_scene = back.gltf_scene;
  io::write_motion(d / "fox_again.glb", back.motion, wo);
  EXPECT_EQ(io::read_motion(d / "fox_again.glb").motion.name, "Walk");
}

// `koma convert x.fbx y.fbx` round-trips: every shared FBX character read, written and read again
// gives the same joints at every frame (and its character), twice over.
TEST(FbxWrite, SharedFbxFilesRoundTrip) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path d = test::temp_dir("fbx_shared_roundtrip");
  for (const char* file : {"quaternius_AnimatedHuman.fbx", "quaternius_Male_Casual.fbx", "quaternius_RedFox.fbx",
                           "assimp_huesitos.fbx", "ufbx_maya_game_sausage_7500_ascii_combined.fbx"}) {
    const io::ReadResult in = io::read_motion(test::shared_data() / "fbx" / file);
    const double height = std::max(in.motion.skeleton.rest_extent(), 1e-3);
    io::WriteOptions wo;
    wo.gltf_scene = in.gltf_scene;
    io::write_motion(d / "once.fbx", in.motion, wo);
    const io::ReadResult once = io::read_motion(d / "once.fbx");
    EXPECT_EQ(once.motion.name, in.motion.name) << file;
    EXPECT_NEAR(once.motion.frame_rate, in.motion.frame_rate, 1e-6 * in.motion.frame_rate) << file;
    EXPECT_LT(worst_point_distance(once.motion, in.motion), 1e-3 * height) << file;
    EXPECT_EQ(static_cast<bool>(once.gltf_scene), static_cast<bool>(in.gltf_scene)) << file;
    wo.gltf_scene = once.gltf_scene;
    io::write_motion(d / "twice.fbx", once.motion, wo);
    EXPECT_LT(worst_point_distance(io::read_motion(d / "twice.fbx").motion, in.motion), 1e-3 * height) << file;
  }
}

// Joint positions and the box around every skinned vertex of a glTF document at time t, evaluated
// by the test's own glTF code (tests/io/gltf_check.hpp): v = sum_j w_j world(joint_j) IBM_j v.
struct Evaluated {
  std::map<std::string, Eigen::Vector3d> joints;
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(1e30), hi = Eigen::Vector3d::Constant(-1e30);
};
Evaluated evaluate(const test::GltfDoc& doc, double t) {
  Evaluated out;
  const auto& skin = doc.json["skins"][0];
  std::vector<Eigen::Matrix4d> joint;
  const std::vector<double> ibm = doc.accessor(skin["inverseBindMatrices"].get<int>());
  for (size_t k = 0; k < skin["joints"].size(); ++k) {
    const int n = skin["joints"][k].get<int>();
    const Eigen::Matrix4d w = doc.world(n, 0, t);
    out.joints[doc.json["nodes"][n]["name"].get<std::string>()] = w.topRightCorner<3, 1>();
    joint.push_back(w * Eigen::Map<const Eigen::Matrix4d>(ibm.data() + 16 * k));
  }
  if (!doc.json.contains("meshes")) return out;  // a bare skeleton (BVH)
  for (const auto& mesh : doc.json["meshes"])
    for (const auto& prim : mesh["primitives"]) {
      const auto& at = prim["attributes"];
      const std::vector<double> pos = doc.accessor(at["POSITION"].get<int>()), js = doc.accessor(at["JOINTS_0"].get<int>()),
                                ws = doc.accessor(at["WEIGHTS_0"].get<int>());
      for (size_t v = 0; v < pos.size() / 3; ++v) {
        Eigen::Vector4d p(pos[3 * v], pos[3 * v + 1], pos[3 * v + 2], 1.0), q = Eigen::Vector4d::Zero();
        for (size_t c = 0; c < 4; ++c) q += ws[4 * v + c] * (joint[static_cast<size_t>(js[4 * v + c])] * p);
        out.lo = out.lo.cwiseMin(q.head<3>());
        out.hi = out.hi.cwiseMax(q.head<3>());
      }
    }
  return out;
}

// koma's reader on koma's FBX, as the issue checks every importer, on the five sources Blender
// (blender.fbx_export.*) and three.js (view.fbx_three.*) check: the clip held on 2s (what `koma
// keys --on 2` writes: the kept frames as STEP keys in the GLB, every frame keyed in the FBX)
// written as GLB and as FBX; the FBX read by koma (assimp) and written as GLB again. At every frame
// the joints agree within 0.1 % of the height and the deformed mesh box within 1 %; the take keeps
// its name; the distinct poses are the drawings.
struct ReaderCase {
  const char* file;
  const char* animation;
  const char* name;  // the take's name
};

class KomaReadsItsFbx : public testing::TestWithParam<ReaderCase> {};

TEST_P(KomaReadsItsFbx, AsItsGlb) {
  KOMA_REQUIRE_SHARED_DATA();
  const ReaderCase c = GetParam();
  const fs::path d = test::temp_dir(fmt::format("fbx_koma_reader_{}", fs::path(c.file).stem().string()));
  io::ReadOptions ro;
  ro.animation = c.animation;
  const io::ReadResult in = io::read_motion(test::shared_data() / c.file, ro);
  std::vector<int> keys;  // drawings on 2s
  for (int f = 0; f < in.motion.frame_count; f += 2) keys.push_back(f);
  Motion held = in.motion;
  for (int f = 0; f < held.frame_count; ++f) {
    const int k = f - f % 2;
    for (int j = 0; j < held.joint_count(); ++j) {
      held.rotations[static_cast<size_t>(f * held.joint_count() + j)] = in.motion.rotation(k, j);
      held.translations[static_cast<size_t>(f * held.joint_count() + j)] = in.motion.translation(k, j);
    }
  }
  io::WriteOptions wo;
  wo.gltf_scene = in.gltf_scene;
  wo.step_keys = keys;
  io::write_motion(d / "run.glb", held, wo);
  io::write_motion(d / "run.fbx", held, wo);
  const io::ReadResult back = io::read_motion(d / "run.fbx");
  EXPECT_EQ(back.motion.name, c.name);
  EXPECT_EQ(back.motion.frame_count, held.frame_count);
  io::WriteOptions again;
  again.gltf_scene = back.gltf_scene;
  io::write_motion(d / "back.glb", back.motion, again);
  const test::GltfDoc ref = test::load_gltf(d / "run.glb"), got = test::load_gltf(d / "back.glb");
  EXPECT_EQ(got.json["animations"][0]["name"], c.name);
  const bool mesh = got.json.contains("meshes") && ref.json.contains("meshes");
  EXPECT_EQ(got.json.contains("meshes"), ref.json.contains("meshes"));
  double height = 0, worst_joint = 0, worst_box = 0;
  int poses = 0;
  std::map<std::string, Eigen::Vector3d> previous;
  for (int f = 0; f < held.frame_count; ++f) {
    // STEP keys just after the frame's time (no rounding back to the previous drawing); the
    // re-read motion has LINEAR keys on every frame: at the frame's time.
    const Evaluated a = evaluate(ref, f / held.frame_rate + 1e-6), b = evaluate(got, f / held.frame_rate);
    if (f == 0) {
      Eigen::Vector3d lo = Eigen::Vector3d::Constant(1e30), hi = -lo;
      for (const auto& [name, p] : a.joints) lo = lo.cwiseMin(p), hi = hi.cwiseMax(p);
      height = mesh ? (a.hi - a.lo).maxCoeff() : (hi - lo).y();  // the body, or its joints (Y up)
    }
    if (mesh) worst_box = std::max({worst_box, (a.lo - b.lo).cwiseAbs().maxCoeff(), (a.hi - b.hi).cwiseAbs().maxCoeff()});
    double moved = f == 0 ? 1.0 : 0.0;
    for (const auto& [name, p] : a.joints) {
      ASSERT_TRUE(b.joints.count(name)) << name;
      worst_joint = std::max(worst_joint, (p - b.joints.at(name)).norm());
      if (f > 0) moved = std::max(moved, (b.joints.at(name) - previous.at(name)).norm());
    }
    poses += moved > 1e-5 * height ? 1 : 0;
    previous = b.joints;
  }
  EXPECT_GT(height, 0.0);
  EXPECT_LT(worst_joint, 1e-3 * height) << "height " << height;
  EXPECT_LT(worst_box, 1e-2 * height) << "height " << height;
  EXPECT_EQ(poses, static_cast<int>(keys.size()));
  std::printf("%s: %d frames, height %.4g, worst joint %.2g %% of it, worst mesh box %.2g %%, %d poses = %zu drawings\n",
              c.file, held.frame_count, height, 100 * worst_joint / height, 100 * worst_box / height, poses, keys.size());
}

INSTANTIATE_TEST_SUITE_P(
    FbxWrite, KomaReadsItsFbx,
    testing::Values(ReaderCase{"gltf/Fox/Fox.glb", "Walk", "Walk"}, ReaderCase{"gltf/CesiumMan/CesiumMan.gltf", "", "CesiumMan"},
                    ReaderCase{"fbx/quaternius_AnimatedHuman.fbx", "Walk", "Human Armature|Walk"},
                    ReaderCase{"fbx/quaternius_Male_Casual.fbx", "", "HumanArmature|Man_Clapping"},
                    ReaderCase{"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", "", "dataset-1_walk_normal_001"}),
    [](const testing::TestParamInfo<ReaderCase>& i) {
      std::string n = fs::path(i.param.file).stem().string();
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

}  // namespace
}  // namespace koma
