// FBX input: synthetic ASCII FBX 7.4 documents written here (so every expected value follows from
// geometry, not from the reader), bad input, and every file of ../shared/data/fbx.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numbers>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/motion_file.hpp"
#include "gltf_check.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

namespace fs = std::filesystem;
constexpr long long kTicksPerSecond = 46186158000LL;  // FBX KTime

/// A chain Hips -> Spine -> Head laid out along the file's up axis (Z up: Maya/Max style), each
/// bone `bone` file units long, Hips `bone` * 2 above the origin; Spine turns about the file's X
/// axis from 0 to `degrees` over one second, keyed at 0 and 1 s.
struct FixtureSpec {
  double unit_scale = 100.0;  ///< UnitScaleFactor: centimetres per file unit (100 = metres).
  int time_mode = 14;         ///< 14 = custom (CustomFrameRate), 11 = 24 fps, 6 = 30 fps.
  double custom_rate = 14.985;
  double stop_seconds = 1.1;  ///< Stack end: between frames at 14.985 fps.
  double bone = 0.5;
  double degrees = 90.0;
  int version = 7400;
  bool animated = true;
  bool second_skeleton = false;  ///< An animated "Prop" hierarchy beside the character.
};

/// One FBX document node: `Name: props { children }`. The same tree is written as ASCII (what
/// Maya's "FBX ASCII" writes) and as binary (the FBX 7.4 binary encoding: 32-bit record offsets,
/// typed properties, uncompressed arrays), so the two files hold the same scene.
struct ObjName {
  std::string cls, name;  // "Model", "Hips": ASCII "Model::Hips", binary "Hips\x00\x01Model"
};
using Prop = std::variant<int32_t, int64_t, double, std::string, ObjName, std::vector<int64_t>,
                          std::vector<float>, std::vector<int32_t>>;
struct Node {
  std::string name;
  std::vector<Prop> props;
  std::vector<Node> children;
  bool scope = false;  ///< An object record written with an (empty) scope.
};

Node p70(const std::string& name, const std::string& type, const std::string& label, const std::string& flags,
         std::vector<Prop> values) {
  Node n{"P", {name, type, label, flags}, {}};
  n.props.insert(n.props.end(), values.begin(), values.end());
  return n;
}

Node model(int64_t id, const std::string& name, double z) {
  return {"Model",
          {id, ObjName{"Model", name}, std::string("LimbNode")},
          {{"Version", {int32_t{232}}, {}}, {"Properties70", {}, {p70("Lcl Translation", "Lcl Translation", "", "A", {0.0, 0.0, z})}}}};
}

void add_rotation_curve(Node& objects, int64_t node_id, int64_t curve_id, double degrees) {
  objects.children.push_back({"AnimationCurveNode",
                              {node_id, ObjName{"AnimCurveNode", "R"}, std::string()},
                              {{"Properties70",
                                {},
                                {p70("d|X", "Number", "", "A", {0.0}), p70("d|Y", "Number", "", "A", {0.0}),
                                 p70("d|Z", "Number", "", "A", {0.0})}}}});
  objects.children.push_back({"AnimationCurve",
                              {curve_id, ObjName{"AnimCurve", ""}, std::string()},
                              {{"Default", {0.0}, {}},
                               {"KeyVer", {int32_t{4008}}, {}},
                               {"KeyTime", {std::vector<int64_t>{0, kTicksPerSecond}}, {}},
                               {"KeyValueFloat", {std::vector<float>{0.0f, static_cast<float>(degrees)}}, {}},
                               {"KeyAttrFlags", {std::vector<int32_t>{260}}, {}},  // linear
                               {"KeyAttrDataFloat", {std::vector<float>{0, 0, 0, 0}}, {}},
                               {"KeyAttrRefCount", {std::vector<int32_t>{2}}, {}}}});
}

