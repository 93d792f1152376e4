#include "koma/keys/keys.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "keys_test_util.hpp"
#include "koma/core/drawings.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/report.hpp"
#include "test_support.hpp"

namespace koma::keys {
namespace {

// A small random chain motion (3 joints + end site) with smooth random rotations.
Motion random_chain(int frames, std::uint64_t seed) {
  Skeleton s;
  s.names = {"root", "mid", "tip"};
  s.parents = {-1, 0, 1};
  s.offsets = {Vec3(0, 1, 0), Vec3(0, 0.5, 0), Vec3(0.3, 0.4, 0)};
  s.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Zrotation, Channel::Xrotation, Channel::Yrotation},
                {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation},
                {Channel::Zrotation, Channel::Xrotation, Channel::Yrotation}};
  s.end_sites = {{2, Vec3(0, 0.3, 0)}};
  Motion m = rest_motion(s, 24, frames);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, 1);
  std::vector<Vec3> w(3, Vec3::Zero());
  for (int f = 0; f < frames; ++f) {
    for (int j = 0; j < 3; ++j) {
      w[j] += 0.25 * Vec3(nd(rng), nd(rng), nd(rng));
      m.frame_rotations(f)[j] = quat_exp(w[j]);
    }
    m.frame_translations(f)[0] = Vec3(0.1 * f, 1 + 0.05 * nd(rng), 0);
  }
  return m;
}

// Slerp + FK: exact equals brute force where the test reconstructs poses itself.
TEST(SelectKeys, SlerpExactEqualsBruteForce) {
  const int N = 10;
  const Motion m = random_chain(N, 3);
  FeatureMatrix x = extract_features(m);
  for (Metric metric : {Metric::position, Metric::velocity, Metric::acceleration}) {
    for (int n : {3, 4, 6}) {
      HoldConstraints c;
      double brute = std::numeric_limits<double>::infinity();
      test::for_each_selection(N, c, n, [&](const std::vector<int>& keys) {
        std::vector<std::vector<double>> recon(static_cast<size_t>(N), std::vector<double>(static_cast<size_t>(x.dims)));
        for (size_t a = 0; a + 1 < keys.size(); ++a) {
          for (int k = keys[a] + 1; k < keys[a + 1]; ++k) {
            const double t = static_cast<double>(k - keys[a]) / (keys[a + 1] - keys[a]);
            std::vector<Quat> r(3);
            std::vector<Vec3> tr(3), pos(4);
            std::vector<Quat> wr(3);
            for (int j = 0; j < 3; ++j) {
              r[j] = slerp(m.rotation(keys[a], j), m.rotation(keys[a + 1], j), t);
              tr[j] = (1 - t) * m.translation(keys[a], j) + t * m.translation(keys[a + 1], j);
            }
            forward_kinematics(m.skeleton, r, tr, {}, pos, wr);
            for (int p = 0; p < 4; ++p)
              for (int d = 0; d < 3; ++d) recon[k][p * 3 + d] = pos[p][d];
          }
        }
        brute = std::min(brute, test::independent_error(x, Interpolation::slerp, metric, keys, &recon));
      });
      KeySettings st;
      st.interpolation = Interpolation::slerp;
      st.metric = metric;
      st.keys = n;
      const KeySelection sel = select_keys(m, st);
      EXPECT_NEAR(sel.layers[0].total, brute, 1e-9 * (1 + brute)) << to_string(metric) << " n=" << n;
    }
  }
}

