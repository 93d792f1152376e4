#include "koma/timing/retime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "koma/core/blend.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/quat_sign.hpp"

namespace koma::timing {

void RetimeSettings::validate() const {
  measure.validate();
  auto bad = [](const char* field, const std::string& msg) { throw Error(ErrorCode::invalid_settings, field, msg); };
  if (!(output_rate >= 0 && output_rate <= 1000)) bad("output_rate", fmt::format("{} must be 0 (input rate) or in (0, 1000] fps", output_rate));
  if (!(max_duration_scale >= 1 && std::isfinite(max_duration_scale))) bad("max_duration_scale", fmt::format("{} must be >= 1", max_duration_scale));
  if (!(min_lag_correlation >= -1 && min_lag_correlation <= 1)) bad("min_lag_correlation", fmt::format("{} must be in [-1, 1]", min_lag_correlation));
  if (!(max_shift_cycles >= 0 && max_shift_cycles <= 0.5)) bad("max_shift_cycles", fmt::format("{} must be in [0, 0.5]", max_shift_cycles));
  if (!(max_key_shift >= 0 && max_key_shift <= 0.5)) bad("max_key_shift", fmt::format("{} must be in [0, 0.5]", max_key_shift));
  if (!(key_iterations >= 0 && key_iterations <= 100)) bad("key_iterations", fmt::format("{} must be in [0, 100]", key_iterations));
  if (!(max_amplitude_scale >= 1 && std::isfinite(max_amplitude_scale))) bad("max_amplitude_scale", fmt::format("{} must be >= 1", max_amplitude_scale));
}

bool is_monotone_warp(std::span<const double> warp, double last_frame) noexcept {
  if (warp.empty()) return false;
  if (std::abs(warp.front()) > 1e-9 || std::abs(warp.back() - last_frame) > 1e-9) return false;
  for (size_t i = 1; i < warp.size(); ++i)
    if (!(warp[i] >= warp[i - 1])) return false;
  return true;
}

std::vector<double> shift_warp(int frame_count, double shift_frames, double ramp_frames) {
  std::vector<double> w(static_cast<size_t>(std::max(frame_count, 0)));
  for (int f = 0; f < frame_count; ++f) w[f] = f;
  if (frame_count < 3 || shift_frames == 0.0 || !std::isfinite(shift_frames)) return w;
  const double last = frame_count - 1;
  const double ramp = std::clamp(ramp_frames, 1.0, last / 2);
  // Smoothstep's steepest slope is 1.5 / ramp: |shift| * 1.5 / ramp < 1 keeps w increasing.
  const double limit = 0.6 * ramp;
  const double shift = std::clamp(shift_frames, -limit, limit);
  for (int f = 0; f < frame_count; ++f) {
    const double b = f < ramp ? smoothstep(f / ramp) : (last - f < ramp ? smoothstep((last - f) / ramp) : 1.0);
    w[f] = std::clamp(f - shift * b, 0.0, last);
  }
  w.front() = 0;
  w.back() = last;
  return w;
}

std::vector<Vec3> joint_path(const Motion& motion, int joint) {
  // Only the joint's ancestor chain is needed (the same products as forward_kinematics()).
  std::vector<int> chain;
  for (int j = joint; j >= 0; j = motion.skeleton.parents[j]) chain.push_back(j);
  std::vector<Vec3> out(static_cast<size_t>(motion.frame_count));
  for (int f = 0; f < motion.frame_count; ++f) {
    Quat rot = Quat::Identity();
    Vec3 pos = Vec3::Zero();
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      pos = it == chain.rbegin() ? motion.translation(f, *it) : Vec3(pos + rot * motion.translation(f, *it));
      rot = it == chain.rbegin() ? motion.rotation(f, *it) : Quat(rot * motion.rotation(f, *it));
    }
    out[f] = pos;
  }
  return out;
}

double polyline_length(std::span<const Vec3> a) noexcept {
  double len = 0;
  for (size_t f = 1; f < a.size(); ++f) len += (a[f] - a[f - 1]).norm();
  return len;
}

double polyline_deviation(std::span<const Vec3> a, std::span<const Vec3> b) noexcept {
  double worst = 0;
  if (a.empty()) return 0.0;
  for (const Vec3& p : b) {
    double best = (p - a[0]).norm();
    for (size_t f = 1; f < a.size(); ++f) {
      const Vec3 d = a[f] - a[f - 1];
      const double len2 = d.squaredNorm();
      const double t = len2 > 0 ? std::clamp((p - a[f - 1]).dot(d) / len2, 0.0, 1.0) : 0.0;
      best = std::min(best, (a[f - 1] + t * d - p).norm());
    }
    worst = std::max(worst, best);
  }
  return worst;
}

namespace {

// Squared distance of p from the segment [a, b].
double segment_distance2(const Vec3& p, const Vec3& a, const Vec3& b) noexcept {
  const Vec3 d = b - a;
  const double len2 = d.squaredNorm();
  const double t = len2 > 0 ? std::clamp((p - a).dot(d) / len2, 0.0, 1.0) : 0.0;
  return (a + t * d - p).squaredNorm();
}

// Distance of p from the polyline a (a non-empty).
double point_polyline_distance(const Vec3& p, std::span<const Vec3> a) noexcept {
  double best = (p - a[0]).squaredNorm();
  for (size_t f = 1; f < a.size(); ++f) best = std::min(best, segment_distance2(p, a[f - 1], a[f]));
  return std::sqrt(best);
}

// Upper bound of the distance from polyline a over the segment [p, q]: the distance to one segment
// of a is convex along [p, q], so it is at most its larger end value; take the best segment.
double segment_polyline_bound(const Vec3& p, const Vec3& q, std::span<const Vec3> a) noexcept {
  double best = std::max((p - a[0]).squaredNorm(), (q - a[0]).squaredNorm());
  for (size_t f = 1; f < a.size(); ++f)
    best = std::min(best, std::max(segment_distance2(p, a[f - 1], a[f]), segment_distance2(q, a[f - 1], a[f])));
  return std::sqrt(best);
}

}  // namespace

