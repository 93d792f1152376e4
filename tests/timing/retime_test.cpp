#include "koma/timing/retime.hpp"

#include <gtest/gtest.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::timing {
namespace {

// RMS over every joint and frame of the rotation angle and translation difference.
std::pair<double, double> rms_difference(const Motion& a, const Motion& b) {
  double ra = 0, rt = 0;
  for (size_t i = 0; i < a.rotations.size(); ++i) {
    ra += std::pow(test::rotation_angle(a.rotations[i], b.rotations[i]), 2);
    rt += (a.translations[i] - b.translations[i]).squaredNorm();
  }
  const double n = static_cast<double>(a.rotations.size());
  return {std::sqrt(ra / n), std::sqrt(rt / n)};
}

// Independent bound of the symmetric Hausdorff distance between an input path and an output
// path whose samples lie on it at input frames `warp`: the largest distance of an input vertex
// strictly between two consecutive output samples from the chord joining them (the sagitta of
// sampling the same polyline at other times). Both directions of the Hausdorff distance are
// within it when the output only re-times the path.
double chord_sag_bound(const std::vector<Vec3>& in, const std::vector<Vec3>& out, const std::vector<double>& warp) {
  double worst = 0;
  for (size_t k = 0; k + 1 < out.size(); ++k) {
    const Vec3 a = out[k], d = out[k + 1] - out[k];
    for (int j = static_cast<int>(std::floor(warp[k])) + 1; j < warp[k + 1]; ++j) {
      const double len2 = d.squaredNorm();
      const double t = len2 > 0 ? std::clamp((in[j] - a).dot(d) / len2, 0.0, 1.0) : 0.0;
      worst = std::max(worst, (a + t * d - in[j]).norm());
    }
  }
  return worst;
}

// Root progress of a motion (as a timing source measures it) and its value at a fractional frame.
std::vector<double> progress_of(const Motion& m, const body::JointRoles& roles, const SourceSettings& settings) {
  return root_progress(m, forward_kinematics(m), path_point(roles), settings);
}
double at_frame(const std::vector<double>& v, double f) {
  const int i = std::clamp(static_cast<int>(std::floor(f)), 0, static_cast<int>(v.size()) - 2);
  const double t = f - i;
  return (1 - t) * v[i] + t * v[i + 1];
}

TimingSource source_of(const Motion& m) {
  const Motion ex[] = {m};
  return make_timing_source(ex, body::find_joint_roles(m.skeleton));
}

// A Bandai-Namco dataset-1 walk from the shared corpus: "normal", "sad", "happy", ...
Motion bandai_walk(std::string_view style) {
  const std::string file = "bvh/styles/bandai-namco-1/dataset-1_walk_" + std::string(style) + "_001.bvh";
  return io::read_motion(test::shared_data() / file).motion;
}

Motion sample_walk(double cycle_seconds, double arm_swing, bool jump = false) {
  SampleSettings ss;
  ss.walk_cycles = 3;
  ss.cycle_seconds = cycle_seconds;
  ss.arm_swing = arm_swing;
  ss.jump = jump;
  return make_sample_motion(ss);
}

void expect_self_transfer_identity(const Motion& m) {
  const RetimeResult r = retime(m, body::find_joint_roles(m.skeleton), source_of(m));
  ASSERT_EQ(r.motion.frame_count, m.frame_count);
  const auto [rot, trans] = rms_difference(m, r.motion);
  EXPECT_LT(rot, 1e-6);
  EXPECT_LT(trans, 1e-6);
  for (int k = 0; k < m.frame_count; ++k) EXPECT_NEAR(r.report.warp[k], k, 1e-6);
}

TEST(Retime, SelfTransferIsIdentity) {
  expect_self_transfer_identity(make_sample_motion());
  expect_self_transfer_identity(sample_walk(0.9, 1.5));
}

TEST(Retime, SelfTransferIsIdentityOnRealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const char* style : {"normal", "angry"}) {
    SCOPED_TRACE(style);
    expect_self_transfer_identity(bandai_walk(style));
  }
}

