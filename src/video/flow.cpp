#include "koma/video/flow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include "koma/core/error.hpp"

namespace koma::video {

std::string_view to_string(FlowMethod m) noexcept { return kFlowMethodNames.name(m); }


std::optional<FlowMethod> parse_flow_method(std::string_view text) noexcept { return kFlowMethodNames.parse(text); }


void FlowSettings::validate() const {
  if (dis_preset < 0 || dis_preset > 2) throw Error(ErrorCode::invalid_settings, "dis_preset", "must be 0 (ultrafast), 1 (fast) or 2 (medium)");
}

void AnalysisSettings::validate() const {
  regions.validate();
  flow.validate();
  if (min_track_frames < 1) throw Error(ErrorCode::invalid_settings, "min_track_frames", "must be >= 1");
}

namespace {

void grey(const Image& im, cv::Mat& g) {
  // OpenCV wants a non-const pointer; the data is only read.
  const cv::Mat rgb(im.height, im.width, CV_8UC3, const_cast<std::uint8_t*>(im.rgb.data()));
  cv::cvtColor(rgb, g, cv::COLOR_RGB2GRAY);
}
cv::Mat grey(const Image& im) {
  cv::Mat g;
  grey(im, g);
  return g;
}

// Computes flow with a reusable OpenCV object (DIS keeps buffers between calls).
class FlowEngine {
 public:
  explicit FlowEngine(const FlowSettings& s) : s_(s) {
    if (s.method == FlowMethod::dis) {
      const int preset = s.dis_preset == 0 ? cv::DISOpticalFlow::PRESET_ULTRAFAST
                         : s.dis_preset == 1 ? cv::DISOpticalFlow::PRESET_FAST
                                             : cv::DISOpticalFlow::PRESET_MEDIUM;
      dis_ = cv::DISOpticalFlow::create(preset);
    }
  }
  void run(const cv::Mat& a, const cv::Mat& b, cv::Mat& flow) {
    if (dis_) dis_->calc(a, b, flow);
    else cv::calcOpticalFlowFarneback(a, b, flow, 0.5, 4, 15, 3, 5, 1.2, 0);
  }