// The stepped motion: every frame equals its key pose exactly; holds within limits; locks kept.
TEST(Hold, EveryFrameShowsItsKeyPoseExactly) {
  const Motion src = resample(make_sample_motion(), 24.0);
  EXPECT_EQ(src.frame_count, resampled_frame_count(make_sample_motion().frame_count, 60.0, 24.0));
  KeySettings st;
  st.keys = src.frame_count / 3;
  st.constraints.min_hold = 2;
  st.constraints.max_hold = 5;
  st.constraints.locked = {10, 31};
  const KeySelection sel = select_keys(src, st);
  const Motion held = hold(src, sel);
  ASSERT_EQ(held.frame_count, src.frame_count);
  EXPECT_DOUBLE_EQ(held.frame_rate, 24.0);
  const std::vector<int>& k = sel.keys();
  EXPECT_EQ(static_cast<int>(k.size()), st.keys);
  for (size_t a = 0; a + 1 < k.size(); ++a) {
    EXPECT_GE(k[a + 1] - k[a], 2);
    EXPECT_LE(k[a + 1] - k[a], 5);
  }
  EXPECT_TRUE(std::binary_search(k.begin(), k.end(), 10));
  EXPECT_TRUE(std::binary_search(k.begin(), k.end(), 31));
  const std::vector<int> map = hold_map(k, src.frame_count);
  for (int f = 0; f < src.frame_count; ++f) {
    EXPECT_LE(map[f], f);
    EXPECT_TRUE(std::binary_search(k.begin(), k.end(), map[f]));
    for (int j = 0; j < src.joint_count(); ++j) {
      EXPECT_EQ(held.rotation(f, j).coeffs(), src.rotation(map[f], j).coeffs()) << "frame " << f;
      EXPECT_EQ(held.translation(f, j), src.translation(map[f], j));
    }
  }
  const std::vector<int> dn = drawing_numbers(k, src.frame_count);
  EXPECT_EQ(dn.front(), 1);
  EXPECT_EQ(dn.back(), static_cast<int>(k.size()));
}

TEST(Layers, EachLayerDrivesItsJointsAndRespectsItsCount) {
  const Motion src = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.on = 2;
  st.layers = parse_layers("legs:3,arms:2+1");
  const KeySelection sel = select_keys(src, st);
  ASSERT_EQ(sel.layers.size(), 3u);
  const int N = src.frame_count;
  EXPECT_EQ(static_cast<int>(sel.layers[1].keys.size()), 2 + (N - 2) / 3);
  const Motion held = hold(src, sel);
  const auto legs = group_joints(src.skeleton, "legs");
  ASSERT_FALSE(legs.empty());
  const std::vector<int> map = hold_map(sel.layers[1].keys, N);
  for (int f = 0; f < N; ++f)
    for (int j : legs) EXPECT_EQ(held.rotation(f, j).coeffs(), src.rotation(map[f], j).coeffs());
  // Uniform layers with an offset put their keys on the grid.
  st.selector = Selector::uniform;
  const KeySelection u = select_keys(src, st);
  EXPECT_EQ(u.layers[2].keys[1], 1);
  EXPECT_EQ(u.layers[2].keys[2], 3);
  EXPECT_EQ(u.layers[1].keys[1], 3);
}

TEST(Constraints, ContactsAndExtremesBecomeKeys) {
  const Motion src = resample(make_sample_motion(), 24.0);
  const auto plants = contact_keys(src);
  ASSERT_GE(plants.size(), 2u);  // a two-cycle walk plants each foot
  const auto ext = detect_extremes(src);
  ASSERT_FALSE(ext.empty());
  KeySettings st;
  st.ratio = 0.4;
  st.keep_contacts = true;
  st.keep_extremes = true;
  const KeySelection sel = select_keys(src, st);
  const auto& k = sel.keys();
  EXPECT_FALSE(sel.layers[0].auto_locked.empty());
  EXPECT_TRUE(std::is_sorted(sel.layers[0].auto_locked.begin(), sel.layers[0].auto_locked.end()));
  EXPECT_EQ(std::adjacent_find(sel.layers[0].auto_locked.begin(), sel.layers[0].auto_locked.end()),
            sel.layers[0].auto_locked.end());
  for (int f : sel.layers[0].auto_locked) EXPECT_TRUE(std::binary_search(k.begin(), k.end(), f));
  // Every planted touch-down is a key here (min hold 1 never forces one out).
  for (const KeyEvent& e : plants) EXPECT_TRUE(std::binary_search(k.begin(), k.end(), e.frame)) << e.frame;
}