// Re-timing a brisk walk to a slow one: the warp is monotone, keeps the first and last frames, the
// root only moves along the input's path, and the output is slower.
TEST(Retime, MonotoneWarpKeepsEndsAndPath) {
  const Motion fast = sample_walk(0.9, 1.0, true);
  const Motion slow = sample_walk(1.4, 0.5);
  const body::JointRoles roles = body::find_joint_roles(fast.skeleton);
  for (bool extras : {false, true}) {
    RetimeSettings rs;
    rs.succession = rs.amplitude = extras;
    const RetimeResult r = retime(fast, roles, source_of(slow), rs);
    const Motion& out = r.motion;
    out.validate();
    EXPECT_TRUE(is_monotone_warp(r.report.warp, fast.frame_count - 1));
    EXPECT_GT(out.frame_count, fast.frame_count) << "slower steps take longer";
    const int hips = roles[body::Role::hips];
    for (int j : {hips, roles[body::Role::left_knee], roles[body::Role::right_ankle]}) {
      EXPECT_QUAT_NEAR(out.rotation(0, j), fast.rotation(0, j), 1e-12);
      EXPECT_QUAT_NEAR(out.rotation(out.frame_count - 1, j), fast.rotation(fast.frame_count - 1, j), 1e-12);
    }
    const std::vector<Vec3> a = joint_path(fast, hips), b = joint_path(out, hips);
    EXPECT_VEC3_NEAR(a.front(), b.front(), 1e-12);
    EXPECT_VEC3_NEAR(a.back(), b.back(), 1e-12);
    EXPECT_LE(polyline_deviation(a, b), 1e-6 * polyline_length(a));
    EXPECT_LE(r.report.path_deviation, 1e-6 * r.report.path_length);
    // Symmetric, as curves: no more than the chord sag of sampling the same path at other times.
    // (The report bounds it to 1e-9 of the path length.)
    const double length = polyline_length(a);
    EXPECT_NEAR(r.report.path_hausdorff, hausdorff_distance(a, b), 1e-9 * length);
    EXPECT_LE(r.report.path_hausdorff, chord_sag_bound(a, b, r.report.warp) + 1e-6 * length);
    // The same holds for the output's frames at another rate.
    rs.output_rate = 24;
    const RetimeResult r24 = retime(fast, roles, source_of(slow), rs);
    EXPECT_TRUE(is_monotone_warp(r24.report.warp, fast.frame_count - 1));
    EXPECT_LE(polyline_deviation(a, joint_path(r24.motion, hips)), 1e-6 * length);
  }
}

TEST(Retime, ShiftWarpIsMonotoneAndKeepsEnds) {
  for (double shift : {-40.0, -7.5, -0.3, 0.0, 0.3, 7.5, 40.0}) {
    for (double ramp : {1.0, 5.0, 30.0}) {
      const std::vector<double> w = shift_warp(120, shift, ramp);
      EXPECT_TRUE(is_monotone_warp(w, 119)) << shift << " " << ramp;
      for (size_t i = 1; i < w.size(); ++i) EXPECT_GT(w[i], w[i - 1]) << shift << " " << ramp << " at " << i;
    }
  }
  const std::vector<double> w = shift_warp(200, 5, 20);
  EXPECT_NEAR(w[100], 95, 1e-12);  // delayed by 5 frames in the middle
  EXPECT_FALSE(is_monotone_warp(std::vector<double>{0, 2, 1, 3}, 3));
  EXPECT_FALSE(is_monotone_warp(std::vector<double>{0, 1, 2}, 3));
}

// Hausdorff distance between polylines as curves, on shapes with known answers.
TEST(Retime, HausdorffOfPolylines) {
  const std::vector<Vec3> corner = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0)};
  const std::vector<Vec3> chord = {Vec3(0, 0, 0), Vec3(1, 1, 0)};
  // Chord -> corner: largest at the chord's midpoint (not a vertex: both vertices lie on the corner).
  EXPECT_NEAR(directed_hausdorff(corner, chord), 0.5, 1e-9);
  // Corner -> chord: the corner vertex, sqrt(2) / 2 from the chord.
  EXPECT_NEAR(directed_hausdorff(chord, corner), std::sqrt(0.5), 1e-9);
  EXPECT_NEAR(hausdorff_distance(corner, chord), std::sqrt(0.5), 1e-9);
  EXPECT_NEAR(hausdorff_distance(chord, corner), std::sqrt(0.5), 1e-9);
  // The same curve sampled differently is at distance 0; a parallel copy at its offset.
  const std::vector<Vec3> line = {Vec3(0, 0, 0), Vec3(0.3, 0, 0), Vec3(2, 0, 0)};
  const std::vector<Vec3> line2 = {Vec3(0, 0, 0), Vec3(1.7, 0, 0), Vec3(1.9, 0, 0), Vec3(2, 0, 0)};
  EXPECT_NEAR(hausdorff_distance(line, line2), 0.0, 1e-15);
  std::vector<Vec3> shifted = line2;
  for (Vec3& p : shifted) p.y() += 0.25;
  EXPECT_NEAR(hausdorff_distance(line, shifted), 0.25, 1e-9);
  // A zig-zag against its base line: the peaks (vertices) decide; a dense copy changes nothing.
  std::vector<Vec3> zig, dense;
  for (int i = 0; i <= 10; ++i) zig.emplace_back(i, i % 2 ? 0.1 : 0.0, 0);
  for (int i = 0; i < 10; ++i)
    for (int k = 0; k < 7; ++k) dense.push_back(zig[i] + (zig[i + 1] - zig[i]) * (k / 7.0));
  dense.push_back(zig.back());
  EXPECT_NEAR(hausdorff_distance(zig, std::vector<Vec3>{Vec3(0, 0, 0), Vec3(10, 0, 0)}), 0.1, 1e-9);
  EXPECT_NEAR(hausdorff_distance(zig, dense), 0.0, 1e-12);
  EXPECT_EQ(hausdorff_distance({}, zig), 0.0);
}

