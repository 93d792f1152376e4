// Regression on the real style walks in ../shared/data/bvh/styles (skipped when absent).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <complex>
#include <cstdio>
#include <set>

#include "gait_test_util.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/gait/style.hpp"
#include "koma/gait/synth.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

namespace fs = std::filesystem;

// Every walk under bvh/styles: Bandai-Namco *_walk_*, Xia *_01_* (walk), the m21 walks and styles.
std::vector<fs::path> style_walks() {
  std::vector<fs::path> out;
  for (const auto& p : test::shared_bvh_files("bvh/styles")) {
    const std::string n = p.filename().string(), dir = p.parent_path().filename().string();
    if (n.find("_walk_") != std::string::npos || (dir == "xia2015" && n.find("_01_") != std::string::npos) ||
        n.find("walk") != std::string::npos || dir == "style")
      out.push_back(p);
  }
  return out;
}

// Clips in which no steady cycle repeats, with the reason (checked: they must keep failing loudly
// with a confidence, not silently produce a gait).
const std::set<std::string> kNoStablePeriod = {
    "female-walk.bvh",       // m21 content: 2.1 s, about 1.5 cycles: no peak within the searchable lags
    "depressed_01_000.bvh",  // Xia: 2.2 s of a slow walk, likewise
    "HAPPY.bvh", "OLD-1.bvh", "ZOMBIE.bvh",  // m21 style clips: steps do not repeat steadily (confidence < 0.5)
};

// Per joint, degrees: the RMS over the raw frames of what a DC + linear trend + K harmonics
// least-squares fit leaves of each single cycle (cut on the grid k * period from frame 0, each fitted
// on its own frames with its own whole-frame length; no averaging, no resampling, no alignment),
// RMS over the cycles. The motion's own content above harmonic K, as the rotation angle.
std::vector<double> raw_above(const Motion& m, double period_frames, int k_max) {
  const MotionChannels ch = motion_channels(m, AngleMode::log_map);
  const int nj = m.joint_count();
  std::vector<double> sum(nj, 0.0);
  int cycles = 0;
  for (int k = 0; (k + 1) * period_frames <= m.frame_count - 1; ++k, ++cycles) {
    const int a = static_cast<int>(std::lround(k * period_frames));
    const int n = static_cast<int>(std::lround((k + 1) * period_frames)) - a;
    Eigen::MatrixXd basis(n, 2 + 2 * k_max);
    for (int i = 0; i < n; ++i) {
      basis(i, 0) = 1, basis(i, 1) = static_cast<double>(i) / n - 0.5;
      for (int h = 1; h <= k_max; ++h) {
        basis(i, 2 * h) = std::cos(2 * kPi * h * i / n);
        basis(i, 2 * h + 1) = std::sin(2 * kPi * h * i / n);
      }
    }
    const Eigen::MatrixXd y = ch.values.middleCols(a, n).transpose();
    const Eigen::MatrixXd fit = basis * basis.colPivHouseholderQr().solve(y);
    for (int j = 0; j < nj; ++j) {
      double s = 0;
      for (int i = 0; i < n; ++i) {
        const Quat p = joint_rotation(ch.basis, j, y.block<1, 3>(i, joint_channel(j, 0)).transpose());
        const Quat q = joint_rotation(ch.basis, j, fit.block<1, 3>(i, joint_channel(j, 0)).transpose());
        s += std::pow(p.angularDistance(q), 2);
      }
      sum[j] += s / n;
    }
  }
  for (double& v : sum) v = std::sqrt(v / std::max(cycles, 1)) * kRadToDeg;
  return sum;
}

// Xia old_01_000 RightToeBase: from about frame 95 to 130 its Z channel reads +-180 deg while the
// toe is flat (X near 0): a 180 deg twist of a joint whose end site sits at offset 0, so no point
// of the figure moves. A glitch in the file, not in the pipeline (asserted below).
bool is_glitch(const std::string& file, const std::string& joint) {
  return file == "old_01_000.bvh" && joint == "RightToeBase";
}

