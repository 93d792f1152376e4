#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/metric.hpp"
#include "koma/keys/select.hpp"
#include "koma/video/decode.hpp"
#include "koma/video/flow.hpp"
#include "koma/video/regions.hpp"
#include "koma/video/select.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace koma;
using namespace koma::video;

namespace {

// A light-grey frame with a red disc of radius r centred at (cx, cy).
Image disc_frame(int w, int h, double cx, double cy, double r) {
  Image im = Image::black(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = im.at(x, y);
      const bool in = (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r;
      p[0] = in ? 220 : 230;
      p[1] = in ? 40 : 230;
      p[2] = in ? 40 : 230;
    }
  }
  return im;
}

// Fast-slow-fast: 8 steps of 12 px, 8 of 2 px, 7 of 12 px (24 frames).
std::vector<double> fast_slow_fast() {
  std::vector<double> xs = {20};
  for (int f = 1; f < 24; ++f) xs.push_back(xs.back() + (f <= 8 ? 12 : f <= 16 ? 2 : 12));
  return xs;
}

void write_frames(const fs::path& path, const std::vector<Image>& frames, double rate) {
  EncodeSettings e;
  e.frame_rate = rate;
  e.quality = 10;
  VideoWriter w(path, frames[0].width, frames[0].height, e);
  for (const Image& f : frames) w.write(f);
  w.commit();
}

ErrorCode code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no koma::Error thrown";
  return ErrorCode::io;
}

}  // namespace

TEST(Video, DiscVideoSelectsTheSameFramesAsThePointTrack) {
  const fs::path dir = test::temp_dir("video_disc");
  const std::vector<double> xs = fast_slow_fast();
  std::vector<Image> frames;
  for (double x : xs) frames.push_back(disc_frame(320, 180, x, 90, 20));
  write_frames(dir / "disc.mp4", frames, 24);  // koma's own encoder, lossy H.264

  const DecodedVideo v = read_video(dir / "disc.mp4");
  ASSERT_EQ(v.frames.size(), xs.size());
  EXPECT_NEAR(v.frame_rate, 24, 1e-9);
  const VideoAnalysis a = analyse_video(v.frames, v.frame_rate, AnalysisSettings{});
  ASSERT_EQ(a.tracks.size(), 1u);
  // The region's mean flow recovers the disc's speed (frame heights per frame) within 10 %.
  for (int f = 0; f + 1 < a.frames; ++f) {
    const double truth = (xs[f + 1] - xs[f]) / 180.0;
    EXPECT_NEAR(a.tracks[0].vx[f], truth, 0.1 * truth + 0.002) << "frame " << f;
  }

  // The equivalent point track, through the same engine.
  keys::FeatureMatrix track;
  track.frames = static_cast<int>(xs.size());
  track.dims = 2;
  track.coords_per_point = 2;
  track.point_ids = {0};
  track.weights = {1};
  for (double x : xs) track.values.insert(track.values.end(), {x / 180.0, 0.5});
  keys::HoldConstraints none;
  for (int n : {3, 4}) {  // n >= 5 ties at zero cost (piecewise-constant speed)
    keys::SelectionTarget t;
    t.keys = n;
    const auto truth = keys::select_exact(keys::make_segment_costs(track, keys::Interpolation::linear, keys::Metric::velocity, 1, 0), none, t);
    VideoKeySettings st;
    st.output_rate = 0;  // source rate
    st.keys = n;
    const VideoKeySelection s = select_video_keys(a, st);
    EXPECT_EQ(s.keys, truth.keys) << "n = " << n;
  }
  // n = 4 keeps the start, the two speed changes and the end (the patent's Fig. 2 situation).
  VideoKeySettings st;
  st.output_rate = 0;
  st.keys = 4;
  EXPECT_EQ(select_video_keys(a, st).keys, (std::vector<int>{0, 8, 16, 23}));
}

