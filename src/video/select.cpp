#include "koma/video/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "koma/core/error.hpp"

namespace koma::video {

void VideoKeySettings::validate() const {
  if (!(output_rate >= 0) || !std::isfinite(output_rate)) throw Error(ErrorCode::invalid_settings, "output_rate", "output rate must be > 0 (or 0 = source)");
  const int given = (keys != 0) + (on != 0) + (max_error >= 0);
  if (given > 1) throw Error(ErrorCode::invalid_settings, "keys", "give only one of `keys`, `on` and `max_error`");
  if (keys < 0 || keys == 1) throw Error(ErrorCode::invalid_settings, "keys", fmt::format("n = {} keys; at least 2 (first and last frame) are kept", keys));
  if (on < 0) throw Error(ErrorCode::invalid_settings, "on", "must be >= 1");
  if (max_error >= 0 && !std::isfinite(max_error)) throw Error(ErrorCode::invalid_settings, "max_error", "must be finite");
  if (interpolation == keys::Interpolation::slerp) {
    throw Error(ErrorCode::invalid_settings, "interpolation", "slerp needs a skeleton; video uses linear (flow) or cubic");
  }
  if (!(area_weight >= 0) || !std::isfinite(area_weight)) throw Error(ErrorCode::invalid_settings, "area_weight", "must be >= 0");
  anneal.validate();
  cumsum.validate();
}

int output_frame_count(int frames, double src, double out) {
  if (out <= 0 || out == src) return frames;
  return std::max(1, static_cast<int>(std::lround(frames * out / src)));
}

int source_frame_at(int o, int frames, double src, double out) {
  if (out <= 0 || out == src) return std::min(o, frames - 1);
  return std::clamp(static_cast<int>(std::lround(o * src / out)), 0, frames - 1);
}

keys::FeatureMatrix region_features(const VideoAnalysis& a, double area_weight) {
  if (a.tracks.empty()) throw Error(ErrorCode::bad_data, "video", "no region tracks to select keys on");
  keys::FeatureMatrix m;
  m.frames = a.frames;
  m.coords_per_point = 3;
  const int R = static_cast<int>(a.tracks.size());
  m.dims = 3 * R;
  m.values.assign(static_cast<size_t>(m.frames) * m.dims, 0.0);
  double wsum = 0;
  for (const RegionTrack& t : a.tracks) wsum += t.mean_area;
  for (int r = 0; r < R; ++r) {
    const RegionTrack& t = a.tracks[r];
    // Weight by area, normalised to mean 1 (as keys normalises joint weights).
    const double w = wsum > 0 ? t.mean_area * R / wsum : 1.0;
    m.point_ids.push_back(t.id);
    m.weights.push_back(w);
    const double sw = std::sqrt(w);
    double px = t.cx_at(0), py = t.cy_at(0);
    for (int f = 0; f < a.frames; ++f) {
      double* row = m.row(f) + 3 * r;
      row[0] = sw * px;
      row[1] = sw * py;
      row[2] = sw * area_weight * t.area_at(f);
      px += t.vx_at(f);  // flow-integrated: p(f+1) = p(f) + v(f)
      py += t.vy_at(f);
    }
  }
  m.validate();
  return m;
}

keys::FeatureMatrix resample_features(const keys::FeatureMatrix& in, double src, double out, int frames_out) {
  if (frames_out == in.frames && (out <= 0 || out == src)) return in;
  keys::FeatureMatrix m = in;
  m.frames = frames_out;
  m.values.assign(static_cast<size_t>(frames_out) * m.dims, 0.0);
  for (int o = 0; o < frames_out; ++o) {
    const double u = std::clamp(o * src / out, 0.0, static_cast<double>(in.frames - 1));
    const int i0 = static_cast<int>(std::floor(u));
    const int i1 = std::min(i0 + 1, in.frames - 1);
    const double t = u - i0;
    for (int d = 0; d < m.dims; ++d) m.row(o)[d] = (1 - t) * in.row(i0)[d] + t * in.row(i1)[d];
  }
  return m;
}

namespace {

// One track's features (x, y, area; weighted by sqrt_weight, area also by area_weight) at source
// frames visited in increasing order, or one frame back (resampling reads frames i and i + 1).
// Positions are flow integrated, accumulated exactly as region_features() does (before the track
// is seen its flow is 0, and adding 0 changes nothing, so the walk starts at its first frame).
class TrackWalker {
 public:
  TrackWalker(const RegionTrack& t, double sqrt_weight, double area_weight)
      : t_(t), sw_(sqrt_weight), aw_(area_weight), at_(t.first), px_(t.cx_at(t.first)), py_(t.cy_at(t.first)),
        prev_x_(px_), prev_y_(py_) {}
  void at(int f, double out[3]) {
    const int to = std::min(f, t_.last() + 1);
    for (; at_ < to; ++at_) {
      prev_x_ = px_;
      prev_y_ = py_;
      px_ += t_.vx_at(at_);
      py_ += t_.vy_at(at_);
    }
    const bool back = to < at_ && to >= t_.first;  // one frame back: the position before the last step
    KOMA_ASSERT(!back || to == at_ - 1);
    out[0] = sw_ * (back ? prev_x_ : px_);
    out[1] = sw_ * (back ? prev_y_ : py_);
    out[2] = sw_ * aw_ * t_.area_at(f);
  }