TEST(RealWalks, ReconstructionWithFiveHarmonics) {
  KOMA_REQUIRE_SHARED_DATA();
  const auto files = style_walks();
  ASSERT_GE(files.size(), 20u);
  int analysed = 0;
  std::printf("K = 5 reconstruction per joint (deg): joints above 0.5 as name=error/raw-above-5, then the worst\n"
              "joint at K = 12. raw-above-5 = RMS of the raw frames above the 5th harmonic of each single cycle\n");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string name = path.filename().string();
    const Motion m = io::read_motion(path).motion;
    GaitCycle c;
    try {
      c = extract_cycle(m);
    } catch (const Error& e) {
      std::printf("%-40s %s\n", name.c_str(), e.what());
      EXPECT_TRUE(kNoStablePeriod.count(name)) << e.what();
      EXPECT_EQ(e.code(), ErrorCode::bad_data);
      continue;
    }
    EXPECT_FALSE(kNoStablePeriod.count(name)) << "now finds a period: update the list";
    if (name != "old_01_000.bvh") {
      EXPECT_TRUE(c.jumps.empty()) << m.skeleton.names[c.jumps[0].joint] << " jumps at frame " << c.jumps[0].frame;
    }
    ++analysed;
    const Gait g = fourier_analyze(c, test_util::fixed_k(5));
    const ReconstructionError e5 = reconstruction_error(c, g);
    const std::vector<double> above5 = energy_above(c, 5);
    const std::vector<double> raw5 = raw_above(m, c.basis.period * m.frame_rate, 5);
    FourierSettings k12;
    k12.harmonics = 12;
    const ReconstructionError e12 = reconstruction_error(c, fourier_analyze(c, k12));
    std::string over;
    int within = 0;
    for (int j = 0; j < m.joint_count(); ++j) {
      const std::string& joint = m.skeleton.names[j];
      const double deg = e5.joint_rms[j] * kRadToDeg;
      if (deg > 0.5) over += fmt::format(" {}={:.2f}/{:.2f}", joint, deg, raw5[j]);
      else ++within;
      if (is_glitch(name, joint)) continue;
      // 1. The loss is truncation only: the rotation-angle error equals the averaged cycle's
      //    energy above K = 5 (Parseval on the fitted channels), so measuring angles instead of
      //    channels changes nothing.
      EXPECT_NEAR(deg, above5[j] * kRadToDeg, 0.03 * deg + 0.02) << joint;
      // 2. The pipeline adds no high-frequency artefact: cutting, aligning, averaging and
      //    resampling leave at most what each raw cycle has above the 5th harmonic (+0.15 deg for
      //    the whole-frame cuts of the raw fit; measured +0.13 at worst, Xia neutral LeftToeBase,
      //    two 120 fps cycles). Averaging only removes incoherent detail.
      EXPECT_LE(deg, raw5[j] + 0.15) << joint << ": the averaged cycle has more above K = 5 than the raw cycles";
      // 3. So the 0.5 deg target holds on every joint whose motion has at most 0.4 deg RMS above
      //    the 5th harmonic; the joints that miss it (feet, toes, some hands) carry that much
      //    real motion above it (heel strike, toe-off): they are listed with both numbers.
      if (raw5[j] <= 0.4) {
        EXPECT_LE(deg, 0.5) << joint << " has only " << raw5[j] << " deg above K = 5";
      }
    }
    std::printf("%-36s T=%.3fs %s conf=%.2f cycles %d/%d | %d joints <= 0.5, above:%s | K=12 worst %s %.2f\n",
                name.c_str(), c.basis.period, std::string(to_string(c.basis.period_method)).c_str(), c.basis.confidence,
                c.basis.cycles_used, c.basis.cycles_found, within, over.c_str(),
                m.skeleton.names[e12.worst_joint].c_str(), e12.worst_rms * kRadToDeg);
    // 4. Enough harmonics follow everything: K = 12 keeps every joint of the Bandai-Namco walks
    //    within 0.5 deg.
    if (name.starts_with("dataset-")) {
      EXPECT_LE(e12.worst_rms * kRadToDeg, 0.5) << m.skeleton.names[e12.worst_joint];
    }
  }
  EXPECT_GE(analysed, 18);
}

