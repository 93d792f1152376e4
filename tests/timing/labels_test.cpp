// Key times against hand-made ground truth (tests/data/labels/*.json): foot contacts and hand
// extremes read off plots of the motion (scripts/label_plots.py), never off the detector. Each
// clip reports precision and recall per effector; the bar is 0.9 within 2 frames.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "koma/body/roles.hpp"
#include "koma/core/resample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/timing/keytimes.hpp"
#include "test_support.hpp"

namespace koma::timing {
namespace {

using Span = std::pair<int, int>;

std::vector<Span> spans(const nlohmann::json& j, const std::string& key, const std::string& name) {
  std::vector<Span> out;
  if (j.contains(key) && j[key].contains(name))
    for (const auto& s : j[key][name]) out.emplace_back(s[0].get<int>(), s[1].get<int>());
  return out;
}

bool inside(int f, const std::vector<Span>& ignore) {
  for (auto [b, e] : ignore)
    if (f >= b && f < e) return true;
  return false;
}

struct Score {
  int truth = 0, found = 0, hit_truth = 0, hit_found = 0;
  double precision() const { return found ? double(hit_found) / found : 1.0; }
  double recall() const { return truth ? double(hit_truth) / truth : 1.0; }
};

// A detected contact matches a labelled one of the same foot when its touch-down is within `tol`
// frames (both clipped to the labelled range; the touch-down is the moment timing is taken from)
// and its lift-off within `end_tol` (a foot peels off over several frames: the detector's
// smoothed speed crosses its threshold later than the eye sees the toe rise). `end_error` gets the
// worst lift-off difference of the matches.
Score score_contacts(const std::vector<Span>& truth, std::vector<Span> found, const std::vector<Span>& ignore, int tol,
                     int end_tol, int& end_error) {
  Score s;
  std::erase_if(found, [&](Span c) { return inside((c.first + c.second) / 2, ignore); });
  s.truth = static_cast<int>(truth.size());
  s.found = static_cast<int>(found.size());
  std::vector<bool> used(found.size(), false);
  for (Span t : truth) {
    for (size_t k = 0; k < found.size(); ++k) {
      if (used[k] || std::abs(found[k].first - t.first) > tol || std::abs(found[k].second - t.second) > end_tol) continue;
      end_error = std::max(end_error, std::abs(found[k].second - t.second));
      used[k] = true;
      ++s.hit_truth;
      ++s.hit_found;
      break;
    }
  }
  return s;
}

Score score_frames(const std::vector<int>& truth, std::vector<int> found, const std::vector<Span>& ignore, int tol) {
  Score s;
  std::erase_if(found, [&](int f) { return inside(f, ignore); });
  s.truth = static_cast<int>(truth.size());
  s.found = static_cast<int>(found.size());
  std::vector<bool> used(found.size(), false);
  for (int t : truth) {
    int best = -1;
    for (size_t k = 0; k < found.size(); ++k)
      if (!used[k] && std::abs(found[k] - t) <= tol && (best < 0 || std::abs(found[k] - t) < std::abs(found[best] - t)))
        best = static_cast<int>(k);
    if (best >= 0) {
      used[best] = true;
      ++s.hit_truth;
      ++s.hit_found;
    }
  }
  return s;
}

class Labelled : public ::testing::TestWithParam<const char*> {};

TEST_P(Labelled, PrecisionAndRecallWithinTwoFrames) {
  KOMA_REQUIRE_SHARED_DATA();
  std::ifstream in(test::test_data(std::string("labels/") + GetParam()));
  ASSERT_TRUE(in) << GetParam();
  const nlohmann::json j = nlohmann::json::parse(in);
  Motion m = io::read_motion(test::shared_data() / j["clip"].get<std::string>()).motion;
  const double fps = j["fps"].get<double>();
  if (std::abs(m.frame_rate - fps) > 1e-3) m = resample(m, fps);
  const int lo = j["range"][0].get<int>(), hi = std::min(j["range"][1].get<int>(), m.frame_count);
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  const KeyTimeReport r = detect_key_times(m, roles);
  constexpr int kTol = 2, kEndTol = 4;
  for (const char* foot : {"left_foot", "right_foot"}) {
    SCOPED_TRACE(foot);
    const EffectorKeyTimes* e = r.find(foot);
    ASSERT_NE(e, nullptr);
    std::vector<Span> found;
    for (const KeyTime& k : e->keys) {
      const int b = std::max(k.begin, lo), end = std::min(k.end, hi);
      if (b < end) found.emplace_back(b, end);
    }
    int end_error = 0;
    const Score s = score_contacts(spans(j, "contacts", foot), found, spans(j, "ignore", foot), kTol, kEndTol, end_error);
    std::printf("%-18s %-10s contacts: %d labelled, %d found, precision %.2f, recall %.2f (touch-down within %d, "
                "lift-off within %d frames)\n",
                GetParam(), foot, s.truth, s.found, s.precision(), s.recall(), kTol, end_error);
    EXPECT_GE(s.precision(), 0.9);
    EXPECT_GE(s.recall(), 0.9);
  }
  if (!j.contains("extremes")) return;
  for (const auto& [hand, frames] : j["extremes"].items()) {
    SCOPED_TRACE(hand);
    const EffectorKeyTimes* e = r.find(hand);
    ASSERT_NE(e, nullptr);
    std::vector<int> found;
    for (const KeyTime& k : e->extremes)
      if (k.frame >= lo && k.frame < hi) found.push_back(k.frame);
    const Score s = score_frames(frames.get<std::vector<int>>(), found, spans(j, "ignore_extremes", hand), kTol);
    std::printf("%-18s %-10s extremes: %d labelled, %d found, precision %.2f, recall %.2f\n", GetParam(), hand.c_str(),
                s.truth, s.found, s.precision(), s.recall());
    EXPECT_GE(s.precision(), 0.9);
    EXPECT_GE(s.recall(), 0.9);
  }
}

// Matches every time of `a` to the nearest of `b`: how many lie within `tol` seconds.
int matched(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  int n = 0;
  for (double x : a) {
    double best = 1e300;
    for (double y : b) best = std::min(best, std::abs(x - y));
    n += best <= tol;
  }
  return n;
}

struct Times {
  std::vector<double> contacts, extremes;
};

Times key_seconds(const Motion& m, const char* effector) {
  const KeyTimeReport r = detect_key_times(m, body::find_joint_roles(m.skeleton));
  Times t;
  const EffectorKeyTimes* e = r.find(effector);
  if (!e) return t;
  for (const KeyTime& k : e->keys) t.contacts.push_back(k.begin / m.frame_rate);  // touch-downs
  for (const KeyTime& k : e->extremes) t.extremes.push_back(k.frame / m.frame_rate);
  return t;
}

// The same take at 120 fps and resampled to 60, 30 and 24, and read in metres and as if in
// centimetres (a figure 100x larger), gives the same touch-downs and hand extremes within one frame
// of the slower rate: every threshold is relative.
TEST(KeyTimes, SameKeysAtAnyRateAndUnit) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* clip : {"bvh/cmu/assimp/01_01.bvh", "bvh/cmu/salsa/60_01_scaled.bvh"}) {
    SCOPED_TRACE(clip);
    const Motion hi = io::read_motion(test::shared_data() / clip).motion;
    Motion large = hi;  // every length 100x: metres read as centimetres
    for (Vec3& o : large.skeleton.offsets) o *= 100.0;
    for (auto& e : large.skeleton.end_sites) e.offset *= 100.0;
    for (Vec3& x : large.translations) x *= 100.0;
    for (double rate : {60.0, 30.0, 24.0}) {
      SCOPED_TRACE(rate);
      const Motion lo = resample(hi, rate);
      for (const char* eff : {"left_foot", "right_foot", "left_hand", "right_hand"}) {
        SCOPED_TRACE(eff);
        const Times a = key_seconds(hi, eff), b = key_seconds(lo, eff);
        const bool foot = std::string(eff).find("foot") != std::string::npos;
        const std::vector<double>& ta = foot ? a.contacts : a.extremes;
        const std::vector<double>& tb = foot ? b.contacts : b.extremes;
        ASSERT_GE(ta.size(), 5u);
        // Rate: counts within 10 % plus one, 85 % of the keys within one frame of the slower rate
        // of each other (measured at 30 fps: 89-100 %; the misses are low swings the slower take
        // rounds to another frame). The salsa's left foot has 29 contacts at 120 fps and 26 at
        // 30, where a 0.08 s touch is 2 frames and two 0.07-0.09 s lifts fall inside the 2-frame
        // gap that is closed.
        const double na = static_cast<double>(ta.size()), nb = static_cast<double>(tb.size());
        const int ab = matched(tb, ta, 1.0 / rate + 1e-9), ba = matched(ta, tb, 1.0 / rate + 1e-9);
        std::printf("%-32s %-10s %zu keys at 120 fps, %zu at %g fps; %.0f %% / %.0f %% within a frame\n", clip, eff,
                    ta.size(), tb.size(), rate, 100.0 * ab / std::max(nb, 1.0), 100.0 * ba / std::max(na, 1.0));
        EXPECT_LE(std::abs(nb - na), 0.1 * na + 1);
        EXPECT_GE(ab, 0.85 * nb);
        EXPECT_GE(ba, 0.85 * na);
        if (rate == 30.0) {
          // Unit: identical keys.
          const Times c = key_seconds(large, eff);
          EXPECT_EQ(foot ? c.contacts : c.extremes, ta);
        }
      }
    }
  }
}

