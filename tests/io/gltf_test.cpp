// glTF reader/writer tests. Positions are checked against an independent glTF evaluator
// (gltf_check.cpp), never against numbers copied from koma's output.
#include "koma/io/gltf.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>

#include "gltf_check.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Tiny hand-built fixtures: two joints (hips -> spine) plus a leaf node (an end site), one
// animation with a root translation and a spine rotation, keys at 0, 0.5, 1 s.
struct Fixture {
  json doc;
  std::vector<unsigned char> bin;

  // Appends raw bytes as a new bufferView; returns its index.
  int add_view(const void* data, size_t size) {
    while (bin.size() % 4) bin.push_back(0);
    const size_t offset = bin.size();
    bin.resize(offset + size);
    std::memcpy(bin.data() + offset, data, size);
    doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", offset}, {"byteLength", size}});
    return static_cast<int>(doc["bufferViews"].size()) - 1;
  }

  int add_accessor(const std::vector<float>& values, const char* type, int components,
                   bool bounds) {
    json acc = {{"bufferView", add_view(values.data(), values.size() * 4)},
                {"componentType", 5126},
                {"count", values.size() / static_cast<size_t>(components)},
                {"type", type}};
    if (bounds) {
      acc["min"] = {*std::min_element(values.begin(), values.end())};
      acc["max"] = {*std::max_element(values.begin(), values.end())};
    }
    doc["accessors"].push_back(acc);
    return static_cast<int>(doc["accessors"].size()) - 1;
  }
};

Quat z_rotation(double degrees) {
  return Quat(Eigen::AngleAxisd(degrees * std::numbers::pi / 180, Vec3::UnitZ()));
}

std::vector<float> quat_floats(const std::vector<Quat>& qs) {
  std::vector<float> v;
  for (const Quat& q : qs)
    v.insert(v.end(), {static_cast<float>(q.x()), static_cast<float>(q.y()),
                       static_cast<float>(q.z()), static_cast<float>(q.w())});
  return v;
}

Fixture tiny(const std::string& interpolation = "LINEAR",
             std::vector<float> times = {0.0f, 0.5f, 1.0f}) {
  Fixture f;
  f.doc = {{"asset", {{"version", "2.0"}}},
           {"scene", 0},
           {"scenes", {{{"nodes", {0}}}}},
           {"nodes",
            {{{"name", "hips"}, {"children", {1}}, {"translation", {0.0, 1.0, 0.0}}},
             {{"name", "spine"}, {"children", {2}}, {"translation", {0.0, 0.5, 0.0}}},
             {{"name", "head_end"}, {"translation", {0.0, 0.2, 0.0}}}}},
           {"bufferViews", json::array()},
           {"accessors", json::array()}};
  const int t = f.add_accessor(times, "SCALAR", 1, true);
  std::vector<Quat> rots;
  std::vector<float> trans;
  for (float time : times) {
    rots.push_back(z_rotation(60.0 * time));
    trans.insert(trans.end(), {time, 1.0f, 0.0f});  // x = time: linear in time
  }
  const int r = f.add_accessor(quat_floats(rots), "VEC4", 4, false);
  const int p = f.add_accessor(trans, "VEC3", 3, false);
  std::vector<float> ibm;
  for (float y : {-1.0f, -1.5f})
    ibm.insert(ibm.end(), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, y, 0, 1});
  const int m = f.add_accessor(ibm, "MAT4", 16, false);
  f.doc["skins"] = {{{"joints", {0, 1}}, {"inverseBindMatrices", m}}};
  f.doc["animations"] = {
      {{"name", "move"},
       {"samplers",
        {{{"input", t}, {"output", r}, {"interpolation", interpolation}},
         {{"input", t}, {"output", p}, {"interpolation", interpolation}}}},
       {"channels",
        {{{"sampler", 0}, {"target", {{"node", 1}, {"path", "rotation"}}}},
         {{"sampler", 1}, {"target", {{"node", 0}, {"path", "translation"}}}}}}}};
  return f;
}

