// The toon look, measured on real characters rendered as RGBA cels (issue 38's checks): coverage,
// an ink outline, cel tones, a body rather than sticks, holds that stand still, texture colours;
// and the bad inputs: no mesh, no weights, an undecodable texture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/bvh.hpp"
#include "koma/io/character.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/render/figure.hpp"
#include "koma/render/sheet.hpp"
#include "koma/toon/character.hpp"
#include "koma/toon/renderer.hpp"
#include "koma/toon/video.hpp"
#include "test_support.hpp"

namespace koma::toon {
namespace {

// Skips a test when this machine cannot make an OpenGL context (CI runs llvmpipe, so it can).
#define KOMA_REQUIRE_GL()                                                               \
  do {                                                                                  \
    if (const auto why = unavailable_reason()) GTEST_SKIP() << "no OpenGL here: " << *why; \
  } while (0)

using render::Image;

struct Mask {
  int w = 0, h = 0;
  std::vector<char> on;
  char at(int x, int y) const { return x < 0 || y < 0 || x >= w || y >= h ? 0 : on[static_cast<size_t>(y) * w + x]; }
  size_t count() const { return static_cast<size_t>(std::count(on.begin(), on.end(), 1)); }
};

Mask opaque(const Image& img) {
  Mask m{img.width, img.height, std::vector<char>(static_cast<size_t>(img.width) * img.height)};
  for (size_t i = 0; i < m.on.size(); ++i) m.on[i] = img.rgba[i * 4 + 3] > 127;
  return m;
}

Mask erode(const Mask& m) {
  Mask out = m;
  for (int y = 0; y < m.h; ++y)
    for (int x = 0; x < m.w; ++x)
      out.on[static_cast<size_t>(y) * m.w + x] =
          m.at(x, y) && m.at(x - 1, y) && m.at(x + 1, y) && m.at(x, y - 1) && m.at(x, y + 1);
  return out;
}

double ratio(size_t a, size_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

const std::uint8_t* px(const Image& img, size_t i) { return &img.rgba[i * 4]; }
bool dark(const std::uint8_t* p) { return std::max({p[0], p[1], p[2]}) < 80; }

double coverage(const Image& img) { return static_cast<double>(opaque(img).count()) / (img.width * img.height); }

// Share of the silhouette (opaque pixels with a transparent 4-neighbour) that is dark ink.
double outline_dark_share(const Image& img) {
  const Mask m = opaque(img), in = erode(m);
  size_t edge = 0, ink = 0;
  for (size_t i = 0; i < m.on.size(); ++i)
    if (m.on[i] && !in.on[i]) ++edge, ink += dark(px(img, i));
  return ratio(ink, edge);
}

// Interior: opaque pixels 3 erosions deep (away from the outline's anti-aliasing).
Mask interior(const Image& img) { return erode(erode(erode(opaque(img)))); }

// Share of interior pixels covered by the 6 most common colours at 4 bits a channel.
double top6_share(const Image& img) {
  const Mask in = interior(img);
  std::map<int, size_t> hist;
  size_t n = 0;
  for (size_t i = 0; i < in.on.size(); ++i) {
    if (!in.on[i]) continue;
    const auto* p = px(img, i);
    ++hist[(p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4)];
    ++n;
  }
  std::vector<size_t> counts;
  for (const auto& [k, c] : hist) counts.push_back(c);
  std::sort(counts.rbegin(), counts.rend());
  size_t top = 0;
  for (size_t k = 0; k < std::min<size_t>(6, counts.size()); ++k) top += counts[k];
  return ratio(top, n);
}

// Levels of the shade factor (rendered brightness over the unlit colour's) on interior pixels:
// ratio bins 0.05 wide holding at least 3 % of the pixels.
int shade_levels(const Image& lit, const Image& unlit) {
  const Mask in = interior(lit);
  std::map<int, size_t> bins;
  size_t n = 0;
  for (size_t i = 0; i < in.on.size(); ++i) {
    if (!in.on[i] || unlit.rgba[i * 4 + 3] < 255) continue;
    const auto* a = px(lit, i);
    const auto* b = px(unlit, i);
    const double sb = b[0] + b[1] + b[2];
    if (sb < 60) continue;  // near-black texels say nothing about a ratio
    ++bins[static_cast<int>(std::lround((a[0] + a[1] + a[2]) / sb / 0.05))];
    ++n;
  }
  int levels = 0;
  for (const auto& [k, c] : bins) levels += ratio(c, n) >= 0.03;
  return levels;
}

struct Loaded {
  ToonClip clip;
  WorldPoses poses;
};

Loaded load(const std::filesystem::path& path, double rate = 24.0) {
  io::ReadResult r = io::read_motion(path);
  Loaded l;
  l.clip.motion = resample(r.motion, rate);
  l.clip.character = make_character(l.clip.motion, r.gltf_scene, path.filename().string());
  l.poses = forward_kinematics(l.clip.motion);
  return l;
}

// A camera fitted on one frame's joints and its mesh's box, so the figure fills the picture.
render::Camera camera_on(const Loaded& l, int frame, int w, int h, render::CameraView view = render::CameraView::side) {
  std::vector<Vec3> pts(l.poses.frame_positions(frame).begin(), l.poses.frame_positions(frame).end());
  const std::vector<Vec3> reach = mesh_reach(l.clip);
  pts.insert(pts.end(), reach.begin() + frame * 8, reach.begin() + frame * 8 + 8);
  render::CameraSettings cs;
  cs.view = view;
  cs.width = w;
  cs.height = h;
  return render::fit_camera(pts, l.clip.motion.skeleton, l.poses.frame_positions(0), cs);
}

Image cel(const Loaded& l, int frame, const render::Camera& cam, ToonStyle style = {}) {
  style.transparent = true;
  ClipPainter painter(style);
  const int c = painter.add(l.clip);
  Image img;
  painter.paint(c, frame, cam, img);
  return img;
}

TEST(ToonRenderer, MakesAContextOrSaysWhichPackage) {
  const auto why = unavailable_reason();
  if (why) EXPECT_NE(why->find("libegl"), std::string::npos) << *why;
  else EXPECT_FALSE(Renderer(8, 8).gl_renderer().empty());
}

// The same frame gives the same pixels in every renderer of a process (koma demo is byte-identical
// run to run): nothing of one renderer leaks into the next.
TEST(ToonRenderer, SamePixelsInEveryRenderer) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Loaded l = load(test::shared_data() / "bvh/styles/xia2015/neutral_01_000.bvh");
  const render::Camera cam = camera_on(l, 12, 320, 180);
  const Image first = cel(l, 12, cam);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(cel(l, 12, cam).rgba, first.rgba) << "renderer " << i + 2;
}

TEST(ToonRenderer, RejectsBadStyle) {
  ToonStyle s;
  s.tones = 4;
  EXPECT_THROW(s.validate(), Error);
  s = {};
  s.msaa = 3;
  EXPECT_THROW(s.validate(), Error);
  s = {};
  s.line_width = -1;
  EXPECT_THROW(s.validate(), Error);
}

// CesiumMan and the Fox (textured): a figure, an ink outline, tones that only multiply the texture.
TEST(ToonLook, TexturedCharacters) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  for (const char* file : {"gltf/CesiumMan/CesiumMan.gltf", "gltf/Fox/Fox.glb"}) {
    SCOPED_TRACE(file);
    const Loaded l = load(test::shared_data() / file);
    ASSERT_FALSE(l.clip.character.generated);
    const int f = l.clip.motion.frame_count / 3;
    const render::Camera cam = camera_on(l, f, 640, 360, render::CameraView::perspective);
    const Image img = cel(l, f, cam);
    EXPECT_GT(coverage(img), 0.005);
    EXPECT_LT(coverage(img), 0.60);
    EXPECT_GE(outline_dark_share(img), 0.70);
    ToonStyle plain;
    plain.line_width = plain.inner_width = 0;
    ToonStyle unlit = plain;
    unlit.shading = Shading::flat;
    const Image toned = cel(l, f, cam, plain), flat = cel(l, f, cam, unlit);
    EXPECT_LE(shade_levels(toned, flat), 3);
    ToonStyle smooth = plain;
    smooth.shading = Shading::smooth;
    EXPECT_GT(shade_levels(cel(l, f, cam, smooth), flat), 3) << "the measure tells smooth shading apart";
  }
}

// The colours of a textured character are its texture's: the unlit render's interior colours are
// the texture's colours, and many of them (not one base colour).
TEST(ToonLook, TextureColours) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Loaded l = load(test::shared_data() / "gltf/CesiumMan/CesiumMan.gltf");
  const io::CharacterMesh& mesh = l.clip.character.mesh;
  ASSERT_EQ(mesh.textures.size(), 1u);
  std::set<int> palette;  // the texture's colours at 4 bits a channel
  const auto& t = mesh.textures[0];
  for (size_t i = 0; i < t.rgba.size(); i += 4) palette.insert((t.rgba[i] >> 4) << 8 | (t.rgba[i + 1] >> 4) << 4 | (t.rgba[i + 2] >> 4));
  ToonStyle unlit;
  unlit.shading = Shading::flat;
  unlit.line_width = unlit.inner_width = 0;
  const int f = 10;
  const Image flat = cel(l, f, camera_on(l, f, 640, 360), unlit);
  const Mask in = interior(flat);
  size_t n = 0, from_texture = 0;
  std::set<int> seen;
  for (size_t i = 0; i < in.on.size(); ++i) {
    if (!in.on[i]) continue;
    const auto* p = px(flat, i);
    const int key = (p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4);
    ++n, seen.insert(key), from_texture += palette.count(key);
  }
  ASSERT_GT(n, 1000u);
  EXPECT_GE(ratio(from_texture, n), 0.95);
  EXPECT_GE(seen.size(), 8u) << "a texture, not one base colour";
}