Node connect(const char* type, int64_t child, int64_t parent, const char* property = nullptr) {
  Node n{"C", {std::string(type), child, parent}, {}};
  if (property != nullptr) n.props.emplace_back(std::string(property));
  return n;
}

std::vector<Node> fixture_tree(const FixtureSpec& s) {
  std::vector<Node> top;
  top.push_back({"FBXHeaderExtension", {}, {{"FBXHeaderVersion", {int32_t{1003}}, {}}, {"FBXVersion", {int32_t{s.version}}, {}}}});
  top.push_back({"GlobalSettings",
                 {},
                 {{"Version", {int32_t{1000}}, {}},
                  {"Properties70",
                   {},
                   {p70("UpAxis", "int", "Integer", "", {int32_t{2}}), p70("UpAxisSign", "int", "Integer", "", {int32_t{1}}),
                    p70("FrontAxis", "int", "Integer", "", {int32_t{1}}),
                    p70("FrontAxisSign", "int", "Integer", "", {int32_t{-1}}),
                    p70("CoordAxis", "int", "Integer", "", {int32_t{0}}),
                    p70("CoordAxisSign", "int", "Integer", "", {int32_t{1}}),
                    p70("UnitScaleFactor", "double", "Number", "", {s.unit_scale}),
                    p70("TimeMode", "enum", "", "", {int32_t{s.time_mode}}),
                    p70("CustomFrameRate", "double", "Number", "", {s.custom_rate})}}}});
  Node objects{"Objects", {}, {model(1001, "Hips", 2 * s.bone), model(1002, "Spine", s.bone), model(1003, "Head", s.bone)}};
  Node links{"Connections", {}, {connect("OO", 1001, 0), connect("OO", 1002, 1001), connect("OO", 1003, 1002)}};
  if (s.second_skeleton) {
    objects.children.push_back(model(1004, "Prop", 0.0));
    objects.children.push_back(model(1005, "PropTip", s.bone));
    links.children.push_back(connect("OO", 1004, 0));
    links.children.push_back(connect("OO", 1005, 1004));
  }
  if (s.animated) {
    objects.children.push_back({"AnimationStack",
                                {int64_t{3001}, ObjName{"AnimStack", "Walk"}, std::string()},
                                {{"Properties70",
                                  {},
                                  {p70("LocalStop", "KTime", "Time", "",
                                       {static_cast<int64_t>(std::llround(s.stop_seconds * kTicksPerSecond))})}}}});
    objects.children.push_back({"AnimationLayer", {int64_t{3002}, ObjName{"AnimLayer", "BaseLayer"}, std::string()}, {}, true});
    add_rotation_curve(objects, 3003, 3004, s.degrees);
    for (Node n : {connect("OO", 3002, 3001), connect("OO", 3003, 3002), connect("OP", 3003, 1002, "Lcl Rotation"),
                   connect("OP", 3004, 3003, "d|X")})
      links.children.push_back(n);
    if (s.second_skeleton) {
      add_rotation_curve(objects, 3005, 3006, 45.0);
      for (Node n : {connect("OO", 3005, 3002), connect("OP", 3005, 1004, "Lcl Rotation"), connect("OP", 3006, 3005, "d|X")})
        links.children.push_back(n);
    }
  }
  top.push_back(objects);
  top.push_back(links);
  return top;
}

template <typename T>
std::string join(const std::vector<T>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{}", i ? "," : "", v[i]);
  return out;
}

void write_ascii(const Node& n, int depth, std::string& out) {
  const std::string indent(static_cast<size_t>(depth), '\t');
  out += indent + n.name + ": ";
  std::string arrays;
  for (size_t i = 0; i < n.props.size(); ++i) {
    const Prop& p = n.props[i];
    const std::string sep = i ? ", " : "";
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) out += sep + '"' + v + '"';
          else if constexpr (std::is_same_v<T, ObjName>) out += sep + '"' + v.cls + "::" + v.name + '"';
          else if constexpr (std::is_arithmetic_v<T>) out += sep + fmt::format("{}", v);
          else out += fmt::format("*{} {{\n{}\ta: {}\n{}}}", v.size(), indent, join(v), indent);
        },
        p);
  }
  if (n.children.empty() && !n.scope) {
    out += "\n";
    return;
  }
  out += " {\n";
  for (const Node& c : n.children) write_ascii(c, depth + 1, out);
  out += indent + "}\n";
}