// A root moving at known, piecewise-constant speed: progress is its arc length (plus the tiny
// regularisation), strictly increasing.
TEST(Retime, RootProgressIsArcLength) {
  Skeleton s;
  s.names = {"root"};
  s.parents = {-1};
  s.offsets = {Vec3::Zero()};
  s.channels = {{Channel::Xposition, Channel::Yposition, Channel::Zposition}};
  Motion m = rest_motion(s, 100, 301);
  for (int f = 0; f < m.frame_count; ++f) m.translations[f] = Vec3(0, 0, f < 150 ? 0.01 * f : 1.5 + 0.02 * (f - 150));
  const WorldPoses w = forward_kinematics(m);
  SourceSettings ss;
  const std::vector<double> p = root_progress(m, w, 0, ss);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_GT(p[i], p[i - 1]);
  const double eps = ss.progress_epsilon * std::max(s.rest_extent(), 1e-6);
  EXPECT_NEAR(p.back(), 1.5 + 3.0 + eps * 3.0, 1e-6);
  EXPECT_NEAR(p[100], 1.0 + eps * 1.0, 1e-6);
}

// Re-time one style's walk to another's: the output's key times land where the source's timing
// puts them (normalised per two-step cycle, within one frame) and its speed profile along each
// step correlates >= 0.99 with the matched source step's.
TEST(Retime, TransferMatchesSourceOnRealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  const struct {
    const char* input;   // Bandai-Namco dataset-1 walk styles
    const char* source;
  } pairs[] = {{"normal", "sad"},
               {"sad", "angry"},
               {"normal", "happy"},
               {"normal", "masculinity"},
               {"sad", "normal"},
               {"happy", "sad"},
               {"normal", "feminine"},
               {"happy", "normal"},
               {"sad", "happy"}};
  for (const auto& p : pairs) {
    SCOPED_TRACE(std::string(p.input) + " -> " + p.source);
    const Motion in = bandai_walk(p.input);
    const Motion ex = bandai_walk(p.source);
    const body::JointRoles roles = body::find_joint_roles(in.skeleton);
    const TimingSource src = source_of(ex);
    RetimeSettings rs;
    rs.succession = rs.amplitude = false;
    rs.speed = SpeedFrom::source;  // (3) below checks this mode's mean speed; the cadence has its own test
    const RetimeResult r = retime(in, roles, src, rs);
    const Motion& out = r.motion;
    const double rate = out.frame_rate;
    const auto& segs = r.report.segments;
    ASSERT_GE(segs.size(), 4u);

    // (1) The planned output key times, normalised per two-step cycle, are the source's (every
    // step runs between two full stances: full_steps()).
    for (size_t i = 0; i + 1 < segs.size(); ++i) {
      const SegmentTiming& s0 = src.segments[segs[i].source_segment];
      const SegmentTiming& s1 = src.segments[segs[i + 1].source_segment];
      const double want = s0.duration / (s0.duration + s1.duration);
      const double cycle = segs[i + 1].output_end - segs[i].output_begin;
      const double got = (segs[i].output_end - segs[i].output_begin) / cycle;
      EXPECT_LE(std::abs(got - want) * cycle, 1e-6) << "cycle " << i;
    }
    // (2) Key times detected afresh on the output (the same detector, run by the test) land on
    // the planned ones within 1 frame: every key whose input contact is a full stance (touches
    // neither clip end; a stance cut by the clip has no comparable key), matched to the output key
    // of the same foot nearest the planned frame. None may be missing.
    KeyTimeSettings ks = rs.measure.keys;
    ks.hands_and_head = false;
    const KeyTimeReport in_rep = detect_key_times(in, roles, ks);
    const KeyTimeReport out_rep = detect_key_times(out, roles, ks);
    const std::vector<StepKey> in_keys = full_steps(step_keys(in_rep), in.frame_count);
    ASSERT_EQ(in_keys.size(), segs.size() + 1);
    std::vector<double> found(in_keys.size(), -1.0);
    int checked = 0;
    for (size_t i = 0; i < in_keys.size(); ++i) {
      const double planned = i == 0 ? segs[0].output_begin : segs[i - 1].output_end;
      bool full = false;
      for (const body::Contact& c : in_rep.contacts.find(in_keys[i].foot)->contacts)
        if (c.key_frame == in_keys[i].frame) full = c.begin > 0 && c.end < in.frame_count;
      double best = -1e9;
      for (const body::Contact& c : out_rep.contacts.find(in_keys[i].foot)->contacts)
        if (std::abs(c.key_frame - planned) < std::abs(best - planned)) best = c.key_frame;
      found[i] = best;
      if (!full) continue;
      ++checked;
      EXPECT_LE(std::abs(best - planned), 1.0) << in_keys[i].foot << " key " << i << " planned " << planned;
      EXPECT_EQ(r.report.keys[i].detected, static_cast<int>(best)) << "report agrees with the test's detection";
    }
    EXPECT_EQ(checked, static_cast<int>(in_keys.size()));
    EXPECT_EQ(r.report.keys_unmatched, 0);
    EXPECT_LE(r.report.key_error, 1.0);
    // (3) Those detected keys, normalised per two-step cycle, against the source's normalised key
    // times: within 1 frame of the output cycle.
    for (size_t i = 0; i + 2 < in_keys.size(); ++i) {
      const SegmentTiming& s0 = src.segments[segs[i].source_segment];
      const SegmentTiming& s1 = src.segments[segs[i + 1].source_segment];
      const double want = s0.duration / (s0.duration + s1.duration);
      const double cycle = found[i + 2] - found[i];
      const double got = (found[i + 1] - found[i]) / cycle;
      EXPECT_LE(std::abs(got - want) * cycle, 1.0 + 1e-9) << "cycle at key " << i;
    }
    // Root path: samples on the input polyline; as curves, within the chord sag.
    const std::vector<Vec3> path_in = joint_path(in, path_point(roles)), path_out = joint_path(out, path_point(roles));
    EXPECT_LE(polyline_deviation(path_in, path_out), 1e-6 * polyline_length(path_in));
    EXPECT_LE(r.report.path_hausdorff, chord_sag_bound(path_in, path_out, r.report.warp) + 1e-9);

    // Speed profiles: per step, the output's progress speed between consecutive output frames
    // (re-measured with root_progress on the output), relative to the step's mean, against the
    // matched source step's profile over the same normalised times. Key correction moves the
    // step boundaries along the path, not the profile within a step, so both the global
    // re-timing alone (key_iterations = 0) and the corrected output must correlate >= 0.99.
    auto profile_correlation = [&](const RetimeResult& res) {
      const std::vector<double> prog = progress_of(res.motion, roles, rs.measure);
      auto prog_at = [&](double f) { return at_frame(prog, f); };
      std::vector<double> vo, vs;
      for (const SegmentReport& sr : res.report.segments) {
        const SegmentTiming& s = src.segments[sr.source_segment];
        const double b = sr.output_begin, e = sr.output_end, span = prog_at(e) - prog_at(b);
        auto sp = [&](double f) {  // the source's normalised progress at output frame f
          const double x = std::clamp((f - b) / (e - b), 0.0, 1.0) * static_cast<double>(s.progress.size() - 1);
          const size_t j = std::min(static_cast<size_t>(x), s.progress.size() - 2);
          return s.progress[j] + (x - static_cast<double>(j)) * (s.progress[j + 1] - s.progress[j]);
        };
        for (int k = static_cast<int>(std::ceil(b)); k + 1 <= e; ++k) {
          vo.push_back((prog[k + 1] - prog[k]) / span * (e - b));
          vs.push_back((sp(k + 1) - sp(k)) * (e - b));
        }
      }
      const double mo = std::accumulate(vo.begin(), vo.end(), 0.0) / static_cast<double>(vo.size());
      const double ms = std::accumulate(vs.begin(), vs.end(), 0.0) / static_cast<double>(vs.size());
      double sxy = 0, sxx = 0, syy = 0;
      for (size_t i = 0; i < vo.size(); ++i) {
        sxy += (vo[i] - mo) * (vs[i] - ms);
        sxx += (vo[i] - mo) * (vo[i] - mo);
        syy += (vs[i] - ms) * (vs[i] - ms);
      }
      return sxy / std::sqrt(sxx * syy);
    };
    RetimeSettings global_only = rs;
    global_only.key_iterations = 0;
    const RetimeResult r0 = retime(in, roles, src, global_only);
    const double corr0 = profile_correlation(r0), corr = profile_correlation(r);
    EXPECT_GE(corr0, 0.99);
    EXPECT_GE(corr, 0.99);
    EXPECT_LE(r.report.cycle_error, 1.0 + 1e-9);
    // The same chord sag with no change of timing at all: the input resampled half a frame later
    // (its first and last frames kept, as re-timing keeps them).
    std::vector<double> half{0.0};
    for (int k = 0; k + 1 < in.frame_count; ++k) half.push_back(k + 0.5);
    half.push_back(in.frame_count - 1.0);
    const std::vector<Vec3> path_half = joint_path(sample_at_frames(in, half, in.frame_rate), path_point(roles));
    std::printf("%s -> %s: key error %.2f frames, cycle error %.2f (global only %.2f, %.2f), profile correlation "
                "%.4f (global only %.4f), path Hausdorff %.2g of the length (chord sag bound %.3g m; the input "
                "resampled half a frame later: %.2g)\n",
                p.input, p.source, r.report.key_error, r.report.cycle_error, r0.report.key_error,
                r0.report.cycle_error, corr, corr0, r.report.path_hausdorff / r.report.path_length,
                chord_sag_bound(path_in, path_out, r.report.warp),
                hausdorff_distance(path_in, path_half) / r.report.path_length);
    const std::vector<double> prog = progress_of(out, roles, rs.measure);
    auto prog_at = [&](double f) { return at_frame(prog, f); };
    const double size = out.skeleton.rest_extent();
    // The output's mean speed is the source's over all its steps (body sizes / s).
    double len = 0, dur = 0, slen = 0, sdur = 0;
    for (const SegmentReport& sr : segs) {
      len += prog_at(sr.output_end) - prog_at(sr.output_begin);
      dur += (sr.output_end - sr.output_begin) / rate;
    }
    for (const SegmentTiming& s : src.segments) {
      slen += s.length;
      sdur += s.duration;
    }
    EXPECT_NEAR(len / size / dur, slen / sdur, 0.05 * slen / sdur);
  }
}