// Quaternius FBX characters (material colours, no texture): few flat tones; smooth shading fails
// the measure (on the light grey AnimatedHuman, where a gradient has room to show).
TEST(ToonLook, MaterialColoursAreCelTones) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  for (const char* file : {"fbx/quaternius_AnimatedHuman.fbx", "fbx/quaternius_Male_Casual.fbx"}) {
    SCOPED_TRACE(file);
    const Loaded l = load(test::shared_data() / file);
    ASSERT_FALSE(l.clip.character.generated);
    const int f = 5;
    const render::Camera cam = camera_on(l, f, 640, 360, render::CameraView::perspective);
    const Image img = cel(l, f, cam);
    EXPECT_GT(coverage(img), 0.005);
    EXPECT_LT(coverage(img), 0.60);
    EXPECT_GE(outline_dark_share(img), 0.70);
    EXPECT_GE(top6_share(img), 0.85);
    if (std::string(file).find("Animated") != std::string::npos) {
      ToonStyle smooth;
      smooth.shading = Shading::smooth;
      EXPECT_LT(top6_share(cel(l, f, cam, smooth)), 0.85) << "the measure tells smooth shading apart";
    }
  }
}

// A BVH take gets a mannequin: a body that survives 3 erosions, where the stick figure vanishes.
TEST(ToonLook, BvhGetsABody) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  const Loaded l = load(test::shared_data() / "bvh/styles/xia2015/neutral_01_000.bvh");
  ASSERT_TRUE(l.clip.character.generated);
  const int f = 20;
  const render::Camera cam = camera_on(l, f, 480, 270, render::CameraView::perspective);
  const Image img = cel(l, f, cam);
  EXPECT_GT(coverage(img), 0.005);
  EXPECT_LT(coverage(img), 0.60);
  EXPECT_GE(outline_dark_share(img), 0.70);
  EXPECT_GE(top6_share(img), 0.85);
  const Mask body = opaque(img);
  EXPECT_GE(ratio(erode(erode(erode(body))).count(), body.count()), 0.25);
  // The same pose as sticks, at the same size: a figure drawn with lines, gone after 3 erosions.
  render::FigureStyle st;
  st.show_grid = st.show_shadow = false;
  const Image sticks = render::render_pose(l.clip.motion.skeleton, l.poses.frame_positions(f), cam, st);
  Mask s{sticks.width, sticks.height, std::vector<char>(static_cast<size_t>(sticks.width) * sticks.height)};
  for (size_t i = 0; i < s.on.size(); ++i) {
    const auto* p = px(sticks, i);
    s.on[i] = std::abs(p[0] - 245) + std::abs(p[1] - 242) + std::abs(p[2] - 235) > 30;
  }
  ASSERT_GT(s.count(), 100u);
  EXPECT_LT(ratio(erode(erode(erode(s))).count(), s.count()), 0.25);
}

