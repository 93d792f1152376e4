#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <Eigen/Geometry>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/metric.hpp"
#include "koma/keys/select.hpp"
#include "koma/render/encode.hpp"
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

// Through the render module's encoder, like every video koma writes.
void write_frames(const fs::path& path, const std::vector<Image>& frames, double rate) {
  render::EncodeSettings e;
  e.frame_rate = rate;
  e.crf = 10;
  render::VideoWriter w(path, frames[0].width, frames[0].height, e);
  for (const Image& f : frames) w.add_frame(to_render_image(f));
  w.finish();
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
  write_frames(dir / "disc.mp4", frames, 24);  // the render module's encoder, lossy H.264

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

TEST(Video, OneColourSplitByAQuantisationEdgeIsOneRegion) {
  // A flat square whose colour sits on a bin edge at 6 levels (213.3): codec noise leaves it as
  // 212 on the left, 214 on the right -- two classes, one colour. Beside it, a square of another
  // colour touching it stays a region of its own.
  Image im = disc_frame(120, 80, -100, -100, 1);
  for (int y = 20; y < 60; ++y) {
    for (int x = 10; x < 110; ++x) {
      std::uint8_t* p = im.at(x, y);
      p[0] = x < 30 ? 212 : x < 50 ? 214 : 220;
      p[1] = 40;
      p[2] = x < 50 ? 40 : 130;
    }
  }
  RegionSettings rs;
  const Segmentation s = segment_regions(im, rs);
  ASSERT_EQ(s.regions.size(), 2u);
  const Region& red = s.regions[0].colour[2] < 90 ? s.regions[0] : s.regions[1];
  EXPECT_EQ(red.area, 40 * 40);
  EXPECT_NEAR(red.cx, 29.5, 1e-9);
  rs.merge_distance = 0;  // without joining: the edge splits the square
  EXPECT_EQ(segment_regions(im, rs).regions.size(), 3u);
  rs.merge_distance = -1;
  EXPECT_THROW(rs.validate(), Error);
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
  write_held_video(dir / "src", dir / "held", s, d, render::EncodeSettings{}, [&](const Image& f) { key_images.push_back(f); });
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
  // The streaming writer draws the same picture, a row of cells at a time.
  {
    ContactSheetWriter w(dir / "sheet.png", s, key_images[0].width, key_images[0].height, 4, 80);
    for (const Image& im : key_images) w.add(im);
    EXPECT_FALSE(fs::exists(dir / "sheet.png"));  // appears only when finished
    w.finish();
    const render::Image png = render::read_png(dir / "sheet.png");
    ASSERT_EQ(png.width, sheet.width);
    ASSERT_EQ(png.height, sheet.height);
    for (size_t p = 0; p < static_cast<size_t>(png.width) * png.height; ++p)
      for (size_t c = 0; c < 3; ++c) ASSERT_EQ(png.rgba[4 * p + c], sheet.rgb[3 * p + c]) << "pixel " << p;
    ContactSheetWriter short_of_keys(dir / "short.png", s, key_images[0].width, key_images[0].height, 4, 80);
    short_of_keys.add(key_images[0]);
    EXPECT_EQ(code_of([&] { short_of_keys.finish(); }), ErrorCode::mismatch);
    EXPECT_EQ(code_of([&] { short_of_keys.add(Image::black(8, 8)); }), ErrorCode::mismatch);
  }
  EXPECT_FALSE(fs::exists(dir / "short.png"));
  const std::string csv = video_exposure_sheet_csv(s);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), s.output_frames + 1);
  // H.264 and GIF through the same encoder: exact frame count at the output rate (ffprobe and a
  // full decode), and the holds visible as repeated pictures.
  for (const char* name : {"held.mp4", "held.gif"}) {
    write_held_video(dir / "src", dir / name, s, d);
    const VideoInfo info = probe_video(dir / name);
    EXPECT_NEAR(info.frame_rate, 24, 0.05) << name;
    const DecodedVideo v2 = read_video(dir / name);
    ASSERT_EQ(static_cast<int>(v2.frames.size()), s.output_frames) << name;
    for (int o = 0; o + 1 < s.output_frames; ++o) {
      const bool held_frame = s.shown[o] == s.shown[o + 1];
      int changed = 0;  // pixels that changed clearly (codec noise stays far below 40 levels)
      for (size_t i = 0; i < v2.frames[o].rgb.size(); i += 3) {
        int dmax = 0;
        for (size_t c = 0; c < 3; ++c) dmax = std::max(dmax, std::abs(v2.frames[o].rgb[i + c] - v2.frames[o + 1].rgb[i + c]));
        changed += dmax > 40;
      }
      if (held_frame) EXPECT_LE(changed, 2) << name << " output frame " << o;
      else EXPECT_GE(changed, 5) << name << " output frame " << o;
    }
  }
  EXPECT_EQ(probe_video(dir / "held.mp4").frame_count, s.output_frames);  // the container's own count
  // A GIF cut in half decodes the frames before the cut (ffmpeg exits 0): the probe warns.
  EXPECT_TRUE(probe_video(dir / "held.gif").warnings.empty());
  const auto gif_size = fs::file_size(dir / "held.gif");
  fs::copy_file(dir / "held.gif", dir / "cut.gif", fs::copy_options::overwrite_existing);
  fs::resize_file(dir / "cut.gif", gif_size / 2);
  const VideoInfo cut = probe_video(dir / "cut.gif");
  ASSERT_EQ(cut.warnings.size(), 1u);
  EXPECT_NE(cut.warnings[0].find("truncated"), std::string::npos) << cut.warnings[0];
  EXPECT_NE(cut.warnings[0].find("cut.gif"), std::string::npos) << cut.warnings[0];
  EXPECT_LT(read_video(dir / "cut.gif").frames.size(), static_cast<size_t>(s.output_frames));
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
  // Unsupported output format or a selection the video cannot fill: nothing written, no leftovers.
  std::vector<Image> src_frames;
  for (double x : fast_slow_fast()) src_frames.push_back(disc_frame(64, 48, x / 8, 24, 6));
  write_frames(dir / "src.mp4", src_frames, 24);
  const VideoAnalysis an = analyse_video(src_frames, 24, AnalysisSettings{});
  VideoKeySettings ks;
  ks.output_rate = 0;
  ks.keys = 4;
  VideoKeySelection sel = select_video_keys(an, ks);
  EXPECT_EQ(code_of([&] { write_held_video(dir / "src.mp4", dir / "x.avi2", sel, DecodeSettings{}); }), ErrorCode::invalid_settings);
  EXPECT_FALSE(fs::exists(dir / "x.avi2"));
  sel.source_frames = 40;  // claims more frames than the video has
  sel.output_frames = 40;
  sel.shown.assign(40, 0);
  for (int o = 0; o < 40; ++o) sel.shown[o] = o;
  EXPECT_EQ(code_of([&] { write_held_video(dir / "src.mp4", dir / "partial.mp4", sel, DecodeSettings{}); }), ErrorCode::mismatch);
  EXPECT_FALSE(fs::exists(dir / "partial.mp4"));
  size_t leftovers = 0;
  for (const auto& e : fs::directory_iterator(dir)) leftovers += e.path().filename().string().find(".koma") != std::string::npos;
  EXPECT_EQ(leftovers, 0u);
  // Too few frames to select from.
  std::vector<Image> two = {disc_frame(64, 48, 20, 20, 8), disc_frame(64, 48, 22, 20, 8)};
  const VideoAnalysis a1 = analyse_video(two, 24, AnalysisSettings{});
  VideoKeySettings st;
  st.output_rate = 10;  // 2 frames at 24 fps = 1 frame at 10 fps
  EXPECT_EQ(code_of([&] { select_video_keys(a1, st); }), ErrorCode::bad_data);
}