// The averaged cycle's seam: the ramp removed so that its ends meet is the mean of the kept cycles'
// drifts. Measured (degrees, largest joint channel): Bandai-Namco walks (4 to 10 cycles) 1.1 to
// 5.0, m21 DEPRESSED (6 cycles) 8.6; the clips of two cycles (m21 walk, Xia) 7.5 to 20.8, where
// the two cycles differ (cadence changes between them at a fast phase; Xia proud's arm swing grows
// through the clip). A single cycle's own drift (cycle-to-cycle variation, what was reported as
// the seam correction before) reaches 58 degrees; averaging cancels it.
TEST(RealWalks, SeamCorrectionStaysSmall) {
  KOMA_REQUIRE_SHARED_DATA();
  int checked = 0;
  for (const auto& path : style_walks()) {
    const std::string name = path.filename().string();
    if (kNoStablePeriod.count(name)) continue;
    SCOPED_TRACE(name);
    const Motion m = io::read_motion(path).motion;
    const GaitCycle c = extract_cycle(m);
    const double seam = c.max_seam_correction * kRadToDeg, drift = c.max_cycle_drift * kRadToDeg;
    int worst = 0;
    for (int j = 0; j < m.joint_count(); ++j)
      if (c.seam_correction[j] > c.seam_correction[worst]) worst = j;
    std::printf("%-36s cycles %d/%d seam correction %5.2f deg (worst joint %s %.2f), largest single-cycle drift %5.2f deg\n",
                name.c_str(), c.basis.cycles_used, c.basis.cycles_found, seam, m.skeleton.names[worst].c_str(),
                c.seam_correction[worst] * kRadToDeg, drift);
    EXPECT_LE(seam, drift + 1e-9);  // a mean is never above its largest term
    EXPECT_LE(seam, c.basis.cycles_used >= 4 ? 9.0 : 22.0);
    if (name.starts_with("dataset-")) {
      EXPECT_LE(seam, 5.5);
    }
    ++checked;
  }
  EXPECT_GE(checked, 18);
}

// The default spectrum (per-channel K by the 0.5 degree tolerance, capped at 16) reproduces every
// joint of every shared walk within 0.5 degrees RMS, except the one glitch in a file (Xia old_01
// RightToeBase, a 180 degree twist of a zero-length toe: no K follows a half-height step).
TEST(RealWalks, ReconstructionWithDefaultSettings) {
  KOMA_REQUIRE_SHARED_DATA();
  int analysed = 0, k_min = 1000, k_max = 0;
  double worst_all = 0, raw_excess = -1;
  std::printf("default spectrum: per joint K (largest of its channels) range, worst joint RMS (deg), coefficients kept\n");
  for (const auto& path : style_walks()) {
    const std::string name = path.filename().string();
    if (kNoStablePeriod.count(name)) continue;
    SCOPED_TRACE(name);
    const Motion m = io::read_motion(path).motion;
    const GaitAnalysis an = analyse_gait(m);
    const Gait& g = an.gait;
    const ReconstructionError& e = an.error;
    const std::vector<int> kj = joint_harmonics(g);
    int lo = 1000, hi = 0, worst = -1, kept = 0;
    double worst_rms = 0;
    for (int j = 0; j < m.joint_count(); ++j) {
      lo = std::min(lo, kj[j]), hi = std::max(hi, kj[j]);
      if (is_glitch(name, m.skeleton.names[j])) continue;
      if (e.joint_rms[j] > worst_rms) worst_rms = e.joint_rms[j], worst = j;
      EXPECT_LE(e.joint_rms[j] * kRadToDeg, 0.5) << m.skeleton.names[j] << " K " << kj[j];
      // What is lost is the motion's own detail: at most what the raw kept cycles have above K_c
      // (+0.15 deg for their whole-frame cuts; measured +0.094 at worst).
      EXPECT_LE(e.joint_rms[j], an.raw_above[j] + 0.15 * kDegToRad) << m.skeleton.names[j];
      raw_excess = std::max(raw_excess, (e.joint_rms[j] - an.raw_above[j]) * kRadToDeg);
    }
    for (int r = 0; r < g.basis.channel_count(); ++r) kept += 2 * channel_harmonic_count(g, r) + 1;
    std::printf("%-36s K %2d..%2d (max %2d), worst %-14s %.3f deg, %d numbers (K = 5 everywhere: %d)\n", name.c_str(), lo, hi,
                g.harmonics, worst >= 0 ? m.skeleton.names[worst].c_str() : "-", worst_rms * kRadToDeg, kept,
                g.basis.channel_count() * 11);
    k_min = std::min(k_min, lo), k_max = std::max(k_max, hi), worst_all = std::max(worst_all, worst_rms);
    ++analysed;
  }
  std::printf("all: K per joint %d..%d, worst joint %.3f deg, largest RMS - raw above K %.3f deg\n", k_min, k_max,
              worst_all * kRadToDeg, raw_excess);
  EXPECT_GE(analysed, 18);
}