double directed_hausdorff(std::span<const Vec3> a, std::span<const Vec3> b, double tolerance) noexcept {
  if (a.empty() || b.empty()) return 0.0;
  std::vector<double> dv(b.size());
  double worst = 0;
  for (size_t i = 0; i < b.size(); ++i) worst = std::max(worst, dv[i] = point_polyline_distance(b[i], a));
  // Branch and bound along each segment of b. Over a piece of length len with end distances d0,
  // d1 the distance is at most (d0 + d1 + len) / 2 (it is 1-Lipschitz) and at most the
  // convexity bound above; pieces that cannot beat `worst` by more than `tolerance` are dropped.
  struct Piece {
    double t0, t1, d0, d1;
  };
  std::vector<Piece> stack;
  for (size_t i = 1; i < b.size(); ++i) {
    const Vec3 p = b[i - 1], d = b[i] - b[i - 1];
    const double len = d.norm();
    stack.push_back({0.0, 1.0, dv[i - 1], dv[i]});
    while (!stack.empty()) {
      const Piece q = stack.back();
      stack.pop_back();
      const double piece_len = (q.t1 - q.t0) * len;
      if (0.5 * (q.d0 + q.d1 + piece_len) <= worst + tolerance || piece_len <= tolerance) continue;
      if (segment_polyline_bound(p + q.t0 * d, p + q.t1 * d, a) <= worst + tolerance) continue;
      const double tm = 0.5 * (q.t0 + q.t1);
      const double dm = point_polyline_distance(p + tm * d, a);
      worst = std::max(worst, dm);
      stack.push_back({q.t0, tm, q.d0, dm});
      stack.push_back({tm, q.t1, dm, q.d1});
    }
  }
  return worst;
}

double hausdorff_distance(std::span<const Vec3> a, std::span<const Vec3> b, double tolerance) noexcept {
  return std::max(directed_hausdorff(a, b, tolerance), directed_hausdorff(b, a, tolerance));
}

namespace {

// Linear interpolation of samples at j / (size - 1), at x in [0, 1].
double interp_profile(const std::vector<double>& v, double x) {
  const double s = std::clamp(x, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const size_t i = std::min(static_cast<size_t>(s), v.size() - 2);
  const double t = s - static_cast<double>(i);
  return t == 0.0 ? v[i] : (1 - t) * v[i] + t * v[i + 1];
}

// The fractional frame in [b, e] where the increasing `progress` reaches `target`.
double invert_progress(const std::vector<double>& progress, int b, int e, double target) {
  if (target <= progress[b]) return b;
  if (target >= progress[e]) return e;
  const auto first = progress.begin() + b, last = progress.begin() + e + 1;
  const auto it = std::upper_bound(first, last, target);  // progress[k] > target, k in (b, e]
  const int k = static_cast<int>(it - progress.begin());
  const double lo = progress[k - 1], hi = progress[k];
  return (k - 1) + (hi > lo ? (target - lo) / (hi - lo) : 0.0);
}

// Mean two-step cycle duration of consecutive segment durations (seconds).
double mean_cycle(const std::vector<double>& durations) {
  if (durations.empty()) return 0.0;
  if (durations.size() == 1) return 2 * durations[0];
  double sum = 0;
  for (size_t i = 0; i + 1 < durations.size(); ++i) sum += durations[i] + durations[i + 1];
  return sum / static_cast<double>(durations.size() - 1);
}

}  // namespace

namespace {

// The foot points of a motion sampled at fractional frames, posed cheaply and often: only the
// feet's ancestor chains are sampled and posed, into buffers that only grow. The probe motion's
// other joints hold identity / zero (never read: only foot contacts are detected on it).
class FootProbe {
 public:
  FootProbe(const Motion& input, const body::JointRoles& roles, double rate) : input_(input) {
    std::vector<char> need(static_cast<size_t>(input.joint_count()), 0);
    const int joints = input.joint_count();
    for (const body::Effector& e : body::foot_effectors(roles)) {
      for (int p : e.points) {
        int j = p < joints ? p : input.skeleton.end_sites[static_cast<size_t>(p - joints)].parent;
        for (; j >= 0 && !need[j]; j = input.skeleton.parents[j]) need[j] = 1;
        if (p >= joints) sites_.push_back(p - joints);
      }
    }
    for (int j = 0; j < joints; ++j)
      if (need[j]) chain_.push_back(j);  // parents precede children
    motion_.skeleton = input.skeleton;
    motion_.frame_rate = rate;
    motion_.source_unit = input.source_unit;
    motion_.source_scale = input.source_scale;
    poses_.point_count = input.skeleton.point_count();
    poses_.joint_count = joints;
  }

  // Samples the input at `frames` (input frame per probe frame) and poses the feet.
  void sample(std::span<const double> frames) {
    const Motion& in = input_;
    const int n = in.frame_count, joints = in.joint_count(), points = poses_.point_count;
    const size_t count = frames.size();
    motion_.frame_count = poses_.frame_count = static_cast<int>(count);
    motion_.rotations.resize(count * joints, Quat::Identity());
    motion_.translations.resize(count * joints, Vec3::Zero());
    poses_.positions.resize(count * points, Vec3::Zero());
    poses_.rotations.resize(count * joints, Quat::Identity());
    for (size_t k = 0; k < frames.size(); ++k) {
      const double s = std::clamp(frames[k], 0.0, n - 1.0);
      const int f0 = std::clamp(static_cast<int>(std::floor(s + 1e-9)), 0, n - 1);
      const int f1 = std::min(f0 + 1, n - 1);
      const double t = std::clamp(s - f0, 0.0, 1.0);
      Quat* rot = &poses_.rotations[k * joints];
      Vec3* pos = &poses_.positions[k * points];
      for (int j : chain_) {
        const size_t o = k * joints + j, a = static_cast<size_t>(f0) * joints + j, b = static_cast<size_t>(f1) * joints + j;
        Quat& lr = motion_.rotations[o];
        Vec3& lt = motion_.translations[o];
        if (t < 1e-9 || f0 == f1) {
          lr = in.rotations[a];
          lt = in.translations[a];
        } else {
          lr = slerp(in.rotations[a], in.rotations[b], t);
          lt = (1.0 - t) * in.translations[a] + t * in.translations[b];
        }
        const int p = in.skeleton.parents[j];
        rot[j] = p < 0 ? lr : Quat(rot[p] * lr);
        pos[j] = p < 0 ? lt : Vec3(pos[p] + rot[p] * lt);
      }
      for (int e : sites_) {
        const EndSite& site = in.skeleton.end_sites[static_cast<size_t>(e)];
        pos[joints + e] = pos[site.parent] + rot[site.parent] * site.offset;
      }
    }
  }