std::string base64(const std::vector<unsigned char>& in) {
  static const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (in[i] << 16) | (in[i + 1] << 8) | in[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += chars[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = in[i] << 16;
    out += chars[(v >> 18) & 63];
    out += chars[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const unsigned v = (in[i] << 16) | (in[i + 1] << 8);
    out += chars[(v >> 18) & 63];
    out += chars[(v >> 12) & 63];
    out += chars[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// Writes the fixture as name.gltf, with name.bin beside it or the buffer embedded as a data: URI.
fs::path save(const fs::path& dir, const std::string& name, Fixture f, bool embed = false) {
  if (embed) {
    f.doc["buffers"] = {{{"byteLength", f.bin.size()},
                         {"uri", "data:application/octet-stream;base64," + base64(f.bin)}}};
  } else {
    f.doc["buffers"] = {{{"byteLength", f.bin.size()}, {"uri", name + ".bin"}}};
    std::ofstream(dir / (name + ".bin"), std::ios::binary)
        .write(reinterpret_cast<const char*>(f.bin.data()),
               static_cast<std::streamsize>(f.bin.size()));
  }
  const fs::path p = dir / (name + ".gltf");
  std::ofstream(p) << f.doc.dump(1);
  return p;
}

// Runs `fn`, expecting koma::Error with `code` whose context or message contains each of `parts`.
template <class Fn>
void expect_error(Fn fn, ErrorCode code, std::vector<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no koma::Error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << e.what() << " lacks " << part;
  }
}

// Node of each koma joint in a written/read document: by name ("node<i>" for unnamed nodes).
int node_named(const test::GltfDoc& doc, const std::string& name) {
  const auto& nodes = doc.json["nodes"];
  for (size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].value("name", "") == name) return static_cast<int>(n);
  if (name.rfind("node", 0) == 0) return std::stoi(name.substr(4));
  return -1;
}

// Largest distance between koma's FK joint positions at every frame and the independent
// evaluation of `doc`'s animation `anim` at frame times start + f / rate.
double max_world_error(const Motion& m, const test::GltfDoc& doc, int anim, double start = 0.0) {
  const WorldPoses poses = forward_kinematics(m);
  double worst = 0;
  std::vector<int> nodes;
  for (const auto& name : m.skeleton.names) {
    nodes.push_back(node_named(doc, name));
    EXPECT_GE(nodes.back(), 0) << name;
  }
  for (int f = 0; f < m.frame_count; ++f)
    for (int j = 0; j < m.joint_count(); ++j) {
      const Eigen::Vector3d w =
          doc.world(nodes[static_cast<size_t>(j)], anim, start + f / m.frame_rate)
              .block<3, 1>(0, 3);
      worst = std::max(worst, (w - poses.position(f, j)).norm());
    }
  return worst;
}

double max_fk_difference(const Motion& a, const Motion& b) {
  EXPECT_EQ(a.frame_count, b.frame_count);
  EXPECT_EQ(a.skeleton.point_count(), b.skeleton.point_count());
  const WorldPoses pa = forward_kinematics(a), pb = forward_kinematics(b);
  double worst = 0;
  for (size_t i = 0; i < std::min(pa.positions.size(), pb.positions.size()); ++i)
    worst = std::max(worst, (pa.positions[i] - pb.positions[i]).norm());
  return worst;
}

std::vector<fs::path> shared_gltf_files() {
  std::vector<fs::path> out;
  if (!test::have_shared_data()) return out;
  for (const auto& e : fs::recursive_directory_iterator(test::shared_data() / "gltf"))
    if (io::is_gltf_file(e.path())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading.

TEST(GltfRead, TinyFixtureJointsEndSitesChannelsAndKeys) {
  const fs::path dir = test::temp_dir("gltf-tiny");
  const io::ReadResult r = io::read_gltf(save(dir, "tiny", tiny()));
  const Motion& m = r.motion;
  ASSERT_EQ(m.joint_count(), 2);
  EXPECT_EQ(m.skeleton.names[0], "hips");
  EXPECT_EQ(m.skeleton.parents[1], 0);
  ASSERT_EQ(m.skeleton.end_site_count(), 1);
  EXPECT_VEC3_NEAR(m.skeleton.end_sites[0].offset, Vec3(0, 0.2, 0), 1e-12);
  EXPECT_DOUBLE_EQ(m.frame_rate, 2.0);  // the keys' spacing, 0.5 s
  EXPECT_EQ(m.frame_count, 3);
  EXPECT_EQ(m.skeleton.channels[0].size(), 6u);
  EXPECT_EQ(m.skeleton.channels[1],
            (std::vector<Channel>{Channel::Zrotation, Channel::Xrotation, Channel::Yrotation}));
  for (int f = 0; f < 3; ++f) {
    EXPECT_QUAT_NEAR(m.rotation(f, 1), z_rotation(30.0 * f), 1e-6);
    EXPECT_VEC3_NEAR(m.translation(f, 0), Vec3(0.5 * f, 1, 0), 1e-6);
  }
  EXPECT_VEC3_NEAR(m.translation(1, 1), Vec3(0, 0.5, 0), 1e-12);  // unanimated: the node's rest
}

TEST(GltfRead, EmbeddedDataUriReadsLikeExternalBin) {
  const fs::path dir = test::temp_dir("gltf-datauri");
  const Motion a = io::read_gltf(save(dir, "ext", tiny())).motion;
  const Motion b = io::read_gltf(save(dir, "emb", tiny(), true)).motion;
  EXPECT_EQ(max_fk_difference(a, b), 0.0);
}

TEST(GltfRead, NonUniformKeysSampleAt30FpsOrTheOption) {
  const fs::path dir = test::temp_dir("gltf-nonuniform");
  const fs::path p = save(dir, "nu", tiny("LINEAR", {0.0f, 0.1f, 0.37f, 1.0f}));
  const io::ReadResult r = io::read_gltf(p);
  EXPECT_DOUBLE_EQ(r.motion.frame_rate, 30.0);
  EXPECT_EQ(r.motion.frame_count, 31);
  EXPECT_FALSE(r.warnings.empty());
  for (int f = 0; f < r.motion.frame_count; ++f)  // x = t is linear, so every sample is exact
    EXPECT_NEAR(r.motion.translation(f, 0).x(), f / 30.0, 1e-6);
  const io::ReadResult r10 = io::read_motion(p, io::ReadOptions{{}, "", 10.0, 0.0, {}});
  EXPECT_DOUBLE_EQ(r10.motion.frame_rate, 10.0);
  EXPECT_EQ(r10.motion.frame_count, 11);
  // Keys on a subdivided grid: gaps of 0.1 and 0.05 s share a 20 fps grid.
  const io::ReadResult g =
      io::read_gltf(save(dir, "grid", tiny("LINEAR", {0.0f, 0.1f, 0.15f, 0.5f})));
  EXPECT_NEAR(g.motion.frame_rate, 20.0, 1e-9);
  EXPECT_EQ(g.motion.frame_count, 11);
}

TEST(GltfRead, StepHoldsEachKeyUntilTheNext) {
  const fs::path dir = test::temp_dir("gltf-step");
  const fs::path p = save(dir, "step", tiny("STEP"));
  const Motion m = io::read_motion(p, io::ReadOptions{{}, "", 8.0, 0.0, {}}).motion;
  ASSERT_EQ(m.frame_count, 9);
  for (int f = 0; f < m.frame_count; ++f) {
    const int key = std::min(f / 4, 2);  // keys at frames 0, 4, 8
    EXPECT_QUAT_NEAR(m.rotation(f, 1), z_rotation(30.0 * key), 1e-6) << f;
    EXPECT_NEAR(m.translation(f, 0).x(), 0.5 * key, 1e-6) << f;
  }
}

TEST(GltfRead, CubicSplineFollowsHermiteTangents) {
  // Translation keys 0 -> 1 (x) at t = 0, 1. With tangents equal to the slope the spline is the
  // straight line; with zero tangents it is 3u^2 - 2u^3.
  for (const float tangent : {1.0f, 0.0f}) {
    Fixture f = tiny("LINEAR", {0.0f, 1.0f});
    std::vector<float> cubic = {tangent, 0, 0, 0, 1, 0, tangent, 0, 0,  //
                                tangent, 0, 0, 1, 1, 0, tangent, 0, 0};
    const int out = f.add_accessor(cubic, "VEC3", 3, false);
    f.doc["animations"][0]["samplers"][1]["output"] = out;
    f.doc["animations"][0]["samplers"][1]["interpolation"] = "CUBICSPLINE";
    const fs::path dir = test::temp_dir("gltf-cubic");
    const Motion m = io::read_motion(save(dir, "cubic", f), io::ReadOptions{{}, "", 10.0, 0.0, {}}).motion;
    ASSERT_EQ(m.frame_count, 11);
    for (int k = 0; k <= 10; ++k) {
      const double u = k / 10.0;
      const double expected = tangent == 1.0f ? u : 3 * u * u - 2 * u * u * u;
      EXPECT_NEAR(m.translation(k, 0).x(), expected, 1e-6) << "tangent " << tangent << " u " << u;
    }
  }
}

TEST(GltfRead, SparseAccessorAndNormalisedShortRotations) {
  Fixture f = tiny();
  // Translation output as a sparse accessor without a bufferView: zeros, key 1 set to (2, 3, 4).
  const std::uint32_t index = 1;
  const float value[3] = {2.0f, 3.0f, 4.0f};
  const int idx_view = f.add_view(&index, 4);
  const int values_view = f.add_view(value, 12);
  f.doc["accessors"].push_back({{"componentType", 5126},
                                {"count", 3},
                                {"type", "VEC3"},
                                {"sparse",
                                 {{"count", 1},
                                  {"indices", {{"bufferView", idx_view}, {"componentType", 5125}}},
                                  {"values", {{"bufferView", values_view}}}}}});
  f.doc["animations"][0]["samplers"][1]["output"] = f.doc["accessors"].size() - 1;
  // Rotation output as normalised SHORT: 90 degrees about z at every key.
  const std::int16_t c = 23170;  // 32767 * sqrt(1/2)
  const std::int16_t q[12] = {0, 0, c, c, 0, 0, c, c, 0, 0, c, c};
  f.doc["accessors"].push_back({{"bufferView", f.add_view(q, sizeof q)},
                                {"componentType", 5122},
                                {"normalized", true},
                                {"count", 3},
                                {"type", "VEC4"}});
  f.doc["animations"][0]["samplers"][0]["output"] = f.doc["accessors"].size() - 1;
  const Motion m = io::read_gltf(save(test::temp_dir("gltf-sparse"), "sparse", f)).motion;
  ASSERT_EQ(m.frame_count, 3);
  EXPECT_VEC3_NEAR(m.translation(0, 0), Vec3(0, 0, 0), 1e-12);
  EXPECT_VEC3_NEAR(m.translation(1, 0), Vec3(2, 3, 4), 1e-12);
  EXPECT_VEC3_NEAR(m.translation(2, 0), Vec3(0, 0, 0), 1e-12);
  for (int k = 0; k < 3; ++k) EXPECT_QUAT_NEAR(m.rotation(k, 1), z_rotation(90), 1e-4);
}

TEST(GltfRead, ChoosesAnimationByNameOrIndex) {
  Fixture f = tiny();
  json second = f.doc["animations"][0];
  second["name"] = "other";
  second["channels"].erase(1);  // rotation only: root stays at its rest translation
  f.doc["animations"].push_back(second);
  const fs::path p = save(test::temp_dir("gltf-choose"), "two", f);
  const auto list = io::list_gltf_animations(p);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].name, "other");
  EXPECT_EQ(list[0].channel_count, 2);
  EXPECT_EQ(list[1].channel_count, 1);
  EXPECT_DOUBLE_EQ(list[0].end, 1.0);
  const Motion by_name = io::read_gltf(p, {"other", 0, {}}).motion;
  const Motion by_index = io::read_gltf(p, {"1", 0, {}}).motion;
  EXPECT_EQ(max_fk_difference(by_name, by_index), 0.0);
  EXPECT_VEC3_NEAR(by_name.translation(2, 0), Vec3(0, 1, 0), 1e-12);
  expect_error(
      [&] {
        io::read_gltf(p, {"missing", 0, {}});
      },
      ErrorCode::bad_file, {"missing", "move", "other"});
}

TEST(GltfRead, TransformAboveTheSkeletonIsBakedIntoTheRoot) {
  // An "Armature" node above the hips: Z-up to Y-up rotation, centimetres (scale 0.01), an offset;
  // the spine's rest comes as a matrix. koma's FK must match glTF's world positions, and writing
  // the character back must restore glTF's own node values (TRS, no matrix on animated nodes).
  Fixture f = tiny();
  f.doc["nodes"][0]["translation"] = {0.0, 0.0, 100.0};
  f.doc["nodes"][1].erase("translation");
  f.doc["nodes"][1]["matrix"] = {0, 1, 0, 0, -1, 0,  0, 0,
                                 0, 0, 1, 0, 0,  50, 0, 1};  // 90 deg about z, 50 up
  f.doc["nodes"].push_back({{"name", "Armature"},
                            {"children", {0}},
                            {"translation", {1.0, 2.0, 3.0}},
                            {"rotation", {-0.70710678118654752, 0.0, 0.0, 0.70710678118654752}},
                            {"scale", {0.01, 0.01, 0.01}}});
  f.doc["scenes"][0]["nodes"] = {3};
  const fs::path dir = test::temp_dir("gltf-ancestors");
  const fs::path p = save(dir, "arm", f);
  const test::GltfDoc src = test::load_gltf(p);
  const io::ReadResult r = io::read_gltf(p);
  EXPECT_LE(max_world_error(r.motion, src, 0), 1e-9);
  EXPECT_NEAR(r.motion.skeleton.offsets[1].norm(), 0.5, 1e-12);  // 50 cm in metres
  io::WriteOptions wo;
  wo.gltf_scene = r.gltf_scene;
  io::write_motion(dir / "out.glb", r.motion, wo);
  const test::GltfDoc out = test::load_gltf(dir / "out.glb");
  EXPECT_EQ(test::validate_gltf(out), std::vector<std::string>{});
  EXPECT_LE(max_world_error(r.motion, out, 0), 1e-6);
  EXPECT_NEAR(out.json["nodes"][0]["translation"][2].get<double>(), 100.0, 1e-9);
  EXPECT_FALSE(out.json["nodes"][1].contains("matrix"));
}

// ---------------------------------------------------------------------------------------------
// Bad input: a koma::Error naming the accessor or node; nothing written.

TEST(GltfErrors, MissingBin) {
  const fs::path dir = test::temp_dir("gltf-missing-bin");
  const fs::path p = save(dir, "nobin", tiny());
  fs::remove(dir / "nobin.bin");
  expect_error([&] { io::read_gltf(p); }, ErrorCode::io, {"nobin.bin"});
  const fs::path out = dir / "out.glb";
  EXPECT_THROW(io::write_motion(out, io::read_motion(p).motion), Error);
  EXPECT_FALSE(fs::exists(out));
}

TEST(GltfErrors, AccessorPastItsBufferView) {
  Fixture f = tiny();
  f.doc["accessors"][1]["count"] = 40;  // rotations: 40 x 16 bytes, the view holds 3
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-acc-range"), "bad", f)); },
               ErrorCode::bad_file, {"accessor 1", "bufferView"});
}

TEST(GltfErrors, AccessorIndexThatDoesNotExist) {
  Fixture f = tiny();
  f.doc["animations"][0]["samplers"][1]["output"] = 99;
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-acc-index"), "bad", f)); },
               ErrorCode::bad_file, {"accessor 99"});
}

TEST(GltfErrors, BufferViewPastItsBuffer) {
  Fixture f = tiny();
  f.doc["bufferViews"][2]["byteOffset"] = 100000;
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-view-range"), "bad", f)); },
               ErrorCode::bad_file, {"accessor 2", "bufferView 2"});
}