// Holds: a result held on every third frame has no more distinct pictures than drawings, with the
// fixed camera and with the stepped follow.
TEST(ToonLook, HoldsArePixelIdentical) {
  KOMA_REQUIRE_SHARED_DATA();
  KOMA_REQUIRE_GL();
  Loaded l = load(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const int n = 60;
  l.clip.motion = [&] {
    Motion m = l.clip.motion;
    m.frame_count = n;
    m.rotations.resize(static_cast<size_t>(n) * m.joint_count());
    m.translations.resize(m.rotations.size());
    return m;
  }();
  std::vector<int> kept;
  for (int f = 0; f < n; f += 3) kept.push_back(f);
  l.clip.motion = held_motion(l.clip.motion, std::vector<int>(static_cast<size_t>(l.clip.motion.joint_count()), 0), {kept});
  l.poses = forward_kinematics(l.clip.motion);
  render::Comparison cmp;
  cmp.frame_rate = 24;
  cmp.result = {l.clip.motion.skeleton, l.poses, "held"};
  cmp.kept_frames = kept;
  for (bool follow : {false, true}) {
    SCOPED_TRACE(follow ? "follow" : "fixed");
    render::CameraSettings cs;
    cs.view = render::CameraView::side;
    cs.width = 320;
    cs.height = 180;
    cs.follow = follow;
    const std::filesystem::path dir = test::temp_dir(follow ? "toon_holds_follow" : "toon_holds_fixed") / "cels/";
    write_cels(dir, cmp, l.clip, cs);
    std::set<std::string> distinct;
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      distinct.insert(std::string(std::istreambuf_iterator<char>(in), {}));
      ++files;
    }
    EXPECT_EQ(files, n);
    EXPECT_LE(distinct.size(), kept.size());
    EXPECT_GE(distinct.size(), kept.size() / 2) << "the drawings differ";
  }
}

