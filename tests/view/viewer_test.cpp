// The web viewer writer: drawings found in held motion, the motion script (base64 GLB, STEP for
// the held result, checked with the independent glTF checker of tests/io), errors that write nothing.
#include "koma/view/viewer.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../io/gltf_check.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma {
namespace {

namespace fs = std::filesystem;

Motion walk24(int frames = 48) {
  SampleSettings s;
  s.jump = false;
  return cut(resample(make_sample_motion(s), 24.0), 0, frames);
}

// Every frame shows the latest drawing's pose, as a held result does.
Motion held(const Motion& m, const std::vector<int>& drawings) {
  Motion out = m;
  const int J = m.joint_count();
  size_t d = 0;
  for (int f = 0; f < m.frame_count; ++f) {
    while (d + 1 < drawings.size() && drawings[d + 1] <= f) ++d;
    for (int j = 0; j < J; ++j) {
      out.rotations[static_cast<size_t>(f) * J + j] = m.rotation(drawings[d], j);
      out.translations[static_cast<size_t>(f) * J + j] = m.translation(drawings[d], j);
    }
  }
  return out;
}

std::string decode_base64(const std::string& s) {
  std::string out;
  int val = 0, bits = -8;
  for (char c : s) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else break;  // '=' padding
    val = (val << 6) | v;
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xff);
      bits -= 8;
    }
  }
  return out;
}

nlohmann::json script_json(const std::string& script) {
  const std::string head = "window.KOMA_VIEW = ";
  const size_t a = script.find(head);
  EXPECT_NE(a, std::string::npos);
  const size_t b = script.rfind(';');
  return nlohmann::json::parse(script.substr(a + head.size(), b - a - head.size()));
}

test::GltfDoc glb_of(const nlohmann::json& clip, const std::string& name) {
  const fs::path p = test::temp_dir("view_glb") / (name + ".glb");
  std::ofstream(p, std::ios::binary) << decode_base64(clip["glb"].get<std::string>());
  return test::load_gltf(p);
}

TEST(HeldDrawings, FindsTheRunsOfEqualPosesOfAHeldClip) {
  const Motion m = walk24();
  // Random drawings: 0, then increasing frames with holds of 1 to 4.
  std::mt19937 rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int> drawings{0};
    while (true) {
      const int next = drawings.back() + 1 + static_cast<int>(rng() % 4);
      if (next >= m.frame_count) break;
      drawings.push_back(next);
    }
    EXPECT_EQ(view::held_drawings(held(m, drawings)), drawings) << "trial " << trial;
  }
  // The smooth walk moves on every frame: every frame is a drawing.
  EXPECT_EQ(view::held_drawings(m).size(), static_cast<size_t>(m.frame_count));
}

TEST(HeldDrawings, QuaternionSignDoesNotMakeANewDrawing) {
  Motion m = held(walk24(8), {0, 4});
  for (int j = 0; j < m.joint_count(); ++j) m.rotations[static_cast<size_t>(2) * m.joint_count() + j].coeffs() *= -1;
  EXPECT_EQ(view::held_drawings(m), (std::vector<int>{0, 4}));
}

TEST(CheckDrawings, RejectsDrawingsThatDoNotFitTheClip) {
  EXPECT_NO_THROW(view::check_drawings({0, 3, 9}, 10, "r.json"));
  for (const std::vector<int>& bad : {std::vector<int>{}, {1, 4}, {0, 4, 4}, {0, 5, 3}, {0, 10}}) {
    try {
      view::check_drawings(bad, 10, "r.json");
      ADD_FAILURE() << "accepted " << bad.size() << " drawings";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::mismatch);
      EXPECT_NE(std::string(e.what()).find("r.json"), std::string::npos) << e.what();
    }
  }
}

TEST(ViewerScript, HeldResultIsSteppedAndPlaysTheDrawingsPoses) {
  const Motion m = walk24();
  const std::vector<int> drawings{0, 3, 5, 9, 12, 20, 30, 31, 40};
  view::ViewClip a{m, nullptr, "walk.bvh", {}};
  view::ViewClip b{m, nullptr, "walk.bvh held", drawings};
  view::ViewerSettings vs;
  vs.curve = {{2, 1e-2}, {9, 1e-4}, {48, 0.0}};
  vs.chosen_keys = 9;
  const nlohmann::json doc = script_json(view::viewer_data_script(a, b, vs));
  EXPECT_EQ(doc["frames"], 48);
  EXPECT_DOUBLE_EQ(doc["fps"].get<double>(), 24.0);
  EXPECT_EQ(doc["chosen_keys"], 9);
  EXPECT_EQ(doc["curve"].size(), 3u);
  EXPECT_EQ(doc["result"]["character"], "procedural");

  const test::GltfDoc g = glb_of(doc["result"], "result");
  EXPECT_TRUE(test::validate_gltf(g).empty());
  for (const auto& s : g.json["animations"][0]["samplers"]) {
    EXPECT_EQ(s["interpolation"], "STEP");
    EXPECT_EQ(g.count(s["input"].get<int>()), static_cast<int>(drawings.size()));
  }
  const test::GltfDoc o = glb_of(doc["original"], "original");
  for (const auto& s : o.json["animations"][0]["samplers"]) EXPECT_NE(s["interpolation"], "STEP");
  // Inside a hold the result shows the drawing's own pose; the original moves on.
  const int nodes = static_cast<int>(g.json["nodes"].size());
  for (size_t d = 0; d + 1 < drawings.size(); ++d) {
    for (int f = drawings[d]; f < drawings[d + 1]; ++f) {
      for (int n = 0; n < nodes; ++n) {
        const double t = (f + 1e-3) / 24.0, t0 = (drawings[d] + 1e-3) / 24.0;
        EXPECT_LT((g.world(n, 0, t) - g.world(n, 0, t0)).cwiseAbs().maxCoeff(), 1e-6) << "frame " << f;
        // The original (LINEAR) at the drawing's own key time.
        EXPECT_LT((g.world(n, 0, t) - o.world(n, 0, drawings[d] / 24.0)).cwiseAbs().maxCoeff(), 1e-5)
            << "frame " << f;
      }
    }
  }
}