  const Motion& motion() const noexcept { return motion_; }
  const WorldPoses& poses() const noexcept { return poses_; }

 private:
  const Motion& input_;
  std::vector<int> chain_;
  std::vector<int> sites_;
  Motion motion_;
  WorldPoses poses_;
};

// Per two-step cycle (keys i, i+1, i+2), the middle key's time normalised by the cycle against
// the planned (source) normalised time, in output frames: |d1 - (1 - w) d0 - w d2| for detected
// minus planned key errors d and planned fraction w. 0 where a key of the cycle is not interior
// or not found.
std::vector<double> cycle_errors(std::span<const KeyReport> kr) {
  std::vector<double> out(kr.size() > 2 ? kr.size() - 2 : 0, 0.0);
  for (size_t i = 0; i < out.size(); ++i) {
    const KeyReport &k0 = kr[i], &k1 = kr[i + 1], &k2 = kr[i + 2];
    if (!k0.interior || !k1.interior || !k2.interior || k0.detected < 0 || k1.detected < 0 || k2.detected < 0) continue;
    const double frac = (k1.planned - k0.planned) / (k2.planned - k0.planned);
    out[i] = std::abs((k1.detected - k1.planned) - (1 - frac) * (k0.detected - k0.planned) -
                      frac * (k2.detected - k2.planned));
  }
  return out;
}

// How well the output's detected foot keys sit on the planned ones (interior keys). Ranked:
// missing keys first, then the worst error, then the sum (so a step that improves other keys
// while the worst stays counts).
struct KeyScore {
  int unmatched = 0;         // keys the output's detector does not find near the planned frame
  double worst = 0.0;        // largest |detected - planned|, output frames
  double cycle_worst = 0.0;  // largest error of a key normalised per two-step cycle, output frames
  double sum = 0.0;          // sum of |detected - planned|

  // What is ranked: the key errors alone, or the key and the cycle errors together (rhythm).
  double bound(bool rhythm) const noexcept { return rhythm ? std::max(worst, cycle_worst) : worst; }
  // Nothing better exists: every key on the nearest frame to its planned time (and with rhythm,
  // every cycle too).
  bool done(bool rhythm) const noexcept { return unmatched == 0 && bound(rhythm) <= 0.5; }
  bool better(const KeyScore& o, bool rhythm) const noexcept {
    return std::tuple(unmatched, bound(rhythm), sum) < std::tuple(o.unmatched, o.bound(rhythm), o.sum);
  }
};


// The median of `v` (the mean of the middle two for an even count); 0 for none. Reorders v.
double median_of(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  if (v.size() % 2 == 1) return v[h];
  const double upper = v[h];
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h)));
}

// The source's step times: touch-down to touch-down (TimingSource::step_times), or for a source
// saved before koma measured them, its segments' durations.
std::vector<double> source_steps(const TimingSource& source) {
  if (!source.step_times.empty()) return source.step_times;
  std::vector<double> steps;
  for (const SegmentTiming& s : source.segments) steps.push_back(s.duration);
  return steps;
}

// The steps of retime(), in order: (a) plan the segments, plan the keys, warp time and correct
// the keys; (b) succession; (c) amplitude; then the path check.

// (a) Match each input segment to the nearest source key pose (same feet if any). Its duration is
// the matched source segment's times one tempo factor for the whole clip, so the output's
// normalised key times are the source's and its mean speed is the source's (or the input's).
// Fills rep.segments (input side and match) and returns the output durations, seconds.
std::vector<double> match_segments(std::span<const SegmentTiming> segs, const TimingSource& source,
                                   const RetimeSettings& settings, RetimeReport& rep) {
  double total_len = 0, total_dur = 0;
  for (const SegmentTiming& s : segs) {
    total_len += s.length;
    total_dur += s.duration;
  }
  const double mean_speed = total_len / total_dur;
  std::vector<double> durations;
  double src_dur = 0;
  for (const SegmentTiming& seg : segs) {
    bool same_feet = false;
    for (const SegmentTiming& s : source.segments)
      same_feet = same_feet || (s.start_foot == seg.start_foot && s.end_foot == seg.end_foot);
    int best = -1;
    double best_d = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < source.segments.size(); ++k) {
      const SegmentTiming& s = source.segments[k];
      if (same_feet && (s.start_foot != seg.start_foot || s.end_foot != seg.end_foot)) continue;
      const double d = pose_distance(seg.pose, s.pose);
      if (best < 0 || d < best_d) {
        best = static_cast<int>(k);
        best_d = d;
      }
    }
    const SegmentTiming& s = source.segments[best];
    src_dur += s.duration;
    durations.push_back(s.duration);
    SegmentReport sr;
    sr.input_begin = seg.begin;
    sr.input_end = seg.end;
    sr.source_segment = best;
    sr.pose_distance = best_d;
    sr.input_duration = seg.duration;
    rep.segments.push_back(sr);
  }
  // The source's mean step speed over all its steps: the matched ones alone can be a biased
  // sample (a source whose stances split in two offers short and long steps, and poses match the
  // long ones).
  double pool_len = 0, pool_dur = 0;
  for (const SegmentTiming& s : source.segments) {
    pool_len += s.length;
    pool_dur += s.duration;
  }
  // Cadence: the median matched step time becomes the source's median step time (its
  // touch-down to touch-down steps; the median: one long turn step does not slow the rest).
  std::vector<double> pool = source_steps(source), matched(durations);
  const double speed = settings.speed == SpeedFrom::source ? pool_len / pool_dur : mean_speed;
  const double tempo = settings.speed == SpeedFrom::cadence ? median_of(pool) / median_of(matched)
                                                            : total_len / (speed * src_dur);
  for (size_t i = 0; i < segs.size(); ++i) {
    durations[i] = std::clamp(durations[i] * tempo, segs[i].duration / settings.max_duration_scale,
                              segs[i].duration * settings.max_duration_scale);
  }
  if (settings.on_beat) {
    const double period = source.beat.period;
    for (double& d : durations) d = std::max(1.0, std::round(d / period)) * period;
    rep.beat_period = period;
  }
  return durations;
}