TEST(Video, EverySelectorRunsOnVideoFeatures) {
  std::vector<Image> frames;
  for (double x : fast_slow_fast()) frames.push_back(disc_frame(160, 90, x / 2, 45, 10));
  const VideoAnalysis a = analyse_video(frames, 24, AnalysisSettings{});
  double exact_error = 0;
  for (keys::Selector sel : {keys::Selector::exact, keys::Selector::anneal, keys::Selector::cumsum, keys::Selector::uniform}) {
    VideoKeySettings st;
    st.output_rate = 0;
    st.keys = 6;
    st.selector = sel;
    st.anneal.iterations = 2000;
    const VideoKeySelection s = select_video_keys(a, st);
    ASSERT_EQ(s.keys.size(), 6u);
    if (sel == keys::Selector::exact) exact_error = s.error;
    EXPECT_LE(exact_error, s.error + 1e-15) << keys::to_string(sel);
  }
}

TEST(Video, FlowInterpolationOfADroppedFrame) {
  const Image a = disc_frame(160, 120, 60, 60, 15), mid = disc_frame(160, 120, 70, 60, 15), b = disc_frame(160, 120, 80, 60, 15);
  FlowSettings fs_;
  fs_.dis_preset = 2;
  const FlowField f = compute_flow(a, b, fs_);
  const Image m = interpolate_frame(a, b, f, 0.5);
  // Against the true middle frame, the flow interpolation beats a plain cross-fade.
  double err_flow = 0, err_fade = 0;
  for (size_t i = 0; i < m.rgb.size(); ++i) {
    err_flow += std::abs(m.rgb[i] - mid.rgb[i]);
    err_fade += std::abs(0.5 * (a.rgb[i] + b.rgb[i]) - mid.rgb[i]);
  }
  EXPECT_LT(err_flow, 0.5 * err_fade);
  // Region level: the interpolated disc's centroid is half way.
  RegionSettings rs;
  rs.colours = {Rgb{220, 40, 40}};  // the disc's colour (edges are blended)
  const Segmentation s = segment_regions(m, rs);
  ASSERT_EQ(s.regions.size(), 1u);
  EXPECT_NEAR(s.regions[0].cx, 70, 1.0);
  EXPECT_THROW(interpolate_frame(a, b, f, 1.5), Error);
}

TEST(Video, RegionsTrackedByColourAndOverlap) {
  // Two discs of different colours crossing paths keep their identities.
  std::vector<Image> frames;
  for (int f = 0; f < 10; ++f) {
    Image im = disc_frame(200, 160, 40 + 12 * f, 40, 12);
    const double gx = 160 - 12 * f;
    for (int y = 0; y < 160; ++y) {
      for (int x = 0; x < 200; ++x) {
        if ((x - gx) * (x - gx) + (y - 120) * (y - 120) <= 100) {
          std::uint8_t* p = im.at(x, y);
          p[0] = 30, p[1] = 200, p[2] = 40;
        }
      }
    }
    frames.push_back(im);
  }
  const VideoAnalysis a = analyse_video(frames, 24, AnalysisSettings{});
  ASSERT_EQ(a.tracks.size(), 2u);
  for (const RegionTrack& t : a.tracks) {
    EXPECT_EQ(t.frames_present, 10);
    const double sign = t.colour[0] > 100 ? 1 : -1;  // red moves right, green left
    for (int f = 0; f + 1 < 10; ++f) EXPECT_NEAR(t.vx[f], sign * 12.0 / 160, 0.015) << "frame " << f;
  }
  // User-given colours: only the green disc.
  AnalysisSettings green;
  green.regions.colours = {Rgb{30, 200, 40}};
  const VideoAnalysis g = analyse_video(frames, 24, green);
  ASSERT_EQ(g.tracks.size(), 1u);
  EXPECT_LT(g.tracks[0].vx[3], 0);
}