TEST(GltfErrors, NonIncreasingKeyTimes) {
  expect_error(
      [&] {
        io::read_gltf(
            save(test::temp_dir("gltf-times"), "bad", tiny("LINEAR", {0.0f, 0.5f, 0.5f})));
      },
      ErrorCode::bad_file, {"accessor 0", "increase"});
}

TEST(GltfErrors, OutputCountDiffersFromKeyCount) {
  Fixture f = tiny();
  f.doc["accessors"][2]["count"] = 2;
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-count"), "bad", f)); },
               ErrorCode::bad_file, {"accessor 2", "2 values for 3 key times"});
}

// A rigid rig (no skin): the animated nodes are the skeleton, with a warning; the same motion as
// the skinned file.
TEST(GltfErrors, NoSkinReadsTheAnimatedNodesWithAWarning) {
  Fixture skinned = tiny();
  Fixture f = tiny();
  f.doc.erase("skins");
  const io::ReadResult a = io::read_gltf(save(test::temp_dir("gltf-skin"), "ok", skinned));
  const io::ReadResult r = io::read_gltf(save(test::temp_dir("gltf-noskin"), "rig", f));
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || w.find("no skin") != std::string::npos;
  EXPECT_TRUE(warned);
  ASSERT_EQ(r.motion.frame_count, a.motion.frame_count);
  for (size_t i = 0; i < a.motion.rotations.size() && i < r.motion.rotations.size(); ++i)
    EXPECT_QUAT_NEAR(r.motion.rotations[i], a.motion.rotations[i], 1e-9);
}