TEST(Features, ProjectionsAndWeights) {
  const Motion m = random_chain(5, 1);
  FeatureSettings fs;
  fs.camera.projection = Projection::front;
  const FeatureMatrix f = extract_features(m, fs);
  EXPECT_EQ(f.coords_per_point, 2);
  const WorldPoses w = forward_kinematics(m);
  EXPECT_DOUBLE_EQ(f.row(2)[2], w.position(2, 1).x());
  EXPECT_DOUBLE_EQ(f.row(2)[3], w.position(2, 1).y());
  fs.camera.projection = Projection::perspective;
  fs.camera.position = Vec3(0, 1, 10);
  fs.camera.target = Vec3(0, 1, 0);
  const FeatureMatrix p = extract_features(m, fs);
  // A point on the target plane projects to its own offset from the target (metres at that depth).
  Motion still = rest_motion(m.skeleton, 24, 2);
  const FeatureMatrix ps = extract_features(still, fs);
  EXPECT_NEAR(ps.row(0)[0], 0.0, 1e-12);  // root at (0,1,0): the target
  EXPECT_NEAR(ps.row(0)[1], 0.0, 1e-12);
  EXPECT_EQ(p.dims, 8);
  FeatureSettings bw;
  bw.weights = WeightMode::bone_length;
  const std::vector<double> wts = point_weights(m.skeleton, bw);
  double mean = 0;
  for (double v : wts) mean += v;
  EXPECT_NEAR(mean / static_cast<double>(wts.size()), 1.0, 1e-12);
  EXPECT_GT(wts[1] / wts[3], 1.0);  // 0.5 m bone vs 0.3 m end site
  FeatureSettings bad;
  bad.point_weights = {{"nope", 1.0}};
  EXPECT_THROW(extract_features(m, bad), Error);
}

TEST(Error, KeySelectionBadInput) {
  const Motion src = resample(make_sample_motion(), 24.0);
  auto expect_error = [&](const KeySettings& st, const Motion& m, ErrorCode code, const char* needle) {
    try {
      select_keys(m, st);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  KeySettings st;
  st.keys = 1;
  expect_error(st, src, ErrorCode::invalid_settings, "at least 2");
  st.keys = src.frame_count + 1;
  expect_error(st, src, ErrorCode::invalid_settings, "more than");
  st.keys = 10;
  st.constraints.min_hold = src.frame_count / 5;
  expect_error(st, src, ErrorCode::invalid_settings, "impossible");
  st.constraints.min_hold = 4;
  st.constraints.locked = {20, 22};
  expect_error(st, src, ErrorCode::invalid_settings, "closer than the minimum hold");
  KeySettings lay;
  lay.layers = parse_layers("LeftFoo:3");
  expect_error(lay, src, ErrorCode::invalid_settings, "LeftFoo");
  EXPECT_THROW(parse_layers("legs"), Error);
  EXPECT_THROW(parse_layers("legs:0"), Error);
  EXPECT_THROW(parse_layers("legs:2+x"), Error);
  KeySettings two;
  two.keys = 5;
  two.ratio = 0.5;
  expect_error(two, src, ErrorCode::invalid_settings, "only one");
  Motion nan = src;
  nan.translations[5 * nan.joint_count()].x() = std::nan("");
  expect_error(KeySettings{}, nan, ErrorCode::bad_data, "frame 5");
}

// Errors name the settings field (as Python and the add-on spell it), never a CLI flag: the CLI
// maps fields to its flags when it prints (apps/koma/flags.cpp).
TEST(Error, KeySelectionNamesSettingsFields) {
  const Motion src = resample(make_sample_motion(), 24.0);
  auto context_of = [&](const KeySettings& st) -> std::string {
    try {
      select_keys(src, st);
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
      return e.context();
    }
    ADD_FAILURE() << "no error";
    return {};
  };
  KeySettings st;
  st.keys = 1;
  EXPECT_EQ(context_of(st), "keys");
  st = {};
  st.ratio = 2;
  EXPECT_EQ(context_of(st), "ratio");
  st = {};
  st.keys = 5;
  st.on = 2;
  EXPECT_EQ(context_of(st), "keys");
  st = {};
  st.constraints.min_hold = 0;
  EXPECT_EQ(context_of(st), "constraints.min_hold");
  st = {};
  st.constraints.max_hold = -1;
  EXPECT_EQ(context_of(st), "constraints.max_hold");
  st = {};
  st.constraints.locked = {100000};
  EXPECT_EQ(context_of(st), "constraints.locked");
  st = {};
  st.max_error = std::numeric_limits<double>::infinity();
  EXPECT_EQ(context_of(st), "max_error");
  st = {};
  st.layers = {BodyPartLayer{"Wing", 2, 0}};
  EXPECT_EQ(context_of(st), "layers");
  try {
    parse_layers("legs:x");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.context(), "layers");
  }
}

TEST(Report, JsonAndExposureSheet) {
  const Motion src = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.on = 3;
  const KeySelection sel = select_keys(src, st);
  const auto doc = nlohmann::json::parse(report_json(sel, src.skeleton, LengthUnit::centimetre, st, "walk.bvh"));
  EXPECT_EQ(doc["layers"][0]["keys"].size(), sel.keys().size());
  EXPECT_NEAR(doc["error"]["unit2"].get<double>(), sel.error * 1e4, 1e-9 * (1 + sel.error * 1e4));
  double seg_sum = 0;
  for (const auto& s : doc["layers"][0]["segments"]) seg_sum += s["error_m2"].get<double>();
  EXPECT_NEAR(seg_sum, sel.error, 1e-9 + 1e-9 * sel.error);
  EXPECT_FALSE(doc["layers"][0]["curve"].empty());
  const std::string csv = exposure_sheet_csv(sel);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), src.frame_count + 1);
  EXPECT_EQ(csv.rfind("frame,sheet_frame,time_s,main\n", 0), 0u);
}

