#include "koma/timing/source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <Eigen/Eigenvalues>
#include <nlohmann/json.hpp>

#include "koma/body/lowpass.hpp"
#include "koma/core/error.hpp"
#include "koma/core/quat_sign.hpp"

namespace koma::timing {

void SourceSettings::validate() const {
  keys.validate();
  if (!(path_cutoff_hz > 0 && std::isfinite(path_cutoff_hz)))
    throw Error(ErrorCode::invalid_settings, "path_cutoff_hz", fmt::format("{} must be > 0 Hz", path_cutoff_hz));
  if (!(progress_epsilon > 0 && progress_epsilon < 1))
    throw Error(ErrorCode::invalid_settings, "progress_epsilon", fmt::format("{} must be in (0, 1)", progress_epsilon));
  if (!(lag_cutoff_hz >= 0 && std::isfinite(lag_cutoff_hz)))
    throw Error(ErrorCode::invalid_settings, "lag_cutoff_hz", fmt::format("{} must be >= 0 Hz", lag_cutoff_hz));
  if (!(max_split_gap >= 0 && std::isfinite(max_split_gap)))
    throw Error(ErrorCode::invalid_settings, "max_split_gap", fmt::format("{} must be >= 0 s", max_split_gap));
}

double pose_distance(const PoseDescriptor& a, const PoseDescriptor& b) noexcept {
  double sum = 0;
  int count = 0;
  for (int r = 0; r < body::kRoleCount; ++r) {
    if (!a.present[r] || !b.present[r]) continue;
    sum += (a.positions[r] - b.positions[r]).norm();
    ++count;
  }
  return count > 0 ? sum / count : std::numeric_limits<double>::infinity();
}

PoseDescriptor pose_descriptor(const WorldPoses& poses, int frame, const body::JointRoles& roles, double body_size) {
  PoseDescriptor d;
  const Vec3 origin = poses.position(frame, roles.has(body::Role::hips) ? roles[body::Role::hips] : 0);
  Vec3 forward = Vec3::Zero();
  if (roles.has(body::Role::left_hip) && roles.has(body::Role::right_hip)) {
    forward = (poses.position(frame, roles[body::Role::left_hip]) - poses.position(frame, roles[body::Role::right_hip]))
                  .cross(Vec3::UnitY());
  }
  forward.y() = 0;
  if (forward.norm() < 1e-9) {
    forward = poses.position(poses.frame_count - 1, path_point(roles)) - poses.position(0, path_point(roles));
    forward.y() = 0;
  }
  if (forward.norm() < 1e-9) forward = Vec3::UnitZ();
  const double yaw = std::atan2(forward.x(), forward.z());
  const Eigen::Matrix3d turn = Eigen::AngleAxisd(-yaw, Vec3::UnitY()).toRotationMatrix();
  for (int r = 0; r < body::kRoleCount; ++r) {
    const int p = roles.points[r];
    if (p < 0 || p >= poses.point_count) continue;
    d.present[r] = true;
    d.positions[r] = turn * (poses.position(frame, p) - origin) / body_size;
  }
  return d;
}

std::vector<std::pair<body::Role, body::Role>> succession_links() {
  return {{body::Role::spine, body::Role::left_shoulder},     {body::Role::left_shoulder, body::Role::left_elbow},
          {body::Role::left_elbow, body::Role::left_hand},    {body::Role::spine, body::Role::right_shoulder},
          {body::Role::right_shoulder, body::Role::right_elbow}, {body::Role::right_elbow, body::Role::right_hand},
          {body::Role::left_hip, body::Role::left_knee},      {body::Role::left_knee, body::Role::left_ankle},
          {body::Role::right_hip, body::Role::right_knee},    {body::Role::right_knee, body::Role::right_ankle}};
}

std::vector<body::Role> amplitude_roles() {
  return {body::Role::spine,      body::Role::neck,          body::Role::head,        body::Role::left_shoulder, body::Role::left_elbow,
          body::Role::left_hand,  body::Role::right_shoulder, body::Role::right_elbow, body::Role::right_hand};
}

int path_point(const body::JointRoles& roles) noexcept { return roles.has(body::Role::hips) ? roles[body::Role::hips] : 0; }

std::vector<double> root_progress(const Motion& motion, const WorldPoses& poses, int root_point,
                                  const SourceSettings& settings) {
  const int n = motion.frame_count;
  std::vector<Vec3> root(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) root[f] = poses.position(f, root_point);
  // The travel direction comes from the heavily smoothed path; the progress itself is the raw
  // displacement along it, so surges within a step stay in while sway and bob drop out.
  const std::vector<Vec3> smooth = body::lowpass_zero_phase(root, motion.frame_rate, settings.path_cutoff_hz);
  const double size = std::max(motion.skeleton.rest_extent(), 1e-6);
  const double eps = settings.progress_epsilon * size / motion.frame_rate;
  std::vector<double> s(static_cast<size_t>(n), 0.0);
  for (int f = 1; f < n; ++f) {
    Vec3 dir = smooth[f] - smooth[f - 1];
    dir.y() = 0;
    const double len = dir.norm();
    const double step = len > 1e-12 ? std::max(0.0, (root[f] - root[f - 1]).dot(dir / len)) : 0.0;
    s[f] = s[f - 1] + step + eps;
  }
  return s;
}

std::vector<SegmentTiming> segment_timings(const Motion& motion, const WorldPoses& poses, const body::JointRoles& roles,
                                           std::span<const StepKey> keys, std::span<const double> progress,
                                           int example) {
  std::vector<SegmentTiming> out;
  const double size = std::max(motion.skeleton.rest_extent(), 1e-6);
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    const int b = keys[i].frame, e = keys[i + 1].frame;
    if (e <= b) continue;
    SegmentTiming s;
    s.example = example;
    s.begin = b;
    s.end = e;
    s.start_foot = keys[i].foot;
    s.end_foot = keys[i + 1].foot;
    s.duration = (e - b) / motion.frame_rate;
    const double span_m = progress[e] - progress[b];
    s.length = span_m / size;
    s.speed = s.length / s.duration;
    s.progress.resize(static_cast<size_t>(e - b + 1));
    for (int f = b; f <= e; ++f) s.progress[f - b] = (progress[f] - progress[b]) / span_m;
    s.progress.front() = 0.0;
    s.progress.back() = 1.0;
    s.pose = pose_descriptor(poses, b, roles, size);
    out.push_back(std::move(s));
  }
  double total_length = 0, total_duration = 0;
  for (const SegmentTiming& s : out) {
    total_length += s.length;
    total_duration += s.duration;
  }
  const double mean_speed = total_duration > 0 ? total_length / total_duration : 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].speed_ratio = mean_speed > 0 ? out[i].speed / mean_speed : 1.0;
    const size_t j = i + 1 < out.size() ? i + 1 : (i > 0 ? i - 1 : i);
    out[i].cycle_fraction = j == i ? 1.0 : out[i].duration / (out[i].duration + out[j].duration);
  }
  return out;
}