// The cadence applied: median step times of the output, the source and the input, and the mean
// step speeds of the output and the input (metres per second; lengths are in body sizes).
void report_cadence(std::span<const SegmentTiming> segs, const TimingSource& source, std::span<const double> durations,
                    double body_size, SpeedFrom speed, RetimeReport& rep) {
  std::vector<double> out(durations.begin(), durations.end()), src = source_steps(source), in;
  double length = 0, out_time = 0, in_time = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    in.push_back(segs[i].duration);
    length += segs[i].length;
    in_time += segs[i].duration;
    out_time += durations[i];
  }
  rep.speed = speed;
  rep.output_step = median_of(out);
  rep.source_step = median_of(src);
  rep.input_step = median_of(in);
  rep.output_speed = out_time > 0 ? length * body_size / out_time : 0.0;
  rep.input_speed = in_time > 0 ? length * body_size / in_time : 0.0;
}

// The output timeline: key times (seconds), its length and its frame count.
struct SegmentPlan {
  std::vector<double> key_t;  // output time of each step key, seconds
  double total_s = 0.0;       // output length, seconds
  int frames = 0;             // output frames
};

// Output key times; the whole timeline is stretched by < half a frame so it ends on a frame. The
// clip's head (before the first key) and tail (after the last) take their neighbouring step's
// tempo, so the stance around an end key is spread over time alike on both sides. Fills the output
// side of rep.segments.
SegmentPlan plan_segments(std::span<const SegmentTiming> segs, std::span<const StepKey> steps,
                          const std::vector<double>& durations, int n, double rate_in, double rate_out,
                          RetimeReport& rep) {
  const double head = steps.front().frame / rate_in * durations.front() / segs.front().duration;
  const double tail = (n - 1 - steps.back().frame) / rate_in * durations.back() / segs.back().duration;
  SegmentPlan plan;
  std::vector<double>& key_t = plan.key_t;
  key_t.push_back(head);
  for (double d : durations) key_t.push_back(key_t.back() + d);
  const double total = key_t.back() + tail;
  const double frames_f = total * rate_out;
  // On the beat the key times stay exact multiples of the period: the tail, not the timeline,
  // takes the part of a frame that ends the clip on a frame.
  const bool on_beat = rep.beat_period > 0;
  plan.frames = static_cast<int>(on_beat ? std::ceil(frames_f - 1e-9) : std::round(frames_f)) + 1;
  const double stretch = frames_f > 0 && !on_beat ? (plan.frames - 1) / frames_f : 1.0;
  for (double& t : key_t) t *= stretch;
  plan.total_s = on_beat ? (plan.frames - 1) / rate_out : total * stretch;
  for (size_t i = 0; i < segs.size(); ++i) {
    rep.segments[i].output_begin = key_t[i] * rate_out;
    rep.segments[i].output_end = key_t[i + 1] * rate_out;
    rep.segments[i].output_duration = key_t[i + 1] - key_t[i];
  }
  return plan;
}

// Planned output keys; a key is interior when its input contact touches neither clip end (a
// contact cut by the clip has no full stance, so its key, the frame nearest the contact's mean
// position, is not comparable between clips). Fills rep.keys; returns the step boundaries (the
// input key frames).
std::vector<double> plan_keys(std::span<const StepKey> steps, const KeyTimeReport& key_report,
                              const SegmentPlan& plan, int n, double rate_out, RetimeReport& rep) {
  std::vector<double> g;
  for (const StepKey& k : steps) {
    KeyReport kr;
    kr.foot = k.foot;
    kr.input_key = k.frame;
    kr.planned = plan.key_t[rep.keys.size()] * rate_out;
    kr.interior = false;
    if (const body::EffectorContacts* ec = key_report.contacts.find(k.foot)) {
      for (const body::Contact& c : ec->contacts)
        if (c.key_frame == k.frame) kr.interior = c.begin > 0 && c.end < n;
    }
    rep.keys.push_back(kr);
    g.push_back(k.frame);
  }
  return g;
}

// The time warp for segment boundaries `g` (fractional input frames, one per step key): output
// time key_t[i] shows input frame g[i]; inside a segment the source's progress profile decides
// where along the input path each output frame is.
class SegmentWarp {
 public:
  SegmentWarp(const std::vector<double>& progress, const SegmentPlan& plan, const TimingSource& source,
              const std::vector<SegmentReport>& segments, int n, double rate_out)
      : progress_(progress), plan_(plan), source_(source), segments_(segments), n_(n), rate_out_(rate_out) {}