// A source from a folder of examples pools every example's steps; each input step is matched to
// the pooled step with the nearest key pose among those on the same feet.
// Every ordered pair of the twelve Bandai-Namco dataset-1 walk styles (132 re-timings, tempo
// changes 0.25x .. 4x): no full stance of the output is ever missing near its planned time; key
// correction never leaves a pair worse than the global re-timing alone (by its own ranking); and
// for most pairs every re-detected key lands within one frame. The misses are the shuffling styles (not-confident,
// tired, old, childish) and slow-downs beyond 2x, where the contact detector's absolute speed
// threshold lengthens the output's stances (docs/timing.md).
TEST(Retime, AllBandaiStylePairs) {
  KOMA_REQUIRE_SHARED_DATA();
  const char* styles[] = {"active", "angry", "childish", "feminine", "happy", "masculinity",
                          "normal", "not-confident", "old", "proud", "sad", "tired"};
  std::vector<Motion> walks;
  std::vector<TimingSource> sources;
  for (const char* s : styles) {
    walks.push_back(bandai_walk(s));
    sources.push_back(source_of(walks.back()));
  }
  const body::JointRoles roles = body::find_joint_roles(walks.front().skeleton);
  RetimeSettings rs;
  rs.succession = rs.amplitude = false;
  RetimeSettings global_only = rs;
  global_only.key_iterations = 0;
  // The 132 pairs re-time in parallel (retime is pure): this test was the suite's critical path,
  // 83 s in Release and 463 s under ASan on one core. The checks run in order afterwards.
  const size_t n = walks.size();
  std::vector<RetimeReport> with_keys(n * n), global(n * n);
  tbb::parallel_for(size_t{0}, n * n, [&](size_t ab) {
    const size_t a = ab / n, b = ab % n;
    if (a == b) return;
    with_keys[ab] = retime(walks[a], roles, sources[b], rs).report;
    global[ab] = retime(walks[a], roles, sources[b], global_only).report;
  });
  int pairs = 0, within = 0, within_global = 0;
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      SCOPED_TRACE(std::string(styles[a]) + " -> " + styles[b]);
      const RetimeReport& r = with_keys[a * n + b];
      const RetimeReport& r0 = global[a * n + b];
      ++pairs;
      EXPECT_EQ(r.keys_unmatched, 0);
      EXPECT_LE(r.keys_unmatched, r0.keys_unmatched);
      // What key correction ranks last: the worse of the key and the cycle error.
      if (r.keys_unmatched == r0.keys_unmatched) {
        EXPECT_LE(std::max(r.key_error, r.cycle_error), std::max(r0.key_error, r0.cycle_error) + 1e-9);
      }
      within += r.keys_unmatched == 0 && r.key_error <= 1.0;
      within_global += r0.keys_unmatched == 0 && r0.key_error <= 1.0;
    }
  }
  std::printf("%d of %d style pairs with every re-detected key within 1 frame (global re-timing alone: %d)\n", within,
              pairs, within_global);
  EXPECT_GE(within, pairs * 3 / 4);
}