// The CMU jumps (issue 24 named one whose hands and head got no keys at 120 or 30 fps): the
// forward jump 13_32 and the hops 131_03 get hand and head keys at both rates, in about the same
// numbers (measured: 3 keys per effector on 13_32 at both rates; 10-14 on 131_03).
TEST(KeyTimes, CmuJumpsHaveHandAndHeadKeysAtBothRates) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* clip : {"bvh/cmu/cmu-daz/13_32.bvh", "bvh/cmu/bvh11/131_03.bvh"}) {
    SCOPED_TRACE(clip);
    const Motion hi = io::read_motion(test::shared_data() / clip).motion;
    const Motion lo = resample(hi, 30.0);
    const KeyTimeReport a = detect_key_times(hi, body::find_joint_roles(hi.skeleton));
    const KeyTimeReport b = detect_key_times(lo, body::find_joint_roles(lo.skeleton));
    for (const char* eff : {"left_hand", "right_hand", "head"}) {
      SCOPED_TRACE(eff);
      const EffectorKeyTimes* ea = a.find(eff);
      const EffectorKeyTimes* eb = b.find(eff);
      ASSERT_NE(ea, nullptr);
      ASSERT_NE(eb, nullptr);
      EXPECT_FALSE(ea->still);
      const double na = static_cast<double>(ea->keys.size()), nb = static_cast<double>(eb->keys.size());
      std::printf("%-28s %-10s %g keys at 120 fps, %g at 30 fps\n", clip, eff, na, nb);
      EXPECT_GE(std::min(na, nb), 3);
      EXPECT_LE(std::abs(na - nb), 0.1 * na + 1);
    }
  }
}