  // The input frame output frame k shows, for boundaries g.
  double frame(int k, const std::vector<double>& g) const {
    const std::vector<double>& key_t = plan_.key_t;
    const double t = k / rate_out_;
    double f;
    if (t <= key_t.front()) {
      f = key_t.front() > 0 ? g.front() * (t / key_t.front()) : 0.0;
    } else if (t >= key_t.back()) {
      const double span = plan_.total_s - key_t.back();
      f = g.back() + (span > 0 ? (n_ - 1 - g.back()) * (t - key_t.back()) / span : 0.0);
    } else {
      const size_t seg = static_cast<size_t>(std::upper_bound(key_t.begin(), key_t.end(), t) - key_t.begin()) - 1;
      const SegmentTiming& s = source_.segments[segments_[seg].source_segment];
      const double tau = (t - key_t[seg]) / (key_t[seg + 1] - key_t[seg]);
      const double p0 = progress_at(g[seg]), p1 = progress_at(g[seg + 1]);
      f = invert_progress(progress_, 0, n_ - 1, p0 + (p1 - p0) * interp_profile(s.progress, tau));
    }
    return std::clamp(f, 0.0, static_cast<double>(n_ - 1));
  }

  // The warp of output frames [k0, k1) (the whole clip: its ends pinned to the input's).
  std::vector<double> build(const std::vector<double>& g, int k0 = 0, int k1 = -1) const {
    const int m = plan_.frames;
    if (k1 < 0) k1 = m;
    std::vector<double> w(static_cast<size_t>(k1 - k0));
    for (int k = k0; k < k1; ++k) w[k - k0] = frame(k, g);
    if (k0 == 0) w.front() = 0.0;
    if (k1 == m) w.back() = n_ - 1;
    for (size_t k = 1; k < w.size(); ++k) w[k] = std::max(w[k], w[k - 1]);  // guard against rounding
    return w;
  }

 private:
  double progress_at(double f) const {
    const int i = std::clamp(static_cast<int>(std::floor(f)), 0, n_ - 2);
    const double t = f - i;
    return t == 0.0 ? progress_[i] : (1 - t) * progress_[i] + t * progress_[i + 1];
  }

  const std::vector<double>& progress_;
  const SegmentPlan& plan_;
  const TimingSource& source_;
  const std::vector<SegmentReport>& segments_;
  int n_;
  double rate_out_;
};

// Key correction: the contact detector, run on the output, finds each key from the stance's
// frames *in the output*, whose spacing and foot speeds re-timing changes, so its key can land
// off the planned frame. Each step boundary g[i] (the input frame shown at planned key time i)
// may move along the input path to put it back; the planned key times and the path never
// change. Only the feet are posed for these measurements (FootProbe).
//
// A key's output frame depends on its own boundary and on its neighbours' (its stance spans the
// steps on both sides), and jumps about with them: the detector's key is a frame and its
// contact's ends move with the re-timed foot speed. So boundaries are searched, not solved for:
// coordinate descent on the whole score. Each misplaced key (and, when it cannot be helped,
// its neighbours) tries every position of its range on a coarse grid, then a fine one around
// the best; a position is taken only if the whole output scores better. Monotone, and
// bounded by key_iterations sweeps.
class KeyCorrector {
 public:
  KeyCorrector(const Motion& input, const body::JointRoles& roles, std::span<const StepKey> steps,
               const SegmentWarp& warp, const KeyTimeSettings& keys, const RetimeSettings& settings,
               int frames, double rate_out, std::vector<double> g, RetimeReport& rep)
      : roles_(roles), steps_(steps), warp_(warp), probe_(input, roles, rate_out), rep_(rep),
        g_(std::move(g)), nk_(g_.size()), m_(frames), max_searches_(4 * static_cast<int>(nk_)) {
    out_keys_ = keys;
    out_keys_.require_contacts = false;
    const int n = input.frame_count;
    for (size_t i = 0; i < g_.size(); ++i) rep_.keys[i].input_frame = g_[i];
    rep_.warp = warp_.build(g_);
    best_score_ = measure(rep_.warp, rep_.keys);
    const double r = settings.max_key_shift;
    key_lo_.resize(nk_);
    key_hi_.resize(nk_);
    for (size_t i = 0; i < nk_; ++i) {
      // Within max_key_shift of the neighbouring input steps of the input's own key (the one step
      // of an end key on both sides).
      const double before = i > 0 ? steps[i].frame - steps[i - 1].frame : steps[1].frame - steps[0].frame;
      const double after = i + 1 < nk_ ? steps[i + 1].frame - steps[i].frame : steps[i].frame - steps[i - 1].frame;
      key_lo_[i] = std::max(0.0, steps[i].frame - r * before);
      key_hi_[i] = std::min(static_cast<double>(n - 1), steps[i].frame + r * after);
    }
    // Fine resolution: a quarter of an output frame of input time, at most a quarter input frame.
    fine_ = 0.25 * std::min(1.0, (n - 1.0) / std::max(m_ - 1.0, 1.0));
  }

  // First each key onto its planned frame; then the key and the cycle errors together (the
  // rhythm: each key's time within its detected two-step cycle). Leaves rep.keys, rep.warp,
  // rep.key_passes and the key / cycle errors.
  void run(int key_iterations) {
    for (const bool phase : {false, true}) {
      rhythm_ = phase;
      for (int sweep = 0; sweep < key_iterations && !best_score_.done(rhythm_); ++sweep) {
        bool improved = false;
        for (size_t i = 0; i < nk_ && !best_score_.done(rhythm_); ++i) {
          if (!rep_.keys[i].interior) continue;
          // Misplaced: off its nearest frame, or (rhythm) in a cycle whose rhythm is off.
          double bad = key_error(rep_.keys[i]);
          if (rhythm_) {
            const std::vector<double> ce = cycle_errors(rep_.keys);
            for (size_t c = i >= 2 ? i - 2 : 0; c <= i && c < ce.size(); ++c) bad = std::max(bad, ce[c]);
          }
          if (bad <= 0.5) continue;
          if (search_key(i)) {
            improved = true;
          } else {
            // The key itself cannot be placed better: its neighbours' boundaries shape its stance.
            for (size_t j : {i - 1, i + 1})
              if (j < nk_ && search_key(j)) improved = true;
          }
        }
        if (!improved || rep_.key_passes >= max_searches_) break;
      }
    }
    for (const KeyReport& k : rep_.keys) {
      if (!k.interior) continue;
      if (k.detected < 0) ++rep_.keys_unmatched;
      else rep_.key_error = std::max(rep_.key_error, std::abs(k.detected - k.planned));
    }
    rep_.cycle_error = best_score_.cycle_worst;
  }