std::string fixture_text(const FixtureSpec& s) {
  std::string out = "; FBX 7.4.0 project file\n";
  for (const Node& n : fixture_tree(s)) write_ascii(n, 0, out);
  return out;
}

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void write_binary(const Node& n, std::string& out) {
  const size_t start = out.size();
  put<uint32_t>(out, 0);  // end offset, patched below
  put<uint32_t>(out, static_cast<uint32_t>(n.props.size()));
  put<uint32_t>(out, 0);  // property bytes, patched below
  out += static_cast<char>(n.name.size());
  out += n.name;
  const size_t props = out.size();
  for (const Prop& p : n.props)
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          const auto array = [&](char code, const auto& a) {
            out += code;
            put<uint32_t>(out, static_cast<uint32_t>(a.size()));
            put<uint32_t>(out, 0);  // not compressed
            put<uint32_t>(out, static_cast<uint32_t>(a.size() * sizeof(a[0])));
            out.append(reinterpret_cast<const char*>(a.data()), a.size() * sizeof(a[0]));
          };
          if constexpr (std::is_same_v<T, int32_t>) out += 'I', put(out, v);
          else if constexpr (std::is_same_v<T, int64_t>) out += 'L', put(out, v);
          else if constexpr (std::is_same_v<T, double>) out += 'D', put(out, v);
          else if constexpr (std::is_same_v<T, std::string>) out += 'S', put<uint32_t>(out, static_cast<uint32_t>(v.size())), out += v;
          else if constexpr (std::is_same_v<T, ObjName>) {
            const std::string s = v.name + std::string("\x00\x01", 2) + v.cls;
            out += 'S', put<uint32_t>(out, static_cast<uint32_t>(s.size())), out += s;
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) array('l', v);
          else if constexpr (std::is_same_v<T, std::vector<float>>) array('f', v);
          else array('i', v);
        },
        p);
  const auto prop_bytes = static_cast<uint32_t>(out.size() - props);
  std::memcpy(&out[start + 8], &prop_bytes, 4);
  if (!n.children.empty() || n.scope) {
    for (const Node& c : n.children) write_binary(c, out);
    out.append(13, '\0');  // end of the nested list
  }
  const auto end = static_cast<uint32_t>(out.size());
  std::memcpy(&out[start], &end, 4);
}

std::string fixture_binary(const FixtureSpec& s) {
  std::string out("Kaydara FBX Binary  \x00\x1a\x00", 23);
  put<uint32_t>(out, static_cast<uint32_t>(s.version));
  for (const Node& n : fixture_tree(s)) write_binary(n, out);
  out.append(13, '\0');   // end of the top-level list
  out.append(160, '\0');  // footer padding
  return out;
}

fs::path write_fixture(const std::string& test, const FixtureSpec& spec, bool binary = false) {
  const fs::path p = test::temp_dir(test) / "chain.fbx";
  std::ofstream(p, std::ios::binary) << (binary ? fixture_binary(spec) : fixture_text(spec));
  return p;
}

/// Throws and returns the message, for checking what an error names.
template <typename F>
std::string error_of(F&& f, ErrorCode expected) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

// ---------------------------------------------------------------------------------------------
// Synthetic documents: axis system, units, custom rate, fractional end, interpolation.