 private:
  const RegionTrack& t_;
  double sw_, aw_;
  int at_;
  double px_, py_, prev_x_, prev_y_;
};

// Source-to-output resampling exactly as resample_features() does it.
struct RateMap {
  double src = 0, out = 0;
  int source_frames = 0;
  bool identity() const { return out <= 0 || out == src; }
  // Output row o of a track, from its walker (rows visited in increasing order).
  void row(TrackWalker& w, int o, double v[3]) const {
    if (identity()) {
      w.at(o, v);
      return;
    }
    const double u = std::clamp(o * src / out, 0.0, static_cast<double>(source_frames - 1));
    const int i0 = static_cast<int>(std::floor(u));
    const int i1 = std::min(i0 + 1, source_frames - 1);
    const double t = u - i0;
    double a[3], b[3];
    w.at(i0, a);
    w.at(i1, b);
    for (int d = 0; d < 3; ++d) v[d] = (1 - t) * a[d] + t * b[d];
  }
  // Output rows <= lo show the track's first value, rows >= hi its last (conservative).
  std::pair<int, int> changing_rows(const RegionTrack& t) const {
    const int src_lo = t.first - 1, src_hi = t.last() + 1;
    if (identity()) return {src_lo, src_hi};
    return {static_cast<int>(std::floor(src_lo * out / src)) - 1, static_cast<int>(std::ceil(src_hi * out / src)) + 1};
  }
};

// Columns for the tracks: a track may follow another in a column when its changes start at least
// `gap` rows after the other's end (interval colouring by start: the fewest columns).
std::vector<std::vector<int>> pack_tracks(const std::vector<std::pair<int, int>>& rows, int gap) {
  std::vector<int> order(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) order[r] = static_cast<int>(r);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return rows[x].first < rows[y].first; });
  std::vector<std::vector<int>> columns;
  using Free = std::pair<int, int>;  // (first row a new track may start changing, column)
  std::priority_queue<Free, std::vector<Free>, std::greater<>> free;
  for (int r : order) {
    int c;
    if (!free.empty() && free.top().first <= rows[r].first) {
      c = free.top().second;
      free.pop();
    } else {
      c = static_cast<int>(columns.size());
      columns.emplace_back();
    }
    columns[c].push_back(r);
    free.emplace(rows[r].second + gap, c);
  }
  return columns;
}

}  // namespace

