#include "koma/body/contacts.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::body {
namespace {

// The sample walk plants the stance foot by construction: while a foot anchors the body its toe
// tip does not move at all. Those frames (read off the motion: zero toe-tip speed) must be found.
TEST(Contacts, SampleWalkKnownStances) {
  SampleSettings ss;
  ss.walk_cycles = 3;
  ss.jump = true;
  const Motion m = make_sample_motion(ss);
  const ContactReport rep = detect_foot_contacts(m);
  ASSERT_EQ(rep.effectors.size(), 2u);
  const WorldPoses w = forward_kinematics(m);
  const int n = m.frame_count;
  const int walk_frames = static_cast<int>(ss.walk_cycles * ss.cycle_seconds * ss.frame_rate);
  for (int side = 0; side < 2; ++side) {
    const EffectorContacts& ec = rep.effectors[side];
    SCOPED_TRACE(ec.effector.name);
    EXPECT_EQ(ec.effector.name, side == 0 ? "left_foot" : "right_foot");
    const int toe_tip = m.skeleton.joint_count() + (side == 0 ? 3 : 4);
    auto still = [&](int f) { return (w.position(f + 1, toe_tip) - w.position(f - 1, toe_tip)).norm() < 1e-9; };
    // Runs of exactly-still frames during the walk (interior frames of each run: the smoothing
    // blurs the run's ends by about one frame).
    int planted = 0, found = 0, runs = 0;
    for (int f = 2; f + 2 < walk_frames; ++f) {
      if (still(f) && !still(f - 1)) ++runs;
      if (still(f) && still(f - 1) && still(f + 1)) {
        ++planted;
        found += ec.in_contact[f];
      }
    }
    EXPECT_GE(runs, ss.walk_cycles) << "the sample walk has one planted run per foot and cycle";
    EXPECT_GE(found, 0.9 * planted);
    for (const Contact& c : ec.contacts) {
      if (c.key_frame >= walk_frames) continue;
      const Vec3 tip = w.position(c.key_frame, toe_tip);
      EXPECT_LT(std::hypot(tip.x() - c.mean_position.x(), tip.z() - c.mean_position.z()), 0.15);
      EXPECT_GT(c.confidence, 0.0);
      EXPECT_LE(c.confidence, 1.0);
    }
    // No contact while the foot is fast (swing) or in the jump's flight.
    const double flight_b = ss.walk_cycles * ss.cycle_seconds + 0.85, flight_e = flight_b + 0.35;
    for (int f = 1; f + 1 < n; ++f) {
      if (!ec.in_contact[f]) continue;
      const Vec3 v = (w.position(f + 1, toe_tip) - w.position(f - 1, toe_tip)) * ss.frame_rate / 2;
      EXPECT_LT(std::hypot(v.x(), v.z()), 0.6) << "frame " << f;
      EXPECT_FALSE(f / ss.frame_rate > flight_b && f / ss.frame_rate < flight_e) << "contact in flight, frame " << f;
    }
    // Contacts are disjoint, ordered, and in_contact matches them.
    int total = 0;
    for (size_t i = 0; i < ec.contacts.size(); ++i) {
      const Contact& c = ec.contacts[i];
      EXPECT_LT(c.begin, c.end);
      EXPECT_GE(c.key_frame, c.begin);
      EXPECT_LT(c.key_frame, c.end);
      if (i > 0) { EXPECT_GT(c.begin, ec.contacts[i - 1].end); }
      total += c.length();
    }
    int flagged = 0;
    for (auto v : ec.in_contact) flagged += v;
    EXPECT_EQ(flagged, total);
  }
}

TEST(Contacts, StandingStillIsOneLongContact) {
  const Motion m = rest_motion(sample_skeleton(), 30, 40);
  const ContactReport rep = detect_foot_contacts(m);
  for (const auto& ec : rep.effectors) {
    ASSERT_EQ(ec.contacts.size(), 1u) << ec.effector.name;
    EXPECT_EQ(ec.contacts[0].begin, 0);
    EXPECT_EQ(ec.contacts[0].end, 40);
  }
}

TEST(Contacts, Errors) {
  const Motion m = make_sample_motion();
  ContactSettings bad;
  bad.height_fraction = 0;
  EXPECT_THROW(detect_foot_contacts(m, bad), Error);
  bad = {};
  bad.speed_threshold = std::nan("");
  EXPECT_THROW(bad.validate(), Error);
  bad = {};
  bad.accel_threshold = -1;
  EXPECT_THROW(bad.validate(), Error);
  EXPECT_THROW(detect_foot_contacts(rest_motion(sample_skeleton(), 30, 2)), Error);
  const std::vector<Effector> none{{"ghost", {}}}, out_of_range{{"ghost", {999}}};
  EXPECT_THROW(detect_contacts(m, none), Error);
  EXPECT_THROW(detect_contacts(m, out_of_range), Error);
  Skeleton blob;
  blob.names = {"a", "b"};
  blob.parents = {-1, 0};
  blob.offsets = {Vec3::Zero(), Vec3(0, 1, 0)};
  blob.channels = {{}, {}};
  try {
    detect_foot_contacts(rest_motion(blob, 30, 10));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
}

// Real walks: both feet alternate, each foot is planted 35-80 % of the time, and while planted the
// toe moves far slower than the body travels.
TEST(Contacts, RealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* file : {"bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
                           "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh",
                           "bvh/styles/xia2015/neutral_01_000.bvh", "bvh/styles/semi-mst-m21/content/walk.bvh",
                           "bvh/exporters/pymo/AV_8Walk_Meredith_HVHA_Rep1.bvh"}) {
    SCOPED_TRACE(file);
    const Motion m = io::read_motion(test::shared_data() / file).motion;
    const ContactReport rep = detect_foot_contacts(m);
    ASSERT_EQ(rep.effectors.size(), 2u);
    const WorldPoses w = forward_kinematics(m);
    const int n = m.frame_count;
    const int hips = find_joint_roles(m.skeleton)[Role::hips];
    double path = 0;
    for (int f = 1; f < n; ++f) {
      const Vec3 d = w.position(f, hips) - w.position(f - 1, hips);
      path += std::hypot(d.x(), d.z());
    }
    const double root_speed = path / m.duration();
    std::vector<std::pair<int, int>> keys;  // (key frame, side)
    for (int side = 0; side < 2; ++side) {
      const EffectorContacts& ec = rep.effectors[side];
      EXPECT_GE(ec.contacts.size(), 2u) << ec.effector.name;
      int flagged = 0;
      double planted_speed = 0;
      const int toe = ec.effector.points.back();
      for (int f = 1; f + 1 < n; ++f) {
        if (!ec.in_contact[f]) continue;
        ++flagged;
        const Vec3 v = (w.position(f + 1, toe) - w.position(f - 1, toe)) * m.frame_rate / 2;
        planted_speed += std::hypot(v.x(), v.z());
      }
      const double fraction = static_cast<double>(flagged) / n;
      EXPECT_GT(fraction, 0.35) << ec.effector.name;
      EXPECT_LT(fraction, 0.85) << ec.effector.name;
      EXPECT_LT(planted_speed / std::max(flagged, 1), 0.25 * root_speed) << ec.effector.name;
      for (const Contact& c : ec.contacts) keys.emplace_back(c.key_frame, side);
    }
    // Steps alternate: sorted by key frame, consecutive contacts mostly change side.
    std::sort(keys.begin(), keys.end());
    int alternations = 0;
    for (size_t i = 1; i < keys.size(); ++i) alternations += keys[i].second != keys[i - 1].second;
    EXPECT_GE(alternations, static_cast<int>(keys.size()) - 2);
  }
}

// The calibration fit recovers a known logistic from frames drawn from it, and its probabilities
// are then calibrated on those frames; a contact's confidence is the mean of its frames'
// probabilities; bad labels are refused.
TEST(ContactCalibration, FitRecoversAKnownLogistic) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> score(-4.0, 1.0), unit(0.0, 1.0);
  const ContactCalibration truth{3.0, 0.5};
  std::vector<double> s;
  std::vector<std::uint8_t> y;
  for (int k = 0; k < 20000; ++k) {
    s.push_back(score(rng));
    y.push_back(unit(rng) < truth.probability(s.back()) ? 1 : 0);
  }
  const ContactCalibration fit = fit_contact_calibration(s, y);
  EXPECT_NEAR(fit.slope, truth.slope, 0.15);
  EXPECT_NEAR(fit.offset, truth.offset, 0.1);
  std::vector<double> p;
  for (double x : s) p.push_back(fit.probability(x));
  EXPECT_LT(expected_calibration_error(p, y), 0.02);
  // A constant 0.5 on labels that are all 1 is off by 0.5; exact probabilities by 0.
  EXPECT_DOUBLE_EQ(expected_calibration_error(std::vector<double>(8, 0.5), std::vector<std::uint8_t>(8, 1)), 0.5);
  EXPECT_DOUBLE_EQ(expected_calibration_error(std::vector<double>{0.0, 1.0}, std::vector<std::uint8_t>{0, 1}), 0.0);
  // Separable labels: finite, steep, still increasing.
  std::vector<double> sep{-2, -1.5, -1, -0.5, -0.1, 0.1, 0.5, 0.7, 0.9, 1.0};
  std::vector<std::uint8_t> sep_y{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  const ContactCalibration steep = fit_contact_calibration(sep, sep_y);
  EXPECT_TRUE(std::isfinite(steep.slope) && steep.slope > 5);
  EXPECT_LT(steep.probability(-0.5), 0.1);
  EXPECT_GT(steep.probability(0.5), 0.9);
}

TEST(ContactCalibration, BadLabelsAreRefused) {
  const std::vector<double> s{-1, -0.5, 0, 0.5, 1, -1, -0.5, 0, 0.5, 1};
  EXPECT_THROW(fit_contact_calibration(s, std::vector<std::uint8_t>(9, 1)), Error);   // sizes differ
  EXPECT_THROW(fit_contact_calibration(s, std::vector<std::uint8_t>(10, 1)), Error);  // one class
  EXPECT_THROW(fit_contact_calibration(std::vector<double>{0, 1}, std::vector<std::uint8_t>{0, 1}), Error);  // too few
  std::vector<double> nan = s;
  nan[3] = std::nan("");
  EXPECT_THROW(fit_contact_calibration(nan, std::vector<std::uint8_t>{0, 0, 0, 1, 1, 0, 0, 0, 1, 1}), Error);
  // Labels that fall as the score rises: no calibration.
  EXPECT_THROW(fit_contact_calibration(s, std::vector<std::uint8_t>{1, 1, 1, 0, 0, 1, 1, 0, 0, 0}), Error);
  ContactSettings bad;
  bad.calibration.slope = 0;
  EXPECT_THROW(bad.validate(), Error);
}

TEST(ContactCalibration, ConfidenceIsTheMeanFrameProbability) {
  SampleSettings ss;
  ss.walk_cycles = 3;
  const Motion m = make_sample_motion(ss);
  const ContactReport rep = detect_foot_contacts(m);
  for (const EffectorContacts& ec : rep.effectors) {
    ASSERT_EQ(ec.score.size(), static_cast<size_t>(m.frame_count));
    ASSERT_FALSE(ec.contacts.empty());
    for (int f = 0; f < m.frame_count; ++f) {
      EXPECT_GE(ec.score[f], -4.0);
      EXPECT_LE(ec.score[f], 1.0);
      EXPECT_DOUBLE_EQ(ec.probability[f], ContactCalibration{}.probability(ec.score[f]));
    }
    for (const Contact& c : ec.contacts) {
      double sum = 0;
      for (int f = c.begin; f < c.end; ++f) sum += ec.probability[f];
      EXPECT_NEAR(c.confidence, sum / c.length(), 1e-12);
      EXPECT_GT(c.confidence, 0.8);  // the sample plants its feet exactly
    }
  }
}

TEST(ContactFade, DistanceAndEase) {
  const std::vector<std::uint8_t> flag = {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0};
  const std::vector<int> d = frames_to_contact(flag);
  EXPECT_EQ(d, (std::vector<int>{4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 5, 6}));
  const std::vector<double> w = contact_fade(flag, 4.0);
  ASSERT_EQ(w.size(), flag.size());
  EXPECT_EQ(w[4], 1.0);
  EXPECT_EQ(w[5], 1.0);
  EXPECT_DOUBLE_EQ(w[7], 0.5);  // halfway through the fade: smoothstep(0.5)
  EXPECT_EQ(w[9], 0.0);
  EXPECT_EQ(w[0], 0.0);
  for (size_t k = 6; k + 1 < w.size(); ++k) EXPECT_LE(w[k + 1], w[k]);
  // No contact: every frame is far, the fade is 0 everywhere.
  const std::vector<std::uint8_t> none(5, 0);
  for (int v : frames_to_contact(none)) EXPECT_EQ(v, kNoContactNearby);
  for (double v : contact_fade(none, 3.0)) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(frames_to_contact({}).empty());
}

}  // namespace
}  // namespace koma::body