TEST(FbxRead, ZUpMetresChainStandsOnYAtItsRealLength) {
  const FixtureSpec spec;
  const io::ReadResult r = io::read_fbx(write_fixture("fbx_zup", spec));
  const Motion& m = r.motion;
  ASSERT_EQ(m.joint_count(), 2);  // Hips, Spine; the leaf Head becomes an end site
  EXPECT_EQ(m.skeleton.names[0], "Hips");
  EXPECT_EQ(m.skeleton.names[1], "Spine");
  ASSERT_EQ(m.skeleton.end_site_count(), 1);
  EXPECT_EQ(m.source_unit, LengthUnit::metre);
  const WorldPoses w = forward_kinematics(m);
  // Frame 0: rest, straight up the file's Z = koma's Y.
  EXPECT_VEC3_NEAR(w.position(0, 0), Vec3(0, 1.0, 0), 1e-9);
  EXPECT_VEC3_NEAR(w.position(0, 1), Vec3(0, 1.5, 0), 1e-9);
  EXPECT_VEC3_NEAR(w.position(0, 2), Vec3(0, 2.0, 0), 1e-9);
  // Frame 7 (0.467 s): Spine has turned 90 * t degrees about X (linear key interpolation); file
  // (0, -0.5 sin a, 1.5 + 0.5 cos a) is koma (0, 1.5 + 0.5 cos a, 0.5 sin a).
  const double a = 90.0 * (7 / 14.985) * std::numbers::pi / 180.0;
  EXPECT_VEC3_NEAR(w.position(7, 2), Vec3(0, 1.5 + 0.5 * std::cos(a), 0.5 * std::sin(a)), 1e-6);
  // After the last key (1 s = frame 14.985) the pose holds at 90 degrees.
  EXPECT_VEC3_NEAR(w.position(16, 2), Vec3(0, 1.5, 0.5), 1e-6);
}

TEST(FbxRead, CustomRateAndAnEndBetweenFramesInventNoFrame) {
  const FixtureSpec spec;  // 14.985 fps, 1.1 s = 16.48 frames
  const io::ReadResult r = io::read_fbx(write_fixture("fbx_rate", spec));
  EXPECT_DOUBLE_EQ(r.motion.frame_rate, 14.985);
  EXPECT_EQ(r.motion.frame_count, 17);  // frames 0..16; 16.48 is not padded to 17
  EXPECT_LE(r.motion.duration(), spec.stop_seconds);
  const auto list = io::list_fbx_animations(write_fixture("fbx_rate_list", spec));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "Walk");
  EXPECT_NEAR(list[0].duration, 1.1, 1e-9);
  EXPECT_DOUBLE_EQ(list[0].frame_rate, 14.985);
  EXPECT_EQ(list[0].frame_count, 17);
  EXPECT_FALSE(list[0].junk);
}

TEST(FbxRead, StandardTimeModesAndOptionRate) {
  FixtureSpec spec;
  spec.time_mode = 6;  // 30 fps
  spec.custom_rate = -1;  // Maya writes -1 when the mode is not custom
  spec.stop_seconds = 1.0;
  io::ReadResult r = io::read_fbx(write_fixture("fbx_30", spec));
  EXPECT_DOUBLE_EQ(r.motion.frame_rate, 30.0);
  EXPECT_EQ(r.motion.frame_count, 31);
  spec.time_mode = 11;  // 24 fps
  r = io::read_fbx(write_fixture("fbx_24", spec));
  EXPECT_DOUBLE_EQ(r.motion.frame_rate, 24.0);
  EXPECT_EQ(r.motion.frame_count, 25);
  r = io::read_fbx(write_fixture("fbx_opt", spec), {"", 10.0});
  EXPECT_DOUBLE_EQ(r.motion.frame_rate, 10.0);
  EXPECT_EQ(r.motion.frame_count, 11);
  const WorldPoses w = forward_kinematics(r.motion);
  EXPECT_VEC3_NEAR(w.position(10, 2), Vec3(0, 1.5, 0.5), 1e-6);  // 1 s: the last key
}