PackedFeatures packed_region_features(const VideoAnalysis& a, double area_weight, double output_rate, int N, int reach) {
  if (a.tracks.empty()) throw Error(ErrorCode::bad_data, "video", "no region tracks to select keys on");
  const int R = static_cast<int>(a.tracks.size());
  const RateMap map{a.frame_rate, output_rate, a.frames};
  std::vector<std::pair<int, int>> rows(a.tracks.size());
  for (int r = 0; r < R; ++r) rows[r] = map.changing_rows(a.tracks[r]);
  // A segment of at most `reach` frames (cubic tangents: one more frame each side) meets changes
  // of at most one track of a column; without a bound, no two tracks share.
  const bool bounded = reach > 0 && reach < N - 1;
  const int gap = reach + 4;
  std::vector<std::vector<int>> columns;
  if (bounded) {
    columns = pack_tracks(rows, gap);
  } else {
    for (int r = 0; r < R; ++r) columns.push_back({r});  // one column per track, in track order
  }
  PackedFeatures out;
  out.tracks = R;
  out.columns = static_cast<int>(columns.size());
  keys::FeatureMatrix& m = out.features;
  m.frames = N;
  m.coords_per_point = 3;
  m.dims = 3 * out.columns;
  m.values.resize(static_cast<size_t>(N) * m.dims);
  // Costs summed over columns, divided by the column count, must be per track: scale by sqrt(C/R).
  const double g = out.columns == R ? 1.0 : std::sqrt(static_cast<double>(out.columns) / R);
  double wsum = 0;
  for (const RegionTrack& t : a.tracks) wsum += t.mean_area;
  auto sqrt_weight = [&](int r) { return g * std::sqrt(wsum > 0 ? a.tracks[r].mean_area * R / wsum : 1.0); };
  for (int c = 0; c < out.columns; ++c) {
    m.point_ids.push_back(c);
    m.weights.push_back(1.0);
    const std::vector<int>& col = columns[c];
    double offset[3] = {0, 0, 0};
    for (size_t k = 0; k < col.size(); ++k) {
      TrackWalker w(a.tracks[col[k]], sqrt_weight(col[k]), area_weight);
      const int begin = k == 0 ? 0 : rows[col[k]].first;  // the previous track is at rest from here
      const int end = k + 1 < col.size() ? rows[col[k + 1]].first : N;
      for (int o = begin; o < end; ++o) {
        double v[3];
        map.row(w, o, v);
        if (o == begin && k > 0) {
          // Continue from where the previous track stopped (its last value, already in the row above).
          for (int d = 0; d < 3; ++d) offset[d] = m.row(o - 1)[3 * c + d] - v[d];
        }
        for (int d = 0; d < 3; ++d) m.row(o)[3 * c + d] = v[d] + offset[d];
      }
    }
  }
  m.validate();
  return out;
}

VideoKeySelection select_video_keys(const VideoAnalysis& a, const VideoKeySettings& st,
                                    const std::function<void(double)>& progress) {
  st.validate();
  VideoKeySelection s;
  s.source_frames = a.frames;
  s.source_rate = a.frame_rate;
  s.output_rate = st.output_rate > 0 ? st.output_rate : a.frame_rate;
  s.output_frames = output_frame_count(a.frames, a.frame_rate, s.output_rate);
  const int N = s.output_frames;
  if (N < 2) {
    throw Error(ErrorCode::bad_data, "video",
                fmt::format("{} source frame(s) give {} output frame(s) at {:g} fps; key selection needs at least 2", a.frames, N, s.output_rate));
  }
  st.constraints.validate(N, 0);
  keys::SelectionTarget target;
  int on = st.on;
  if (st.keys > 0) target.keys = st.keys;
  else if (st.max_error >= 0) target.max_error = st.max_error;
  else if (on == 0) on = 2;
  auto on_count = [&](const keys::HoldConstraints& c) {
    int n = 2;
    for (int f = on; f < N - 1; f += on) ++n;
    const auto [nmin, nmax] = c.key_range(N);
    return std::clamp(n, nmin, nmax);
  };
  if (on > 0 && target.keys == 0) target.keys = on_count(st.constraints);
  // The longest hold: the user's, or 2 s of output (as for skeletons), which bounds the cost table
  // and lets tracks share feature columns.
  keys::HoldConstraints c = st.constraints;
  c.max_hold = keys::default_max_hold(c, st.max_hold_seconds, s.output_rate, N, target.keys);
  if (on > 0 && st.keys == 0 && st.max_error < 0) target.keys = on_count(c);
  target.validate(N);
  s.max_hold = c.max_span(N);

  PackedFeatures packed = packed_region_features(a, st.area_weight, s.output_rate, N, c.max_span(N));
  s.feature_columns = packed.columns;
  const double per_track = static_cast<double>(packed.columns) / packed.tracks;  // costs' scale (see packed_region_features)
  auto sub = [&](double lo, double hi) {
    return [&progress, lo, hi](double f) {
      if (progress) progress(lo + (hi - lo) * f);
    };
  };
  const keys::SegmentCosts costs = keys::make_segment_costs(std::move(packed.features), st.interpolation, st.metric, c.min_hold,
                                                            c.max_span(N), {}, sub(0.0, 0.3));
  keys::Selection sel;
  switch (st.selector) {
    case keys::Selector::exact: sel = keys::select_exact(costs, c, target, sub(0.3, 1.0)); break;
    case keys::Selector::uniform: sel = keys::select_uniform(costs, c, target, st.on, 0); break;
    case keys::Selector::cumsum: sel = keys::select_cumsum(costs, c, target, st.cumsum); break;
    case keys::Selector::anneal:
    case keys::Selector::cumsum_anneal: {
      keys::AnnealSettings an = st.anneal;
      if (st.selector == keys::Selector::cumsum_anneal) an.start_from_cumsum = true;
      sel = keys::select_anneal(costs, c, target, an, sub(0.3, 1.0));
      break;
    }
  }
  s.keys = sel.keys;
  s.error = sel.error;
  s.total = sel.total / per_track;
  s.curve = sel.curve;
  s.iterations = sel.iterations;
  const double norm = costs.normaliser();
  for (size_t k = 0; k + 1 < s.keys.size(); ++k) s.segment_errors.push_back(costs.cost(s.keys[k], s.keys[k + 1]) / norm);
  for (int k : s.keys) s.key_sources.push_back(source_frame_at(k, a.frames, a.frame_rate, s.output_rate));
  s.shown.resize(static_cast<size_t>(N));
  s.drawings.resize(static_cast<size_t>(N));
  size_t d = 0;
  for (int o = 0; o < N; ++o) {
    while (d + 1 < s.keys.size() && s.keys[d + 1] <= o) ++d;
    s.shown[o] = s.key_sources[d];
    s.drawings[o] = static_cast<int>(d) + 1;
  }
  return s;
}