TEST(GltfErrors, NoSkinAndNoAnimation) {
  Fixture f = tiny();
  f.doc.erase("skins");
  f.doc.erase("animations");
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-noskin-noanim"), "bad", f)); },
               ErrorCode::bad_file, {"no animation"});
}

TEST(GltfErrors, NoAnimation) {
  Fixture f = tiny();
  f.doc.erase("animations");
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-noanim"), "bad", f)); },
               ErrorCode::bad_file, {"no animation"});
}

TEST(GltfErrors, ChannelOnMissingNodeAndSkinJointMissing) {
  Fixture f = tiny();
  f.doc["animations"][0]["channels"][0]["target"]["node"] = 7;
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-node"), "bad", f)); },
               ErrorCode::bad_file, {"node 7"});
  Fixture g = tiny();
  g.doc["skins"][0]["joints"] = {0, 9};
  expect_error([&] { io::read_gltf(save(test::temp_dir("gltf-joint"), "bad", g)); },
               ErrorCode::bad_file, {"node 9"});
}

TEST(GltfErrors, NotGltf) {
  const fs::path dir = test::temp_dir("gltf-garbage");
  std::ofstream(dir / "x.gltf") << "{ not json";
  EXPECT_THROW(io::read_gltf(dir / "x.gltf"), Error);
  std::ofstream(dir / "x.glb") << "glTF\x02\0\0\0garbage";
  EXPECT_THROW(io::read_gltf(dir / "x.glb"), Error);
  expect_error([&] { io::read_gltf(dir / "absent.glb"); }, ErrorCode::io, {"absent.glb"});
}

