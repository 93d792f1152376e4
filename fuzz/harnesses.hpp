// The body of every fuzz harness, shared by the libFuzzer programs (fuzz/*_fuzz.cpp) and the
// replay test that runs every stored input on every build (tests/io/fuzz_replay_test.cpp).
//
// A reader may reject its input with koma::Error and nothing else: any other exception, a crash,
// a leak, undefined behaviour (under the sanitizers) or a broken round trip is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/error.hpp"
#include "koma/gait/files.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/bvh.hpp"
#include "koma/io/csv.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/kept_frames.hpp"

namespace koma::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `read`; koma::Error is an accepted answer (a clear rejection), anything else propagates.
template <class F>
void expect_clean(F&& read) {
  try {
    read();
  } catch (const koma::Error&) {
  }
}

/// The BVH reader, then the writer on whatever it accepts: the text must read back with the
/// same skeleton and frame count.
inline void bvh(const std::uint8_t* data, std::size_t size) {
  expect_clean([&] {
    const io::ReadResult r = io::parse_bvh(text_of(data, size), "fuzz.bvh", {});
    if (static_cast<long long>(r.motion.frame_count) * r.motion.joint_count() > 200000) return;  // keep runs fast
    const std::string text = io::format_bvh(r.motion);
    const io::ReadResult back = io::parse_bvh(text, "written.bvh", {LengthUnit::metre});
    if (back.motion.frame_count != r.motion.frame_count || back.motion.skeleton.names != r.motion.skeleton.names ||
        back.motion.skeleton.parents != r.motion.skeleton.parents) {
      std::abort();  // the writer produced a file that reads back as something else
    }
  });
}

/// The glTF / GLB reader, through a file (read_gltf takes a path): .glb when the bytes start with
/// the GLB magic, else .gltf.
inline void gltf(const std::uint8_t* data, std::size_t size) {
  const bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  const std::filesystem::path dir =
      std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
  const std::filesystem::path file = dir / ("koma-fuzz-" + std::to_string(::getpid()) + (glb ? ".glb" : ".gltf"));
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  expect_clean([&] { (void)io::read_gltf(file); });
  std::error_code ec;
  std::filesystem::remove(file, ec);
}

