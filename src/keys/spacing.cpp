#include "koma/keys/spacing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "koma/core/enum_names.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"

namespace koma::keys {

namespace {

constexpr EnumNames<ChartKind, 10> kChartNames{{{{ChartKind::source, "source"},
                                                 {ChartKind::even, "even"},
                                                 {ChartKind::slow_in, "slow-in"},
                                                 {ChartKind::slow_out, "slow-out"},
                                                 {ChartKind::slow_in_out, "slow-in-out"},
                                                 {ChartKind::halves, "halves"},
                                                 {ChartKind::custom, "custom"},
                                                 {ChartKind::slow_in, "slow_in"},
                                                 {ChartKind::slow_out, "slow_out"},
                                                 {ChartKind::slow_in_out, "slow_in_out"}}},
                                               NameCase::ignore,
                                               "?"};

constexpr EnumNames<DrawingKind, 2> kDrawingKindNames{
    {{{DrawingKind::key, "key"}, {DrawingKind::inbetween, "inbetween"}}}, NameCase::exact, "?"};

const char* const kChartWords = "source, even, slow-in, slow-out, slow-in-out, halves or a list of fractions";

// The source position (fractional frame) of output frame i, computed as resample() computes it, so
// sampling there gives resample()'s pose bit for bit.
double source_position(int i, double rate, const Motion& source) {
  return std::min((static_cast<double>(i) / rate) * source.frame_rate, source.frame_count - 1.0);
}

// A custom chart with another count of inbetweens than it lists: the curve through (0, 0),
// (k / (n + 1), f_k) and (1, 1), piecewise linear, at u.
double custom_curve(const std::vector<double>& f, double u) {
  const double n1 = static_cast<double>(f.size() + 1);
  double u0 = 0, f0 = 0;
  for (size_t k = 0; k <= f.size(); ++k) {
    const double u1 = static_cast<double>(k + 1) / n1, f1 = k < f.size() ? f[k] : 1.0;
    if (u <= u1 || k == f.size()) return u1 > u0 ? f0 + (f1 - f0) * (u - u0) / (u1 - u0) : f1;
    u0 = u1;
    f0 = f1;
  }
  return 1.0;
}

}  // namespace

std::string_view to_string(ChartKind kind) noexcept { return kChartNames.name(kind); }

std::optional<ChartKind> parse_chart_kind(std::string_view text) noexcept {
  const auto k = kChartNames.parse(text);
  if (k == ChartKind::custom) return std::nullopt;
  return k;
}

std::string_view to_string(DrawingKind kind) noexcept { return kDrawingKindNames.name(kind); }

void Chart::validate() const {
  if (kind != ChartKind::custom) {
    if (!fractions.empty()) {
      throw Error(ErrorCode::invalid_settings, "chart",
                  fmt::format("the {} chart takes no fractions ({} given); fractions make a custom chart", to_string(kind),
                              fractions.size()));
    }
    return;
  }
  if (fractions.empty()) throw Error(ErrorCode::invalid_settings, "chart", "a custom chart needs at least one fraction");
  for (size_t i = 0; i < fractions.size(); ++i) {
    const double f = fractions[i];
    if (!std::isfinite(f) || f < 0 || f > 1) {
      throw Error(ErrorCode::invalid_settings, "chart",
                  fmt::format("fraction {} ({:g}) is outside [0, 1]: a chart gives each inbetween's share of the way "
                              "from its key to the next",
                              i + 1, f));
    }
    if (i > 0 && !(f > fractions[i - 1])) {
      throw Error(ErrorCode::invalid_settings, "chart",
                  fmt::format("fraction {} ({:g}) does not increase on fraction {} ({:g}): each inbetween lies further "
                              "along than the one before",
                              i + 1, f, i, fractions[i - 1]));
    }
  }
}

std::string Chart::name() const {
  if (kind != ChartKind::custom) return std::string(to_string(kind));
  std::string out;
  for (double f : fractions) out += fmt::format("{}{:g}", out.empty() ? "" : " ", f);
  return out;
}

Chart parse_chart(std::string_view text) {
  Chart c;
  if (const auto k = parse_chart_kind(text)) {
    c.kind = *k;
    return c;
  }
  std::string s(text);
  std::replace(s.begin(), s.end(), ',', ' ');
  std::istringstream in(s);
  std::string item;
  while (in >> item) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used != item.size() || used == 0) {
      throw Error(ErrorCode::invalid_settings, "chart",
                  c.fractions.empty() ? fmt::format("unknown chart '{}'; expected {}", text, kChartWords)
                                      : fmt::format("'{}' in '{}' is not a fraction", item, text));
    }
    c.fractions.push_back(v);
  }
  if (c.fractions.empty()) throw Error(ErrorCode::invalid_settings, "chart", fmt::format("no chart given; expected {}", kChartWords));
  c.kind = ChartKind::custom;
  c.validate();
  return c;
}

