#include "koma/video/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
    int first = 0;
    while (first < a.frames && !t.present[first]) ++first;
    double px = t.cx[first], py = t.cy[first];
    for (int f = 0; f < a.frames; ++f) {
      double* row = m.row(f) + 3 * r;
      row[0] = sw * px;
      row[1] = sw * py;
      row[2] = sw * area_weight * t.area[f];
      px += t.vx[f];  // flow-integrated: p(f+1) = p(f) + v(f)
      py += t.vy[f];
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
  if (on > 0 && target.keys == 0) {
    int n = 2;
    for (int f = on; f < N - 1; f += on) ++n;
    const auto [nmin, nmax] = st.constraints.key_range(N);
    target.keys = std::clamp(n, nmin, nmax);
  }
  target.validate(N);

  keys::FeatureMatrix feats = resample_features(region_features(a, st.area_weight), a.frame_rate, s.output_rate, N);
  auto sub = [&](double lo, double hi) {
    return [&progress, lo, hi](double f) {
      if (progress) progress(lo + (hi - lo) * f);
    };
  };
  const keys::SegmentCosts costs = keys::make_segment_costs(std::move(feats), st.interpolation, st.metric, st.constraints.min_hold,
                                                            st.constraints.max_span(N), {}, sub(0.0, 0.3));
  keys::Selection sel;
  switch (st.selector) {
    case keys::Selector::exact: sel = keys::select_exact(costs, st.constraints, target, sub(0.3, 1.0)); break;
    case keys::Selector::uniform: sel = keys::select_uniform(costs, st.constraints, target, st.on, 0); break;
    case keys::Selector::cumsum: sel = keys::select_cumsum(costs, st.constraints, target, st.cumsum); break;
    case keys::Selector::anneal:
    case keys::Selector::cumsum_anneal: {
      keys::AnnealSettings an = st.anneal;
      if (st.selector == keys::Selector::cumsum_anneal) an.start_from_cumsum = true;
      sel = keys::select_anneal(costs, st.constraints, target, an, sub(0.3, 1.0));
      break;
    }
  }
  s.keys = sel.keys;
  s.error = sel.error;
  s.total = sel.total;
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

Image contact_sheet(const std::vector<Image>& imgs, const VideoKeySelection& s, int columns, int cell_width) {
  if (imgs.size() != s.keys.size()) {
    throw Error(ErrorCode::mismatch, "contact sheet", fmt::format("{} images for {} keys", imgs.size(), s.keys.size()));
  }
  if (columns < 1 || cell_width < 16) throw Error(ErrorCode::invalid_settings, "contact sheet", "columns >= 1 and cell width >= 16");
  if (imgs.empty()) throw Error(ErrorCode::bad_data, "contact sheet", "no keys");
  const int cw = cell_width;
  const int ch = std::max(2, static_cast<int>(std::lround(static_cast<double>(cw) * imgs[0].height / imgs[0].width)));
  const int label = 22, pad = 6;
  const int cols = std::min<int>(columns, static_cast<int>(imgs.size()));
  const int rows = (static_cast<int>(imgs.size()) + cols - 1) / cols;
  const int W = cols * (cw + pad) + pad, H = rows * (ch + label + pad) + pad;
  cv::Mat sheet(H, W, CV_8UC3, cv::Scalar(255, 255, 255));
  for (size_t k = 0; k < imgs.size(); ++k) {
    const int c = static_cast<int>(k) % cols, r = static_cast<int>(k) / cols;
    const int x = pad + c * (cw + pad), y = pad + r * (ch + label + pad);
    const cv::Mat src(imgs[k].height, imgs[k].width, CV_8UC3, const_cast<std::uint8_t*>(imgs[k].rgb.data()));
    cv::Mat cell;
    cv::resize(src, cell, cv::Size(cw, ch), 0, 0, cv::INTER_AREA);
    cell.copyTo(sheet(cv::Rect(x, y, cw, ch)));
    const int hold = k + 1 < s.keys.size() ? s.keys[k + 1] - s.keys[k] : 1;
    const std::string text = fmt::format("#{} f{} x{}", k + 1, s.keys[k], hold);
    cv::putText(sheet, text, cv::Point(x + 2, y + ch + 16), cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(20, 20, 20), 1, cv::LINE_AA);
  }
  Image out = Image::black(W, H);
  for (int y = 0; y < H; ++y) std::copy(sheet.ptr<std::uint8_t>(y), sheet.ptr<std::uint8_t>(y) + 3 * W, out.at(0, y));
  return out;
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
                      const DecodeSettings& decode, const render::EncodeSettings& encode_in, std::vector<Image>* key_images,
                      const std::function<void(double)>& progress) {
  render::EncodeSettings encode = encode_in;
  encode.frame_rate = s.output_rate;
  render::video_format_for(output);  // an unsupported extension fails before decoding starts
  VideoReader reader(input, decode);
  render::VideoWriter writer(output, reader.width(), reader.height(), encode);
  if (key_images) key_images->clear();
  Image current;
  render::Image shown;  // RGBA of `current`, converted once per source frame however long it is held
  int have = -1;        // source index held in `current`
  size_t next_key = 0;
  for (int o = 0; o < s.output_frames; ++o) {
    const int want = s.shown[o];
    if (have < want) {
      while (have < want) {
        if (!reader.next(current)) {
          throw Error(ErrorCode::mismatch, input.string(),
                      fmt::format("the video has {} frames; the selection was made for {}", have + 1, s.source_frames));
        }
        ++have;
      }
      shown = to_render_image(current);
    }
    writer.add_frame(shown);
    if (key_images && next_key < s.keys.size() && s.keys[next_key] == o) {
      key_images->push_back(current);
      ++next_key;
    }
    if (progress) progress(static_cast<double>(o + 1) / s.output_frames);
  }
  writer.finish();
}

}  // namespace koma::video