/// A file of `bytes` in /dev/shm (else the temp folder), removed when this goes.
struct TempInput {
  std::filesystem::path path;
  TempInput(const std::uint8_t* data, std::size_t size, const char* ext, std::filesystem::path dir = {}) {
    if (dir.empty())
      dir = std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm")
                                                      : std::filesystem::temp_directory_path();
    path = dir / ("koma-fuzz-" + std::to_string(::getpid()) + ext);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ~TempInput() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

/// The FBX reader: koma's pre-checks, assimp, koma's skeleton and sampling, the character. The
/// fuzz programs set KOMA_READ_IN_PROCESS=1 so all of it runs in their own process (libFuzzer sees
/// the coverage, the sanitizers see the faults); the replay test reads through the child process,
/// as koma does.
inline void fbx(const std::uint8_t* data, std::size_t size) {
  const TempInput file(data, size, ".fbx");
  expect_clean([&] { (void)io::read_fbx(file.path); });
}

/// The folder tree of the glTF-with-URIs harness (made once per process):
///   <root>/secret.bin          kSecret bytes: outside the asset's folder, never to be read
///   <root>/asset/base.gltf     a small skinned walk written by koma, its buffer in base.bin
///   <root>/asset/img.png       a 1x1 PNG
///   <root>/asset/link.bin      a symbolic link to ../secret.bin
///   <root>/asset/sub/          a folder
/// The input is read as <root>/asset/fuzz.gltf (or .glb) with the default asset root.
inline constexpr std::string_view kSecret = "KOMA-FUZZ-SECRET-0123456789abcdef";

inline const std::filesystem::path& uri_tree() {
  static const std::filesystem::path root = [] {
    namespace fs = std::filesystem;
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path r = base / ("koma-fuzz-uris-" + std::to_string(::getpid()));
    fs::create_directories(r / "asset" / "sub");
    std::string secret;
    for (int i = 0; i < 64; ++i) secret += kSecret;
    std::ofstream(r / "secret.bin", std::ios::binary) << secret;
    SampleSettings small;
    small.frame_rate = 10.0;
    small.walk_cycles = 1;
    small.jump = false;
    io::write_gltf(r / "asset" / "base.gltf", make_sample_motion(small));
    static const unsigned char png[] = {
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
        0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05,
        0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
        0x60, 0x82};
    std::ofstream(r / "asset" / "img.png", std::ios::binary).write(reinterpret_cast<const char*>(png), sizeof png);
    std::error_code ec;
    fs::create_symlink("../secret.bin", r / "asset" / "link.bin", ec);
    std::atexit([] {
      std::error_code e;
      fs::remove_all(uri_tree(), e);
    });
    return r;
  }();
  return root;
}

/// Seeds for the URI harness: base.gltf with its buffer and an image named by URIs that stay in the
/// folder and URIs that leave it (`..`, percent-encoded, absolute, a symlink, a URL, a device).
inline std::vector<std::string> uri_seeds() {
  std::ifstream in(uri_tree() / "asset" / "base.gltf", std::ios::binary);
  const std::string base{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> out;
  for (const char* uri : {"base.bin", "sub/../base.bin", "./base.bin", "img.png", "../secret.bin", "%2e%2e/secret.bin",
                          "%2E%2E%2Fsecret.bin", "link.bin", "/etc/passwd", "file:///etc/passwd",
                          "http://127.0.0.1:9/x.bin", "../../../../../../../../dev/zero", "sub"}) {
    std::string doc = base;
    const std::string from = "\"uri\": \"base.bin\"";
    const size_t at = doc.find(from);
    if (at == std::string::npos) continue;
    doc.replace(at, from.size(), "\"uri\": \"" + std::string(uri) + "\"");
    out.push_back(doc);
    // The same URI as an image beside the real buffer.
    const size_t images = base.rfind('}');
    std::string with_image = base.substr(0, images) + ", \"images\": [{\"uri\": \"" + uri +
                             "\"}], \"textures\": [{\"source\": 0}]}";
    out.push_back(with_image);
  }
  return out;
}

/// The glTF reader on a file whose URIs the fuzzer mutates, in uri_tree(): whatever it reads, the
/// secret outside the folder must never reach the written character.
inline void gltf_uris(const std::uint8_t* data, std::size_t size) {
  const bool glb = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  const TempInput file(data, size, glb ? ".glb" : ".gltf", uri_tree() / "asset");
  expect_clean([&] {
    const io::ReadResult r = io::read_gltf(file.path);
    io::GltfWriteOptions options;
    options.scene = r.gltf_scene;
    const std::string out = io::gltf_glb_bytes(r.motion, options);
    if (out.find(kSecret) != std::string::npos) std::abort();  // a file outside the folder was carried over
  });
}

inline void points_csv(const std::uint8_t* data, std::size_t size) {
  expect_clean([&] { (void)io::parse_points_csv(text_of(data, size), "fuzz.csv", LengthUnit::metre); });
}

/// The same bytes through the gait and the adverb readers.
inline void gait_json(const std::uint8_t* data, std::size_t size) {
  expect_clean([&] { (void)gait::parse_gait_json(text_of(data, size), "fuzz.gait.json"); });
  expect_clean([&] { (void)gait::parse_adverb_json(text_of(data, size), "fuzz.adverb.json"); });
}

inline void keys_report(const std::uint8_t* data, std::size_t size) {
  expect_clean([&] { (void)io::parse_kept_frames_report(text_of(data, size), "fuzz.json"); });
}

}  // namespace koma::fuzz