 private:
  static double key_error(const KeyReport& k) {
    return k.detected < 0 ? std::numeric_limits<double>::infinity() : std::abs(k.detected - k.planned);
  }

  // Detects the keys of output frames [k0, k0 + w.size()) (w: their input frames) and scores the
  // planned keys [j0, j1) against them (cycles within that range).
  KeyScore measure_range(const std::vector<double>& w, int k0, std::vector<KeyReport>& kr, size_t j0, size_t j1) {
    probe_.sample(w);
    std::vector<StepKey> found = step_keys(detect_key_times(probe_.motion(), probe_.poses(), roles_, out_keys_), 1);
    for (StepKey& f : found) f.frame += k0;
    KeyScore score;
    for (size_t i = j0; i < j1; ++i) {
      // Same foot, nearest the planned frame, within half the shorter neighbouring segment.
      const double lo = i > 0 ? kr[i].planned - kr[i - 1].planned : 1e9;
      const double hi = i + 1 < kr.size() ? kr[i + 1].planned - kr[i].planned : 1e9;
      const double reach = std::max(2.0, 0.5 * std::min(lo, hi));
      kr[i].detected = -1;
      for (const StepKey& f : found) {
        if (f.foot != kr[i].foot || std::abs(f.frame - kr[i].planned) > reach) continue;
        if (kr[i].detected < 0 || std::abs(f.frame - kr[i].planned) < std::abs(kr[i].detected - kr[i].planned))
          kr[i].detected = f.frame;
      }
      if (!kr[i].interior) continue;
      if (kr[i].detected < 0) {
        ++score.unmatched;
      } else {
        score.worst = std::max(score.worst, std::abs(kr[i].detected - kr[i].planned));
        score.sum += std::abs(kr[i].detected - kr[i].planned);
      }
    }
    for (double e : cycle_errors(std::span<const KeyReport>(kr).subspan(j0, j1 - j0)))
      score.cycle_worst = std::max(score.cycle_worst, e);
    return score;
  }

  KeyScore measure(const std::vector<double>& w, std::vector<KeyReport>& kr) {
    return measure_range(w, 0, kr, 0, kr.size());
  }

  KeyScore settle(const std::vector<double>& at, std::vector<KeyReport>& kr, std::vector<double>& w) {
    for (size_t i = 0; i < nk_; ++i) kr[i].input_frame = at[i];
    w = warp_.build(at);
    return measure(w, kr);
  }

  // Boundaries g with boundary i at x; every step keeps at least half its input length: a
  // neighbour in the way is pushed along (within its own range), so a pair of keys can move
  // together.
  std::vector<double> moved(size_t i, double x) const {
    std::vector<double> trial = g_;
    trial[i] = x;
    for (size_t j = i; j + 1 < nk_; ++j) {
      const double gap = 0.5 * (steps_[j + 1].frame - steps_[j].frame);
      if (trial[j + 1] - trial[j] >= gap) break;
      trial[j + 1] = std::min(trial[j] + gap, key_hi_[j + 1]);
      trial[j] = std::min(trial[j], trial[j + 1] - gap);
    }
    for (size_t j = i; j > 0; --j) {
      const double gap = 0.5 * (steps_[j].frame - steps_[j - 1].frame);
      if (trial[j] - trial[j - 1] >= gap) break;
      trial[j - 1] = std::max(trial[j] - gap, key_lo_[j - 1]);
      trial[j] = std::max(trial[j], trial[j - 1] + gap);
    }
    return trial;
  }

  // Tries boundary i at `xs`. Each position is screened on a window of the output around key i
  // (keys i-3 .. i+3; keys i-2 .. i+2 scored, their stances inside it), so a search costs the
  // window, not the clip, per position; the best screened position is then measured on the whole
  // output and kept only if the whole score is better. True if it improved.
  bool try_key(size_t i, const std::vector<double>& xs) {
    const size_t s0 = i >= 2 ? i - 2 : 0, s1 = std::min(nk_, i + 3);
    const int k0 = i >= 3 ? std::max(0, static_cast<int>(std::floor(rep_.keys[i - 3].planned))) : 0;
    const int k1 = i + 3 < nk_ ? std::min(m_, static_cast<int>(std::ceil(rep_.keys[i + 3].planned)) + 1) : m_;
    std::vector<KeyReport> base = rep_.keys;
    const KeyScore base_local = measure_range(warp_.build(g_, k0, k1), k0, base, s0, s1);
    KeyScore best_local = base_local;
    std::vector<double> best_trial;
    for (double x : xs) {
      std::vector<double> trial = moved(i, x);
      if (trial == g_) continue;
      std::vector<KeyReport> kr = rep_.keys;
      const KeyScore local = measure_range(warp_.build(trial, k0, k1), k0, kr, s0, s1);
      if (local.better(best_local, rhythm_)) {
        best_local = local;
        best_trial = std::move(trial);
      }
    }
    if (best_trial.empty()) return false;
    std::vector<KeyReport> kr = rep_.keys;
    std::vector<double> w;
    const KeyScore score = settle(best_trial, kr, w);
    if (!score.better(best_score_, rhythm_)) return false;
    best_score_ = score;
    g_ = std::move(best_trial);
    rep_.keys = std::move(kr);
    rep_.warp = std::move(w);
    return true;
  }