TEST(ViewerScript, ClipsOfDifferentLengthOrRateAreAMismatch) {
  const Motion m = walk24();
  view::ViewClip a{m, nullptr, "a.bvh", {}};
  view::ViewClip shorter{cut(m, 0, 40), nullptr, "b.bvh", {}};
  Motion other_rate = m;
  other_rate.frame_rate = 30.0;
  view::ViewClip c{other_rate, nullptr, "c.bvh", {}};
  view::ViewClip late{m, nullptr, "d.bvh", {0, 50}};
  for (const view::ViewClip* b : {&shorter, &c, &late}) {
    try {
      view::viewer_data_script(a, *b, {});
      ADD_FAILURE() << b->label << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::mismatch) << e.what();
    }
  }
}

TEST(ViewerScript, LabelsCannotCloseTheScript) {
  const Motion m = walk24(4);
  view::ViewClip a{m, nullptr, "x</script><script>alert(1)", {}};
  const std::string s = view::viewer_data_script(a, a, {});
  EXPECT_EQ(s.find("</script>"), std::string::npos);
  EXPECT_EQ(script_json(s)["original"]["label"], "x</script><script>alert(1)");
}

TEST(ViewerSettings, ValidateRejectsBadCurves) {
  view::ViewerSettings s;
  EXPECT_NO_THROW(s.validate());
  s.curve = {{0, 1.0}};
  EXPECT_THROW(s.validate(), Error);
  s.curve = {{3, -1.0}};
  EXPECT_THROW(s.validate(), Error);
  s.curve = {};
  s.title = "";
  EXPECT_THROW(s.validate(), Error);
}

TEST(ViewerSettings, LookIsToonPlainOrFlatAndReachesThePage) {
  view::ViewerSettings s;
  EXPECT_EQ(s.look, "toon");  // the default
  const Motion m = walk24(4);
  view::ViewClip a{m, nullptr, "a", {}};
  for (const char* look : {"toon", "plain", "flat"}) {
    s.look = look;
    EXPECT_NO_THROW(s.validate()) << look;
    EXPECT_NE(view::viewer_data_script(a, a, s).find(std::string("\"look\":\"") + look + "\""), std::string::npos) << look;
  }
  for (const char* look : {"", "Toon", "cel", "sticks"}) {
    s.look = look;
    EXPECT_THROW(s.validate(), Error) << look;
    EXPECT_THROW(view::viewer_data_script(a, a, s), Error) << look;
  }
}

TEST(ViewerSettings, SmearIsOffSmearOrMultiplesAndReachesThePage) {
  view::ViewerSettings s;
  EXPECT_EQ(s.smear, "off");  // the default
  const Motion m = walk24(4);
  view::ViewClip a{m, nullptr, "a", {}};
  for (const char* smear : {"off", "smear", "multiples"}) {
    s.smear = smear;
    EXPECT_NO_THROW(s.validate()) << smear;
    EXPECT_NE(view::viewer_data_script(a, a, s).find(std::string("\"smear\":\"") + smear + "\""), std::string::npos) << smear;
  }
  for (const char* smear : {"", "on", "Smear"}) {
    s.smear = smear;
    EXPECT_THROW(s.validate(), Error) << smear;
  }
}

TEST(WriteViewer, MissingAssetsSayHowToGetThemAndWriteNothing) {
  const fs::path dir = test::temp_dir("view_missing") / "out";
  const fs::path assets = test::temp_dir("view_no_assets");
  const Motion m = walk24(4);
  view::ViewClip a{m, nullptr, "a", {}};
  try {
    view::write_viewer(dir, assets, a, a, {});
    FAIL() << "wrote a page without three.js";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find("make deps"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(WriteViewer, WritesThePageTheVendoredFilesAndTheMotion) {
  const fs::path assets = KOMA_VIEW_ASSETS_DIR;
  if (!fs::exists(assets / "three" / "three.min.js")) GTEST_SKIP() << "three.js not vendored (make deps)";
  const fs::path dir = test::temp_dir("view_write") / "out";
  const Motion m = walk24(8);
  view::ViewClip a{m, nullptr, "a", {}};
  view::ViewerSettings s;
  s.title = "walk & <run>";
  const auto files = view::write_viewer(dir, assets, a, a, s);
  EXPECT_EQ(files.size(), view::viewer_asset_files().size() + 1);
  for (const auto& rel : view::viewer_asset_files()) {
    if (rel == "page/index.html") continue;  // its title is filled in
    const std::string out_rel = rel.rfind("page/", 0) == 0 ? rel.substr(5) : rel;
    EXPECT_EQ(read_file(dir / out_rel), read_file(assets / rel)) << rel;
  }
  const std::string html = read_file(dir / "index.html");
  EXPECT_NE(html.find("<title>walk &amp; &lt;run&gt;</title>"), std::string::npos);
  // Classic scripts only: a file:// page cannot load modules.
  EXPECT_EQ(html.find("type=\"module\""), std::string::npos);
  EXPECT_NE(read_file(dir / "motion.js").find("window.KOMA_VIEW = "), std::string::npos);
}

}  // namespace
}  // namespace koma