std::string video_report_json(const VideoAnalysis& a, const VideoKeySelection& s, const VideoKeySettings& st,
                              const AnalysisSettings& as, std::string_view input) {
  nlohmann::json j;
  j["input"] = std::string(input);
  j["source"] = {{"frames", a.frames}, {"fps", a.frame_rate}, {"analysed_width", a.width}, {"analysed_height", a.height}};
  j["output"] = {{"frames", s.output_frames}, {"fps", s.output_rate}};
  j["settings"] = {{"selector", keys::to_string(st.selector)},
                   {"metric", keys::to_string(st.metric)},
                   {"interpolation", keys::to_string(st.interpolation)},
                   {"keys", st.keys},
                   {"on", st.on},
                   {"max_error", st.max_error},
                   {"min_hold", st.constraints.min_hold},
                   {"max_hold", st.constraints.max_hold},
                   {"locked", st.constraints.locked},
                   {"area_weight", st.area_weight},
                   {"flow", to_string(as.flow.method)},
                   {"regions", as.regions.colours.empty() ? "auto" : "colours"},
                   {"colour_levels", as.regions.colour_levels},
                   {"min_area", as.regions.min_area}};
  nlohmann::json tracks = nlohmann::json::array();
  for (const RegionTrack& t : a.tracks) {
    tracks.push_back({{"id", t.id},
                      {"colour", fmt::format("#{:02x}{:02x}{:02x}", t.colour[0], t.colour[1], t.colour[2])},
                      {"mean_area", t.mean_area},
                      {"frames_present", t.frames_present}});
  }
  j["tracks"] = tracks;
  j["motion_energy"] = a.motion_energy;
  j["max_hold"] = s.max_hold;
  j["feature_columns"] = s.feature_columns;
  j["key_count"] = s.keys.size();
  j["keys"] = s.keys;
  j["key_source_frames"] = s.key_sources;
  j["segment_errors"] = s.segment_errors;
  j["error"] = s.error;
  j["error_unit"] = "frame_heights^2";
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& c : s.curve) curve.push_back({{"keys", c.keys}, {"error", c.error}});
  j["curve"] = curve;
  return j.dump(2) + "\n";
}