  // Every output frame's worth of input time across the key's range (at most 65 positions: at
  // high frame rates a coarser grid, then output frames across one of its steps either side of the
  // best), then quarter output frames around the best.
  // At most four searches per key over the whole correction: a clip whose keys cannot be placed
  // costs a bounded multiple of one that can.
  bool search_key(size_t i) {
    if (rep_.key_passes >= max_searches_) return false;
    ++rep_.key_passes;
    const double frame = 4 * fine_;  // one output frame of input time, at most one input frame
    const double coarse = std::max(frame, (key_hi_[i] - key_lo_[i]) / 64);
    std::vector<double> xs;
    for (double x = key_lo_[i]; x <= key_hi_[i] + 1e-9; x += coarse) xs.push_back(x);
    bool improved = try_key(i, xs);
    if (coarse > 1.5 * frame) {
      xs.clear();
      for (double x = g_[i] - coarse; x <= g_[i] + coarse + 1e-9; x += frame)
        xs.push_back(std::clamp(x, key_lo_[i], key_hi_[i]));
      improved = try_key(i, xs) || improved;
    }
    xs.clear();
    for (int k = -3; k <= 3; ++k) xs.push_back(std::clamp(g_[i] + k * fine_, key_lo_[i], key_hi_[i]));
    improved = try_key(i, xs) || improved;
    return improved;
  }

  const body::JointRoles& roles_;
  std::span<const StepKey> steps_;
  const SegmentWarp& warp_;
  KeyTimeSettings out_keys_;
  FootProbe probe_;
  RetimeReport& rep_;
  std::vector<double> g_;  // step boundaries: the input frame shown at each planned key time
  size_t nk_;
  int m_;
  int max_searches_;
  KeyScore best_score_;
  std::vector<double> key_lo_, key_hi_;
  double fine_ = 0.0;
  bool rhythm_ = false;
};

// Per output frame, how much of a leg joint's succession shift applies: 0 in its foot's
// contacts, rising to 1 over `fade` frames in the swing (1 - the contact fade); 1 for other joints.
std::vector<double> swing_weight(const body::ContactReport& contacts, const body::JointRoles& roles, int joint,
                                 double shift_frames, int m, double rate_out) {
  const double fade = std::max({1.0, 0.1 * rate_out, 2 * std::abs(shift_frames)});
  std::vector<double> weight(static_cast<size_t>(m), 1.0);
  const char* foot = nullptr;
  if (joint == roles[body::Role::left_knee] || joint == roles[body::Role::left_ankle]) foot = "left_foot";
  if (joint == roles[body::Role::right_knee] || joint == roles[body::Role::right_ankle]) foot = "right_foot";
  const body::EffectorContacts* ec = foot ? contacts.find(foot) : nullptr;
  if (!ec) return weight;
  const std::vector<double> stance = body::contact_fade(ec->in_contact, fade);
  for (int k = 0; k < m; ++k) weight[k] = 1.0 - stance[k];
  return weight;
}

// Re-samples one joint of `out` from `base` through the warp k + weight[k] * (w[k] - k).
void warp_joint(Motion& out, const Motion& base, int joint, std::span<const double> w,
                std::span<const double> weight) {
  const int m = out.frame_count, joints = out.joint_count();
  for (int k = 0; k < m; ++k) {
    const double wk = k + weight[k] * (w[k] - k);
    const int f0 = std::clamp(static_cast<int>(std::floor(wk)), 0, m - 1);
    const int f1 = std::min(f0 + 1, m - 1);
    const double t = wk - f0;
    const size_t o = static_cast<size_t>(k) * joints + joint;
    const size_t a = static_cast<size_t>(f0) * joints + joint, b = static_cast<size_t>(f1) * joints + joint;
    out.rotations[o] = t == 0.0 ? base.rotations[a] : slerp(base.rotations[a], base.rotations[b], t);
    out.translations[o] = (1 - t) * base.translations[a] + t * base.translations[b];
  }
}

// (b) Succession: shift each chain child so its lag after the parent matches the source's.
void apply_succession(Motion& out, const body::JointRoles& roles, const TimingSource& source,
                      const RetimeSettings& settings, double rate_out, RetimeReport& rep) {
  const int m = out.frame_count;
  std::vector<double> out_durations;
  for (const SegmentReport& s : rep.segments) out_durations.push_back(s.output_duration);
  const double cycle = mean_cycle(out_durations);
  const int window = static_cast<int>(std::lround(0.25 * cycle * rate_out));
  std::map<body::Role, double> total_shift;
  std::vector<std::pair<int, double>> apply;  // joint, shift seconds
  for (const auto& link : succession_links()) {
    const body::Role parent = link.first, child = link.second;  // not a structured binding: lambdas capture it (clang 14)
    if (!roles.has(parent) || !roles.has(child)) continue;
    const auto it = std::find_if(source.lags.begin(), source.lags.end(),
                                 [&](const ChainLag& l) { return l.parent == parent && l.child == child; });
    if (it == source.lags.end()) continue;
    const auto [in_lag, in_corr] =
        rotation_peak_lag(out, roles[parent], roles[child], window, settings.measure.lag_cutoff_hz);
    const double src_lag = it->lag_cycles * cycle;
    const double limit = settings.max_shift_cycles * cycle;
    const double corr = std::min(in_corr, it->correlation);
    const double delta = corr >= settings.min_lag_correlation ? std::clamp(src_lag - in_lag, -limit, limit) : 0.0;
    const double shift = total_shift[parent] + delta;
    total_shift[child] = shift;
    rep.shifts.push_back({parent, child, src_lag, in_lag, corr, shift});
    if (std::abs(shift) > 1e-6) apply.emplace_back(roles[child], shift);
  }
  if (apply.empty()) return;
  const Motion base = out;
  // The root path does not change, so a leg joint shifted in time during a stance would drag
  // the planted foot: leg shifts apply in the swing only, fading out over 0.1 s before and
  // after each of that foot's contacts (detected on the output of (a)); the fade is at least
  // twice the shift, so the child's warp k + weight * (w(k) - k) stays increasing.
  const std::vector<body::Effector> feet = body::foot_effectors(roles);
  const body::ContactReport contacts = body::detect_contacts(base, feet, settings.measure.keys.contact);
  for (const auto& [joint, shift] : apply) {
    const double shift_frames = shift * rate_out;
    const std::vector<double> w = shift_warp(m, shift_frames, std::max(3 * std::abs(shift_frames), 0.25 * rate_out));
    const std::vector<double> weight = swing_weight(contacts, roles, joint, shift_frames, m, rate_out);
    warp_joint(out, base, joint, w, weight);
  }
}