TEST(RealWalks, XiaOldToeGlitchIsInTheFile) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m = io::read_motion(test::shared_data() / "bvh/styles/xia2015/old_01_000.bvh").motion;
  const int toe = m.skeleton.find("RightToeBase");
  ASSERT_GE(toe, 0);
  double jump = 0;
  for (int f = 0; f + 1 < m.frame_count; ++f) jump = std::max(jump, m.rotation(f, toe).angularDistance(m.rotation(f + 1, toe)));
  const WorldPoses w = forward_kinematics(m);
  double toe_to_end = 0;  // the toe's end site sits on the toe joint: its rotation moves no point
  for (int e = 0; e < m.skeleton.end_site_count(); ++e)
    if (m.skeleton.end_sites[e].parent == toe)
      for (int f = 0; f < m.frame_count; ++f)
        toe_to_end = std::max(toe_to_end, (w.position(f, m.joint_count() + e) - w.position(f, toe)).norm());
  std::printf("old_01_000 RightToeBase: largest frame-to-frame rotation %.1f deg at 120 fps; end site %.4f m away\n",
              jump * kRadToDeg, toe_to_end);
  EXPECT_GT(jump * kRadToDeg, 150.0);
  EXPECT_LT(toe_to_end, 1e-9);
  // The cycle analysis reports it (and only it).
  const GaitCycle c = extract_cycle(m);
  ASSERT_EQ(c.jumps.size(), 1u);
  EXPECT_EQ(c.jumps[0].joint, toe);
  EXPECT_NEAR(c.jumps[0].angle, jump, 1e-12);
}

Gait walk(const std::string& rel) { return analyze_gait(io::read_motion(test::shared_data() / "bvh/styles" / rel).motion); }

TEST(RealWalks, AdverbTransfersBetweenDatasets) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait n1 = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait n2 = walk("bandai-namco-2/dataset-2_walk_normal_001.bvh");
  for (const char* style : {"active", "feminine"}) {
    SCOPED_TRACE(style);
    const Gait s1 = walk(fmt::format("bandai-namco-1/dataset-1_walk_{}_001.bvh", style));
    const Gait s2 = walk(fmt::format("bandai-namco-2/dataset-2_walk_{}_001.bvh", style));
    const WeightedAdverb adv{make_adverb(n1, s1), 1.0, style};
    const Gait moved = apply_adverbs(n2, std::span(&adv, 1));
    const double before = coefficient_distance(n2, s2), after = coefficient_distance(moved, s2);
    // The distance in two parts: posture (mean rotations) and oscillation (harmonics k >= 1).
    auto parts = [](const Gait& x, const Gait& y) {
      double posture = 0, osc = 0;
      for (int j = 0; j < x.basis.skeleton.joint_count(); ++j)
        posture += quat_log(x.basis.mean_rotations[j].conjugate() * y.basis.mean_rotations[j]).squaredNorm();
      // With K per channel the two spectra can keep different harmonic counts: a harmonic one of
      // them does not keep is zero there (reading past its columns was out of range, caught by
      // Eigen's bounds assertion in the ASan/Debug build).
      auto c = [](const Gait& g, Eigen::Index r, Eigen::Index k) {
        return k < g.coefficients.cols() ? g.coefficients(r, k) : std::complex<double>(0.0, 0.0);
      };
      const Eigen::Index kmax = std::max(x.coefficients.cols(), y.coefficients.cols()) - 1;
      for (Eigen::Index r = kRootChannels; r < x.coefficients.rows(); ++r)
        for (Eigen::Index k = 1; k <= kmax; ++k) osc += 0.5 * std::norm(c(x, r, k) - c(y, r, k));
      return std::pair{std::sqrt(posture), std::sqrt(osc)};
    };
    const auto [pb, ob] = parts(n2, s2);
    const auto [pa, oa] = parts(moved, s2);
    std::printf("dataset-1 normal->%s applied to dataset-2 normal: distance to dataset-2 %s %.3f -> %.3f rad "
                "(posture %.3f -> %.3f, oscillation %.3f -> %.3f), period %.3f -> %.3f s (target %.3f s)\n",
                style, style, before, after, pb, pa, ob, oa, n2.basis.period, moved.basis.period, s2.basis.period);
    EXPECT_LT(after, before);  // the period is reported, not asserted: see docs/gait.md
    EXPECT_LT(pa, pb);         // posture is what transfers between performers (see docs/gait.md)
  }
  // dataset-2's feminine walk goes the other way (-Z): heading is not posture, so the hips differ
  // by their stance only, not by the 180 degree turn.
  const Gait f2 = walk("bandai-namco-2/dataset-2_walk_feminine_001.bvh");
  EXPECT_LT(f2.basis.forward.dot(n2.basis.forward), -0.9);
  const int hips = n2.basis.skeleton.find("Hips");
  EXPECT_LT(n2.basis.mean_rotations[hips].angularDistance(f2.basis.mean_rotations[hips]), 0.3);
}