namespace {

// The joint's dominant swing: its local rotation about the mean, as a log-map vector, projected on
// the principal axis of those vectors (sign fixed: largest component positive), low-passed, radians.
std::vector<double> swing_signal(const Motion& motion, int joint, double cutoff_hz) {
  const int n = motion.frame_count;
  const Quat mean = sign_aligned_mean(motion, joint, 0, n);
  std::vector<Vec3> v(static_cast<size_t>(n));
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (int f = 0; f < n; ++f) {
    v[f] = quat_log(mean.conjugate() * motion.rotation(f, joint));
    cov += v[f] * v[f].transpose();
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(cov);
  Vec3 axis = eig.eigenvectors().col(2);
  int big = 0;
  axis.cwiseAbs().maxCoeff(&big);
  if (axis[big] < 0) axis = -axis;
  std::vector<Vec3> x(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) x[f] = Vec3(v[f].dot(axis), 0, 0);
  const std::vector<Vec3> s = body::lowpass_zero_phase(x, motion.frame_rate, cutoff_hz);
  std::vector<double> out(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) out[f] = s[f].x();
  return out;
}

// Normalised cross-correlation of x(t) with y(t + lag) over their overlap.
double correlation_at(const std::vector<double>& x, const std::vector<double>& y, int lag) {
  const int n = static_cast<int>(x.size());
  const int t0 = std::max(0, -lag), t1 = std::min(n, n - lag);
  if (t1 - t0 < 3) return 0.0;
  double mx = 0, my = 0;
  for (int t = t0; t < t1; ++t) {
    mx += x[t];
    my += y[t + lag];
  }
  mx /= (t1 - t0);
  my /= (t1 - t0);
  double sxy = 0, sxx = 0, syy = 0;
  for (int t = t0; t < t1; ++t) {
    const double a = x[t] - mx, b = y[t + lag] - my;
    sxy += a * b;
    sxx += a * a;
    syy += b * b;
  }
  return sxx > 1e-18 && syy > 1e-18 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

std::pair<double, double> rotation_peak_lag(const Motion& motion, int parent, int child, int window_frames,
                                            double cutoff_hz) {
  const std::vector<double> x = swing_signal(motion, parent, cutoff_hz);
  const std::vector<double> y = swing_signal(motion, child, cutoff_hz);
  const int w = std::clamp(window_frames, 0, std::max(0, motion.frame_count / 2 - 1));
  std::vector<double> c(static_cast<size_t>(2 * w + 1));
  int best = 0;
  for (int lag = -w; lag <= w; ++lag) {
    c[lag + w] = std::abs(correlation_at(x, y, lag));  // swing axes have no common sign
    if (c[lag + w] > c[best + w]) best = lag;
  }
  double lag = best;
  if (best > -w && best < w) {
    const double a = c[best + w - 1], b = c[best + w], d = c[best + w + 1];
    const double den = a - 2 * b + d;
    if (den < -1e-12) lag += std::clamp(0.5 * (a - d) / den, -0.5, 0.5);
  }
  // A peak on the window's edge is no peak: the lag is outside the window, so report no confidence.
  const double corr = w > 0 && (best == -w || best == w) ? 0.0 : c[best + w];
  return {lag / motion.frame_rate, corr};
}

double rotation_range(const Motion& motion, int joint, int begin, int end) {
  begin = std::clamp(begin, 0, motion.frame_count);
  end = end < 0 ? motion.frame_count : std::clamp(end, begin, motion.frame_count);
  const int n = end - begin;
  if (n < 2) return 0.0;
  const Quat mean = sign_aligned_mean(motion, joint, begin, end);
  // The 95th percentile of the angle from the mean: nearly independent of how long the joint
  // lingers at each angle (an RMS would change when only the timing changes).
  std::vector<double> angle(static_cast<size_t>(n));
  for (int f = 0; f < n; ++f) angle[f] = quat_log(mean.conjugate() * motion.rotation(begin + f, joint)).norm();
  const size_t k = static_cast<size_t>(std::floor(0.95 * (n - 1)));
  std::nth_element(angle.begin(), angle.begin() + static_cast<std::ptrdiff_t>(k), angle.end());
  return angle[k];
}

TimingSource make_timing_source(std::span<const Motion> examples, const body::JointRoles& roles,
                                std::span<const std::string> names, const SourceSettings& settings) {
  settings.validate();
  if (examples.empty()) throw Error(ErrorCode::invalid_settings, "examples", "no example motion given");
  auto name_of = [&](size_t i) { return i < names.size() ? names[i] : fmt::format("example {}", i); };
  for (size_t i = 1; i < examples.size(); ++i) {
    try {
      require_same_topology(examples[0].skeleton, examples[i].skeleton);
    } catch (const Error& e) {
      throw Error(ErrorCode::mismatch, e.context(),
                  fmt::format("{} and {} have different skeletons: {}", name_of(0), name_of(i), e.message()));
    }
  }
  KeyTimeSettings keys = settings.keys;
  keys.hands_and_head = false;
  TimingSource src;
  double cycle_sum = 0, beat_sum = 0, beat_weight = 0;
  int cycle_count = 0;
  const auto links = succession_links();
  struct Sum {
    double a = 0, b = 0, c = 0;
    int count = 0;
  };
  std::array<Sum, 16> lag_sum{};
  const auto amp_roles = amplitude_roles();
  std::array<Sum, body::kRoleCount> amp_sum{};
  KOMA_ASSERT(links.size() <= lag_sum.size() && amp_roles.size() <= amp_sum.size());

  for (size_t i = 0; i < examples.size(); ++i) {
    const Motion& m = examples[i];
    src.examples.push_back(name_of(i));
    KeyTimeReport report;
    try {
      report = detect_key_times(m, roles, keys);
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("{}: {}", name_of(i), e.context()), e.message());
    }
    const std::vector<StepKey> steps =
        full_steps(step_keys(report), m.frame_count, static_cast<int>(std::lround(settings.max_split_gap * m.frame_rate)));
    const WorldPoses poses = forward_kinematics(m);
    const std::vector<double> progress = root_progress(m, poses, path_point(roles), settings);
    std::vector<SegmentTiming> segs = segment_timings(m, poses, roles, steps, progress, static_cast<int>(i));
    if (segs.empty()) {
      throw Error(ErrorCode::bad_data, name_of(i),
                  fmt::format("{} foot key time(s) found; a timing source needs at least 2 (one step)", steps.size()));
    }
    double cycle = 0;
    int cycles = 0;
    for (size_t s = 0; s + 1 < segs.size(); ++s) {
      cycle += segs[s].duration + segs[s + 1].duration;
      ++cycles;
    }
    if (cycles == 0) {
      cycle = 2 * segs[0].duration;
      cycles = 1;
    }
    const double mean_cycle = cycle / cycles;
    cycle_sum += cycle;
    cycle_count += cycles;
    for (size_t l = 0; l < links.size(); ++l) {
      const auto [pr, cr] = links[l];
      if (!roles.has(pr) || !roles.has(cr)) continue;
      const int window = static_cast<int>(std::lround(0.25 * mean_cycle * m.frame_rate));
      const auto [lag, corr] = rotation_peak_lag(m, roles[pr], roles[cr], window, settings.lag_cutoff_hz);
      lag_sum[l].a += lag;
      lag_sum[l].b += lag / mean_cycle;
      lag_sum[l].c += corr;
      ++lag_sum[l].count;
    }
    for (size_t r = 0; r < amp_roles.size(); ++r) {
      if (!roles.has(amp_roles[r])) continue;
      amp_sum[r].a += rotation_range(m, roles[amp_roles[r]], steps.front().frame, steps.back().frame + 1);
      ++amp_sum[r].count;
    }
    for (auto& s : segs) src.segments.push_back(std::move(s));
    for (double t : touch_down_steps(report.contacts, m.frame_rate)) src.step_times.push_back(t);
    if (report.beat.found() && report.beat.confidence > 0) {
      beat_sum += report.beat.confidence * report.beat.period;
      beat_weight += report.beat.confidence;
      if (report.beat.confidence > src.beat.confidence) src.beat = report.beat;
    }
  }
  src.mean_cycle_seconds = cycle_sum / cycle_count;
  if (beat_weight > 0) {
    src.beat.period = beat_sum / beat_weight;
    src.beat.tempo_bpm = 60.0 / src.beat.period;
    src.beat.phase = 0;
  }
  for (size_t l = 0; l < links.size(); ++l) {
    const Sum& t = lag_sum[l];
    if (t.count == 0) continue;
    ChainLag c;
    c.parent = links[l].first;
    c.child = links[l].second;
    c.lag_seconds = t.a / t.count;
    c.lag_cycles = t.b / t.count;
    c.correlation = t.c / t.count;
    src.lags.push_back(c);
  }
  for (size_t r = 0; r < amp_roles.size(); ++r) {
    if (amp_sum[r].count > 0) src.amplitudes.push_back({amp_roles[r], amp_sum[r].a / amp_sum[r].count});
  }
  return src;
}

std::vector<double> touch_down_steps(const body::ContactReport& contacts, double frame_rate) {
  std::vector<std::pair<int, size_t>> downs;  // (frame, effector)
  for (size_t e = 0; e < contacts.effectors.size(); ++e) {
    for (const body::Contact& c : contacts.effectors[e].contacts) {
      if (c.begin > 0) downs.emplace_back(c.begin, e);
    }
  }
  std::sort(downs.begin(), downs.end());
  // Touch-downs closer than this are one event (both feet landing together): no one steps
  // faster than 10 times a second (a sprint is about 5).
  constexpr double kShortestStep = 0.1;
  std::vector<double> steps;
  int last = -1;  // the first touch-down of the current run of one foot
  size_t foot = 0;
  for (const auto& [frame, effector] : downs) {
    if (last >= 0 && (effector == foot || (frame - last) / frame_rate < kShortestStep)) continue;  // a hop, a split
    if (last >= 0) steps.push_back((frame - last) / frame_rate);  // stance, both feet landing together
    last = frame;
    foot = effector;
  }
  return steps;
}

// ---------------------------------------------------------------------------------------------
// JSON

std::string timing_source_to_json(const TimingSource& source) {
  using nlohmann::json;
  json doc;
  doc["format"] = "koma-timing-source";
  doc["version"] = source.version;
  doc["examples"] = source.examples;
  doc["mean_cycle_seconds"] = source.mean_cycle_seconds;
  if (source.beat.found()) {
    doc["beat"] = {{"period", source.beat.period}, {"tempo_bpm", source.beat.tempo_bpm},
                   {"confidence", source.beat.confidence}, {"keys", source.beat.keys}, {"on_beat", source.beat.on_beat}};
  }
  if (!source.step_times.empty()) doc["step_times"] = source.step_times;
  json segs = json::array();
  for (const SegmentTiming& s : source.segments) {
    json pose = json::object();
    for (int r = 0; r < body::kRoleCount; ++r) {
      if (!s.pose.present[r]) continue;
      const Vec3& p = s.pose.positions[r];
      pose[std::string(body::role_name(static_cast<body::Role>(r)))] = {p.x(), p.y(), p.z()};
    }
    segs.push_back({{"example", s.example},
                    {"begin", s.begin},
                    {"end", s.end},
                    {"start_foot", s.start_foot},
                    {"end_foot", s.end_foot},
                    {"duration", s.duration},
                    {"length", s.length},
                    {"speed", s.speed},
                    {"speed_ratio", s.speed_ratio},
                    {"cycle_fraction", s.cycle_fraction},
                    {"progress", s.progress},
                    {"pose", pose}});
  }
  doc["segments"] = segs;
  json lags = json::array();
  for (const ChainLag& l : source.lags) {
    lags.push_back({{"parent", body::role_name(l.parent)},
                    {"child", body::role_name(l.child)},
                    {"lag_seconds", l.lag_seconds},
                    {"lag_cycles", l.lag_cycles},
                    {"correlation", l.correlation}});
  }
  doc["lags"] = lags;
  json amps = json::array();
  for (const JointAmplitude& a : source.amplitudes) amps.push_back({{"role", body::role_name(a.role)}, {"range", a.range}});
  doc["amplitudes"] = amps;
  return doc.dump(1) + "\n";
}

TimingSource timing_source_from_json(std::string_view text, const std::string& context) {
  using nlohmann::json;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::bad_file, context, fmt::format("not valid JSON: {}", e.what()));
  }
  auto role_of = [&](const json& v) {
    const std::string name = v.get<std::string>();
    try {
      return body::parse_role(name);
    } catch (const Error& e) {
      throw Error(ErrorCode::bad_file, context, fmt::format("{}: {}", e.context(), e.message()));
    }
  };
  TimingSource src;
  try {
    if (doc.value("format", std::string()) != "koma-timing-source") {
      throw Error(ErrorCode::bad_file, context, "not a koma timing source (\"format\": \"koma-timing-source\" missing)");
    }
    src.version = doc.at("version").get<int>();
    if (src.version != 1) {
      throw Error(ErrorCode::bad_file, context, fmt::format("unsupported version {}; this koma reads version 1", src.version));
    }
    src.examples = doc.at("examples").get<std::vector<std::string>>();
    src.mean_cycle_seconds = doc.at("mean_cycle_seconds").get<double>();
    if (doc.contains("beat")) {  // optional: sources saved before koma measured beats have none
      const json& b = doc.at("beat");
      src.beat.period = b.at("period").get<double>();
      src.beat.confidence = b.at("confidence").get<double>();
      src.beat.keys = b.value("keys", 0);
      src.beat.on_beat = b.value("on_beat", 0);
      if (!(src.beat.period > 0 && std::isfinite(src.beat.period)) || !(src.beat.confidence >= 0 && src.beat.confidence <= 1))
        throw Error(ErrorCode::bad_file, context,
                    fmt::format("beat: period {} s must be > 0 and confidence {} in [0, 1]", src.beat.period,
                                src.beat.confidence));
      src.beat.tempo_bpm = 60.0 / src.beat.period;
    }
    if (doc.contains("step_times")) {  // optional: sources saved before koma measured the cadence have none
      src.step_times = doc.at("step_times").get<std::vector<double>>();
      for (double t : src.step_times) {
        if (!(t > 0 && std::isfinite(t)))
          throw Error(ErrorCode::bad_file, context, fmt::format("step_times: {} s must be > 0", t));
      }
    }
    for (const json& j : doc.at("segments")) {
      SegmentTiming s;
      s.example = j.at("example").get<int>();
      s.begin = j.at("begin").get<int>();
      s.end = j.at("end").get<int>();
      s.start_foot = j.at("start_foot").get<std::string>();
      s.end_foot = j.at("end_foot").get<std::string>();
      s.duration = j.at("duration").get<double>();
      s.length = j.at("length").get<double>();
      s.speed = j.at("speed").get<double>();
      s.speed_ratio = j.at("speed_ratio").get<double>();
      s.cycle_fraction = j.at("cycle_fraction").get<double>();
      s.progress = j.at("progress").get<std::vector<double>>();
      for (const auto& [name, v] : j.at("pose").items()) {
        const int r = static_cast<int>(role_of(json(name)));
        s.pose.present[r] = true;
        s.pose.positions[r] = Vec3(v.at(0).get<double>(), v.at(1).get<double>(), v.at(2).get<double>());
      }
      if (s.progress.size() < 2 || !(s.duration > 0) || !(s.length > 0)) {
        throw Error(ErrorCode::bad_file, context,
                    fmt::format("segment {}: needs duration > 0, length > 0 and >= 2 progress samples",
                                src.segments.size()));
      }
      src.segments.push_back(std::move(s));
    }
    for (const json& j : doc.at("lags")) {
      ChainLag l;
      l.parent = role_of(j.at("parent"));
      l.child = role_of(j.at("child"));
      l.lag_seconds = j.at("lag_seconds").get<double>();
      l.lag_cycles = j.at("lag_cycles").get<double>();
      l.correlation = j.at("correlation").get<double>();
      src.lags.push_back(l);
    }
    for (const json& j : doc.at("amplitudes")) src.amplitudes.push_back({role_of(j.at("role")), j.at("range").get<double>()});
  } catch (const json::exception& e) {
    throw Error(ErrorCode::bad_file, context, fmt::format("malformed timing source: {}", e.what()));
  }
  return src;
}

}  // namespace koma::timing
