#include "koma/video/flow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

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

// One frame on its way through the pipeline. A small pool of them is reused, so the image, label
// and flow buffers are allocated once (fresh megabyte-sized buffers per frame cost page faults).
struct FrameToken {
  int index = 0;
  Image image;
  cv::Mat grey, prev_grey;  // this frame's grey image and its predecessor's
  Segmentation seg;
  cv::Mat flow;  // from the predecessor to this frame
};

// What a pipeline thread keeps between frames: the flow engine (DIS keeps buffers between calls;
// it is not shared between threads) and the labelling scratch.
struct ThreadState {
  explicit ThreadState(const FlowSettings& s) : engine(s) {}
  FlowEngine engine;
  std::vector<std::int32_t> scratch;
};

// The tracks while the frames go by: the regions of frame f are appended to their tracks when the
// flow from f to f+1 is known. A track is contiguous (matching looks at the previous frame only),
// so a track that is not continued has ended; one too short to keep is dropped at once, so the
// memory held is the kept tracks' spans.
class TrackBuilder {
 public:
  TrackBuilder(VideoAnalysis& out, int min_frames) : out_(out), min_frames_(min_frames) {}

  void record(int frame, const Segmentation& sg, const std::vector<int>& ids, const cv::Mat* fl) {
    const double H = sg.height, P = static_cast<double>(sg.width) * sg.height;
    sx_.assign(sg.regions.size(), 0.0);
    sy_.assign(sg.regions.size(), 0.0);
    if (fl) {
      for (int y = 0; y < sg.height; ++y) {
        const float* row = fl->ptr<float>(y);
        const std::int32_t* lab = sg.labels.data() + static_cast<size_t>(y) * sg.width;
        for (int x = 0; x < sg.width; ++x) {
          if (lab[x] >= 0) {
            sx_[lab[x]] += row[2 * x];
            sy_[lab[x]] += row[2 * x + 1];
          }
        }
      }
    }
    double energy = 0;
    for (size_t r = 0; r < sg.regions.size(); ++r) {
      TrackAcc& a = tracks_[ids[r]];
      RegionTrack& t = a.t;
      if (t.frames_present == 0) {
        t.id = ids[r];
        t.first = frame;
      }
      KOMA_ASSERT(t.last() == frame - 1);  // contiguous
      const Region& reg = sg.regions[r];
      const double area = reg.area / P, vx = sx_[r] / reg.area / H, vy = sy_[r] / reg.area / H;
      t.area.push_back(area);
      t.cx.push_back(reg.cx / H);
      t.cy.push_back(reg.cy / H);
      t.vx.push_back(vx);
      t.vy.push_back(vy);
      a.r += reg.colour[0];
      a.g += reg.colour[1];
      a.b += reg.colour[2];
      ++t.frames_present;
      energy += area * (vx * vx + vy * vy);
    }
    out_.motion_energy.push_back(energy);
    out_.region_counts.push_back(static_cast<int>(sg.regions.size()));
    // Tracks seen on the frame before and not on this one have ended.
    for (int id : live_) {
      auto it = tracks_.find(id);
      if (it != tracks_.end() && it->second.t.last() < frame && it->second.t.frames_present < min_frames_) tracks_.erase(it);
    }
    live_ = ids;
  }

  // The kept tracks, in id order, with their means.
  void finish(int frames) {
    for (auto& [id, a] : tracks_) {
      RegionTrack& t = a.t;
      if (t.frames_present < min_frames_) continue;
      for (auto* v : {&t.area, &t.cx, &t.cy, &t.vx, &t.vy}) v->shrink_to_fit();
      double sum = 0;
      for (double v : t.area) sum += v;
      t.mean_area = sum / frames;
      const double n = t.frames_present;
      t.colour = {static_cast<std::uint8_t>(std::lround(a.r / n)), static_cast<std::uint8_t>(std::lround(a.g / n)),
                  static_cast<std::uint8_t>(std::lround(a.b / n))};
      out_.tracks.push_back(std::move(t));
    }
    tracks_.clear();
  }

 private:
  VideoAnalysis& out_;
  int min_frames_;
  std::map<int, TrackAcc> tracks_;  // by id
  std::vector<int> live_;           // ids seen on the last recorded frame
  std::vector<double> sx_, sy_;
};

}  // namespace