// Every hand and head that moves gets keys, or the report says why: the 0.65 s Xia take
// neutral_18_000's right hand drifts without a turn or a slowing (the one such effector in the
// shared corpus, scripts/hand_keys_survey.py); a walk's hands get keys and no note.
TEST(KeyTimes, AHandWithoutKeysSaysWhy) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* clip : {"bvh/styles/xia2015/neutral_18_000.bvh", "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh"}) {
    SCOPED_TRACE(clip);
    const Motion m = io::read_motion(test::shared_data() / clip).motion;
    const KeyTimeReport r = detect_key_times(m, body::find_joint_roles(m.skeleton));
    int noted = 0;
    for (const EffectorKeyTimes& e : r.effectors) {
      if (e.kind == KeyKind::contact) continue;
      const bool keyless = !e.still && e.keys.empty() && e.extremes.empty();
      EXPECT_EQ(keyless, !e.note.empty()) << e.name;
      if (!e.note.empty()) {
        ++noted;
        std::printf("%s %s: %s\n", clip, e.name.c_str(), e.note.c_str());
        EXPECT_NE(e.note.find("drift"), std::string::npos);
      }
    }
    EXPECT_EQ(noted, std::string(clip).find("xia") != std::string::npos ? 1 : 0);
  }
}

// A salsa basic steps with both feet: the two feet's contact counts are within 25 % of each
// other. (Its touch-downs do not fit one steady grid: the beat is printed, not required; see
// docs/timing.md.)
TEST(KeyTimes, SalsaStepsWithBothFeetOnABeat) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m = io::read_motion(test::shared_data() / "bvh/cmu/salsa/60_01_scaled.bvh").motion;
  const KeyTimeReport r = detect_key_times(m, body::find_joint_roles(m.skeleton));
  const double left = static_cast<double>(r.find("left_foot")->keys.size());
  const double right = static_cast<double>(r.find("right_foot")->keys.size());
  std::printf("salsa: %g left and %g right contacts; beat %.1f bpm, %d of %d touch-downs on it, confidence %.2f\n", left,
              right, r.beat.tempo_bpm, r.beat.on_beat, r.beat.keys, r.beat.confidence);
  EXPECT_GE(std::min(left, right), 10);
  EXPECT_LE(std::abs(left - right), 0.25 * std::max(left, right));
}