TEST(FbxRead, UnitScaleFactorScalesEveryLength) {
  FixtureSpec spec;
  spec.unit_scale = 1.0;  // centimetres: a 50-unit bone is 0.5 m
  spec.bone = 50.0;
  const io::ReadResult r = io::read_fbx(write_fixture("fbx_cm", spec));
  EXPECT_EQ(r.motion.source_unit, LengthUnit::centimetre);
  const WorldPoses w = forward_kinematics(r.motion);
  EXPECT_VEC3_NEAR(w.position(0, 2), Vec3(0, 2.0, 0), 1e-9);
  EXPECT_VEC3_NEAR(w.position(16, 2), Vec3(0, 1.5, 0.5), 1e-6);
  // A property: the same scene in inches is 2.54 times the centimetre one.
  spec.unit_scale = 2.54;
  const WorldPoses wi = forward_kinematics(io::read_fbx(write_fixture("fbx_in", spec)).motion);
  // assimp holds values as float32: equal within float rounding.
  for (int f : {0, 5, 16}) EXPECT_VEC3_NEAR(wi.position(f, 2), 2.54 * w.position(f, 2), 1e-6);
}

TEST(FbxRead, ReadMotionDispatchesAndFbxIsWritten) {
  const fs::path p = write_fixture("fbx_dispatch", {});
  EXPECT_TRUE(io::is_motion_file(p));
  EXPECT_TRUE(io::is_fbx_file("X.FBX"));
  const io::ReadResult r = io::read_motion(p, {std::nullopt, "Walk", 0.0, 0.0, {}});
  EXPECT_EQ(r.motion.frame_count, 17);
  const fs::path out = p.parent_path() / "out.fbx";
  io::write_motion(out, r.motion);
  const Motion back = io::read_motion(out).motion;
  EXPECT_EQ(back.frame_count, 17);
  EXPECT_EQ(back.name, "Walk");
  const WorldPoses a = forward_kinematics(r.motion), b = forward_kinematics(back);
  for (int f = 0; f < 17; ++f)
    for (int q = 0; q < a.point_count; ++q) EXPECT_VEC3_NEAR(a.position(f, q), b.position(f, q), 1e-5);
}