 private:
  FlowSettings s_;
  cv::Ptr<cv::DISOpticalFlow> dis_;
};

FlowField to_field(const cv::Mat& flow) {
  FlowField f;
  f.width = flow.cols;
  f.height = flow.rows;
  f.uv.resize(static_cast<size_t>(f.width) * f.height * 2);
  for (int y = 0; y < flow.rows; ++y) {
    const float* row = flow.ptr<float>(y);
    std::copy(row, row + 2 * flow.cols, f.uv.begin() + static_cast<std::ptrdiff_t>(y) * 2 * flow.cols);
  }
  return f;
}

}  // namespace

FlowField compute_flow(const Image& a, const Image& b, const FlowSettings& settings) {
  settings.validate();
  if (a.width != b.width || a.height != b.height) {
    throw Error(ErrorCode::mismatch, "flow", fmt::format("frames of different sizes {}x{} and {}x{}", a.width, a.height, b.width, b.height));
  }
  if (a.width <= 0 || a.height <= 0) throw Error(ErrorCode::bad_data, "flow", "empty frame");
  FlowEngine e(settings);
  cv::Mat flow;
  e.run(grey(a), grey(b), flow);
  return to_field(flow);
}

Image interpolate_frame(const Image& a, const Image& b, const FlowField& f, double t) {
  if (!(t >= 0 && t <= 1)) throw Error(ErrorCode::invalid_settings, "t", fmt::format("{} must be in [0, 1]", t));
  if (a.width != b.width || a.height != b.height || f.width != a.width || f.height != a.height) {
    throw Error(ErrorCode::mismatch, "interpolate_frame", "frames and flow must have the same size");
  }
  const int W = a.width, H = a.height;
  cv::Mat map_a(H, W, CV_32FC2), map_b(H, W, CV_32FC2);
  for (int y = 0; y < H; ++y) {
    auto* pa = map_a.ptr<cv::Vec2f>(y);
    auto* pb = map_b.ptr<cv::Vec2f>(y);
    for (int x = 0; x < W; ++x) {
      const float* uv = f.at(x, y);
      // A pixel at x in the middle frame came from x - tF in A and goes to x + (1 - t)F in B.
      pa[x] = cv::Vec2f(static_cast<float>(x - t * uv[0]), static_cast<float>(y - t * uv[1]));
      pb[x] = cv::Vec2f(static_cast<float>(x + (1 - t) * uv[0]), static_cast<float>(y + (1 - t) * uv[1]));
    }
  }
  const cv::Mat ma(H, W, CV_8UC3, const_cast<std::uint8_t*>(a.rgb.data()));
  const cv::Mat mb(H, W, CV_8UC3, const_cast<std::uint8_t*>(b.rgb.data()));
  cv::Mat wa, wb, blend;
  cv::remap(ma, wa, map_a, cv::noArray(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  cv::remap(mb, wb, map_b, cv::noArray(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  cv::addWeighted(wa, 1 - t, wb, t, 0, blend);
  Image out = Image::black(W, H);
  for (int y = 0; y < H; ++y) std::copy(blend.ptr<std::uint8_t>(y), blend.ptr<std::uint8_t>(y) + 3 * W, out.at(0, y));
  return out;
}

namespace {

struct TrackAcc {
  RegionTrack t;
  double r = 0, g = 0, b = 0;
};

}  // namespace

VideoAnalysis analyse_video(const FrameSource& source, double frame_rate, const AnalysisSettings& settings,
                            int expected_frames, const std::function<void(double)>& progress) {
  settings.validate();
  if (!(frame_rate > 0) || !std::isfinite(frame_rate)) throw Error(ErrorCode::invalid_settings, "frame_rate", "must be > 0");
  VideoAnalysis out;
  out.frame_rate = frame_rate;
  FlowEngine engine(settings.flow);
  std::map<int, TrackAcc> tracks;  // by id
  Image prev_img, cur_img;
  cv::Mat prev_grey, cur_grey, flow;  // reused across frames (no per-frame allocation)
  Segmentation prev_seg, seg;
  std::vector<std::int32_t> scratch;
  std::vector<int> prev_ids;
  int next_id = 0;
  int f = 0;
  // Frame f's region stats are recorded when frame f+1 arrives (its flow needs both).
  auto ensure = [&](int id) -> TrackAcc& {
    auto it = tracks.find(id);
    if (it == tracks.end()) {
      TrackAcc a;
      a.t.id = id;
      it = tracks.emplace(id, a).first;
    }
    return it->second;
  };
  auto record = [&](int frame, const Segmentation& sg, const std::vector<int>& ids, const cv::Mat* fl) {
    const double H = sg.height, P = static_cast<double>(sg.width) * sg.height;
    std::vector<double> sx(sg.regions.size(), 0), sy(sg.regions.size(), 0);
    if (fl) {
      for (int y = 0; y < sg.height; ++y) {
        const float* row = fl->ptr<float>(y);
        const std::int32_t* lab = sg.labels.data() + static_cast<size_t>(y) * sg.width;
        for (int x = 0; x < sg.width; ++x) {
          if (lab[x] >= 0) {
            sx[lab[x]] += row[2 * x];
            sy[lab[x]] += row[2 * x + 1];
          }
        }
      }
    }
    double energy = 0;
    for (size_t r = 0; r < sg.regions.size(); ++r) {
      TrackAcc& a = ensure(ids[r]);
      const Region& reg = sg.regions[r];
      auto grow = [&](std::vector<double>& v) { v.resize(static_cast<size_t>(frame) + 1, 0.0); };
      grow(a.t.area), grow(a.t.cx), grow(a.t.cy), grow(a.t.vx), grow(a.t.vy);
      a.t.present.resize(static_cast<size_t>(frame) + 1, 0);
      a.t.present[frame] = 1;
      a.t.area[frame] = reg.area / P;
      a.t.cx[frame] = reg.cx / H;
      a.t.cy[frame] = reg.cy / H;
      a.t.vx[frame] = sx[r] / reg.area / H;
      a.t.vy[frame] = sy[r] / reg.area / H;
      a.r += reg.colour[0];
      a.g += reg.colour[1];
      a.b += reg.colour[2];
      ++a.t.frames_present;
      energy += a.t.area[frame] * (a.t.vx[frame] * a.t.vx[frame] + a.t.vy[frame] * a.t.vy[frame]);
    }
    out.motion_energy.resize(static_cast<size_t>(frame) + 1, 0.0);
    out.motion_energy[frame] = energy;
    out.region_counts.resize(static_cast<size_t>(frame) + 1, 0);
    out.region_counts[frame] = static_cast<int>(sg.regions.size());
  };

  while (source(cur_img)) {
    if (f == 0) {
      out.width = cur_img.width;
      out.height = cur_img.height;
      if (out.width <= 0 || out.height <= 0) throw Error(ErrorCode::bad_data, "video", "frame 0 is empty");
    } else if (cur_img.width != out.width || cur_img.height != out.height) {
      throw Error(ErrorCode::mismatch, "video", fmt::format("frame {} is {}x{}, frame 0 is {}x{}", f, cur_img.width, cur_img.height, out.width, out.height));
    }
    segment_regions(cur_img, settings.regions, seg, scratch);
    std::vector<int> ids = match_regions(prev_seg, prev_ids, seg, settings.regions, next_id);
    grey(cur_img, cur_grey);
    if (f > 0) {
      flow.release();  // DIS reads a pre-sized output as a hint; start every pair from zero flow
      engine.run(prev_grey, cur_grey, flow);
      record(f - 1, prev_seg, prev_ids, &flow);
    }
    cv::swap(prev_grey, cur_grey);
    std::swap(prev_seg, seg);
    prev_ids = std::move(ids);
    ++f;
    if (progress) progress(expected_frames > 0 ? std::min(1.0, static_cast<double>(f) / expected_frames) : 0.0);
  }
  if (f == 0) throw Error(ErrorCode::bad_file, "video", "the video holds no frames");
  record(f - 1, prev_seg, prev_ids, nullptr);
  out.frames = f;

  for (auto& [id, a] : tracks) {
    RegionTrack& t = a.t;
    if (t.frames_present < settings.min_track_frames) continue;
    for (auto* v : {&t.area, &t.cx, &t.cy, &t.vx, &t.vy}) v->resize(static_cast<size_t>(f), 0.0);
    t.present.resize(static_cast<size_t>(f), 0);
    // Absent frames hold the last seen centroid (the first seen one before it appears).
    int first = 0;
    while (first < f && !t.present[first]) ++first;
    for (int k = 0; k < f; ++k) {
      if (t.present[k]) continue;
      const int src = k < first ? first : k - 1;
      t.cx[k] = t.cx[src];
      t.cy[k] = t.cy[src];
    }
    double sum = 0;
    for (double v : t.area) sum += v;
    t.mean_area = sum / f;
    const double n = t.frames_present;
    t.colour = {static_cast<std::uint8_t>(std::lround(a.r / n)), static_cast<std::uint8_t>(std::lround(a.g / n)),
                static_cast<std::uint8_t>(std::lround(a.b / n))};
    out.tracks.push_back(std::move(t));
  }
  if (out.tracks.empty()) {
    throw Error(ErrorCode::bad_data, "video",
                fmt::format("no regions of near-uniform colour were found in {} frame(s) (a single flat colour, or regions "
                            "smaller than the minimum area {:g} of the frame)",
                            f, settings.regions.min_area));
  }
  return out;
}

VideoAnalysis analyse_video(const std::vector<Image>& frames, double frame_rate, const AnalysisSettings& settings,
                            const std::function<void(double)>& progress) {
  size_t i = 0;
  return analyse_video([&](Image& im) {
    if (i >= frames.size()) return false;
    im = frames[i++];
    return true;
  }, frame_rate, settings, static_cast<int>(frames.size()), progress);
}

}  // namespace koma::video