TEST(Video, HeldVideoHasExactFrameCountAndHolds) {
  const fs::path dir = test::temp_dir("video_held");
  // A 12 fps PNG sequence (lossless), held at 24 fps into a PNG directory.
  std::vector<Image> frames;
  for (double x : fast_slow_fast()) frames.push_back(disc_frame(160, 90, x / 2, 45, 10));
  write_frames(dir / "src", frames, 12);
  DecodeSettings d;
  d.sequence_rate = 12;
  const DecodedVideo v = read_video(dir / "src", d);
  ASSERT_EQ(v.frames.size(), frames.size());
  EXPECT_EQ(v.frames[5].rgb, frames[5].rgb);  // lossless round trip
  const VideoAnalysis a = analyse_video(v.frames, 12, AnalysisSettings{});
  VideoKeySettings st;
  st.output_rate = 24;
  st.keys = 7;
  st.constraints.max_hold = 12;
  const VideoKeySelection s = select_video_keys(a, st);
  EXPECT_EQ(s.output_frames, 48);  // 24 frames at 12 fps = 2 s = 48 frames at 24 fps
  ASSERT_EQ(s.keys.size(), 7u);
  EXPECT_TRUE(keys::satisfies(s.keys, s.output_frames, st.constraints));
  std::vector<Image> key_images;
  write_held_video(dir / "src", dir / "held", s, d, EncodeSettings{}, &key_images);
  const DecodedVideo held = read_video(dir / "held", DecodeSettings{0, 24, 0});
  ASSERT_EQ(static_cast<int>(held.frames.size()), s.output_frames);
  size_t k = 0;
  for (int o = 0; o < s.output_frames; ++o) {
    while (k + 1 < s.keys.size() && s.keys[k + 1] <= o) ++k;
    const int src = std::min(static_cast<int>(std::lround(s.keys[k] * 12.0 / 24.0)), 23);
    EXPECT_EQ(held.frames[o].rgb, frames[src].rgb) << "output frame " << o;
  }
  ASSERT_EQ(key_images.size(), s.keys.size());
  const Image sheet = contact_sheet(key_images, s, 4, 80);
  EXPECT_GT(sheet.width, 4 * 80);
  const std::string csv = video_exposure_sheet_csv(s);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), s.output_frames + 1);
}

TEST(Video, BadInput) {
  const fs::path dir = test::temp_dir("video_bad");
  EXPECT_EQ(code_of([&] { read_video(dir / "missing.mp4"); }), ErrorCode::io);
  std::ofstream(dir / "garbage.mp4") << "this is not a video";
  EXPECT_EQ(code_of([&] { read_video(dir / "garbage.mp4"); }), ErrorCode::bad_file);
  std::ofstream(dir / "empty.mp4");
  EXPECT_EQ(code_of([&] { read_video(dir / "empty.mp4"); }), ErrorCode::bad_file);
  fs::create_directory(dir / "nopng");
  EXPECT_EQ(code_of([&] { read_video(dir / "nopng"); }), ErrorCode::bad_file);
  // A single flat colour has no regions.
  std::vector<Image> flat(5, disc_frame(64, 48, -100, -100, 1));
  EXPECT_EQ(code_of([&] { analyse_video(flat, 24, AnalysisSettings{}); }), ErrorCode::bad_data);
  EXPECT_EQ(code_of([&] { analyse_video(std::vector<Image>{}, 24, AnalysisSettings{}); }), ErrorCode::bad_file);
  // Unsupported output: nothing written.
  EXPECT_EQ(code_of([&] { VideoWriter w(dir / "x.avi2", 16, 16); }), ErrorCode::invalid_settings);
  EXPECT_FALSE(fs::exists(dir / "x.avi2"));
  // A writer destroyed before commit leaves nothing behind.
  {
    VideoWriter w(dir / "partial.mp4", 32, 32);
    w.write(Image::black(32, 32));
  }
  EXPECT_FALSE(fs::exists(dir / "partial.mp4"));
  size_t leftovers = 0;
  for (const auto& e : fs::directory_iterator(dir)) leftovers += e.path().filename().string().rfind(".koma", 0) == 0;
  EXPECT_EQ(leftovers, 0u);
  // Too few frames to select from.
  std::vector<Image> two = {disc_frame(64, 48, 20, 20, 8), disc_frame(64, 48, 22, 20, 8)};
  const VideoAnalysis a1 = analyse_video(two, 24, AnalysisSettings{});
  VideoKeySettings st;
  st.output_rate = 10;  // 2 frames at 24 fps = 1 frame at 10 fps
  EXPECT_EQ(code_of([&] { select_video_keys(a1, st); }), ErrorCode::bad_data);
}

