#include "koma/render/encode.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/sheet.hpp"
#include "test_support.hpp"

namespace koma::render {
namespace {

namespace fs = std::filesystem;

bool have_ffprobe() { return ffmpeg_available("ffmpeg") && ffmpeg_available("ffprobe"); }

#define KOMA_REQUIRE_FFMPEG() \
  if (!have_ffprobe()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (Debian: apt-get install ffmpeg)"

// The standard output of a command (through the one child-process runner).
std::string run(std::vector<std::string> args) {
  ChildSpec spec;
  spec.args = std::move(args);
  spec.read_stdout = true;
  ChildProcess child(std::move(spec));
  std::string out;
  std::byte buf[256];
  for (std::size_t n; (n = child.read_full(buf)) > 0;) out.append(reinterpret_cast<const char*>(buf), n);
  child.wait();
  return out;
}

// Counted frames, duration (s), frame rate and pixel format of the first video stream.
struct Probe {
  int frames = -1;
  double duration = -1;
  std::string rate, pix_fmt, codec;
  int width = 0, height = 0;
};
Probe probe(const fs::path& file) {
  const std::string out = run({"ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                               "stream=nb_read_frames,r_frame_rate,pix_fmt,codec_name,width,height:format=duration",
                               "-of", "default=noprint_wrappers=1", file.string()});
  Probe p;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k == "nb_read_frames") p.frames = std::stoi(v);
    if (k == "duration" && v != "N/A") p.duration = std::stod(v);
    if (k == "r_frame_rate") p.rate = v;
    if (k == "pix_fmt") p.pix_fmt = v;
    if (k == "codec_name") p.codec = v;
    if (k == "width") p.width = std::stoi(v);
    if (k == "height") p.height = std::stoi(v);
  }
  return p;
}

// A small comparison of the sample walk at 24 fps, cut to `frames`.
Comparison small_comparison(int frames) {
  Motion m = cut(resample(make_sample_motion(), 24), 0, frames);
  Comparison c;
  c.frame_rate = 24;
  const WorldPoses w = forward_kinematics(m);
  c.original = Clip{m.skeleton, w, "original"};
  for (int f = 0; f < frames; f += 2) c.kept_frames.push_back(f);
  c.result = {m.skeleton, hold_poses(w, c.kept_frames), "on 2s"};
  return c;
}

CameraSettings small_camera() {
  CameraSettings cs;
  cs.view = CameraView::side;
  cs.width = 320;
  cs.height = 180;
  return cs;
}

// Files in `dir` (temporary files included): nothing partial may be left after an error.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

TEST(VideoFormat, FromThePath) {
  EXPECT_EQ(video_format_for("a/b.mp4"), VideoFormat::mp4);
  EXPECT_EQ(video_format_for("b.MP4"), VideoFormat::mp4);
  EXPECT_EQ(video_format_for("b.gif"), VideoFormat::gif);
  EXPECT_EQ(video_format_for("frames/"), VideoFormat::png_sequence);
  EXPECT_EQ(video_format_for("frames"), VideoFormat::png_sequence);
  EXPECT_THROW(video_format_for("clip.avi"), Error);
}

TEST(Video, Mp4HasEveryFrameAtTheRightRateAndDuration) {
  KOMA_REQUIRE_FFMPEG();
  const fs::path dir = test::temp_dir("render_mp4");
  const Comparison c = small_comparison(30);
  write_comparison_video(dir / "cmp.mp4", c, small_camera());
  const Probe p = probe(dir / "cmp.mp4");
  EXPECT_EQ(p.frames, 30);
  EXPECT_EQ(p.rate, "24/1");
  EXPECT_NEAR(p.duration, 30 / 24.0, 0.05);
  EXPECT_EQ(p.codec, "h264");
  EXPECT_EQ(p.pix_fmt, "yuv420p");
  EXPECT_EQ(p.width, 320) << "side by side: two 160-pixel panels in the camera's 320";
  EXPECT_EQ(p.height, 180);
  EXPECT_EQ(listing(dir).size(), 1u) << "no temporary files left";
}

TEST(Video, Mp4AtAFractionalRate) {
  KOMA_REQUIRE_FFMPEG();
  const fs::path dir = test::temp_dir("render_ntsc");
  Comparison c = small_comparison(12);
  c.original.reset();
  c.frame_rate = 24000.0 / 1001.0;
  CameraSettings cs = small_camera();
  cs.width = 161;  // odd sizes are padded to even for yuv420p
  write_comparison_video(dir / "a.mp4", c, cs);
  const Probe p = probe(dir / "a.mp4");
  EXPECT_EQ(p.frames, 12);
  EXPECT_EQ(p.rate, "24000/1001");
  EXPECT_EQ(p.width % 2, 0);
}

TEST(Video, GifHasEveryFrame) {
  KOMA_REQUIRE_FFMPEG();
  const fs::path dir = test::temp_dir("render_gif");
  Comparison c = small_comparison(10);
  write_comparison_video(dir / "cmp.gif", c, small_camera());
  const Probe p = probe(dir / "cmp.gif");
  EXPECT_EQ(p.codec, "gif");
  EXPECT_EQ(p.frames, 10);
  // GIF delays are whole centiseconds: 24 fps is stored as 4 cs per frame.
  EXPECT_NEAR(p.duration, 10 / 24.0, 0.05);
}

TEST(Video, PngSequenceHasOneFilePerFrame) {
  const fs::path dir = test::temp_dir("render_png");
  Comparison c = small_comparison(5);
  write_comparison_video(dir / "frames/", c, small_camera());
  std::vector<std::string> names = listing(dir / "frames");
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 5u);
  EXPECT_EQ(names.front(), "frame_00000.png");
  const Image img = read_png(dir / "frames" / names.back());
  EXPECT_EQ(img.width, 320);
  EXPECT_EQ(img.height, 180);
  // Writing again replaces the folder as a whole.
  c = small_comparison(3);
  write_comparison_video(dir / "frames", c, small_camera());
  EXPECT_EQ(listing(dir / "frames").size(), 3u);
  EXPECT_EQ(listing(dir).size(), 1u);
}