// The default keeps the example's cadence: a CMU walk (steps of 0.6 s) re-timed like each
// Bandai-Namco style steps like the style (median planned step = the example's median) and keeps
// its own stride, so its speed is its stride over the example's step time; --speed source keeps
// the example's speed in body sizes per second instead (the 4x slow-motion walks).
TEST(Retime, CadenceIsTheExamplesByDefault) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion in = io::read_motion(test::shared_data() / "bvh/cmu/cmu-daz/05_01.bvh").motion;
  const body::JointRoles roles = body::find_joint_roles(in.skeleton);
  for (const char* style : {"tired", "old", "childish", "sad", "happy", "proud"}) {
    SCOPED_TRACE(style);
    const TimingSource src = source_of(bandai_walk(style));
    RetimeSettings rs;
    EXPECT_EQ(rs.speed, SpeedFrom::cadence);
    const RetimeReport r = retime(in, roles, src, rs).report;
    RetimeSettings by_speed = rs;
    by_speed.speed = SpeedFrom::source;
    const RetimeReport s = retime(in, roles, src, by_speed).report;
    std::printf("like %s: example step %.3f s, input %.3f s; cadence -> %.3f s (%d frames, %.2f m/s), source speed "
                "-> %.3f s (%d frames)\n",
                style, r.source_step, r.input_step, r.output_step, r.output_frames, r.output_speed, s.output_step,
                s.output_frames);
    EXPECT_EQ(r.speed, SpeedFrom::cadence);
    EXPECT_NEAR(r.output_step / r.source_step, 1.0, 0.01);
    // The input keeps its stride: speed = stride / step time.
    EXPECT_NEAR(r.output_speed / r.input_speed, r.input_step / r.output_step, 0.15 * r.input_step / r.output_step);
    EXPECT_EQ(s.speed, SpeedFrom::source);
  }
}