std::string video_exposure_sheet_csv(const VideoKeySelection& s) {
  std::string out = "frame,sheet_frame,time_s,drawing,source_frame\n";
  for (int o = 0; o < s.output_frames; ++o) {
    out += fmt::format("{},{},{:.6f},{},{}\n", o, o + 1, o / s.output_rate, s.drawings[o], s.shown[o]);
  }
  return out;
}

namespace {

// The grid of a contact sheet: `rows` bands of `band` pixel rows (top padding, cell, label), then
// `pad` white rows at the bottom.
struct SheetGrid {
  int keys = 0, cols = 0, rows = 0, cw = 0, ch = 0, label = 22, pad = 6, width = 0, band = 0;
  int height() const { return rows * band + pad; }
};

SheetGrid sheet_grid(int keys, int frame_width, int frame_height, int columns, int cell_width) {
  if (columns < 1 || cell_width < 16) throw Error(ErrorCode::invalid_settings, "contact sheet", "columns >= 1 and cell width >= 16");
  if (keys < 1) throw Error(ErrorCode::bad_data, "contact sheet", "no keys");
  if (frame_width < 1 || frame_height < 1) throw Error(ErrorCode::bad_data, "contact sheet", "empty key frames");
  SheetGrid g;
  g.keys = keys;
  g.cw = cell_width;
  g.ch = std::max(2, static_cast<int>(std::lround(static_cast<double>(g.cw) * frame_height / frame_width)));
  g.cols = std::min(columns, keys);
  g.rows = (keys + g.cols - 1) / g.cols;
  g.width = g.cols * (g.cw + g.pad) + g.pad;
  g.band = g.ch + g.label + g.pad;
  return g;
}

// Draws key k's thumbnail and label into its band (a white g.width x g.band picture).
void draw_cell(cv::Mat& band, const SheetGrid& g, int k, const Image& frame, const VideoKeySelection& s) {
  const int c = k % g.cols;
  const int x = g.pad + c * (g.cw + g.pad), y = g.pad;
  const cv::Mat src(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.rgb.data()));
  cv::Mat cell = band(cv::Rect(x, y, g.cw, g.ch));
  cv::resize(src, cell, cv::Size(g.cw, g.ch), 0, 0, cv::INTER_AREA);
  const size_t kk = static_cast<size_t>(k);
  const int hold = kk + 1 < s.keys.size() ? s.keys[kk + 1] - s.keys[kk] : 1;
  const std::string text = fmt::format("#{} f{} x{}", k + 1, s.keys[kk], hold);
  cv::putText(band, text, cv::Point(x + 2, y + g.ch + 16), cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(20, 20, 20), 1, cv::LINE_AA);
}

}  // namespace

Image contact_sheet(const std::vector<Image>& imgs, const VideoKeySelection& s, int columns, int cell_width) {
  if (imgs.size() != s.keys.size()) {
    throw Error(ErrorCode::mismatch, "contact sheet", fmt::format("{} images for {} keys", imgs.size(), s.keys.size()));
  }
  if (columns < 1 || cell_width < 16) throw Error(ErrorCode::invalid_settings, "contact sheet", "columns >= 1 and cell width >= 16");
  if (imgs.empty()) throw Error(ErrorCode::bad_data, "contact sheet", "no keys");
  const SheetGrid g = sheet_grid(static_cast<int>(imgs.size()), imgs[0].width, imgs[0].height, columns, cell_width);
  cv::Mat sheet(g.height(), g.width, CV_8UC3, cv::Scalar(255, 255, 255));
  for (int k = 0; k < g.keys; ++k) {
    cv::Mat band = sheet(cv::Rect(0, (k / g.cols) * g.band, g.width, g.band));
    draw_cell(band, g, k, imgs[static_cast<size_t>(k)], s);
  }
  Image out = Image::black(g.width, g.height());
  for (int y = 0; y < g.height(); ++y) std::copy(sheet.ptr<std::uint8_t>(y), sheet.ptr<std::uint8_t>(y) + 3 * g.width, out.at(0, y));
  return out;
}

struct ContactSheetWriter::Impl {
  Impl(const std::filesystem::path& path, const VideoKeySelection& s, const SheetGrid& g)
      : selection(s), grid(g), png(path, g.width, g.height()), band(g.band, g.width, CV_8UC3, cv::Scalar(255, 255, 255)) {}
  const VideoKeySelection& selection;
  SheetGrid grid;
  render::PngStreamWriter png;
  cv::Mat band;  // the current row of cells
  int frame_width = 0, frame_height = 0;
  int next = 0;  // keys drawn