TEST(FbxRead, AsciiAndBinaryFormsGiveTheSameMotion) {
  FixtureSpec cm;
  cm.unit_scale = 1.0;
  cm.bone = 50.0;
  FixtureSpec film;
  film.time_mode = 11;
  film.custom_rate = -1;
  film.degrees = -135.0;
  for (const FixtureSpec& spec : {FixtureSpec{}, cm, film}) {
    const Motion a = io::read_fbx(write_fixture("fbx_pair_ascii", spec)).motion;
    const Motion b = io::read_fbx(write_fixture("fbx_pair_binary", spec, true)).motion;
    ASSERT_EQ(a.skeleton.names, b.skeleton.names);
    ASSERT_EQ(a.frame_count, b.frame_count);
    EXPECT_EQ(a.frame_rate, b.frame_rate);
    EXPECT_EQ(a.source_unit, b.source_unit);
    double worst = 0.0;
    for (size_t i = 0; i < a.rotations.size(); ++i) {
      worst = std::max(worst, test::rotation_angle(a.rotations[i], b.rotations[i]));
      worst = std::max(worst, (a.translations[i] - b.translations[i]).norm());
    }
    EXPECT_LE(worst, 1e-6) << spec.unit_scale << " " << spec.time_mode;
    // And the motion is not trivially still: the spine turns.
    EXPECT_GT(test::rotation_angle(a.rotation(0, 1), a.rotation(a.frame_count - 1, 1)), 1.0);
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input: each error names the file and what was found.

TEST(FbxErrors, NoAnimation) {
  FixtureSpec spec;
  spec.animated = false;
  const fs::path p = write_fixture("fbx_noanim", spec);
  const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
  EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("no animation"), std::string::npos) << msg;
}

TEST(FbxErrors, UnknownAnimationListsTheStacks) {
  const fs::path p = write_fixture("fbx_unknown", {});
  const std::string msg = error_of([&] { io::read_fbx(p, {"Run", 0.0}); }, ErrorCode::bad_file);
  EXPECT_NE(msg.find("no animation 'Run'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0 'Walk'"), std::string::npos) << msg;
  EXPECT_THROW(io::read_fbx(p, {"1", 0.0}), Error);
  EXPECT_EQ(io::read_fbx(p, {"0", 0.0}).motion.frame_count, 17);
}

TEST(FbxErrors, SeveralUnconnectedSkeletons) {
  FixtureSpec spec;
  spec.second_skeleton = true;
  const fs::path p = write_fixture("fbx_two", spec);
  const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
  EXPECT_NE(msg.find("several unconnected skeletons"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'Hips'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'Prop'"), std::string::npos) << msg;
}

TEST(FbxErrors, Fbx61IsRefusedByName) {
  FixtureSpec spec;
  spec.version = 6100;
  const fs::path p = write_fixture("fbx_61", spec);
  const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
  EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("FBX 7"), std::string::npos) << msg;
}

TEST(FbxErrors, MissingFileAndBadRate) {
  EXPECT_EQ(error_of([] { io::read_fbx("/nonexistent/x.fbx"); }, ErrorCode::io).find("/nonexistent/x.fbx"), 0u);
  const fs::path p = write_fixture("fbx_badrate", {});
  error_of([&] { io::read_fbx(p, {"", -2.0}); }, ErrorCode::invalid_settings);
}

TEST(FbxErrors, TruncatedFilesAreBadFiles) {
  const std::string text = fixture_text({});
  const fs::path dir = test::temp_dir("fbx_truncated");
  for (size_t cut : {size_t{0}, size_t{40}, text.size() / 3, text.size() - 30}) {
    const fs::path p = dir / fmt::format("cut{}.fbx", cut);
    std::ofstream(p, std::ios::binary) << text.substr(0, cut);
    const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
  }
  const std::string binary = fixture_binary({});
  for (size_t cut : {size_t{30}, binary.size() / 2}) {
    const fs::path p = dir / fmt::format("bincut{}.fbx", cut);
    std::ofstream(p, std::ios::binary) << binary.substr(0, cut);
    const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
  }
}

// ---------------------------------------------------------------------------------------------
// Real files (../shared/data/fbx).

std::vector<fs::path> shared_fbx_dir_files(const char* ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(test::shared_data() / "fbx"))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FbxShared, EveryFileAndStackLoads) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = shared_fbx_dir_files(".fbx");
  ASSERT_GE(files.size(), 6u);
  for (const auto& p : files) {
    const auto list = io::list_fbx_animations(p);
    ASSERT_FALSE(list.empty()) << p;
    std::vector<std::string> names;
    for (const auto& a : list) {
      const io::ReadResult r = io::read_fbx(p, {std::to_string(a.index), 0.0});
      EXPECT_NO_THROW(r.motion.validate()) << p;
      EXPECT_EQ(r.motion.frame_count, a.frame_count) << p << " " << a.name;
      EXPECT_DOUBLE_EQ(r.motion.frame_rate, a.frame_rate) << p;
      // Never past the stack's end, never a whole frame short of it.
      EXPECT_LE(r.motion.duration(), a.duration + 1e-6 / a.frame_rate) << p << " " << a.name;
      EXPECT_GT(r.motion.duration(), a.duration - 1.0 / a.frame_rate) << p << " " << a.name;
      // Joint order does not depend on the clip.
      if (names.empty()) names = r.motion.skeleton.names;
      EXPECT_EQ(r.motion.skeleton.names, names) << p << " " << a.name;
    }
  }
  for (const auto& p : shared_fbx_dir_files(".gltf")) EXPECT_NO_THROW(io::read_motion(p)) << p;
}