// (c) Amplitude: scale arm/spine rotations about their mean by source range / input range, both
// measured over the steps (first to last key).
void apply_amplitude(Motion& out, const body::JointRoles& roles, const TimingSource& source,
                     const RetimeSettings& settings, RetimeReport& rep) {
  const int m = out.frame_count;
  const int first_key = static_cast<int>(std::lround(rep.segments.front().output_begin));
  const int last_key = std::min(static_cast<int>(std::lround(rep.segments.back().output_end)), m - 1);
  for (const JointAmplitude& a : source.amplitudes) {
    if (!roles.has(a.role)) continue;
    const int joint = roles[a.role];
    const double in_range = rotation_range(out, joint, first_key, last_key + 1);
    if (in_range < 1e-4 || a.range <= 0) continue;
    const double scale = std::clamp(a.range / in_range, 1 / settings.max_amplitude_scale, settings.max_amplitude_scale);
    rep.amplitudes.push_back({a.role, a.range, in_range, scale});
    if (std::abs(scale - 1) < 1e-9) continue;
    const Quat mean = sign_aligned_mean(out, joint, first_key, last_key + 1);
    for (int k = 0; k < m; ++k) {
      Quat& q = out.rotations[static_cast<size_t>(k) * out.joint_count() + joint];
      q = (mean * quat_exp(scale * quat_log(mean.conjugate() * q))).normalized();
    }
  }
}

// The path check: the output's path point must trace the input's curve. Fills the path fields of
// rep (length, deviation bound, Hausdorff distance).
void check_path(const Motion& input, const Motion& out, const body::JointRoles& roles, RetimeReport& rep) {
  const int n = input.frame_count, m = out.frame_count;
  const std::vector<Vec3> path_in = joint_path(input, path_point(roles));
  const std::vector<Vec3> path_out = joint_path(out, path_point(roles));
  rep.path_length = polyline_length(path_in);
  // Directed Hausdorff distance, bounded from above by the distance of each output point to the
  // input segments around the frame its pose came from (exact when it lies on them).
  for (int k = 0; k < m; ++k) {
    const int f = static_cast<int>(std::floor(rep.warp[k]));
    const int lo = std::max(f - 1, 0), hi = std::min(f + 3, n);
    rep.path_deviation = std::max(
        rep.path_deviation,
        polyline_deviation(std::span<const Vec3>(path_in.data() + lo, static_cast<size_t>(hi - lo)),
                           std::span<const Vec3>(&path_out[k], 1)));
  }
  rep.path_hausdorff = hausdorff_distance(path_in, path_out, 1e-9 * std::max(rep.path_length, 1e-3));
}

}  // namespace

std::string_view speed_from_name(SpeedFrom speed) noexcept {
  switch (speed) {
    case SpeedFrom::cadence: return "cadence";
    case SpeedFrom::source: return "source";
    case SpeedFrom::input: return "input";
  }
  return "cadence";
}

RetimeResult retime(const Motion& input, const body::JointRoles& roles, const TimingSource& source,
                    const RetimeSettings& settings) {
  settings.validate();
  if (source.segments.empty()) throw Error(ErrorCode::bad_data, "timing source", "has no step segments");
  const double rate_in = input.frame_rate;
  const double rate_out = settings.output_rate > 0 ? settings.output_rate : rate_in;
  const int n = input.frame_count;

  KeyTimeSettings keys = settings.measure.keys;
  keys.hands_and_head = false;
  const KeyTimeReport key_report = detect_key_times(input, roles, keys);
  RetimeResult result;
  RetimeReport& rep = result.report;
  rep.input_frames = n;
  rep.input_rate = rate_in;
  rep.output_rate = rate_out;
  rep.input_keys = full_steps(step_keys(key_report), n,
                              static_cast<int>(std::lround(settings.measure.max_split_gap * rate_in)));
  const std::vector<StepKey>& steps = rep.input_keys;
  if (settings.on_beat && !source.beat.found()) {
    throw Error(ErrorCode::bad_data, "source",
                "has no beat (its examples' foot touch-downs fit no steady tempo, or it was made before "
                "koma measured beats); re-time with on_beat off, or measure the source again from its examples");
  }
  if (steps.size() < 2) {
    throw Error(ErrorCode::bad_data, "input",
                fmt::format("{} foot key time(s) found; re-timing needs at least 2 (one step)", steps.size()));
  }
  const WorldPoses poses = forward_kinematics(input);
  const std::vector<double> progress = root_progress(input, poses, path_point(roles), settings.measure);
  const std::vector<SegmentTiming> segs = segment_timings(input, poses, roles, steps, progress);

  // (a) Plan the segments and the keys, warp time, and correct the keys the output shows.
  const std::vector<double> durations = match_segments(segs, source, settings, rep);
  report_cadence(segs, source, durations, body::body_size(input.skeleton), settings.speed, rep);
  const SegmentPlan plan = plan_segments(segs, steps, durations, n, rate_in, rate_out, rep);
  const int m = plan.frames;
  std::vector<double> g = plan_keys(steps, key_report, plan, n, rate_out, rep);
  const SegmentWarp warp(progress, plan, source, rep.segments, n, rate_out);
  KeyCorrector corrector(input, roles, steps, warp, keys, settings, m, rate_out, std::move(g), rep);
  corrector.run(settings.key_iterations);
  Motion out = sample_at_frames(input, rep.warp, rate_out);

  // (b) Succession and (c) amplitude.
  if (settings.succession && !source.lags.empty() && m >= 8) apply_succession(out, roles, source, settings, rate_out, rep);
  if (settings.amplitude) apply_amplitude(out, roles, source, settings, rep);

  rep.output_frames = m;
  check_path(input, out, roles, rep);
  result.motion = std::move(out);
  return result;
}

}  // namespace koma::timing