// A walk's touch-downs alternate feet at the step rate: the beat is the mean step interval.
TEST(KeyTimes, WalkBeatIsTheStepRate) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m =
      io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh").motion;
  const KeyTimeReport r = detect_key_times(m, body::find_joint_roles(m.skeleton));
  std::vector<int> td;
  for (const char* foot : {"left_foot", "right_foot"})
    for (const KeyTime& k : r.find(foot)->keys)
      if (k.begin > 0) td.push_back(k.begin);
  std::sort(td.begin(), td.end());
  ASSERT_GE(td.size(), 6u);
  const double step = (td.back() - td.front()) / m.frame_rate / static_cast<double>(td.size() - 1);
  ASSERT_TRUE(r.beat.found());
  EXPECT_NEAR(r.beat.period, step, 0.03 * step);
  EXPECT_EQ(r.beat.on_beat, r.beat.keys);
  EXPECT_GT(r.beat.confidence, 0.8);
}

// The per-frame contact probability against the labelled frames (both feet, the labelled range,
// minus the ignored spans) of every labelled clip.
struct LabelledFrames {
  std::string clip;
  std::vector<double> scores;
  std::vector<std::uint8_t> labels;
  std::vector<body::Contact> contacts;         // the detector's, inside the labelled range
  std::vector<double> contact_truth_share;     // per contact: share of its frames labelled in contact
};

std::vector<LabelledFrames> labelled_frames() {
  std::vector<LabelledFrames> out;
  for (const char* name : {"walk_normal.json", "punch_normal.json", "salsa.json"}) {
    std::ifstream in(test::test_data(std::string("labels/") + name));
    const nlohmann::json j = nlohmann::json::parse(in);
    Motion m = io::read_motion(test::shared_data() / j["clip"].get<std::string>()).motion;
    const double fps = j["fps"].get<double>();
    if (std::abs(m.frame_rate - fps) > 1e-3) m = resample(m, fps);
    const int lo = j["range"][0].get<int>(), hi = std::min(j["range"][1].get<int>(), m.frame_count);
    const KeyTimeReport r = detect_key_times(m, body::find_joint_roles(m.skeleton));
    LabelledFrames lf;
    lf.clip = name;
    for (const char* foot : {"left_foot", "right_foot"}) {
      const body::EffectorContacts* ec = r.contacts.find(foot);
      const std::vector<Span> truth = spans(j, "contacts", foot), ignore = spans(j, "ignore", foot);
      auto labelled = [&](int f) { return inside(f, truth) ? 1 : 0; };
      for (int f = lo; f < hi; ++f) {
        if (inside(f, ignore)) continue;
        lf.scores.push_back(ec->score[f]);
        lf.labels.push_back(static_cast<std::uint8_t>(labelled(f)));
      }
      for (const body::Contact& c : ec->contacts) {
        const int b = std::max(c.begin, lo), e = std::min(c.end, hi);
        if (b >= e || inside((b + e) / 2, ignore)) continue;
        int yes = 0;
        for (int f = b; f < e; ++f) yes += labelled(f);
        lf.contacts.push_back(c);
        lf.contact_truth_share.push_back(static_cast<double>(yes) / (e - b));
      }
    }
    out.push_back(std::move(lf));
  }
  return out;
}