std::vector<double> chart_fractions(const Chart& chart, std::span<const double> times) {
  std::vector<double> out;
  if (chart.kind == ChartKind::source) return out;
  const size_t m = times.size();
  for (size_t i = 0; i < m; ++i) {
    const double u = times[i];
    double f = u;
    switch (chart.kind) {
      case ChartKind::source:
      case ChartKind::even: break;
      case ChartKind::slow_in: f = 1 - (1 - u) * (1 - u); break;
      case ChartKind::slow_out: f = u * u; break;
      case ChartKind::slow_in_out: f = u * u * (3 - 2 * u); break;
      case ChartKind::halves: f = 1 - std::ldexp(1.0, -static_cast<int>(i + 1)); break;
      case ChartKind::custom: f = chart.fractions.size() == m ? chart.fractions[i] : custom_curve(chart.fractions, u); break;
    }
    out.push_back(f);
  }
  return out;
}

void SpacingSettings::validate() const {
  if (on < 1) throw Error(ErrorCode::invalid_settings, "spacing.on", fmt::format("an inbetween every {} frames; expected 1 or more (2 = on 2s)", on));
  chart.validate();
  std::vector<int> froms;
  for (const GapChart& g : gaps) {
    if (g.start < 0) throw Error(ErrorCode::invalid_settings, "spacing.gaps", fmt::format("gap at frame {}: frames are >= 0", g.start));
    g.chart.validate();
    froms.push_back(g.start);
  }
  std::sort(froms.begin(), froms.end());
  const auto dup = std::adjacent_find(froms.begin(), froms.end());
  if (dup != froms.end()) {
    throw Error(ErrorCode::invalid_settings, "spacing.gaps", fmt::format("the gap from frame {} has two charts", *dup));
  }
}

std::vector<int> Spacing::drawing_frames() const {
  std::vector<int> out;
  out.reserve(drawings.size());
  for (const Drawing& d : drawings) out.push_back(d.frame);
  return out;
}

namespace {

// The pose path of one gap: sample positions (source frames: the gap's ends and every source frame
// between them) and the cumulative length of all joints' world paths up to each.
struct PosePath {
  std::vector<double> at;      // source positions, increasing
  std::vector<double> length;  // cumulative metres, length[0] = 0
  double total() const { return length.back(); }

  // The source position where `share` of the path is covered (time-even when the path is still).
  double position_of(double share) const {
    if (!(total() > 0)) return at.front() + share * (at.back() - at.front());
    const double target = share * total();
    const size_t i = static_cast<size_t>(std::upper_bound(length.begin(), length.end(), target) - length.begin());
    if (i == 0) return at.front();
    if (i >= length.size()) return at.back();
    const double seg = length[i] - length[i - 1];
    return at[i - 1] + (seg > 0 ? (target - length[i - 1]) / seg : 0.0) * (at[i] - at[i - 1]);
  }
  // The share of the path covered at source position s.
  double share_at(double s) const {
    if (!(total() > 0)) return (s - at.front()) / (at.back() - at.front());
    const size_t i = static_cast<size_t>(std::upper_bound(at.begin(), at.end(), s) - at.begin());
    if (i == 0) return 0.0;
    if (i >= at.size()) return 1.0;
    const double w = (s - at[i - 1]) / (at[i] - at[i - 1]);
    return (length[i - 1] + w * (length[i] - length[i - 1])) / total();
  }
};

// FK of the pose at each source position (one allocation-free pass; interpolated ends sampled as
// resample() samples them).
PosePath pose_path(const Motion& source, double from, double to) {
  PosePath p;
  p.at.push_back(from);
  for (int f = static_cast<int>(std::floor(from)) + 1; f < to; ++f) {
    if (f > from) p.at.push_back(f);
  }
  if (to > from) p.at.push_back(to);
  const Motion poses = sample_at_frames(source, p.at, source.frame_rate);
  const int J = source.joint_count();
  std::vector<Vec3> pos(static_cast<size_t>(source.skeleton.point_count())), prev(pos.size());
  std::vector<Quat> wrot(static_cast<size_t>(J));
  p.length.reserve(p.at.size());
  for (int i = 0; i < poses.frame_count; ++i) {
    std::span<const Vec3> scales;
    if (!poses.scales.empty()) scales = {poses.scales.data() + static_cast<size_t>(i) * J, static_cast<size_t>(J)};
    forward_kinematics(poses.skeleton, poses.frame_rotations(i), poses.frame_translations(i), scales, pos, wrot);
    double step = 0;
    if (i > 0) {
      for (int j = 0; j < J; ++j) step += (pos[j] - prev[j]).norm();
    }
    p.length.push_back(i > 0 ? p.length.back() + step : 0.0);
    std::swap(pos, prev);
  }
  return p;
}

void check_keys(std::span<const int> keys, int frames) {
  if (keys.size() < 2) {
    throw Error(ErrorCode::invalid_settings, "chart",
                fmt::format("a chart spaces the drawings between two key poses; {} key pose{} give{} no gap: keep at least 2",
                            keys.size(), keys.size() == 1 ? "" : "s", keys.size() == 1 ? "s" : ""));
  }
  for (size_t a = 0; a < keys.size(); ++a) {
    if (keys[a] < 0 || keys[a] >= frames || (a > 0 && keys[a] <= keys[a - 1])) {
      throw Error(ErrorCode::invalid_settings, "keys",
                  fmt::format("key {} (frame {}) must be within 0 .. {} and after the key before it", a, keys[a], frames - 1));
    }
  }
}

const Chart& chart_of(const SpacingSettings& st, int from) {
  for (const GapChart& g : st.gaps) {
    if (g.start == from) return g.chart;
  }
  return st.chart;
}

// The inbetweens of one gap, appended to `out`.
void space_gap(const Motion& source, double rate, const SpacingSettings& st, int gap, GapSpacing& g,
               std::vector<Drawing>& out) {
  const double sa = source_position(g.start, rate, source), sb = source_position(g.end, rate, source);
  const PosePath path = pose_path(source, sa, sb);
  g.path = path.total();
  std::vector<int> frames;
  std::vector<double> times;
  for (int f = g.start + st.on; f < g.end; f += st.on) {
    frames.push_back(f);
    times.push_back(static_cast<double>(f - g.start) / (g.end - g.start));
  }
  g.inbetweens = static_cast<int>(frames.size());
  g.held = frames.empty();
  const std::vector<double> fractions = chart_fractions(g.chart, times);
  for (size_t i = 0; i < frames.size(); ++i) {
    Drawing d;
    d.frame = frames[i];
    d.kind = DrawingKind::inbetween;
    d.gap = gap;
    if (g.chart.kind == ChartKind::source) {
      d.source_frame = source_position(frames[i], rate, source);
      d.chart = std::clamp(path.share_at(d.source_frame), 0.0, 1.0);
    } else {
      d.chart = fractions[i];
      d.source_frame = path.position_of(d.chart);
    }
    d.source_time = d.source_frame / source.frame_rate;
    out.push_back(d);
  }
}

}  // namespace