VideoAnalysis analyse_video(const FrameSource& source, double frame_rate, const AnalysisSettings& settings,
                            int expected_frames, const std::function<void(double)>& progress) {
  settings.validate();
  if (!(frame_rate > 0) || !std::isfinite(frame_rate)) throw Error(ErrorCode::invalid_settings, "frame_rate", "must be > 0");
  VideoAnalysis out;
  out.frame_rate = frame_rate;
  TrackBuilder tracks(out, settings.min_track_frames);
  // Two frames in flight per core: one being decoded or matched while the other is segmented.
  const int in_flight = std::max(2, 2 * tbb::this_task_arena::max_concurrency());
  std::vector<std::unique_ptr<FrameToken>> pool_storage;
  std::vector<FrameToken*> pool;
  for (int k = 0; k < in_flight; ++k) {
    pool_storage.push_back(std::make_unique<FrameToken>());
    pool.push_back(pool_storage.back().get());
  }
  std::mutex pool_mutex;
  tbb::enumerable_thread_specific<ThreadState> threads([&] { return ThreadState(settings.flow); });
  cv::Mat last_grey;  // stage 1's copy of the previous frame's grey image
  int f = 0;          // frames read (stage 1)
  // Stage 3's state: the previous frame's segmentation and track ids.
  Segmentation prev_seg;
  std::vector<int> prev_ids;
  int next_id = 0, matched = 0;

  auto read = [&](tbb::flow_control& fc) -> FrameToken* {
    FrameToken* tok = nullptr;
    {
      const std::lock_guard<std::mutex> lock(pool_mutex);
      KOMA_ASSERT(!pool.empty());  // never more tokens in flight than the pool holds
      tok = pool.back();
      pool.pop_back();
    }
    if (!source(tok->image)) {
      const std::lock_guard<std::mutex> lock(pool_mutex);
      pool.push_back(tok);
      fc.stop();
      return nullptr;
    }
    if (f == 0) {
      out.width = tok->image.width;
      out.height = tok->image.height;
      if (out.width <= 0 || out.height <= 0) throw Error(ErrorCode::bad_data, "video", "frame 0 is empty");
    } else if (tok->image.width != out.width || tok->image.height != out.height) {
      throw Error(ErrorCode::mismatch, "video",
                  fmt::format("frame {} is {}x{}, frame 0 is {}x{}", f, tok->image.width, tok->image.height, out.width, out.height));
    }
    tok->index = f++;
    grey(tok->image, tok->grey);
    if (tok->index > 0) last_grey.copyTo(tok->prev_grey);
    tok->grey.copyTo(last_grey);
    return tok;
  };
  auto measure = [&](FrameToken* tok) -> FrameToken* {
    ThreadState& ts = threads.local();
    segment_regions(tok->image, settings.regions, tok->seg, ts.scratch);
    if (tok->index > 0) {
      tok->flow.release();  // DIS reads a pre-sized output as a hint; start every pair from zero flow
      ts.engine.run(tok->prev_grey, tok->grey, tok->flow);
    }
    return tok;
  };
  auto track = [&](FrameToken* tok) {
    std::vector<int> ids = match_regions(prev_seg, prev_ids, tok->seg, settings.regions, next_id);
    if (tok->index > 0) tracks.record(tok->index - 1, prev_seg, prev_ids, &tok->flow);
    std::swap(prev_seg, tok->seg);  // the token takes the old buffers back for its next frame
    prev_ids = std::move(ids);
    ++matched;
    {
      const std::lock_guard<std::mutex> lock(pool_mutex);
      pool.push_back(tok);
    }
    if (progress) progress(expected_frames > 0 ? std::min(1.0, static_cast<double>(matched) / expected_frames) : 0.0);
  };
  tbb::parallel_pipeline(static_cast<size_t>(in_flight),
                         tbb::make_filter<void, FrameToken*>(tbb::filter_mode::serial_in_order, read) &
                             tbb::make_filter<FrameToken*, FrameToken*>(tbb::filter_mode::parallel, measure) &
                             tbb::make_filter<FrameToken*, void>(tbb::filter_mode::serial_in_order, track));
  if (f == 0) throw Error(ErrorCode::bad_file, "video", "the video holds no frames");
  tracks.record(f - 1, prev_seg, prev_ids, nullptr);
  out.frames = f;
  tracks.finish(f);
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