// The shipped calibration is the logistic fit to the labelled frames: re-fitted here, so a change
// of the detector's score that breaks the calibration fails this test until the defaults are
// re-fitted (the printed fit). Held out a clip at a time, the fit to the other two is still
// calibrated on it (expected calibration error, 10 bins).
TEST(ContactCalibration, ShippedDefaultsAreTheFitToTheLabels) {
  KOMA_REQUIRE_SHARED_DATA();
  const std::vector<LabelledFrames> clips = labelled_frames();
  // Pools the labelled frames of every clip but `held` (none: -1).
  auto fit_without = [&](int held) {
    std::vector<double> x;
    std::vector<std::uint8_t> y;
    for (size_t k = 0; k < clips.size(); ++k) {
      if (static_cast<int>(k) == held) continue;
      x.insert(x.end(), clips[k].scores.begin(), clips[k].scores.end());
      y.insert(y.end(), clips[k].labels.begin(), clips[k].labels.end());
    }
    return body::fit_contact_calibration(x, y);
  };
  auto ece_of = [](const body::ContactCalibration& cal, const LabelledFrames& c) {
    std::vector<double> p;
    for (double x : c.scores) p.push_back(cal.probability(x));
    return body::expected_calibration_error(p, c.labels);
  };
  const body::ContactCalibration fit = fit_without(-1);
  const body::ContactCalibration shipped = body::ContactSettings{}.calibration;
  std::printf("contact calibration fit to %zu frames: slope %.4f offset %.4f (shipped %.4f %.4f)\n",
              clips[0].scores.size() + clips[1].scores.size() + clips[2].scores.size(), fit.slope, fit.offset, shipped.slope,
              shipped.offset);
  EXPECT_NEAR(fit.slope, shipped.slope, 0.05 * shipped.slope);
  EXPECT_NEAR(fit.offset, shipped.offset, 0.1);
  for (size_t held = 0; held < clips.size(); ++held) {
    const body::ContactCalibration cal = fit_without(static_cast<int>(held));
    const double ece = ece_of(cal, clips[held]), ece_shipped = ece_of(shipped, clips[held]);
    std::printf("  %-18s %4zu frames: ECE %.3f with the shipped fit; %.3f held out (fit to the others: slope %.3f offset %.3f)\n",
                clips[held].clip.c_str(), clips[held].labels.size(), ece_shipped, ece, cal.slope, cal.offset);
    EXPECT_LE(ece_shipped, 0.10) << clips[held].clip;
    // Held out, a clip of a kind the fit has not seen: the salsa (sliding steps that the walk and
    // the punch do not have) measured 0.17, the others 0.07.
    EXPECT_LE(ece, clips[held].clip == "salsa.json" ? 0.2 : 0.1) << clips[held].clip;
  }
}

// A contact's confidence is the mean calibrated probability of its frames: on each labelled clip
// the mean confidence of the detected contacts is within 0.2 of the mean share of their frames
// that are labelled (measured: 0.08 walk, 0.16 punch, 0.13 salsa: the frames are calibrated, but a
// contact is a selection of frames, so its share differs by where the detector's ends fall), and
// clearly planted feet (contacts whose every frame is labelled) get at least 0.8 (before
// calibration: 0.01-0.6).
TEST(ContactCalibration, ContactConfidenceIsTheShareOfLabelledFrames) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const LabelledFrames& c : labelled_frames()) {
    SCOPED_TRACE(c.clip);
    ASSERT_FALSE(c.contacts.empty());
    double conf = 0, share = 0, gap = 0;
    std::vector<double> planted;
    for (size_t k = 0; k < c.contacts.size(); ++k) {
      conf += c.contacts[k].confidence;
      share += c.contact_truth_share[k];
      gap += std::abs(c.contacts[k].confidence - c.contact_truth_share[k]);
      if (c.contact_truth_share[k] == 1.0) planted.push_back(c.contacts[k].confidence);
    }
    const double n = static_cast<double>(c.contacts.size());
    std::sort(planted.begin(), planted.end());
    const double median = planted.empty() ? 0.0 : planted[planted.size() / 2];
    std::printf("%-18s %zu contacts: mean confidence %.3f, mean labelled share %.3f (per contact |difference| %.3f); "
                "%zu wholly labelled, confidence %.2f..%.2f (median %.2f)\n",
                c.clip.c_str(), c.contacts.size(), conf / n, share / n, gap / n, planted.size(),
                planted.empty() ? 0.0 : planted.front(), planted.empty() ? 0.0 : planted.back(), median);
    EXPECT_NEAR(conf / n, share / n, 0.2);
    EXPECT_GE(median, 0.8);
  }
}

INSTANTIATE_TEST_SUITE_P(GroundTruth, Labelled, ::testing::Values("walk_normal.json", "punch_normal.json", "salsa.json"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace koma::timing