Spacing space_drawings(const Motion& source, std::span<const int> keys, double rate, const SpacingSettings& st) {
  st.validate();
  source.validate();
  if (!(rate > 0 && std::isfinite(rate))) {
    throw Error(ErrorCode::invalid_settings, "rate", fmt::format("output rate {} must be > 0 frames per second", rate));
  }
  Spacing out;
  out.frames = resampled_frame_count(source.frame_count, source.frame_rate, rate);
  out.frame_rate = rate;
  out.on = st.on;
  check_keys(keys, out.frames);
  for (const GapChart& g : st.gaps) {
    if (!std::binary_search(keys.begin(), keys.end() - 1, g.start)) {
      throw Error(ErrorCode::mismatch, "spacing.gaps",
                  fmt::format("a chart is given for the gap from frame {}, which opens no gap (no key there, or the last key)",
                              g.start));
    }
  }
  for (size_t a = 0; a < keys.size(); ++a) {
    Drawing key;
    key.frame = keys[a];
    key.source_frame = source_position(keys[a], rate, source);
    key.source_time = key.source_frame / source.frame_rate;
    key.gap = static_cast<int>(a);
    out.drawings.push_back(key);
    if (a + 1 == keys.size()) break;
    GapSpacing g;
    g.start = keys[a];
    g.end = keys[a + 1];
    g.chart = chart_of(st, g.start);
    space_gap(source, rate, st, static_cast<int>(a), g, out.drawings);
    out.gaps.push_back(std::move(g));
  }
  return out;
}

Motion spaced_motion(const Motion& source, const Spacing& spacing) {
  if (spacing.drawings.empty() || spacing.frames < 1 ||
      spacing.frames != resampled_frame_count(source.frame_count, source.frame_rate, spacing.frame_rate)) {
    throw Error(ErrorCode::mismatch, "spacing",
                fmt::format("spaced for {} output frames at {:g} fps; the motion gives {}", spacing.frames, spacing.frame_rate,
                            spacing.frame_rate > 0 ? resampled_frame_count(source.frame_count, source.frame_rate, spacing.frame_rate) : 0));
  }
  std::vector<double> positions(static_cast<size_t>(spacing.frames));
  size_t d = 0;
  for (int f = 0; f < spacing.frames; ++f) {
    while (d + 1 < spacing.drawings.size() && spacing.drawings[d + 1].frame <= f) ++d;
    positions[static_cast<size_t>(f)] = spacing.drawings[d].source_frame;
  }
  return sample_at_frames(source, positions, spacing.frame_rate);
}

}  // namespace koma::keys
