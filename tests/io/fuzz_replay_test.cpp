// Replays every stored malformed input (tests/data/malformed/<reader>/) through the fuzz
// harnesses' code (fuzz/harnesses.hpp) on every build, and checks that each is rejected with a
// koma::Error (a file whose name starts with "ok_" may be accepted: a fuzz finding that was a
// crash on a valid file). scripts/fuzz.sh seeds its corpora from the same folders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "../../fuzz/harnesses.hpp"
#include "test_support.hpp"

namespace koma::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Calls `strict` (the reader alone, throwing) on every file of the reader's folder; returns how many.
template <class Harness, class Strict>
int replay(const char* reader, Harness harness, Strict strict) {
  const fs::path dir = test::test_data("malformed") / reader;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::vector<std::uint8_t> data = bytes_of(entry.path());
    SCOPED_TRACE(entry.path().string());
    harness(data.data(), data.size());  // the fuzz harness itself: no crash, no foreign exception
    if (entry.path().filename().string().rfind("ok_", 0) != 0) {
      EXPECT_THROW(strict(data), koma::Error) << "a malformed input was accepted";
    }
    ++files;
  }
  return files;
}

TEST(FuzzReplay, Bvh) {
  EXPECT_GE(replay("bvh", bvh, [](const auto& d) { io::parse_bvh(text_of(d.data(), d.size()), "f.bvh", {}); }), 10);
}

TEST(FuzzReplay, Gltf) {
  const auto strict = [](const std::vector<std::uint8_t>& d) {
    const fs::path file = fs::temp_directory_path() / ("koma-replay-" + std::to_string(::getpid()) + ".gltf");
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
    struct Remove {
      fs::path p;
      ~Remove() { std::error_code ec; fs::remove(p, ec); }
    } remove{file};
    io::read_gltf(file);
  };
  EXPECT_GE(replay("gltf", gltf, strict), 7);
}

TEST(FuzzReplay, PointsCsv) {
  EXPECT_GE(replay("points_csv", points_csv,
                   [](const auto& d) { io::parse_points_csv(text_of(d.data(), d.size()), "f.csv", LengthUnit::metre); }),
            2);
}

TEST(FuzzReplay, GaitJson) {
  EXPECT_GE(replay("gait_json", gait_json,
                   [](const auto& d) { gait::parse_gait_json(text_of(d.data(), d.size()), "f.gait.json"); }),
            2);
}

TEST(FuzzReplay, KeysReport) {
  EXPECT_GE(replay("keys_report", keys_report,
                   [](const auto& d) { io::parse_kept_frames_report(text_of(d.data(), d.size()), "f.json"); }),
            2);
}

}  // namespace
}  // namespace koma::fuzz
