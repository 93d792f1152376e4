// glTF buffer and image URIs stay inside the asset's folder (issue 45): every way out is refused
// (`..`, percent-encoded `..`, absolute paths, URLs, symbolic links, the working directory, devices
// and /proc), asset_root widens the folder on purpose, and an image reaches an output only after
// it decoded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// A 2 x 2 RGB PNG, made by hand: signature, IHDR, one zlib-stored IDAT, IEND (CRCs computed below).
std::string tiny_png() {
  const auto crc = [](const std::string& data) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : data) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
  };
  const auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const auto chunk = [&](const std::string& type, const std::string& data) {
    return be32(static_cast<std::uint32_t>(data.size())) + type + data + be32(crc(type + data));
  };
  const std::string ihdr = be32(2) + be32(2) + std::string("\x08\x02\x00\x00\x00", 5);
  std::string raw;  // two rows: filter byte 0 + 2 RGB pixels
  for (int row = 0; row < 2; ++row) raw += std::string("\x00\xff\x00\x00\x00\xff\x00", 7);
  std::uint32_t a = 1, b = 0;  // Adler-32
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  const std::string zlib = std::string("\x78\x01\x01", 3) + static_cast<char>(raw.size()) + '\0' +
                           static_cast<char>(~raw.size() & 0xFF) + '\xFF' + raw + be32((b << 16) | a);
  return std::string("\x89PNG\r\n\x1A\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", "");
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A .gltf (sample walk, 6 frames) in dir/asset/walk.gltf whose buffer URI is `uri`; the buffer
// bytes are put where the URI leads (relative to the asset's folder) when `place` is set.
struct Asset {
  fs::path dir, gltf;
  int frames = 0;
  json doc;
  std::string bin;

  explicit Asset(const std::string& name) {
    dir = test::temp_dir(name);
    fs::create_directories(dir / "asset");
    SampleSettings small;
    small.frame_rate = 10.0;
    small.walk_cycles = 1;
    small.jump = false;
    const Motion m = make_sample_motion(small);
    frames = m.frame_count;
    write_gltf(dir / "asset" / "walk.gltf", m);
    gltf = dir / "asset" / "walk.gltf";
    doc = json::parse(read_file(gltf));
    bin = read_file(dir / "asset" / "walk.bin");
    fs::remove(dir / "asset" / "walk.bin");
  }
  void buffer_uri(const std::string& uri) {
    doc["buffers"][0]["uri"] = uri;
    write_text(gltf, doc.dump());
  }
  void image_uri(const std::string& uri) {
    doc["images"] = json::array({{{"uri", uri}}});
    doc["textures"] = json::array({{{"source", 0}}});
    write_text(gltf, doc.dump());
  }
};