TEST(RealWalks, ExactRoundTripAndSeamlessLoopOnRealData) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait n = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait s = walk("bandai-namco-1/dataset-1_walk_happy_001.bvh");
  const WeightedAdverb adv{make_adverb(n, s), 1.0, "happy"};
  const Gait out = apply_adverbs(n, std::span(&adv, 1));
  EXPECT_LT(coefficient_distance(out, s), 1e-9);
  EXPECT_NEAR(out.basis.period, s.basis.period, 1e-12);
  SynthSettings set;
  set.seconds = 6;
  const Motion m = synthesize(out, set);
  std::vector<double> steps;
  for (int f = 0; f + 1 < m.frame_count; ++f) steps.push_back(test_util::pose_step(m, f, f + 1));
  std::sort(steps.begin(), steps.end());
  EXPECT_LE(test_util::pose_step(m, m.frame_count - 1, 0), steps[steps.size() / 2]);
}

TEST(RealWalks, TimeShiftLeavesRelativePhasesUnchanged) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion m = io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh").motion;
  const Gait a = analyze_gait(cut(m, 0, m.frame_count - 20));
  double worst = 0;
  for (int shift : {5, 11, 17}) {
    const Gait b = analyze_gait(cut(m, shift, m.frame_count - 20 + shift));
    for (Eigen::Index r = kRootChannels; r < a.coefficients.rows(); ++r)
      for (int k = 1; k <= 2; ++k) {
        const std::complex<double> ca = a.coefficients(r, k), cb = b.coefficients(r, k);
        if (std::abs(ca) < 0.05) continue;  // only harmonics of at least 3 degrees
        const double d = std::abs(std::remainder(std::arg(cb) - std::arg(ca), 2 * kPi));
        worst = std::max(worst, d);
        // The shifted cut also averages slightly different frames (the clip starts and stops),
        // so this is not exact on real data: measured <= 0.123 rad, against absolute phase
        // changes of up to 3.2 rad for these shifts.
        EXPECT_LT(d, 0.15) << "shift " << shift << " row " << r << " k " << k;
      }
  }
  std::printf("largest relative-phase change for input shifts of 5, 11, 17 frames: %.4f rad\n", worst);
}

// Foot skating relative to travel: mean horizontal speed of the lowest point (joint_Root, the
// static ground joint, left out) on frames where it is within 3 cm of the floor, over the root's
// average speed.
double skate_ratio(const Motion& m) {
  const WorldPoses w = forward_kinematics(m);
  double floor = 1e9;
  for (int f = 0; f < m.frame_count; ++f)
    for (int p = 1; p < w.point_count; ++p) floor = std::min(floor, w.position(f, p).y());
  double sum = 0;
  int n = 0;
  for (int f = 0; f + 1 < m.frame_count; ++f) {
    int lowest = 1;
    for (int p = 1; p < w.point_count; ++p)
      if (w.position(f, p).y() < w.position(f, lowest).y()) lowest = p;
    if (w.position(f, lowest).y() - floor > 0.03) continue;
    Vec3 d = (w.position(f + 1, lowest) - w.position(f, lowest)) * m.frame_rate;
    d.y() = 0;
    sum += d.norm(), ++n;
  }
  const double root_speed = (w.position(m.frame_count - 1, 1) - w.position(0, 1)).norm() / m.duration();
  return n > 0 ? sum / n / root_speed : 1e9;
}

TEST(RealWalks, RootTravelsInStepWithTheFeet) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion in = io::read_motion(test::shared_data() / "bvh/styles/bandai-namco-2/dataset-2_walk_normal_001.bvh").motion;
  const Gait g = analyze_gait(in);
  std::printf("contact-point speed / root speed: input %.3f", skate_ratio(in));
  for (auto [stride, speed] : {std::pair{1.0, 1.0}, {1.3, 1.0}, {1.0, 0.7}, {1.0, 1.4}, {0.8, 1.2}}) {
    SynthSettings s;
    s.seconds = 8;
    s.frame_rate = 30;
    s.stride = stride;
    s.speed = speed;
    const double r = skate_ratio(synthesize(g, s));
    std::printf(", stride %.1f speed %.1f: %.3f", stride, speed, r);
    EXPECT_LT(r, 0.1) << "stride " << stride << " speed " << speed;
  }
  std::printf("\n");
}

TEST(RealWalks, MismatchedSkeletonNamesTheJoint) {
  KOMA_REQUIRE_SHARED_DATA();
  const Gait bandai = walk("bandai-namco-1/dataset-1_walk_normal_001.bvh");
  const Gait xia = walk("xia2015/neutral_01_000.bvh");
  try {
    make_adverb(bandai, xia);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find("joint_Root"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::gait