TEST(FbxShared, QuirksOfTheCorpus) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path dir = test::shared_data() / "fbx";
  // Mixamo names without a prefix; two junk stacks first; clips ending between frames.
  const auto human = io::list_fbx_animations(dir / "quaternius_AnimatedHuman.fbx");
  ASSERT_EQ(human.size(), 9u);
  EXPECT_TRUE(human[0].junk);
  EXPECT_EQ(human[7].name, "Human Armature|Walk");
  EXPECT_DOUBLE_EQ(human[7].frame_rate, 24.0);
  EXPECT_NEAR(human[7].duration * 24.0, 24.8, 1e-3);  // ends 0.8 frame after frame 24
  EXPECT_EQ(human[7].frame_count, 25);
  const io::ReadResult r = io::read_fbx(dir / "quaternius_AnimatedHuman.fbx");
  EXPECT_NE(r.motion.skeleton.find("LeftForeArm"), -1);
  EXPECT_EQ(r.motion.frame_count, human[1].frame_count);  // default: the first non-junk stack
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("skipped 0"), std::string::npos) << r.warnings[0];
  // Custom 14.985 fps, 2-key channels.
  const auto fox = io::list_fbx_animations(dir / "quaternius_RedFox.fbx");
  ASSERT_EQ(fox.size(), 1u);
  // Blender 2.75 wrote 15 / 1.001 through a float: 14.985014 fps, kept as the file says.
  EXPECT_NEAR(fox[0].frame_rate, 14.985, 2e-5);
  EXPECT_NE(fox[0].frame_rate, 15.0);
  EXPECT_NEAR(fox[0].duration, 1.07, 0.01);
  // Maya ASCII, CustomFrameRate -1 with a 24 fps time mode: three named stacks.
  const auto maya = io::list_fbx_animations(dir / "ufbx_maya_game_sausage_7500_ascii_combined.fbx");
  ASSERT_EQ(maya.size(), 3u);
  EXPECT_EQ(maya[0].name, "wiggle");
  EXPECT_DOUBLE_EQ(maya[0].frame_rate, 24.0);
  // Blender .L/.R rig: IK pole targets are not part of the skeleton; the deforming feet are.
  const Skeleton casual = io::read_fbx(dir / "quaternius_Male_Casual.fbx").motion.skeleton;
  EXPECT_EQ(casual.find("PoleTarget.L"), -1);
  EXPECT_NE(casual.find("Foot.L"), -1);
  EXPECT_NE(casual.find("UpperLeg.R"), -1);
  for (int p = 0; p < casual.point_count(); ++p) EXPECT_EQ(casual.point_name(p).find("Pole"), std::string::npos);
  // UnitScaleFactor 100: the Blender sausage's bones are 1.9 m, 1.9 m and 1.8 m; its armature
  // object "Skeleton" is animated by every stack, so it is the root joint.
  const Skeleton sausage = io::read_fbx(dir / "ufbx_blender_279_sausage_7400_binary.fbx").motion.skeleton;
  ASSERT_EQ(sausage.joint_count(), 4);
  EXPECT_EQ(sausage.names[0], "Skeleton");
  ASSERT_NE(sausage.find("Top"), -1);
  EXPECT_NEAR(sausage.offsets[sausage.find("Middle")].norm(), 1.9, 1e-4);
  EXPECT_NEAR(sausage.offsets[sausage.find("Top")].norm(), 1.9, 1e-4);
  ASSERT_EQ(sausage.end_site_count(), 1);
  EXPECT_NEAR(sausage.end_sites[0].offset.norm(), 1.8, 1e-4);
}

TEST(FbxShared, TruncatedRealFileIsABadFile) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path src = test::shared_data() / "fbx/ufbx_blender_279_sausage_7400_binary.fbx";
  std::ifstream in(src, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path p = test::temp_dir("fbx_trunc_real") / "half.fbx";
  std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const std::string msg = error_of([&] { io::read_fbx(p); }, ErrorCode::bad_file);
  EXPECT_NE(msg.find("half.fbx"), std::string::npos) << msg;
}