  void flush() {
    png.add_rows({band.ptr<std::uint8_t>(0), static_cast<size_t>(grid.band) * grid.width * 3});
    band.setTo(cv::Scalar(255, 255, 255));
  }
};

ContactSheetWriter::ContactSheetWriter(const std::filesystem::path& path, const VideoKeySelection& s, int frame_width,
                                       int frame_height, int columns, int cell_width) {
  const SheetGrid g = sheet_grid(static_cast<int>(s.keys.size()), frame_width, frame_height, columns, cell_width);
  impl_ = std::make_unique<Impl>(path, s, g);
  impl_->frame_width = frame_width;
  impl_->frame_height = frame_height;
}

ContactSheetWriter::~ContactSheetWriter() = default;

void ContactSheetWriter::add(const Image& frame) {
  Impl& m = *impl_;
  if (m.next >= m.grid.keys) throw Error(ErrorCode::mismatch, "contact sheet", fmt::format("more than the {} key frames", m.grid.keys));
  if (frame.width != m.frame_width || frame.height != m.frame_height) {
    throw Error(ErrorCode::mismatch, "contact sheet",
                fmt::format("key {} is {}x{}, the sheet was laid out for {}x{}", m.next + 1, frame.width, frame.height, m.frame_width, m.frame_height));
  }
  draw_cell(m.band, m.grid, m.next, frame, m.selection);
  ++m.next;
  if (m.next % m.grid.cols == 0 || m.next == m.grid.keys) m.flush();
}

void ContactSheetWriter::finish() {
  Impl& m = *impl_;
  if (m.next != m.grid.keys) throw Error(ErrorCode::mismatch, "contact sheet", fmt::format("{} of {} key frames", m.next, m.grid.keys));
  const std::vector<std::uint8_t> bottom(static_cast<size_t>(m.grid.pad) * m.grid.width * 3, 255);
  m.png.add_rows(bottom);
  m.png.finish();
}

render::Image to_render_image(const Image& im) {
  render::Image out;
  out.width = im.width;
  out.height = im.height;
  const size_t n = static_cast<size_t>(im.width) * im.height;
  out.rgba.resize(4 * n);
  for (size_t p = 0; p < n; ++p) {
    out.rgba[4 * p] = im.rgb[3 * p];
    out.rgba[4 * p + 1] = im.rgb[3 * p + 1];
    out.rgba[4 * p + 2] = im.rgb[3 * p + 2];
    out.rgba[4 * p + 3] = 255;
  }
  return out;
}

void write_held_video(const std::filesystem::path& input, const std::filesystem::path& output, const VideoKeySelection& s,
                      const DecodeSettings& decode, const render::EncodeSettings& encode_in, const KeyFrameSink& on_key,
                      const std::function<void(double)>& progress) {
  render::EncodeSettings encode = encode_in;
  encode.frame_rate = s.output_rate;
  render::video_format_for(output);  // an unsupported extension fails before decoding starts
  VideoReader reader(input, decode);
  render::VideoWriter writer(output, reader.width(), reader.height(), encode);
  Image current;
  render::Image shown;  // RGBA of `current`
  int have = -1;        // source index held in `current`
  size_t next_key = 0;
  // Each run of output frames showing one source frame is converted and encoded for the pipe once.
  for (int o = 0; o < s.output_frames;) {
    const int want = s.shown[o];
    while (have < want) {
      if (!reader.next(current)) {
        throw Error(ErrorCode::mismatch, input.string(),
                    fmt::format("the video has {} frames; the selection was made for {}", have + 1, s.source_frames));
      }
      ++have;
    }
    int run = 1;
    while (o + run < s.output_frames && s.shown[o + run] == want) ++run;
    shown = to_render_image(current);
    writer.add_frames(shown, run);
    for (; next_key < s.keys.size() && s.keys[next_key] < o + run; ++next_key) {
      if (on_key) on_key(current);
    }
    o += run;
    if (progress) progress(static_cast<double>(o) / s.output_frames);
  }
  writer.finish();
}

}  // namespace koma::video