// ---------------------------------------------------------------------------------------------
// Writing.

Motion short_sample(int frames = 40) {
  const Motion m = make_sample_motion();
  return cut(m, 0, std::min(frames, m.frame_count));
}

TEST(GltfWrite, BvhToGltfToBvhKeepsWorldPositionsLayoutAndUnit) {
  const fs::path dir = test::temp_dir("gltf-bvh-roundtrip");
  const Motion m = short_sample();
  for (const char* name : {"s.glb", "s.gltf"}) {
    io::write_motion(dir / name, m);
    const test::GltfDoc doc = test::load_gltf(dir / name);
    EXPECT_EQ(test::validate_gltf(doc), std::vector<std::string>{}) << name;
    // Y-up metres: the written nodes evaluate to koma's world positions in metres.
    EXPECT_LE(max_world_error(m, doc, 0), 1e-5) << name;
    const io::ReadResult back = io::read_motion(dir / name);
    EXPECT_LE(max_fk_difference(m, back.motion), 1e-5) << name;
    EXPECT_EQ(back.motion.skeleton.channels, m.skeleton.channels);
    EXPECT_EQ(back.motion.skeleton.names, m.skeleton.names);
    EXPECT_EQ(back.motion.source_unit, m.source_unit);
    EXPECT_DOUBLE_EQ(back.motion.frame_rate, m.frame_rate);
    io::write_motion(dir / "back.bvh", back.motion);
    EXPECT_LE(max_fk_difference(m, io::read_motion(dir / "back.bvh").motion), 1e-5) << name;
  }
  EXPECT_TRUE(fs::exists(dir / "s.bin"));
}

