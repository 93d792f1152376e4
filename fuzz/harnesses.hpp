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
#include <string>
#include <string_view>

#include "koma/core/error.hpp"
#include "koma/gait/files.hpp"
#include "koma/io/bvh.hpp"
#include "koma/io/csv.hpp"
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