// A stream damaged in the middle (2000 bytes overwritten at half the file, tests/data/malformed/
// video/corrupt_mid.mp4): the reader stops at the first frame it cannot decode and names it, instead
// of handing over concealed, damaged pictures; koma keys leaves no output (tests/cli).
TEST(Video, CorruptStreamNamesTheFrameThatCannotBeDecoded) {
  const fs::path bad = test::test_data("malformed/video/corrupt_mid.mp4");
  VideoReader r(bad);
  Image im;
  int frames = 0;
  try {
    while (r.next(im)) ++frames;
    ADD_FAILURE() << "the damaged stream decoded to the end (" << frames << " frames)";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_file);
    EXPECT_NE(std::string(e.what()).find(fmt::format("frame {} cannot be decoded", frames)), std::string::npos) << e.what();
    EXPECT_GT(frames, 10);  // the frames before the damage arrive
    EXPECT_LT(frames, 96);
  }
}

// Timestamps 24 fps for 2 s, then 12 fps (tests/data/malformed/video/variable_rate.mp4, 96 frames
// over 5.96 s): probed as variable, resampled to the median interval's 24 fps with a warning, so
// frame index / rate is the clock again.
TEST(Video, VariableFrameRateIsResampledToAConstantRate) {
  const fs::path vfr = test::test_data("malformed/video/variable_rate.mp4");
  const VideoInfo info = probe_video(vfr);
  EXPECT_TRUE(info.variable_rate);
  EXPECT_NEAR(info.frame_rate, 24, 1e-6);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_NE(info.warnings[0].find("variable frame rate"), std::string::npos) << info.warnings[0];
  const DecodedVideo v = read_video(vfr, DecodeSettings{64, 24, 0});
  EXPECT_NEAR(static_cast<double>(v.frames.size()), 5.96 * 24, 2.0);
  // testsrc2's picture moves every frame: in the 12 fps part each picture is shown twice.
  int repeats = 0;
  for (size_t f = 60; f + 1 < v.frames.size(); ++f) repeats += v.frames[f].rgb == v.frames[f + 1].rgb;
  EXPECT_GT(repeats, 30);
  // A constant-rate file is not resampled.
  EXPECT_FALSE(probe_video(test::test_data("malformed/video/corrupt_mid.mp4")).variable_rate);
}