TEST(GltfWrite, SharedBvhWithOtherRotationOrderRoundTrips) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = test::shared_bvh_files("bvh/styles/xia2015");
  ASSERT_FALSE(files.empty());
  const Motion m = cut(io::read_motion(files.front()).motion, 0, 60);
  const fs::path dir = test::temp_dir("gltf-xia");
  io::write_motion(dir / "x.glb", m);
  const test::GltfDoc doc = test::load_gltf(dir / "x.glb");
  EXPECT_TRUE(test::validate_gltf(doc).empty());
  EXPECT_LE(max_world_error(m, doc, 0), 1e-5);
  const Motion back = io::read_motion(dir / "x.glb").motion;
  EXPECT_EQ(back.skeleton.channels, m.skeleton.channels);
  io::write_motion(dir / "x.bvh", back);
  EXPECT_LE(max_fk_difference(m, io::read_motion(dir / "x.bvh").motion), 1e-5);
}

TEST(GltfWrite, StepKeysGiveOneKeyPerKeptPoseAndHoldIt) {
  const fs::path dir = test::temp_dir("gltf-stepkeys");
  const Motion m = short_sample(30);
  const std::vector<int> kept = {0, 2, 3, 7, 12, 13, 20, 27};
  io::WriteOptions wo;
  wo.step_keys = kept;
  io::write_motion(dir / "held.glb", m, wo);
  const test::GltfDoc doc = test::load_gltf(dir / "held.glb");
  EXPECT_TRUE(test::validate_gltf(doc).empty());
  const auto& anim = doc.json["animations"][0];
  ASSERT_FALSE(anim["samplers"].empty());
  for (const auto& s : anim["samplers"]) {
    EXPECT_EQ(s["interpolation"], "STEP");
    EXPECT_EQ(doc.count(s["input"]), static_cast<int>(kept.size()));
    EXPECT_EQ(doc.count(s["output"]), static_cast<int>(kept.size()));
  }
  // The held motion: every frame shows the latest kept pose.
  Motion held = m;
  for (int f = 0; f < m.frame_count; ++f) {
    const int k = *std::prev(std::upper_bound(kept.begin(), kept.end(), f));
    for (int j = 0; j < m.joint_count(); ++j) {
      held.frame_rotations(f)[static_cast<size_t>(j)] = m.rotation(k, j);
      held.frame_translations(f)[static_cast<size_t>(j)] = m.translation(k, j);
    }
  }
  EXPECT_LE(max_world_error(held, doc, 0), 1e-5);
  const Motion back = io::read_motion(dir / "held.glb").motion;
  EXPECT_EQ(back.frame_count, m.frame_count);  // the clip keeps its length past the last drawing
  EXPECT_LE(max_fk_difference(held, back), 1e-5);
}