// The mannequin is built from the bones: every joint gets a bone, and a skeleton without a single
// recognised role still gets capsules.
TEST(Mannequin, FromBoneLengths) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m = io::read_motion(test::shared_data() / "bvh/cmu/assimp/01_01.bvh").motion;
  const io::CharacterMesh mesh = make_mannequin(m);
  EXPECT_EQ(mesh.bones.size(), static_cast<size_t>(m.joint_count()));
  EXPECT_GT(mesh.triangle_count(), 2000u);
  EXPECT_NO_THROW(mesh.validate(m.joint_count()));
  Motion anon = m;
  for (size_t j = 0; j < anon.skeleton.names.size(); ++j) anon.skeleton.names[j] = "bone" + std::to_string(j);
  EXPECT_GT(make_mannequin(anon).triangle_count(), 500u);
  MannequinSettings bad;
  bad.head = 0;
  EXPECT_THROW(make_mannequin(m, bad), Error);
}

// SimpleSkin altered: no weights, no mesh, an undecodable texture. Each is a warning, never a throw.
std::filesystem::path altered_simple_skin(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(test::shared_data() / "gltf/SimpleSkin/SimpleSkin.gltf");
  nlohmann::json j = nlohmann::json::parse(in);
  edit(j);
  const auto path = test::temp_dir("toon_" + name) / (name + ".gltf");
  std::ofstream(path) << j.dump();
  return path;
}