Error read_error(const fs::path& path, const fs::path& root = {}) {
  try {
    read_gltf(path, GltfReadOptions{"", 0.0, root});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "read " << path << " without an error";
  return Error(ErrorCode::io, "", "");
}

TEST(AssetUri, TraversalOutOfTheFolderIsRefused) {
  Asset a("uri_traversal");
  fs::create_directories(a.dir / "secret");
  write_text(a.dir / "secret" / "buf.bin", a.bin);
  for (const std::string uri : {"../secret/buf.bin", "%2e%2e/secret/buf.bin", "%2E%2E%2Fsecret%2Fbuf.bin",
                                "sub/../../secret/buf.bin", "./../secret/buf.bin"}) {
    a.buffer_uri(uri);
    const Error e = read_error(a.gltf);
    EXPECT_EQ(e.code(), ErrorCode::bad_file) << uri << ": " << e.what();
    EXPECT_HAS(e.what(), "walk.gltf");
    EXPECT_HAS(e.message(), "outside that folder");
    EXPECT_HAS(e.message(), "`asset_root`");
  }
  // Widened on purpose, the same files read.
  for (const std::string uri : {"../secret/buf.bin", "%2e%2e/secret/buf.bin"}) {
    a.buffer_uri(uri);
    EXPECT_EQ(read_gltf(a.gltf, GltfReadOptions{"", 0.0, a.dir}).motion.frame_count, a.frames) << uri;
    ReadOptions ro;
    ro.asset_root = a.dir;
    EXPECT_EQ(read_motion(a.gltf, ro).motion.frame_count, a.frames);
    EXPECT_EQ(list_gltf_animations(a.gltf, a.dir).size(), 1u);
    EXPECT_THROW(list_gltf_animations(a.gltf), Error);
  }
}

TEST(AssetUri, AbsolutePathsUrlsAndNulAreRefusedEvenInsideTheRoot) {
  Asset a("uri_absolute");
  write_text(a.dir / "asset" / "walk.bin", a.bin);
  const std::string inside = (a.dir / "asset" / "walk.bin").string();
  for (const std::string& uri : std::vector<std::string>{inside, "file://" + inside, "http://127.0.0.1:9/walk.bin", "https://example.com/b.bin",
                                std::string("walk.bin\0../x", 13)}) {
    a.buffer_uri(uri);
    const Error e = read_error(a.gltf, "/");
    EXPECT_EQ(e.code(), ErrorCode::bad_file) << uri << ": " << e.what();
  }
  a.buffer_uri("walk.bin");
  EXPECT_EQ(read_gltf(a.gltf).motion.frame_count, a.frames);
}

TEST(AssetUri, SymbolicLinkOutOfTheFolderIsRefused) {
  Asset a("uri_symlink");
  fs::create_directories(a.dir / "secret");
  write_text(a.dir / "secret" / "buf.bin", a.bin);
  fs::create_symlink(a.dir / "secret" / "buf.bin", a.dir / "asset" / "link.bin");
  fs::create_directory_symlink(a.dir / "secret", a.dir / "asset" / "linkdir");
  for (const std::string uri : {"link.bin", "linkdir/buf.bin"}) {
    a.buffer_uri(uri);
    const Error e = read_error(a.gltf);
    EXPECT_EQ(e.code(), ErrorCode::bad_file) << e.what();
    EXPECT_HAS(e.message(), "symbolic link");
    EXPECT_EQ(read_gltf(a.gltf, GltfReadOptions{"", 0.0, a.dir}).motion.frame_count, a.frames);
  }
  // A link that stays inside the folder is fine.
  fs::create_directories(a.dir / "asset" / "data");
  write_text(a.dir / "asset" / "data" / "buf.bin", a.bin);
  fs::create_symlink(a.dir / "asset" / "data" / "buf.bin", a.dir / "asset" / "inside.bin");
  a.buffer_uri("inside.bin");
  EXPECT_EQ(read_gltf(a.gltf).motion.frame_count, a.frames);
}

TEST(AssetUri, NoWorkingDirectoryFallback) {
  Asset a("uri_cwd");
  a.buffer_uri("walk.bin");
  write_text(a.dir / "walk.bin", a.bin);  // in the working directory below, not beside the asset
  const fs::path before = fs::current_path();
  fs::current_path(a.dir);
  const Error e = read_error(a.gltf);
  fs::current_path(before);
  EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
  EXPECT_HAS(e.message(), "beside the asset only");
}

TEST(AssetUri, DevicesAndKernelFilesAreRefusedUnderAWideRoot) {
  Asset a("uri_devices");
  const std::string up = "../../../../../../../../../../../../../../..";
  for (const std::string target : {"/dev/zero", "/proc/self/environ", "/proc/self/status", "/sys/kernel/mm"}) {
    a.buffer_uri(up + target);
    const Error e = read_error(a.gltf, "/");
    EXPECT_EQ(e.code(), ErrorCode::bad_file) << target << ": " << e.what();
  }
}

// The JSON of a GLB koma wrote.
json glb_json(const std::string& glb) {
  std::uint32_t length = 0;
  std::memcpy(&length, glb.data() + 12, 4);
  return json::parse(glb.substr(20, length));
}

// Every warning of a read, joined.
std::string joined(const ReadResult& r) {
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  return all;
}

TEST(AssetUri, ImageNamingASystemFileNeverReachesAnOutput) {
  Asset a("uri_passwd");
  write_text(a.dir / "asset" / "walk.bin", a.bin);
  a.buffer_uri("walk.bin");
  a.image_uri("../../../../../../../../../../../../etc/passwd");
  const Error refused = read_error(a.gltf);
  EXPECT_EQ(refused.code(), ErrorCode::bad_file);
  EXPECT_HAS(refused.message(), "outside that folder");
  // Even with the whole disk allowed, the bytes are not an image: left out, with a warning, and
  // neither they nor the URI reach the output.
  const ReadResult r = read_gltf(a.gltf, GltfReadOptions{"", 0.0, "/"});
  EXPECT_HAS(joined(r), "is not an image");
  EXPECT_HAS(joined(r), "left out of the character and of every output");
  WriteOptions wo;
  wo.gltf_scene = r.gltf_scene;
  write_motion(a.dir / "out.glb", r.motion, wo);
  const std::string out = read_file(a.dir / "out.glb");
  EXPECT_EQ(out.find("root:"), std::string::npos);
  EXPECT_EQ(out.find("passwd"), std::string::npos);
  EXPECT_FALSE(glb_json(out).contains("images"));
  // A PNG whose header lies about its size, and one cut short, are left out too.
  std::string png = tiny_png();
  std::string huge = png;
  huge[18] = '\x40';  // width 0x4000 ...
  huge[22] = '\x40';  // ... and height 0x4000: 268 M pixels
  write_text(a.dir / "asset" / "huge.png", huge);
  a.image_uri("huge.png");
  EXPECT_HAS(joined(read_gltf(a.gltf)), "pixels");
  write_text(a.dir / "asset" / "cut.png", png.substr(0, 40));
  a.image_uri("cut.png");
  EXPECT_HAS(joined(read_gltf(a.gltf)), "does not decode");
}

// Of two images, the one that does not decode is left out: its texture loses its source (also in
// a `source` extension) and every material slot that showed it, the other image is renumbered and
// keeps its texture and material; the broken bytes reach no output.
TEST(AssetUri, AnUndecodableImageIsLeftOutAndTheOthersAreRenumbered) {
  Asset a("uri_two_images");
  write_text(a.dir / "asset" / "walk.bin", a.bin);
  a.buffer_uri("walk.bin");
  const std::string good = tiny_png();
  const std::string broken = good.substr(0, 33) + std::string(200, '\x5a');  // IHDR intact, data garbage
  write_text(a.dir / "asset" / "good.png", good);
  write_text(a.dir / "asset" / "broken.png", broken);
  a.doc["images"] = json::array({{{"uri", "broken.png"}}, {{"uri", "good.png"}}});
  a.doc["textures"] = json::array({{{"source", 0}, {"extensions", {{"KOMA_test_source", {{"source", 0}}}}}},
                                    {{"source", 1}, {"extensions", {{"KOMA_test_source", {{"source", 1}}}}}}});
  a.doc["materials"] = json::array(
      {{{"name", "broken"},
        {"pbrMetallicRoughness", {{"baseColorFactor", {0.2, 0.4, 0.6, 1.0}}, {"baseColorTexture", {{"index", 0}}}}},
        {"emissiveTexture", {{"index", 0}}}},
       {{"name", "good"}, {"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 1}}}}}}});
  write_text(a.gltf, a.doc.dump());
  const ReadResult r = read_gltf(a.gltf);
  ASSERT_EQ(r.warnings.size(), 1u) << joined(r);
  EXPECT_HAS(r.warnings[0], "image 0 (uri 'broken.png')");
  EXPECT_HAS(r.warnings[0], "material 'broken' keeps its base colour");
  WriteOptions wo;
  wo.gltf_scene = r.gltf_scene;
  write_motion(a.dir / "out.glb", r.motion, wo);
  const std::string out = read_file(a.dir / "out.glb");
  EXPECT_EQ(out.find(std::string(200, '\x5a')), std::string::npos) << "the broken bytes are not carried";
  EXPECT_NE(out.find(good), std::string::npos) << "the good PNG is";
  const json j = glb_json(out);
  ASSERT_EQ(j["images"].size(), 1u);
  EXPECT_FALSE(j["textures"][0].contains("source"));
  EXPECT_FALSE(j["textures"][0]["extensions"]["KOMA_test_source"].contains("source"));
  EXPECT_EQ(j["textures"][1]["source"], 0);
  EXPECT_EQ(j["textures"][1]["extensions"]["KOMA_test_source"]["source"], 0);
  EXPECT_FALSE(j["materials"][0].contains("emissiveTexture"));
  EXPECT_FALSE(j["materials"][0]["pbrMetallicRoughness"].contains("baseColorTexture"));
  EXPECT_EQ(j["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][1], 0.4);
  EXPECT_EQ(j["materials"][1]["pbrMetallicRoughness"]["baseColorTexture"]["index"], 1);
  EXPECT_EQ(read_gltf(a.dir / "out.glb").motion.frame_count, a.frames);
}

TEST(AssetUri, ADecodedImageIsCarriedIntoTheOutput) {
  Asset a("uri_png");
  write_text(a.dir / "asset" / "walk.bin", a.bin);
  a.buffer_uri("walk.bin");
  const std::string png = tiny_png();
  write_text(a.dir / "asset" / "skin.png", png);
  a.image_uri("skin.png");
  const ReadResult r = read_gltf(a.gltf);
  WriteOptions wo;
  wo.gltf_scene = r.gltf_scene;
  write_motion(a.dir / "out.glb", r.motion, wo);
  const std::string out = read_file(a.dir / "out.glb");
  EXPECT_NE(out.find(png), std::string::npos) << "the PNG is embedded in the GLB";
  const ReadResult back = read_gltf(a.dir / "out.glb");
  EXPECT_EQ(back.motion.frame_count, a.frames);
}

TEST(AssetUri, AssetRootMustBeAFolder) {
  Asset a("uri_root");
  write_text(a.dir / "asset" / "walk.bin", a.bin);
  a.buffer_uri("walk.bin");
  const Error e = read_error(a.gltf, a.dir / "nope");
  EXPECT_EQ(e.code(), ErrorCode::io);
  EXPECT_EQ(e.context(), "asset_root");
}

}  // namespace
}  // namespace koma::io