TEST(Retime, FolderSourcePoolsExamplesAndMatchesByPose) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion ex[] = {bandai_walk("sad"), bandai_walk("happy")};
  const Motion in = bandai_walk("normal");
  const body::JointRoles roles = body::find_joint_roles(in.skeleton);
  const std::string names[] = {"sad.bvh", "happy.bvh"};
  const TimingSource src = make_timing_source(ex, roles, names);
  ASSERT_EQ(src.examples.size(), 2u);
  int from[2] = {0, 0};
  for (const SegmentTiming& s : src.segments) ++from[s.example];
  EXPECT_GT(from[0], 3);
  EXPECT_GT(from[1], 3);
  const TimingSource one = source_of(ex[0]);
  EXPECT_EQ(from[0], static_cast<int>(one.segments.size())) << "the pool holds each example's steps unchanged";

  RetimeSettings rs;
  rs.succession = rs.amplitude = false;
  const RetimeResult r = retime(in, roles, src, rs);
  const WorldPoses w = forward_kinematics(in);
  const std::vector<double> prog = root_progress(in, w, path_point(roles), rs.measure);
  const std::vector<SegmentTiming> segs = segment_timings(in, w, roles, r.report.input_keys, prog);
  ASSERT_EQ(segs.size(), r.report.segments.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    const SegmentReport& sr = r.report.segments[i];
    const SegmentTiming& chosen = src.segments[sr.source_segment];
    EXPECT_EQ(chosen.start_foot, segs[i].start_foot);
    EXPECT_EQ(chosen.end_foot, segs[i].end_foot);
    EXPECT_DOUBLE_EQ(sr.pose_distance, pose_distance(segs[i].pose, chosen.pose));
    for (const SegmentTiming& s : src.segments) {
      if (s.start_foot != segs[i].start_foot || s.end_foot != segs[i].end_foot) continue;
      EXPECT_GE(pose_distance(segs[i].pose, s.pose), sr.pose_distance) << "step " << i;
    }
  }
}

// Succession shifts leg joints in the swing only: with the root path unchanged, a knee or ankle
// shifted during a stance would drag the planted foot (and move the output's contacts).
TEST(Retime, SuccessionLeavesPlantedFeetAlone) {
  KOMA_REQUIRE_SHARED_DATA();
  const Motion ex[] = {bandai_walk("sad"), bandai_walk("happy")};
  const Motion in = bandai_walk("normal");
  const body::JointRoles roles = body::find_joint_roles(in.skeleton);
  const TimingSource src = make_timing_source(ex, roles);
  RetimeSettings plain;
  plain.succession = plain.amplitude = false;
  const RetimeResult a = retime(in, roles, src, plain);
  const RetimeResult full = retime(in, roles, src);
  ASSERT_EQ(a.motion.frame_count, full.motion.frame_count);
  double leg_shift = 0;
  for (const ShiftReport& sh : full.report.shifts)
    if (sh.child == body::Role::left_knee || sh.child == body::Role::right_knee) leg_shift = std::max(leg_shift, std::abs(sh.shift));
  ASSERT_GT(leg_shift * full.motion.frame_rate, 0.25) << "a leg link must be shifted for this test to mean anything";
  const WorldPoses wa = forward_kinematics(a.motion), wf = forward_kinematics(full.motion);
  const std::vector<body::Effector> feet = body::foot_effectors(roles);
  const body::ContactReport contacts = body::detect_contacts(a.motion, feet, plain.measure.keys.contact);  // the stances retime keeps
  int planted = 0, moved_in_swing = 0;
  for (const body::EffectorContacts& ec : contacts.effectors) {
    const int ankle = ec.effector.points.front();
    for (int f = 0; f < a.motion.frame_count; ++f) {
      const double d = (wa.position(f, ankle) - wf.position(f, ankle)).norm();
      if (ec.in_contact[f]) {
        ++planted;
        EXPECT_LT(d, 1e-9) << ec.effector.name << " frame " << f;
      } else {
        moved_in_swing += d > 1e-4;
      }
    }
  }
  EXPECT_GT(planted, a.motion.frame_count / 2);
  EXPECT_GT(moved_in_swing, 0) << "the shift still applies in the swing";
}