TEST(ToonCharacter, BadMeshesGetABodyWithAWarning) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto no_weights = altered_simple_skin("noweights", [](nlohmann::json& j) {
    auto& a = j["meshes"][0]["primitives"][0]["attributes"];
    a.erase("JOINTS_0");
    a.erase("WEIGHTS_0");
  });
  const auto no_mesh = altered_simple_skin("nomesh", [](nlohmann::json& j) {
    j["nodes"][0].erase("mesh");
    j.erase("meshes");
  });
  for (const auto& [path, words] : {std::pair{no_weights, "no vertex weights"}, {no_mesh, "no triangles"}}) {
    io::ReadResult r = io::read_motion(path);
    const ToonCharacter c = make_character(r.motion, r.gltf_scene, path.filename().string());
    EXPECT_TRUE(c.generated);
    ASSERT_FALSE(c.warnings.empty());
    EXPECT_NE(c.warnings.back().find(words), std::string::npos) << c.warnings.back();
  }
  // A BVH has no mesh: a body without a warning.
  const Motion bvh = io::read_motion(test::test_data("render_walk.bvh")).motion;
  const ToonCharacter c = make_character(bvh, nullptr, "render_walk.bvh");
  EXPECT_TRUE(c.generated);
  EXPECT_TRUE(c.warnings.empty());
}

// Fills a stretch of the stack with `value`, so that a matrix left uninitialised by the next call
// made from the same frame reads it instead of whatever happened to be there (often zeros).
[[gnu::noinline]] void fill_stack(double value) {
  volatile double junk[32768];
  for (auto& v : junk) v = value;
}

// The bind matrices of a character are the file's, whatever the stack held before: a matrix member
// aggregate-initialised with {} is left uninitialised by Eigen, and under ASan that drew CesiumMan
// and the Fox off screen or empty in some runs (Release happened to find zeros there).
TEST(ToonCharacter, BindMatricesDoNotDependOnTheStack) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"gltf/CesiumMan/CesiumMan.gltf", "gltf/Fox/Fox.glb", "gltf/SimpleSkin/SimpleSkin.gltf"}) {
    SCOPED_TRACE(file);
    const io::ReadResult r = io::read_motion(test::shared_data() / file);
    ASSERT_TRUE(r.gltf_scene);
    fill_stack(0.0);
    const io::CharacterMeshResult zeros = io::character_mesh(*r.gltf_scene, r.motion.joint_count(), file);
    ASSERT_FALSE(zeros.mesh.bones.empty());
    for (const auto& b : zeros.mesh.bones)
      EXPECT_TRUE((b.inverse_bind.row(3).array() == Eigen::RowVector4d(0, 0, 0, 1).array()).all()) << b.inverse_bind;
    for (double junk : {1e300, -3.5e57, std::nan("")}) {
      fill_stack(junk);
      const io::CharacterMeshResult m = io::character_mesh(*r.gltf_scene, r.motion.joint_count(), file);
      ASSERT_EQ(m.mesh.bones.size(), zeros.mesh.bones.size());
      for (size_t b = 0; b < m.mesh.bones.size(); ++b) {
        EXPECT_EQ(m.mesh.bones[b].joint, zeros.mesh.bones[b].joint);
        EXPECT_TRUE((m.mesh.bones[b].inverse_bind.array() == zeros.mesh.bones[b].inverse_bind.array()).all())
            << "bone " << b << " after a stack of " << junk << ":\n" << m.mesh.bones[b].inverse_bind;
      }
    }
  }
}