TEST(Video, EnormousResolutionIsDownscaledWhileDecoding) {
  const fs::path dir = test::temp_dir("video_huge");
  const Image big = disc_frame(4000, 2000, 1200, 1000, 300);
  write_png(dir / "big.png", big);
  fs::create_directory(dir / "seq");
  fs::copy_file(dir / "big.png", dir / "seq" / "0001.png");
  fs::copy_file(dir / "big.png", dir / "seq" / "0002.png");
  EXPECT_EQ(decoded_size(4000, 2000, 640), std::make_pair(640, 320));
  EXPECT_EQ(decoded_size(320, 200, 640), std::make_pair(320, 200));  // never upscaled
  const DecodedVideo v = read_video(dir / "seq");
  ASSERT_EQ(v.frames.size(), 2u);
  EXPECT_EQ(v.info.width, 4000);
  EXPECT_EQ(v.frames[0].width, 640);
  EXPECT_EQ(v.frames[0].height, 320);
  const Segmentation s = segment_regions(v.frames[0], RegionSettings{});
  ASSERT_EQ(s.regions.size(), 1u);
  EXPECT_NEAR(s.regions[0].cx, 1200 * 0.16, 1.5);
}

// The GIF renders 01_01.bvh: the per-frame region motion agrees with the BVH's joint speeds.
TEST(VideoRegression, GifMotionEnergyFollowsBvhJointSpeeds) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path gif = test::shared_data() / "video" / "01_01_bvh.gif";
  const fs::path bvh = test::shared_data() / "bvh" / "cmu" / "assimp" / "01_01.bvh";
  if (!fs::exists(gif) || !fs::exists(bvh)) GTEST_SKIP() << "01_01_bvh.gif or 01_01.bvh missing";
  VideoReader r(gif);
  AnalysisSettings st;  // a thin stick figure: coarse colour classes, tiny regions
  st.regions.colour_levels = 3;
  st.regions.min_area = 0.00002;
  const VideoAnalysis a = analyse_video([&](Image& im) { return r.next(im); }, r.info().frame_rate, st);
  ASSERT_EQ(a.frames, 270);
  ASSERT_NEAR(a.frame_rate, 12, 1e-9);

  const Motion m = io::read_motion(bvh).motion;
  ASSERT_NEAR(m.frame_rate, 120, 0.01);
  const int stride = static_cast<int>(std::lround(m.frame_rate / a.frame_rate));  // 10 BVH frames per GIF frame
  const WorldPoses w = forward_kinematics(m);
  // Per GIF frame g: mean joint speed from BVH frame stride*g + offset to the next GIF frame.
  auto speeds = [&](int offset) {
    std::vector<double> s;
    for (int g = 0; g + 1 < a.frames; ++g) {
      const int f0 = stride * g + offset, f1 = f0 + stride;
      if (f0 < 0 || f1 >= m.frame_count) break;
      double sum = 0;
      for (int p = 0; p < w.point_count; ++p) sum += (w.position(f1, p) - w.position(f0, p)).norm();
      s.push_back(sum / w.point_count);
    }
    return s;
  };
  // The screen recording jitters by about a frame: compare 3-frame moving averages.
  auto smooth = [](const std::vector<double>& v) {
    std::vector<double> o(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t lo = i ? i - 1 : 0, hi = std::min(v.size() - 1, i + 1);
      o[i] = std::accumulate(v.begin() + lo, v.begin() + hi + 1, 0.0) / static_cast<double>(hi - lo + 1);
    }
    return o;
  };
  auto corr = [](const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = std::min(x.size(), y.size());
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
    mx /= static_cast<double>(n), my /= static_cast<double>(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - my) * (y[i] - my);
    return sxy / std::sqrt(sxx * syy);
  };
  std::vector<double> rms;  // RMS region speed = sqrt(motion energy)
  for (double e : a.motion_energy) rms.push_back(std::sqrt(e));
  rms.pop_back();  // the last frame has no flow
  double best = -1;
  int best_offset = 0;
  for (int offset = -60; offset <= 120; ++offset) {  // the recording starts a little after the BVH
    const std::vector<double> s = speeds(offset);
    const std::vector<double> v(rms.begin(), rms.begin() + static_cast<std::ptrdiff_t>(std::min(rms.size(), s.size())));
    const double c = corr(smooth(v), smooth(s));
    if (c > best) best = c, best_offset = offset;
  }
  std::cout << "[ motion ] correlation " << best << " at BVH offset " << best_offset << " frames ("
            << best_offset / m.frame_rate << " s)\n";
  EXPECT_GE(best, 0.8);
  EXPECT_GT(best_offset, 0);
  EXPECT_LT(best_offset, 60);
}