TEST(Retime, SuccessionReproducesSourceLag) {
  // Source: the sample walk with its elbows delayed by 0.1 s after the shoulders.
  const Motion base = sample_walk(1.1, 1.0);
  const body::JointRoles roles = body::find_joint_roles(base.skeleton);
  Motion delayed = base;
  const int d = static_cast<int>(0.1 * base.frame_rate);
  for (int j : {roles[body::Role::left_elbow], roles[body::Role::right_elbow]}) {
    for (int f = base.frame_count - 1; f >= 0; --f) {
      delayed.rotations[static_cast<size_t>(f) * base.joint_count() + j] = base.rotation(std::max(f - d, 0), j);
    }
  }
  const TimingSource src = source_of(delayed);
  RetimeSettings rs;
  rs.amplitude = false;
  rs.min_lag_correlation = 0.0;
  const RetimeResult r = retime(base, roles, src, rs);
  bool seen = false;
  for (const ShiftReport& s : r.report.shifts) {
    if (s.child != body::Role::left_elbow) continue;
    seen = true;
    EXPECT_NEAR(s.source_lag - s.input_lag, 0.1, 1.5 / base.frame_rate);
  }
  EXPECT_TRUE(seen);
  const int window = static_cast<int>(0.25 * src.mean_cycle_seconds * base.frame_rate);
  const double lag_out =
      rotation_peak_lag(r.motion, roles[body::Role::left_shoulder], roles[body::Role::left_elbow], window, 6.0).first;
  const double lag_src =
      rotation_peak_lag(delayed, roles[body::Role::left_shoulder], roles[body::Role::left_elbow], window, 6.0).first;
  EXPECT_NEAR(lag_out, lag_src, 1.5 / base.frame_rate);
}

TEST(Retime, AmplitudeScalesArmRange) {
  const Motion big = sample_walk(1.1, 1.0), small = sample_walk(1.1, 0.6);
  const body::JointRoles roles = body::find_joint_roles(big.skeleton);
  RetimeSettings rs;
  rs.succession = false;
  const RetimeResult r = retime(big, roles, source_of(small), rs);
  const int elbow = roles[body::Role::left_shoulder];
  EXPECT_NEAR(rotation_range(r.motion, elbow), rotation_range(small, elbow), 0.05 * rotation_range(small, elbow));
  rs.amplitude = false;
  const RetimeResult plain = retime(big, roles, source_of(small), rs);
  EXPECT_NEAR(rotation_range(plain.motion, elbow), rotation_range(big, elbow), 0.05 * rotation_range(big, elbow));
}

// --on-beat: every planned step lasts a whole number of the source's beat periods, and the beat
// detected afresh on the output (the detector `koma timing detect` runs) is the source's tempo.
void expect_output_on_source_beat(const Motion& in, const Motion& ex) {
  const body::JointRoles roles = body::find_joint_roles(in.skeleton);
  const TimingSource src = source_of(ex);
  ASSERT_TRUE(src.beat.found());
  RetimeSettings rs;
  rs.on_beat = true;
  const RetimeResult r = retime(in, roles, src, rs);
  EXPECT_EQ(r.report.beat_period, src.beat.period);
  for (const SegmentReport& s : r.report.segments) {
    const double beats = s.output_duration / src.beat.period;
    EXPECT_GE(beats, 1 - 1e-9);
    EXPECT_NEAR(beats, std::round(beats), 1e-9);
  }
  const KeyTimeReport out = detect_key_times(r.motion, roles);
  ASSERT_TRUE(out.beat.found());
  EXPECT_NEAR(out.beat.period / src.beat.period, 1.0, 0.03)
      << "output " << out.beat.tempo_bpm << " bpm, source " << src.beat.tempo_bpm << " bpm";
  EXPECT_GE(out.beat.on_beat, (out.beat.keys * 9) / 10) << out.beat.on_beat << " of " << out.beat.keys;
  // Without --on-beat the same input keeps its own step rhythm: the option is what moved it.
  const KeyTimeReport plain = detect_key_times(in, roles);
  ASSERT_TRUE(plain.beat.found());
  std::printf("[ on beat  ] input %.1f bpm, source %.1f bpm, output %.1f bpm (%d of %d touch-downs on beat)\n",
              plain.beat.tempo_bpm, src.beat.tempo_bpm, out.beat.tempo_bpm, out.beat.on_beat, out.beat.keys);
}