TEST(GltfWrite, ScaleChannelsWhenScalesPresent) {
  const fs::path dir = test::temp_dir("gltf-scale");
  Motion m = short_sample(20);
  m.scales.assign(m.rotations.size(), Vec3::Ones());
  for (int f = 0; f < m.frame_count; ++f)
    m.scales[static_cast<size_t>(f * m.joint_count() + 3)] =
        Vec3(1.0, 1.0 + 0.3 * std::sin(f * 0.3), 1.0);
  io::write_motion(dir / "sq.glb", m);
  const test::GltfDoc doc = test::load_gltf(dir / "sq.glb");
  int scale_channels = 0;
  for (const auto& c : doc.json["animations"][0]["channels"])
    scale_channels += c["target"]["path"] == "scale";
  EXPECT_EQ(scale_channels, m.joint_count());
  const Motion back = io::read_motion(dir / "sq.glb").motion;
  ASSERT_EQ(back.scales.size(), m.scales.size());
  for (size_t i = 0; i < m.scales.size(); ++i) EXPECT_VEC3_NEAR(back.scales[i], m.scales[i], 1e-6);
  // Without scales there are no scale channels.
  io::write_motion(dir / "plain.glb", short_sample(5));
  const test::GltfDoc plain = test::load_gltf(dir / "plain.glb");
  for (const auto& c : plain.json["animations"][0]["channels"]) EXPECT_NE(c["target"]["path"], "scale");
}

TEST(GltfWrite, BadStepKeysOrForeignSceneWriteNothing) {
  const fs::path dir = test::temp_dir("gltf-write-errors");
  const Motion m = short_sample(10);
  for (std::vector<int> keys :
       {std::vector<int>{0, 5, 5}, std::vector<int>{0, 10}, std::vector<int>{-1, 2}}) {
    io::WriteOptions wo;
    wo.step_keys = keys;
    expect_error([&] { io::write_motion(dir / "x.gltf", m, wo); }, ErrorCode::invalid_settings,
                 {"step_keys"});
  }
  const io::ReadResult tiny_read = io::read_gltf(save(dir, "tiny", tiny()));
  io::WriteOptions wo;
  wo.gltf_scene = tiny_read.gltf_scene;
  expect_error([&] { io::write_motion(dir / "x.glb", m, wo); }, ErrorCode::mismatch, {"joints"});
  EXPECT_FALSE(fs::exists(dir / "x.gltf"));
  EXPECT_FALSE(fs::exists(dir / "x.bin"));
  EXPECT_FALSE(fs::exists(dir / "x.glb"));
  for (const auto& e : fs::directory_iterator(dir))  // no temporaries left behind
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

// ---------------------------------------------------------------------------------------------
// Real files.

TEST(GltfShared, EveryFileAndAnimationLoads) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = shared_gltf_files();
  ASSERT_GE(files.size(), 3u);
  for (const auto& p : files) {
    const auto list = io::list_gltf_animations(p);
    ASSERT_FALSE(list.empty()) << p;
    for (const auto& a : list) {
      const io::ReadResult r = io::read_gltf(p, {std::to_string(a.index), 0, {}});
      EXPECT_NO_THROW(r.motion.validate()) << p;
      EXPECT_GT(r.motion.frame_count, 1) << p;
      EXPECT_NEAR(r.motion.duration(), a.end - a.start, 1.0 / r.motion.frame_rate + 1e-6)
          << p << " " << a.name;
    }
  }
  const auto fox = io::list_gltf_animations(test::shared_data() / "gltf/Fox/Fox.glb");
  ASSERT_EQ(fox.size(), 3u);
  EXPECT_EQ(fox[0].name, "Survey");
  EXPECT_EQ(fox[1].name, "Walk");
  EXPECT_EQ(fox[2].name, "Run");
  EXPECT_EQ(io::read_gltf(test::shared_data() / "gltf/Fox/Fox.glb").motion.joint_count(), 24);
}