TEST(ToonCharacter, UndecodableTextureKeepsTheBaseColour) {
  KOMA_REQUIRE_SHARED_DATA();
  // Bytes that are no image at all, and a PNG or JPEG that does not decode, never get past the
  // reader (issue 45: an image is checked before koma keeps it for an output): the reader warns and
  // leaves the image out, and the material draws in its base colour without another warning.
  for (const char* bytes : {"AAECAwQFBgc=", "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAA",
                            "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////"}) {
    SCOPED_TRACE(bytes);
    const auto broken = altered_simple_skin("notimage", [&](nlohmann::json& j) {
      j["images"] = nlohmann::json::array({{{"uri", std::string("data:image/png;base64,") + bytes}}});
      j["textures"] = nlohmann::json::array({{{"source", 0}}});
      j["materials"] = nlohmann::json::array(
          {{{"pbrMetallicRoughness", {{"baseColorFactor", {0.2, 0.4, 0.6, 1.0}}, {"baseColorTexture", {{"index", 0}}}}}}});
      j["meshes"][0]["primitives"][0]["material"] = 0;
    });
    io::ReadResult b = io::read_motion(broken);
    std::string warned;
    for (const auto& w : b.warnings) warned += w;
    EXPECT_NE(warned.find("image 0: "), std::string::npos) << warned;
    EXPECT_NE(warned.find("keeps its base colour"), std::string::npos) << warned;
    const ToonCharacter bc = make_character(b.motion, b.gltf_scene, "notimage.gltf");
    EXPECT_TRUE(bc.warnings.empty());
    ASSERT_EQ(bc.mesh.materials.size(), 1u);
    EXPECT_EQ(bc.mesh.materials[0].texture, -1);
    EXPECT_FLOAT_EQ(bc.mesh.materials[0].base_colour[2], 0.6f);
  }
  // A WebP (carried into outputs by its signature, but not decoded by koma) cannot be drawn; the
  // data URI says PNG, as tinygltf reads no image/webp data URI.
  const auto path = altered_simple_skin("badtexture", [](nlohmann::json& j) {
    j["images"] = nlohmann::json::array({{{"uri", "data:image/png;base64,UklGRgwAAABXRUJQVlA4IAAAAAA="}}});
    j["textures"] = nlohmann::json::array({{{"source", 0}}});
    j["materials"] = nlohmann::json::array(
        {{{"pbrMetallicRoughness", {{"baseColorFactor", {0.2, 0.4, 0.6, 1.0}}, {"baseColorTexture", {{"index", 0}}}}}}});
    j["meshes"][0]["primitives"][0]["material"] = 0;
  });
  io::ReadResult r = io::read_motion(path);
  const ToonCharacter c = make_character(r.motion, r.gltf_scene, "badtexture.gltf");
  EXPECT_FALSE(c.generated);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("base colour"), std::string::npos) << c.warnings[0];
  ASSERT_EQ(c.mesh.materials.size(), 1u);
  EXPECT_EQ(c.mesh.materials[0].texture, -1);
  EXPECT_FLOAT_EQ(c.mesh.materials[0].base_colour[1], 0.4f);
  EXPECT_THROW(io::decode_texture({1, 2, 3}, "x"), Error);
}

// Holding a motion: each joint shows its layer's latest key; bad layers are refused.
TEST(HeldMotion, LayersAndErrors) {
  const Motion m = io::read_motion(test::test_data("render_walk.bvh")).motion;
  const std::vector<int> one(static_cast<size_t>(m.joint_count()), 0);
  const Motion h = held_motion(m, one, {{0, 5}});
  EXPECT_EQ(h.frame_rotations(4)[1].coeffs(), m.frame_rotations(0)[1].coeffs());
  EXPECT_EQ(h.frame_rotations(9)[1].coeffs(), m.frame_rotations(5)[1].coeffs());
  EXPECT_THROW(held_motion(m, one, {{1, 5}}), Error);
  EXPECT_THROW(held_motion(m, one, {{0, 5, 5}}), Error);
  EXPECT_THROW(held_motion(m, std::vector<int>(2, 0), {{0}}), Error);
  EXPECT_THROW(held_motion(m, std::vector<int>(one.size(), 1), {{0}}), Error);
}

}  // namespace
}  // namespace koma::toon