TEST(Retime, OnBeatPutsStepsOnTheSourceBeat) {
  // A slow sample walk onto a fast one's beat (1.3 s vs 0.8 s two-step cycles).
  expect_output_on_source_beat(sample_walk(1.3, 1.0), sample_walk(0.8, 1.0));
}

TEST(Retime, OnBeatOnRealWalks) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const auto& [input, source] : {std::pair{"normal", "sad"}, std::pair{"sad", "happy"}}) {
    SCOPED_TRACE(std::string(input) + " -> " + source);
    expect_output_on_source_beat(bandai_walk(input), bandai_walk(source));
  }
}

TEST(Retime, OnBeatNeedsASourceBeat) {
  const Motion m = sample_walk(1.0, 1.0);
  TimingSource src = source_of(m);
  ASSERT_TRUE(src.beat.found());
  // The beat survives the JSON round trip, and a source saved without one has none.
  const TimingSource back = timing_source_from_json(timing_source_to_json(src));
  EXPECT_DOUBLE_EQ(back.beat.period, src.beat.period);
  EXPECT_DOUBLE_EQ(back.beat.confidence, src.beat.confidence);
  src.beat = Beat{};
  EXPECT_FALSE(timing_source_from_json(timing_source_to_json(src)).beat.found());
  RetimeSettings rs;
  rs.on_beat = true;
  try {
    retime(m, body::find_joint_roles(m.skeleton), src, rs);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(e.message().find("beat"), std::string::npos) << e.message();
  }
}

TEST(Retime, SourceJsonRoundTrip) {
  const Motion m = sample_walk(1.0, 1.0);
  const TimingSource a = source_of(m);
  const TimingSource b = timing_source_from_json(timing_source_to_json(a));
  ASSERT_EQ(a.segments.size(), b.segments.size());
  ASSERT_EQ(a.lags.size(), b.lags.size());
  ASSERT_EQ(a.amplitudes.size(), b.amplitudes.size());
  EXPECT_EQ(a.mean_cycle_seconds, b.mean_cycle_seconds);
  for (size_t i = 0; i < a.segments.size(); ++i) {
    EXPECT_EQ(a.segments[i].progress, b.segments[i].progress);
    EXPECT_EQ(a.segments[i].speed, b.segments[i].speed);
    EXPECT_EQ(a.segments[i].start_foot, b.segments[i].start_foot);
    EXPECT_EQ(pose_distance(a.segments[i].pose, b.segments[i].pose), 0.0);
  }
  for (size_t i = 0; i < a.lags.size(); ++i) EXPECT_EQ(a.lags[i].lag_cycles, b.lags[i].lag_cycles);
  const auto [rot, trans] = rms_difference(retime(m, body::find_joint_roles(m.skeleton), a).motion,
                                           retime(m, body::find_joint_roles(m.skeleton), b).motion);
  EXPECT_EQ(rot, 0.0);
  EXPECT_EQ(trans, 0.0);
}

TEST(Retime, Errors) {
  const Motion m = sample_walk(1.0, 1.0);
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  // Examples with different skeletons: the first mismatched joint is named.
  Motion other = m;
  other.skeleton.names[5] = "Renamed";
  const Motion pair[] = {m, other};
  try {
    make_timing_source(pair, roles);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(std::string(e.what()).find(m.skeleton.names[5]), std::string::npos) << e.what();
  }
  // Malformed sources.
  EXPECT_THROW(timing_source_from_json("{"), Error);
  EXPECT_THROW(timing_source_from_json("{\"format\": \"something else\"}"), Error);
  std::string text = timing_source_to_json(source_of(m));
  const std::string good_role = "\"left_elbow\"";
  text.replace(text.find(good_role), good_role.size(), "\"left_tentacle\"");
  try {
    timing_source_from_json(text, "t.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_file);
    EXPECT_EQ(e.context(), "t.json");
    EXPECT_NE(e.message().find("left_tentacle"), std::string::npos) << e.message();
  }
  EXPECT_THROW(retime(m, roles, TimingSource{}), Error);
  RetimeSettings bad;
  bad.max_duration_scale = 0.5;
  EXPECT_THROW(retime(m, roles, source_of(m), bad), Error);
  // An input standing still has one contact per foot: no step to re-time.
  const Motion still = rest_motion(m.skeleton, 30, 60);
  try {
    retime(still, roles, source_of(m));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
  const double frames[] = {0.0, 1e9};
  EXPECT_THROW(sample_at_frames(m, frames, 30), Error);
  EXPECT_THROW(sample_at_frames(m, {}, 30), Error);
}

}  // namespace
}  // namespace koma::timing