TEST(GltfShared, ReaderMatchesIndependentEvaluation) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const auto& p : shared_gltf_files()) {
    const test::GltfDoc doc = test::load_gltf(p);
    for (size_t a = 0; a < doc.json["animations"].size(); ++a) {
      const io::ReadResult r = io::read_gltf(p, {std::to_string(a), 0, {}});
      double start = std::numeric_limits<double>::infinity();
      for (const auto& s : doc.json["animations"][a]["samplers"])
        start =
            std::min(start, doc.json["accessors"][s["input"].get<int>()]["min"][0].get<double>());
      const double size = std::max(1.0, r.motion.skeleton.rest_extent());
      EXPECT_LE(max_world_error(r.motion, doc, static_cast<int>(a), start), 1e-5 * size)
          << p << " animation " << a;
    }
  }
}

TEST(GltfShared, GltfToKomaToGltfKeepsWorldPositionsAndTheCharacter) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path dir = test::temp_dir("gltf-shared-roundtrip");
  for (const auto& p : shared_gltf_files()) {
    const test::GltfDoc src = test::load_gltf(p);
    for (size_t a = 0; a < src.json["animations"].size(); ++a) {
      const io::ReadResult r = io::read_gltf(p, {std::to_string(a), 0, {}});
      io::WriteOptions wo;
      wo.gltf_scene = r.gltf_scene;
      const double size = std::max(1.0, r.motion.skeleton.rest_extent());
      for (const char* ext : {".glb", ".gltf"}) {
        const fs::path out = dir / (p.stem().string() + std::to_string(a) + ext);
        io::write_motion(out, r.motion, wo);
        const test::GltfDoc doc = test::load_gltf(out);
        EXPECT_EQ(test::validate_gltf(doc), std::vector<std::string>{}) << out;
        EXPECT_LE(max_world_error(r.motion, doc, 0), 1e-5 * size) << out;
        EXPECT_LE(max_fk_difference(r.motion, io::read_motion(out).motion), 1e-5 * size) << out;
        // ... and on to BVH with the layout the reader gave the joints.
        const fs::path bvh = dir / (p.stem().string() + std::to_string(a) + ".bvh");
        io::write_motion(bvh, r.motion);
        EXPECT_LE(
            max_fk_difference(r.motion, io::read_motion(bvh, {LengthUnit::metre, "", 0, 0.0, {}}).motion),
            1e-5 * size);
        // The character comes along: meshes, skins, materials, images; no old animations.
        for (const char* key : {"meshes", "skins", "materials", "images", "textures"})
          EXPECT_EQ(doc.json.value(key, json::array()).size(),
                    src.json.value(key, json::array()).size())
              << out << " " << key;
        EXPECT_EQ(doc.json["animations"].size(), 1u);
        EXPECT_EQ(doc.json["buffers"].size(), 1u);
        for (const auto& img : doc.json.value("images", json::array()))
          EXPECT_TRUE(img.contains("bufferView")) << out;
      }
    }
  }
}

// Issue 19: the animation is named after the clip, not "koma" (Blender listed "koma_koma").
TEST(GltfWrite, AnimationIsNamedAfterTheOutputFile) {
  const fs::path dir = test::temp_dir("gltf_anim_name");
  const Motion m = resample(make_sample_motion(), 24.0);
  io::write_motion(dir / "walk_keys.glb", m);
  const auto list = io::list_gltf_animations(dir / "walk_keys.glb");
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "walk_keys");
  io::GltfWriteOptions o;
  o.animation_name = "take_03";
  io::write_gltf(dir / "x.gltf", m, o);
  EXPECT_EQ(io::list_gltf_animations(dir / "x.gltf")[0].name, "take_03");
}

}  // namespace
}  // namespace koma