// Issue 23: the skinned character reaches a glTF output. Checked with the test's own glTF reader
// (gltf_check.hpp): a valid document whose skin drives the FBX meshes, four normalised weights per
// vertex, and at the clip's first frame a deformed mesh around the skeleton it is skinned to.
// (tests/blender/test_fbx_character.py compares the deformed mesh with Blender's FBX import.)
TEST(FbxShared, SkinnedCharacterCarriesToGlb) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* name : {"quaternius_AnimatedHuman.fbx", "quaternius_Male_Casual.fbx"}) {
    const fs::path path = test::shared_data() / "fbx" / name;
    const io::ReadResult r = io::read_fbx(path);
    ASSERT_TRUE(r.gltf_scene) << name << ": no character";
    const fs::path out = test::temp_dir("fbx_character") / "character.glb";
    io::WriteOptions wo;
    wo.gltf_scene = r.gltf_scene;
    io::write_motion(out, r.motion, wo);
    const test::GltfDoc doc = test::load_gltf(out);
    EXPECT_EQ(test::validate_gltf(doc), std::vector<std::string>{}) << name;
    const auto& skin = doc.json["skins"][0];
    ASSERT_EQ(static_cast<int>(skin["joints"].size()), r.motion.joint_count()) << name;
    const std::vector<double> ibm = doc.accessor(skin["inverseBindMatrices"].get<int>());
    const WorldPoses w = forward_kinematics(r.motion);
    Eigen::AlignedBox3d body, mesh;
    for (int j = 0; j < r.motion.joint_count(); ++j) body.extend(w.position(0, j));
    int vertices = 0;
    for (const auto& prim : doc.json["meshes"][0]["primitives"]) {
      const auto& at = prim["attributes"];
      ASSERT_TRUE(at.contains("POSITION") && at.contains("JOINTS_0") && at.contains("WEIGHTS_0")) << name;
      const std::vector<double> pos = doc.accessor(at["POSITION"].get<int>());
      const std::vector<double> jnt = doc.accessor(at["JOINTS_0"].get<int>());
      const std::vector<double> wgt = doc.accessor(at["WEIGHTS_0"].get<int>());
      const size_t n = pos.size() / 3;
      for (size_t v = 0; v < n; ++v) {
        Eigen::Vector4d skinned = Eigen::Vector4d::Zero();
        double sum = 0;
        for (int k = 0; k < 4; ++k) {
          const double wk = wgt[v * 4 + k];
          sum += wk;
          if (wk == 0) continue;
          const int node = skin["joints"][static_cast<int>(jnt[v * 4 + k])].get<int>();
          const Eigen::Map<const Eigen::Matrix<double, 4, 4>> inv(ibm.data() + 16 * static_cast<size_t>(jnt[v * 4 + k]));
          skinned += wk * (doc.world(node, 0, 0.0) * inv * Eigen::Vector4d(pos[3 * v], pos[3 * v + 1], pos[3 * v + 2], 1));
        }
        ASSERT_NEAR(sum, 1.0, 1e-5) << name << " vertex " << v;
        mesh.extend(skinned.head<3>());
      }
      vertices += static_cast<int>(n);
    }
    EXPECT_GT(vertices, 100) << name;
    // The deformed mesh wraps the skeleton: as tall within 25 %, and every joint inside its box
    // grown by 10 % of the height (a wrong bind pose throws the mesh off the bones).
    const double h = body.sizes().y();
    EXPECT_NEAR(mesh.sizes().y(), h, 0.25 * h) << name;
    Eigen::AlignedBox3d grown(mesh.min() - Vec3::Constant(0.1 * h), mesh.max() + Vec3::Constant(0.1 * h));
    EXPECT_TRUE(grown.contains(body)) << name << ": body " << body.min().transpose() << " .. " << body.max().transpose()
                                      << ", mesh " << mesh.min().transpose() << " .. " << mesh.max().transpose();
  }
}

}  // namespace
}  // namespace koma