TEST(Video, UnwritablePathIsAnIoErrorAndWritesNothing) {
  const fs::path dir = test::temp_dir("render_unwritable");
  const Comparison c = small_comparison(4);
  for (const fs::path& bad : {dir / "missing" / "x.mp4", dir / "missing" / "frames/"}) {
    try {
      write_comparison_video(bad, c, small_camera());
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
      EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
  }
  // A path below a regular file.
  std::ofstream(dir / "file.txt") << "x";
  EXPECT_THROW(write_comparison_video(dir / "file.txt" / "x.gif", c, small_camera()), Error);
  EXPECT_EQ(listing(dir), std::vector<std::string>{"file.txt"});
}

TEST(Video, ZeroSizeFramesAndOneFrameMotionsAreRejectedBeforeAnythingIsWritten) {
  const fs::path dir = test::temp_dir("render_zero");
  const Comparison c = small_comparison(4);
  CameraSettings cs = small_camera();
  cs.width = 0;
  try {
    write_comparison_video(dir / "x.mp4", c, cs);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings) << e.what();
  }
  EXPECT_THROW(VideoWriter(dir / "y.mp4", 0, 0), Error);
  const Comparison one = small_comparison(1);
  try {
    write_comparison_video(dir / "one.mp4", one, small_camera());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
    EXPECT_NE(std::string(e.what()).find("at least 2 frames"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(listing(dir).empty());
}

TEST(Video, FailuresMidStreamLeaveNoPartialFile) {
  KOMA_REQUIRE_FFMPEG();
  const fs::path dir = test::temp_dir("render_partial");
  Image frame{64, 36, std::vector<std::uint8_t>(64 * 36 * 4, 200)};
  {
    VideoWriter w(dir / "a.mp4", 64, 36);
    w.add_frame(frame);
    Image wrong{32, 36, std::vector<std::uint8_t>(32 * 36 * 4, 0)};
    EXPECT_THROW(w.add_frame(wrong), Error);
  }  // abandoned: ffmpeg stopped, temporaries removed
  {
    VideoWriter w(dir / "b.mp4", 64, 36);
    EXPECT_THROW(w.finish(), Error) << "no frames";
  }
  {
    EncodeSettings bad;
    bad.preset = "nosuchpreset";  // ffmpeg starts, then refuses the encoder options
    EXPECT_THROW(
        {
          VideoWriter w(dir / "c.mp4", 64, 36, bad);
          for (int i = 0; i < 50; ++i) w.add_frame(frame);
          w.finish();
        },
        Error);
  }
  EXPECT_TRUE(listing(dir).empty());
}

TEST(Video, MissingFfmpegIsAClearError) {
  const fs::path dir = test::temp_dir("render_noffmpeg");
  EncodeSettings s;
  s.ffmpeg = "koma-no-such-ffmpeg";
  try {
    VideoWriter w(dir / "x.mp4", 64, 36, s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find("ffmpeg program was not found"), std::string::npos) << e.what();
  }
  // PNG frames need no ffmpeg.
  VideoWriter w(dir / "frames/", 64, 36, s);
  w.add_frame(Image{64, 36, std::vector<std::uint8_t>(64 * 36 * 4, 255)});
  w.finish();
  EXPECT_TRUE(fs::is_directory(dir / "frames"));
}

// BT.601 limited-range Y'CbCr of an sRGB colour, straight from the standard's definition (doubles).
struct Ycc {
  double y, cb, cr;
};
Ycc bt601(double r, double g, double b) {
  const double yp = (0.299 * r + 0.587 * g + 0.114 * b) / 255.0;
  return {16 + 219 * yp, 128 + 224 * (b / 255.0 - yp) / 1.772, 128 + 224 * (r / 255.0 - yp) / 1.402};
}

Image flat(int w, int h, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  Image img{w, h, {}};
  for (int i = 0; i < w * h; ++i) img.rgba.insert(img.rgba.end(), {r, g, b, 255});
  return img;
}

// Rounding to the nearest code: within half a code of the exact value (plus fixed-point slack).
constexpr double kHalfCode = 0.5 + 0.02;

TEST(Yuv420p, FlatColoursAreTheBt601LimitedRangeCodes) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::array<int, 3>> colours = {{0, 0, 0},       {255, 255, 255}, {255, 0, 0}, {0, 255, 0},
                                             {0, 0, 255},     {128, 128, 128}, {227, 66, 52}, {0, 71, 171}};
  for (int i = 0; i < 200; ++i) colours.push_back({byte(rng), byte(rng), byte(rng)});
  for (const auto& [r, g, b] : colours) {
    const Image img = flat(6, 4, static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b));
    const std::vector<std::uint8_t> yuv = rgba_to_yuv420p(img);
    ASSERT_EQ(yuv.size(), 6u * 4 + 2 * 3 * 2);
    const Ycc want = bt601(r, g, b);
    for (size_t k = 0; k < 24; ++k) ASSERT_NEAR(yuv[k], want.y, kHalfCode) << r << "," << g << "," << b;
    for (size_t k = 24; k < 30; ++k) ASSERT_NEAR(yuv[k], want.cb, kHalfCode) << r << "," << g << "," << b;
    for (size_t k = 30; k < 36; ++k) ASSERT_NEAR(yuv[k], want.cr, kHalfCode) << r << "," << g << "," << b;
  }
  // The ends of the ranges: black 16/128/128, white 235/128/128.
  EXPECT_EQ(rgba_to_yuv420p(flat(2, 2, 0, 0, 0)), (std::vector<std::uint8_t>{16, 16, 16, 16, 128, 128}));
  EXPECT_EQ(rgba_to_yuv420p(flat(2, 2, 255, 255, 255)), (std::vector<std::uint8_t>{235, 235, 235, 235, 128, 128}));
}

TEST(Yuv420p, ChromaIsTheMeanOfEach2x2BlockAndOddSizesRepeatTheLastColumnAndRow) {
  // Columns 0-2 red, 3-6 blue, 3 rows: padded to 8x4.
  Image img = flat(7, 3, 255, 0, 0);
  for (int y = 0; y < 3; ++y) {
    for (int x = 3; x < 7; ++x) {
      std::uint8_t* p = img.rgba.data() + 4 * (y * 7 + x);
      p[0] = 0;
      p[2] = 255;
    }
  }
  const std::vector<std::uint8_t> yuv = rgba_to_yuv420p(img);
  ASSERT_EQ(yuv.size(), yuv420p_size(7, 3));
  ASSERT_EQ(yuv.size(), 8u * 4 + 2 * 4 * 2);
  const Ycc red = bt601(255, 0, 0), blue = bt601(0, 0, 255);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 8; ++x) {
      EXPECT_NEAR(yuv[static_cast<size_t>(y * 8 + x)], x < 3 ? red.y : blue.y, kHalfCode) << x << "," << y;
    }
  }
  const std::uint8_t* cb = yuv.data() + 32;
  const std::uint8_t* cr = cb + 8;
  for (int row = 0; row < 2; ++row) {
    // Sample i covers columns 2i and 2i + 1: red, red + blue, blue, blue (column 6 and its repeat).
    const Ycc want[4] = {red, bt601(127.5, 0, 127.5), blue, blue};
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(cb[row * 4 + i], want[i].cb, kHalfCode) << i;
      EXPECT_NEAR(cr[row * 4 + i], want[i].cr, kHalfCode) << i;
    }
  }
  // A 2x2 block of four different colours gives the chroma of their mean.
  Image four{2, 2, {255, 0, 0, 255, 255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255}};
  const std::vector<std::uint8_t> c4 = rgba_to_yuv420p(four);
  const Ycc mean = bt601(127.5, 63.75, 63.75);
  EXPECT_NEAR(c4[4], mean.cb, kHalfCode);
  EXPECT_NEAR(c4[5], mean.cr, kHalfCode);
}

