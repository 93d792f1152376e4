// Regression on the real style walks in ../shared/data/bvh/styles (skipped when absent).
#include <gtest/gtest.h>

#include <cstdio>

#include "koma/core/error.hpp"
#include "koma/gait/adverb.hpp"
#include "koma/gait/fourier.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

std::vector<std::filesystem::path> style_walks() {
  std::vector<std::filesystem::path> out;
  for (const auto& p : test::shared_bvh_files("bvh/styles")) {
    const std::string n = p.filename().string();
    if (n.find("_walk_") != std::string::npos || n.find("_01_") != std::string::npos ||
        p.parent_path().filename() == "style" || n.find("walk") != std::string::npos)
      out.push_back(p);
  }
  return out;
}

TEST(RealWalks, ReconstructionWithFiveHarmonics) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const auto& path : style_walks()) {
    SCOPED_TRACE(path.string());
    const Motion m = io::read_motion(path).motion;
    try {
      const GaitCycle c = extract_cycle(m);
      const Gait g = fourier_analyze(c);
      const ReconstructionError e = reconstruction_error(c, g);
      std::printf("%-60s T=%.3fs conf=%.3f cycles %d/%d seam %.2f deg worst %s %.3f deg height %.2f mm\n",
                  path.filename().string().c_str(), c.basis.period, c.basis.confidence, c.basis.cycles_used,
                  c.basis.cycles_found, c.max_seam_correction * kRadToDeg,
                  m.skeleton.names[e.worst_joint].c_str(), e.worst_rms * kRadToDeg, e.height_rms * 1000);
    } catch (const Error& e) {
      std::printf("%-60s ERROR %s\n", path.filename().string().c_str(), e.what());
    }
  }
}

}  // namespace
}  // namespace koma::gait