TEST(Video, EnormousResolutionIsDownscaledWhileDecoding) {
  const fs::path dir = test::temp_dir("video_huge");
  const Image big = disc_frame(4000, 2000, 1200, 1000, 300);
  render::write_png(dir / "big.png", to_render_image(big));
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

// ---- Ground truth for the GIF that renders 01_01.bvh -------------------------------------------
//
// The GIF is a phone screen recording of a viewer playing the BVH through a fixed perspective
// camera. The data README does not give that camera, so it is recovered from the video itself,
// without looking at motion: a pinhole camera (Rodrigues rotation from a front view, position,
// focal length, principal point: 9 numbers) whose projection of the skeleton's 38 points has the
// same bounding box as the figure's pixels on every GIF frame (least squares, Levenberg-Marquardt).
// The same fit aligns time: the BVH start offset whose fit leaves the smallest residual.
//
//   BVH points X(t) ──camera π──▶ image points ──bbox──▶ compared with the figure's pixel bbox
//
// Motion energy (sum over regions of area x squared mean flow) is then compared like with like:
// with the mean squared IMAGE-PLANE speed of the projected joints over the same GIF frame interval.
// 3D joint speeds are the wrong yardstick here: the character hops towards the camera, which moves
// it fast in 3D but slowly on screen, and perspective shrinks far motion.
namespace {

using Vec9 = Eigen::Matrix<double, 9, 1>;

// Figure bounding box per frame: min x, max x, min y, max y (pixels).
using Box = Eigen::Vector4d;

// A pinhole camera from its 9 parameters: Rodrigues vector (relative to a front view), position,
// focal length and principal point (pixels).
struct Camera {
  Eigen::Matrix3d r;
  Eigen::Vector3d centre;
  double focal, cx, cy;

  explicit Camera(const Vec9& p) : centre(p[3], p[4], p[5]), focal(p[6]), cx(p[7]), cy(p[8]) {
    const Eigen::Vector3d w = p.head<3>();
    const double th = w.norm();
    const Eigen::Matrix3d rw = th < 1e-12 ? Eigen::Matrix3d::Identity() : Eigen::AngleAxisd(th, w / th).toRotationMatrix();
    // Front view: camera x = world x, camera y (image down) = -world y, depth = -world z.
    r = rw * Eigen::Vector3d(1, -1, -1).asDiagonal();
  }
  Eigen::Vector2d project(const Vec3& x) const {
    const Eigen::Vector3d c = r * (x - centre);
    return {focal * c.x() / c.z() + cx, focal * c.y() / c.z() + cy};
  }
};

// Residuals of the projected points' bbox against the figure's bbox, GIF frame g <-> BVH frame
// stride * g + offset (frames outside the BVH are skipped).
Eigen::VectorXd bbox_residuals(const Vec9& p, const WorldPoses& w, const std::vector<Box>& boxes, int stride, int offset) {
  const Camera cam(p);
  std::vector<double> r;
  for (size_t g = 0; g < boxes.size(); ++g) {
    const int f = stride * static_cast<int>(g) + offset;
    if (f < 0 || f >= w.frame_count) continue;
    Box b(1e300, -1e300, 1e300, -1e300);
    for (int q = 0; q < w.point_count; ++q) {
      const Eigen::Vector2d u = cam.project(w.position(f, q));
      b[0] = std::min(b[0], u.x()), b[1] = std::max(b[1], u.x()), b[2] = std::min(b[2], u.y()), b[3] = std::max(b[3], u.y());
    }
    for (int k = 0; k < 4; ++k) r.push_back(b[k] - boxes[g][k]);
  }
  return Eigen::Map<Eigen::VectorXd>(r.data(), static_cast<Eigen::Index>(r.size()));
}

// Levenberg-Marquardt with a forward-difference Jacobian; returns the RMS residual (pixels).
double fit_camera(Vec9& p, const WorldPoses& w, const std::vector<Box>& boxes, int stride, int offset, int iterations) {
  Eigen::VectorXd r = bbox_residuals(p, w, boxes, stride, offset);
  double cost = r.squaredNorm(), lambda = 1e-2;
  for (int it = 0; it < iterations && lambda < 1e8; ++it) {
    Eigen::MatrixXd j(r.size(), 9);
    for (int k = 0; k < 9; ++k) {
      Vec9 q = p;
      const double h = 1e-5 * std::max(1.0, std::abs(p[k]));
      q[k] += h;
      j.col(k) = (bbox_residuals(q, w, boxes, stride, offset) - r) / h;
    }
    const Eigen::MatrixXd a = j.transpose() * j;
    const Eigen::VectorXd g = j.transpose() * r;
    while (lambda < 1e8) {
      Eigen::MatrixXd damped = a;
      damped.diagonal() += lambda * (a.diagonal().array() + 1e-9).matrix();
      const Vec9 next = p - damped.ldlt().solve(g);
      const Eigen::VectorXd rn = bbox_residuals(next, w, boxes, stride, offset);
      if (std::isfinite(rn.squaredNorm()) && rn.squaredNorm() < cost) {
        p = next, r = rn, cost = rn.squaredNorm(), lambda = std::max(lambda / 3, 1e-7);
        break;
      }
      lambda *= 10;
    }
  }
  return std::sqrt(cost / static_cast<double>(r.size()));
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n), my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - my) * (y[i] - my);
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

// The GIF renders 01_01.bvh: with DEFAULT analysis settings, the per-frame motion energy follows
// the image-plane joint speeds of the BVH seen through the recording's camera.
TEST(VideoRegression, GifMotionEnergyFollowsBvhJointSpeeds) {
  KOMA_REQUIRE_SHARED_DATA();
  const fs::path gif = test::shared_data() / "video" / "01_01_bvh.gif";
  const fs::path bvh = test::shared_data() / "bvh" / "cmu" / "assimp" / "01_01.bvh";
  if (!fs::exists(gif) || !fs::exists(bvh)) GTEST_SKIP() << "01_01_bvh.gif or 01_01.bvh missing";
  VideoReader reader(gif);
  // While the default analysis reads the frames, note the figure's bbox: its bones are blue on a
  // light-grey background; rows of the phone's status bar (top 5 %) and the viewer's buttons
  // (bottom 10 %) are not part of the 3D view.
  std::vector<Box> boxes;
  const VideoAnalysis a = analyse_video([&](Image& im) {
    if (!reader.next(im)) return false;
    Box b(1e300, -1e300, 1e300, -1e300);
    for (int y = im.height / 20; y < im.height * 9 / 10; ++y) {
      for (int x = 0; x < im.width; ++x) {
        const std::uint8_t* c = im.at(x, y);
        if (c[2] - c[0] > 40) b[0] = std::min<double>(b[0], x), b[1] = std::max<double>(b[1], x), b[2] = std::min<double>(b[2], y), b[3] = std::max<double>(b[3], y);
      }
    }
    boxes.push_back(b);
    return true;
  }, reader.info().frame_rate, AnalysisSettings{});
  ASSERT_EQ(a.frames, 270);
  ASSERT_NEAR(a.frame_rate, 12, 1e-9);
  ASSERT_GT(boxes.front()[1], boxes.front()[0]);

  const Motion m = io::read_motion(bvh).motion;
  ASSERT_NEAR(m.frame_rate, 120, 0.01);
  const int stride = static_cast<int>(std::lround(m.frame_rate / a.frame_rate));  // 10 BVH frames per GIF frame
  const WorldPoses w = forward_kinematics(m);

  // Initial camera: a front view from the middle of the root's path, backed off by four times
  // the scene's extent, with a focal length that gives frame 0 the figure's height.
  Eigen::AlignedBox3d scene;
  for (int f = 0; f < w.frame_count; f += 10) {
    for (int q = 0; q < w.point_count; ++q) scene.extend(w.position(f, q));
  }
  const double dist = 4 * scene.sizes().maxCoeff();
  double height0 = 0;
  {
    Eigen::AlignedBox3d b0;
    for (int q = 0; q < w.point_count; ++q) b0.extend(w.position(0, q));
    height0 = b0.sizes().y();
  }
  Vec9 init;
  init << 0, 0, 0, scene.center().x(), scene.center().y(), scene.max().z() + dist,
      (boxes[0][3] - boxes[0][2]) * dist / height0, a.width / 2.0, a.height / 2.0;
  // Time alignment: coarse search over -0.5 s .. +1 s, then every BVH frame around the best.
  Vec9 camera = init;
  double best_rms = 1e300;
  int offset = 0;
  auto try_offset = [&](int off, const Vec9& start, int iterations) {
    Vec9 p = start;
    const double rms = fit_camera(p, w, boxes, stride, off, iterations);
    if (rms < best_rms) best_rms = rms, offset = off, camera = p;
  };
  for (int off = -60; off <= 120; off += 6) try_offset(off, init, 30);
  const Vec9 coarse = camera;
  const int coarse_offset = offset;
  for (int off = coarse_offset - 5; off <= coarse_offset + 5; ++off) try_offset(off, coarse, 30);
  const Camera cam(camera);
  std::cout << "[ camera ] bbox fit RMS " << best_rms << " px at BVH offset " << offset << " frames ("
            << offset / m.frame_rate << " s), focal " << camera[6] << " px\n";
  EXPECT_LT(best_rms, 3.0);  // a real camera: the figure's box is matched within a few pixels
  EXPECT_GT(offset, 0);      // the recording starts a little after the BVH
  EXPECT_LT(offset, 60);

  // Per GIF frame g (flow g -> g+1): mean squared image speed of the points over the same interval,
  // and for the record, the mean 3D speed.
  std::vector<double> energy, image_ms, rms_energy, image_mean, speed3d;
  for (int g = 0; g + 1 < a.frames; ++g) {
    const int f0 = stride * g + offset, f1 = f0 + stride;
    if (f0 < 0 || f1 >= m.frame_count) continue;
    double ms = 0, mean = 0, s3 = 0;
    for (int q = 0; q < w.point_count; ++q) {
      const double d = (cam.project(w.position(f1, q)) - cam.project(w.position(f0, q))).norm();
      ms += d * d, mean += d;
      s3 += (w.position(f1, q) - w.position(f0, q)).norm();
    }
    energy.push_back(a.motion_energy[g]);
    rms_energy.push_back(std::sqrt(a.motion_energy[g]));
    image_ms.push_back(ms / w.point_count);
    image_mean.push_back(mean / w.point_count);
    speed3d.push_back(s3 / w.point_count);
  }
  ASSERT_GT(energy.size(), 250u);
  const double c = correlation(energy, image_ms);
  std::cout << "[ motion ] default settings, " << energy.size() << " frames: energy vs mean squared image speed "
            << c << "; sqrt(energy) vs mean image speed " << correlation(rms_energy, image_mean)
            << "; sqrt(energy) vs mean 3D speed " << correlation(rms_energy, speed3d) << "\n";
  EXPECT_GE(c, 0.8);
  EXPECT_GE(correlation(rms_energy, image_mean), 0.8);
}

namespace {

// An analysis of `tracks` short tracks at random places in a `frames`-frame video (seeded).
VideoAnalysis random_tracks(int frames, int tracks, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  VideoAnalysis a;
  a.frames = frames;
  a.frame_rate = 12;
  a.width = 64;
  a.height = 36;
  for (int r = 0; r < tracks; ++r) {
    RegionTrack t;
    t.id = r;
    t.frames_present = 2 + static_cast<int>(u(rng) * 20);
    t.first = static_cast<int>(u(rng) * (frames - t.frames_present));
    for (int k = 0; k < t.frames_present; ++k) {
      t.area.push_back(0.01 + 0.05 * u(rng));
      t.cx.push_back(u(rng));
      t.cy.push_back(u(rng));
      t.vx.push_back(0.02 * (u(rng) - 0.5));
      t.vy.push_back(0.02 * (u(rng) - 0.5));
    }
    double sum = 0;
    for (double v : t.area) sum += v;
    t.mean_area = sum / frames;
    a.tracks.push_back(t);
  }
  return a;
}

}  // namespace

// Tracks that change far apart share feature columns; every segment up to the reach costs what it
// costs with one column per track (all metrics, linear and cubic), and the per-track normalisation
// is unchanged.
TEST(Video, PackedFeaturesCostWhatOneColumnPerTrackCosts) {
  const VideoAnalysis a = random_tracks(400, 80, 7);
  for (double out_rate : {0.0, 24.0, 10.0}) {
    const int N = output_frame_count(a.frames, a.frame_rate, out_rate > 0 ? out_rate : a.frame_rate);
    const int reach = 16;
    const PackedFeatures packed = packed_region_features(a, 1, out_rate, N, reach);
    const PackedFeatures plain = packed_region_features(a, 1, out_rate, N, 0);
    EXPECT_EQ(plain.columns, 80);
    EXPECT_LT(packed.columns, 40) << "rate " << out_rate;  // short tracks spread over the video
    // Without packing: exactly the resampled per-track features.
    const keys::FeatureMatrix ref = resample_features(region_features(a), a.frame_rate, out_rate > 0 ? out_rate : a.frame_rate, N);
    ASSERT_EQ(ref.values.size(), plain.features.values.size());
    for (size_t q = 0; q < ref.values.size(); ++q) ASSERT_EQ(ref.values[q], plain.features.values[q]) << q;
    for (keys::Metric metric : {keys::Metric::velocity, keys::Metric::position, keys::Metric::acceleration, keys::Metric::hold}) {
      for (keys::Interpolation in : {keys::Interpolation::linear, keys::Interpolation::cubic}) {
        const keys::SegmentCosts cp = keys::make_segment_costs(packed.features, in, metric, 1, reach);
        const keys::SegmentCosts cu = keys::make_segment_costs(plain.features, in, metric, 1, reach);
        const double scale = static_cast<double>(packed.columns) / packed.tracks;
        double worst = 0, largest = 0;
        for (int j = 1; j < N; ++j) {
          for (int i = std::max(0, j - reach); i < j; ++i) {
            const double p = cp.cost_direct(i, j) / scale, q = cu.cost_direct(i, j);
            worst = std::max(worst, std::abs(p - q));
            largest = std::max(largest, q);
          }
        }
        EXPECT_LE(worst, 1e-9 * largest) << keys::to_string(metric) << " " << keys::to_string(in) << " rate " << out_rate;
        EXPECT_NEAR(cp.normaliser() / packed.columns, cu.normaliser() / plain.columns, 1e-9);
      }
    }
  }
}

// The same selection with and without packing (the default hold), on a real-looking analysis.
TEST(Video, PackingLeavesTheSelectionUnchanged) {
  const VideoAnalysis a = random_tracks(300, 60, 11);
  VideoKeySettings st;
  st.keys = 90;  // of 600 output frames (on 2s would keep every source frame: zero error)
  const VideoKeySelection s = select_video_keys(a, st);
  EXPECT_EQ(s.max_hold, 48);
  EXPECT_LT(s.feature_columns, 60);
  // Reference: one column per track, same constraints and count, straight through the keys engine.
  const keys::FeatureMatrix ref = resample_features(region_features(a), a.frame_rate, 24, s.output_frames);
  keys::HoldConstraints c;
  c.max_hold = s.max_hold;
  keys::SelectionTarget t;
  t.keys = static_cast<int>(s.keys.size());
  const keys::Selection truth =
      keys::select_exact(keys::make_segment_costs(ref, keys::Interpolation::linear, keys::Metric::velocity, 1, s.max_hold), c, t);
  EXPECT_NEAR(s.error, truth.error, 1e-9 * truth.error);
  EXPECT_NEAR(s.total, truth.total, 1e-9 * truth.total);
}