TEST(Yuv420p, RejectsBrokenImagesAndWrongBuffers) {
  EXPECT_THROW(rgba_to_yuv420p(Image{}), Error);
  EXPECT_THROW(rgba_to_yuv420p(Image{4, 4, std::vector<std::uint8_t>(10, 0)}), Error);
  std::vector<std::uint8_t> small(5);
  try {
    rgba_to_yuv420p(flat(4, 2, 1, 2, 3), small);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch) << e.what();
  }
  EXPECT_EQ(yuv420p_size(0, 5), 0u);
}

// Reads a whole binary file.
std::vector<std::uint8_t> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Video, Mp4ColoursDecodeBackToTheFrameAndAreTagged) {
  KOMA_REQUIRE_FFMPEG();
  const fs::path dir = test::temp_dir("render_colour");
  // Four flat quadrants: paper white, vermilion, cobalt, dark grey (the figure's colours).
  const int w = 64, h = 48;
  const std::array<std::array<std::uint8_t, 3>, 4> quads = {
      {{245, 242, 235}, {227, 66, 52}, {0, 71, 171}, {40, 40, 46}}};
  Image img{w, h, {}};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const auto& c = quads[static_cast<size_t>((y >= h / 2) * 2 + (x >= w / 2))];
      img.rgba.insert(img.rgba.end(), {c[0], c[1], c[2], 255});
    }
  }
  {
    VideoWriter wr(dir / "q.mp4", w, h);
    for (int i = 0; i < 3; ++i) wr.add_frame(img);
    wr.finish();
  }
  const std::string tags = run({"ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "stream=color_space,color_range,chroma_location", "-of", "default=noprint_wrappers=1",
                                (dir / "q.mp4").string()});
  EXPECT_NE(tags.find("color_space=smpte170m"), std::string::npos) << tags;
  EXPECT_NE(tags.find("color_range=tv"), std::string::npos) << tags;
  EXPECT_NE(tags.find("chroma_location=center"), std::string::npos) << tags;
  // ffmpeg decodes with the tagged matrix; flat areas must come back within a few codes.
  run({"ffmpeg", "-v", "error", "-y", "-i", (dir / "q.mp4").string(), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt",
       "rgb24", (dir / "q.rgb").string()});
  const std::vector<std::uint8_t> rgb = slurp(dir / "q.rgb");
  ASSERT_EQ(rgb.size(), static_cast<size_t>(w * h * 3));
  for (int q = 0; q < 4; ++q) {
    const int cx = (q % 2) * w / 2 + w / 4, cy = (q / 2) * h / 2 + h / 4;
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(rgb[static_cast<size_t>((cy * w + cx) * 3 + c)], quads[static_cast<size_t>(q)][static_cast<size_t>(c)], 3)
          << "quadrant " << q << " channel " << c;
    }
  }
}

TEST(Png, RoundTripIsLossless) {
  const fs::path dir = test::temp_dir("render_pngrt");
  Image img{7, 5, {}};
  for (int i = 0; i < 7 * 5; ++i) {
    img.rgba.insert(img.rgba.end(), {static_cast<std::uint8_t>(i * 7), static_cast<std::uint8_t>(255 - i), 13, 255});
  }
  write_png(dir / "a.png", img);
  const Image back = read_png(dir / "a.png");
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.rgba, img.rgba);
  std::ofstream(dir / "not.png") << "hello";
  EXPECT_THROW(read_png(dir / "not.png"), Error);
}

}  // namespace
}  // namespace koma::render
