#include "koma/gait/files.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "gait_test_util.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

Gait sample_gait(double arm_swing = 1.0) {
  SampleSettings s;
  s.walk_cycles = 4;
  s.jump = false;
  s.arm_swing = arm_swing;
  return analyze_gait(make_sample_motion(s));
}

TEST(GaitJson, GaitRoundTrip) {
  const Gait g = sample_gait();
  const Gait r = parse_gait_json(format_gait_json(g), "mem");
  EXPECT_EQ(r.basis.skeleton.names, g.basis.skeleton.names);
  EXPECT_EQ(r.basis.skeleton.parents, g.basis.skeleton.parents);
  EXPECT_EQ(r.basis.skeleton.channels, g.basis.skeleton.channels);
  EXPECT_EQ(r.basis.skeleton.end_site_count(), g.basis.skeleton.end_site_count());
  EXPECT_EQ(r.basis.root_joint, g.basis.root_joint);
  EXPECT_EQ(r.basis.angles, g.basis.angles);
  EXPECT_EQ(r.basis.source_unit, g.basis.source_unit);
  EXPECT_EQ(r.harmonics, g.harmonics);
  EXPECT_EQ(r.channel_harmonics, g.channel_harmonics);
  EXPECT_EQ(r.reference_channel, g.reference_channel);
  EXPECT_DOUBLE_EQ(r.basis.period, g.basis.period);
  EXPECT_LT((r.coefficients - g.coefficients).cwiseAbs().maxCoeff(), 1e-14);
  for (int j = 0; j < g.basis.skeleton.joint_count(); ++j) {
    EXPECT_QUAT_NEAR(r.basis.mean_rotations[j], g.basis.mean_rotations[j], 1e-14);
    EXPECT_VEC3_NEAR(r.basis.bones[j], g.basis.bones[j], 0.0);
  }
  // The file lists amplitude and phase per harmonic, as documented.
  const auto doc = nlohmann::json::parse(format_gait_json(g));
  EXPECT_EQ(doc["channels"][5]["amplitude"].size(), static_cast<size_t>(g.channel_harmonics[5]));
  EXPECT_EQ(doc["channels"][5]["harmonics"].get<int>(), g.channel_harmonics[5]);
  EXPECT_NEAR(doc["channels"][5]["amplitude"][0].get<double>(), std::abs(g.coefficients(5, 1)), 1e-15);
}

TEST(GaitJson, AdverbRoundTripThroughFiles) {
  const Adverb a = make_adverb(sample_gait(), sample_gait(2.0));
  const auto dir = test::temp_dir("gait_json");
  write_adverb(dir / "arms.adverb.json", a);
  const Adverb r = read_adverb(dir / "arms.adverb.json");
  EXPECT_EQ(r.skeleton.names, a.skeleton.names);
  EXPECT_EQ(r.harmonics, a.harmonics);
  EXPECT_EQ(r.reference_channel, a.reference_channel);
  EXPECT_DOUBLE_EQ(r.log_period_ratio, a.log_period_ratio);
  EXPECT_EQ(r.delta, a.delta);
  EXPECT_EQ(r.channel_harmonics, a.channel_harmonics);
  for (size_t j = 0; j < a.posture.size(); ++j) EXPECT_EQ(r.posture[j], a.posture[j]);
  write_gait(dir / "walk.gait.json", sample_gait());
  EXPECT_EQ(read_gait(dir / "walk.gait.json").harmonics, sample_gait().harmonics);
}

// Files written before per-channel K (version 2: one "harmonics", every channel's arrays that
// long) still read, as gaits and adverbs whose every channel keeps K.
TEST(GaitJson, VersionTwoFilesWithOneKStillRead) {
  const FourierSettings k5 = test_util::fixed_k(5);
  const Gait g = analyze_gait(test_util::sample_walk(), {}, k5);
  const Adverb a = make_adverb(g, analyze_gait(test_util::sample_walk(6, 2.0), {}, k5));
  auto as_v2 = [](std::string text) {
    auto doc = nlohmann::json::parse(text);
    doc["version"] = 2;
    for (auto& c : doc["channels"]) c.erase("harmonics");
    return doc.dump();
  };
  const Gait rg = parse_gait_json(as_v2(format_gait_json(g)), "old.gait.json");
  EXPECT_EQ(rg.harmonics, 5);
  EXPECT_TRUE(rg.channel_harmonics.empty());
  EXPECT_LT((rg.coefficients - g.coefficients).cwiseAbs().maxCoeff(), 1e-14);
  const Adverb ra = parse_adverb_json(as_v2(format_adverb_json(a)), "old.adverb.json");
  EXPECT_EQ(ra.harmonics, 5);
  EXPECT_TRUE(ra.channel_harmonics.empty());
  EXPECT_EQ(ra.delta, a.delta);
  // An old adverb on a new gait of per-channel K: padded, well defined.
  const Gait fresh = analyze_gait(test_util::sample_walk());
  const WeightedAdverb w{ra, 1.0, "old.adverb.json"};
  EXPECT_NO_THROW(apply_adverbs(fresh, std::span(&w, 1)).validate());
}

void expect_bad_file(const std::string& text, const std::string& needle) {
  try {
    parse_gait_json(text, "walk.gait.json");
    FAIL() << "expected Error for " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_file);
    EXPECT_EQ(e.context(), "walk.gait.json");
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

TEST(Error, GaitJsonMalformed) {
  const std::string good = format_gait_json(sample_gait());
  expect_bad_file("{ not json", "not valid JSON");
  expect_bad_file(good.substr(0, good.size() / 2), "not valid JSON");  // truncated
  auto edit = [&](auto&& change) {
    auto doc = nlohmann::json::parse(good);
    change(doc);
    return doc.dump();
  };
  expect_bad_file(edit([](auto& d) { d["format"] = "koma.adverb"; }), "format");
  expect_bad_file(edit([](auto& d) { d["version"] = 4; }), "version");
  expect_bad_file(edit([](auto& d) { d["version"] = 1; }), "analyse the motions again");  // heading in the root
  expect_bad_file(edit([](auto& d) { d["period_method"] = "guess"; }), "period_method");
  expect_bad_file(edit([](auto& d) { d.erase("period_s"); }), "period_s: missing");
  expect_bad_file(edit([](auto& d) { d["period_s"] = -1.0; }), "period");
  expect_bad_file(edit([](auto& d) { d["angles"] = "quaternion"; }), "angles");
  expect_bad_file(edit([](auto& d) { d["channels"][4]["amplitude"] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0}; }), "channels[4].amplitude");
  expect_bad_file(edit([](auto& d) { d["channels"][4]["harmonics"] = 99; }), "channels[4].harmonics");
  expect_bad_file(edit([](auto& d) { d["channels"][4]["harmonics"] = -1; }), "channels[4].harmonics");
  expect_bad_file(edit([](auto& d) { d["channels"][4]["name"] = "Tail.lx"; }), "channels[4].name");
  expect_bad_file(edit([](auto& d) { d["joints"][2]["mean_rotation_wxyz"] = {2.0, 0.0, 0.0, 0.0}; }), "unit quaternion");
  expect_bad_file(edit([](auto& d) { d["skeleton"]["joints"][3]["parent"] = "Nowhere"; }), "parent");
  EXPECT_THROW(read_gait("/nonexistent/walk.gait.json"), Error);
  EXPECT_THROW(parse_adverb_json(good, "x.adverb.json"), Error);  // a gait is not an adverb
}

}  // namespace
}  // namespace koma::gait