// Every real clip: exact <= anneal, cumsum, uniform at the same n and constraints (24 fps, capped
// annealing); every selection satisfies the constraints.
TEST(RealData, ExactNeverWorseThanHeuristicsOnEveryClip) {
  KOMA_REQUIRE_SHARED_DATA();
  int clips = 0;
  for (const auto& path : koma::test::shared_bvh_files()) {
    io::ReadResult r = io::read_motion(path);
    if (r.motion.frame_count < 24) continue;
    Motion m = resample(r.motion, 24.0);
    if (m.frame_count > 400) m = cut(m, 0, 400);
    if (m.frame_count < 10) continue;
    KeySettings st;
    st.keys = m.frame_count / 3;
    st.constraints.max_hold = 8;
    st.constraints.locked = {m.frame_count / 2};
    st.anneal.iterations = 3000;
    const KeySelection e = select_keys(m, st);
    for (Selector s : {Selector::anneal, Selector::cumsum, Selector::uniform, Selector::cumsum_anneal}) {
      st.selector = s;
      const KeySelection h = select_keys(m, st);
      EXPECT_EQ(h.keys().size(), e.keys().size()) << path << " " << to_string(s);
      EXPECT_LE(e.layers[0].total, h.layers[0].total * (1 + 1e-9) + 1e-12) << path << " " << to_string(s);
    }
    st.selector = Selector::exact;
    ++clips;
  }
  EXPECT_GT(clips, 50);
}

}  // namespace
}  // namespace koma::keys

namespace koma::keys {
namespace {

TEST(DrawingFrames, UnionOfLayerKeysSortedAndUnique) {
  KeySelection sel;
  sel.layers.resize(2);
  sel.layers[0].keys = {0, 3, 6, 9};
  sel.layers[1].keys = {0, 2, 3, 8, 9};
  EXPECT_EQ(drawing_frames(sel), (std::vector<int>{0, 2, 3, 6, 8, 9}));
}

}  // namespace
}  // namespace koma::keys
