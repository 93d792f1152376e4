#include "koma/render/sheet.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/kept_frames.hpp"
#include "koma/render/compare.hpp"
#include "test_support.hpp"

namespace koma::render {
namespace {

double colour_distance(const Rgba& a, const Rgba& b) {
  return std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)});
}

TEST(Holds, DrawingNumbersHoldLengthsAndHeldPosesAgree) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  const std::vector<int> kept = {0, 2, 3, 9, 20, m.frame_count - 1};
  const std::vector<int> d = drawing_numbers(kept, m.frame_count);
  const std::vector<int> h = hold_lengths(kept, m.frame_count);
  ASSERT_EQ(static_cast<int>(d.size()), m.frame_count);
  EXPECT_EQ(std::accumulate(h.begin(), h.end(), 0), m.frame_count);
  const WorldPoses held = hold_poses(w, kept);
  for (int f = 0; f < m.frame_count; ++f) {
    const int src = kept[d[f] - 1];
    EXPECT_LE(src, f);
    EXPECT_TRUE(d[f] == static_cast<int>(kept.size()) || kept[d[f]] > f);
    for (int p = 0; p < w.point_count; ++p) EXPECT_EQ(held.position(f, p), w.position(src, p));
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(std::count(d.begin(), d.end(), static_cast<int>(i) + 1), h[i]);
  }
}

// Issue 19: a layered report holds each body part on its own keys (render --keys).
TEST(Holds, LayersHoldEachPartOnItsOwnKeys) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  const std::vector<int> main_keys{0, 10, 20, 30, 40}, leg_keys{0, 7, 14, 21, 28, 35};
  // One layer: exactly hold_poses.
  const std::vector<int> all0(static_cast<size_t>(m.joint_count()), 0);
  const WorldPoses one = hold_layers(m, all0, {main_keys});
  EXPECT_EQ(one.positions, hold_poses(w, main_keys).positions);
  // The root and the left leg on their own keys: the left foot shows the pose of its layer's key.
  std::vector<int> layer = all0;
  const int foot = m.skeleton.find("LeftFoot");
  for (int j = foot; j >= 0; j = m.skeleton.parents[static_cast<size_t>(j)]) layer[static_cast<size_t>(j)] = 1;
  const WorldPoses two = hold_layers(m, layer, {main_keys, leg_keys});
  const std::vector<int> d = drawing_numbers(leg_keys, m.frame_count);
  for (int f = 0; f < m.frame_count; ++f) {
    EXPECT_EQ(two.position(f, foot), w.position(leg_keys[static_cast<size_t>(d[f] - 1)], foot)) << "frame " << f;
  }
  EXPECT_THROW(hold_layers(m, layer, {main_keys}), Error);  // layer 1 missing
  // The reader takes every layer's keys from a layered report, kept_frames their union.
  const io::KeptFramesReport r = io::parse_kept_frames_report(
      R"({"frames": 50, "fps": 24, "layers": [{"name": "main", "joints": ["Hips"], "keys": [0, 10, 49]},
          {"name": "legs", "joints": ["LeftUpLeg"], "keys": [0, 7, 49]}]})", "r.json");
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[1].joints, std::vector<std::string>{"LeftUpLeg"});
  EXPECT_EQ(r.kept_frames, (std::vector<int>{0, 7, 10, 49}));
}

TEST(KeptFramesReport, ReadsTheFieldTolerantly) {
  auto r = io::parse_kept_frames_report(R"({"kept_frames": [0, 3, 7], "output_fps": 24, "other": {"x": 1}})", "r");
  EXPECT_EQ(r.kept_frames, (std::vector<int>{0, 3, 7}));
  ASSERT_TRUE(r.frame_rate);
  EXPECT_EQ(*r.frame_rate, 24);
  r = io::parse_kept_frames_report(R"({"selection": {"kept_frames": [0, 2.0], "fps": 12, "output_frames": 9}})", "r");
  EXPECT_EQ(r.kept_frames, (std::vector<int>{0, 2}));
  EXPECT_EQ(*r.frame_rate, 12);
  EXPECT_EQ(*r.frame_count, 9);
  r = io::parse_kept_frames_report(R"({"frames": 40, "fps": 24, "layers": [{"name": "body", "keys": [0, 5, 39]}]})",
                                   "r");
  EXPECT_EQ(r.kept_frames, (std::vector<int>{0, 5, 39}));
  EXPECT_EQ(*r.frame_count, 40);
  for (const char* bad : {"[1, 2]", "{\"layers\": [{\"keys\": 3}]}", "{\"keys\": [0, 1]}", "{\"kept_frames\": 3}", "{\"kept_frames\": [0, 1.5]}",
                          "{\"kept_frames\": [0, -2]}", "{\"kept_frames\": [0, \"4\"]}", "{not json"}) {
    try {
      io::parse_kept_frames_report(bad, "report.json");
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_file) << bad;
      EXPECT_NE(std::string(e.what()).find("report.json"), std::string::npos);
    }
  }
}

TEST(KeptFramesReport, ASpacedReportGivesEveryDrawing) {
  const auto r = io::parse_kept_frames_report(
      R"({"frames": 20, "fps": 24, "layers": [{"name": "main", "keys": [0, 10, 19]}],
          "spacing": {"on": 2, "drawings": [{"frame": 0, "kind": "key"}, {"frame": 2, "kind": "inbetween"},
                                            {"frame": 10, "kind": "key"}, {"frame": 19, "kind": "key"}]}})",
      "r");
  EXPECT_EQ(r.kept_frames, (std::vector<int>{0, 2, 10, 19}));
  EXPECT_THROW(io::parse_kept_frames_report(R"({"kept_frames": [0], "spacing": {"drawings": [{"frame": -1}]}})", "r"), Error);
  EXPECT_THROW(io::parse_kept_frames_report(R"({"kept_frames": [0], "spacing": {"drawings": 3}})", "r"), Error);
}

TEST(ContactSheet, OneCellPerKeyEachShowingAFigure) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  for (const std::vector<int>& kept : {std::vector<int>{0}, std::vector<int>{0, 12, 30, 44, 60, 75, 90}}) {
    ContactSheetSettings s;
    s.cell_width = 120;
    s.cell_height = 150;
    const Image img = render_contact_sheet(m.skeleton, w, kept, s);
    const SheetLayout l = contact_sheet_layout(static_cast<int>(kept.size()), s);
    ASSERT_EQ(img.width, l.width);
    ASSERT_EQ(img.height, l.height);
    ASSERT_GE(l.columns * l.rows, static_cast<int>(kept.size()));
    ASSERT_LT((l.rows - 1) * l.columns, static_cast<int>(kept.size())) << "no empty row";
    const Rgba sheet_bg = img.pixel(2, 2);
    int cells = 0, left_total = 0;
    for (int i = 0; i < l.columns * l.rows; ++i) {
      // A cell's paper is the style's background; an empty slot shows the sheet behind.
      const bool cell = colour_distance(img.pixel(l.cell_x(i) + 8, l.cell_y(i) + 8), s.style.background) < 0.01;
      cells += cell;
      EXPECT_EQ(cell, i < static_cast<int>(kept.size())) << "slot " << i;
      if (!cell) {
        EXPECT_LT(colour_distance(img.pixel(l.cell_x(i) + 8, l.cell_y(i) + 8), sheet_bg), 0.01);
        continue;
      }
      // Limb pixels: vermilion (left) is red over blue, cobalt (right) blue over red.
      int limbs = 0;
      for (int y = l.cell_y(i); y < l.cell_y(i) + l.cell_height; ++y) {
        for (int x = l.cell_x(i); x < l.cell_x(i) + l.cell_width; ++x) {
          const Rgba p = img.pixel(x, y);
          const bool red = p.r > p.b + 0.25, blue = p.b > p.r + 0.25;
          left_total += red;
          limbs += red || blue;
        }
      }
      EXPECT_GT(limbs, 40) << "cell " << i << " shows a figure";
    }
    EXPECT_EQ(cells, static_cast<int>(kept.size()));
    EXPECT_GT(left_total, 10) << "left limbs are drawn in their own colour";
  }
}

TEST(ContactSheet, BadInputs) {
  const Motion m = resample(make_sample_motion(), 24);
  const WorldPoses w = forward_kinematics(m);
  EXPECT_THROW(render_contact_sheet(m.skeleton, w, std::vector<int>{0, 500}), Error);
  ContactSheetSettings s;
  s.cell_width = 0;
  EXPECT_THROW(render_contact_sheet(m.skeleton, w, std::vector<int>{0}, s), Error);
  Skeleton other = m.skeleton;
  other.end_sites.pop_back();
  EXPECT_THROW(render_contact_sheet(other, w, std::vector<int>{0}), Error);
}

TEST(ExposureSheet, GrowsWithTheClipAndRejectsBadNumbers) {
  ExposureSheetSettings s;
  s.rows_per_column = 24;
  std::vector<int> d(30);
  for (int f = 0; f < 30; ++f) d[f] = f / 3 + 1;
  const Image two = render_exposure_sheet(d, s);
  d.resize(24);
  const Image one = render_exposure_sheet(d, s);
  EXPECT_GT(two.width, one.width) << "30 frames at 24 rows need a second column";
  EXPECT_EQ(one.height, two.height);
  d.resize(10);
  const Image short_clip = render_exposure_sheet(d, s);
  EXPECT_LT(short_clip.height, one.height);
  EXPECT_THROW(render_exposure_sheet(std::vector<int>{}, s), Error);
  EXPECT_THROW(render_exposure_sheet(std::vector<int>{1, 0}, s), Error);
  s.row_height = 0;
  EXPECT_THROW(render_exposure_sheet(std::vector<int>{1}, s), Error);
}

// Spacing marks (issue 42): keys circled in red, a chart column with each gap's ruler; no marks =
// the plain sheet, byte for byte.
TEST(ExposureSheet, SpacingCirclesKeysAndDrawsCharts) {
  ExposureSheetSettings s;
  s.rows_per_column = 24;
  std::vector<int> d(30);
  for (int f = 0; f < 30; ++f) d[f] = f / 2 + 1;  // a drawing every 2 frames: keys 1, 6, 15
  const Image plain = render_exposure_sheet(d, s);
  EXPECT_EQ(render_exposure_sheet(d, s, SheetSpacing{}).rgba, plain.rgba);
  SheetSpacing sp;
  sp.key_drawings = {1, 6, 15};
  sp.charts = {{0, 10, {0.1, 0.3, 0.6, 0.9}, {2, 3, 4, 5}}, {10, 28, {0.5, 0.75}, {7, 8}}};
  const Image marked = render_exposure_sheet(d, s, sp);
  EXPECT_GT(marked.width, plain.width) << "a chart column";
  EXPECT_EQ(marked.height, plain.height);
  auto reds = [](const Image& img) {
    int n = 0;
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) {
        const Rgba p = img.pixel(x, y);
        n += p.r > 0.6 && p.g < 0.35 && p.b < 0.35;
      }
    }
    return n;
  };
  EXPECT_GT(reds(marked), reds(plain) + 100) << "keys circled";
  sp.charts[0].ticks[0] = 1.5;
  EXPECT_THROW(render_exposure_sheet(d, s, sp), Error);
  sp.charts[0].ticks[0] = 0.1;
  sp.charts[1].end = 30;
  EXPECT_THROW(render_exposure_sheet(d, s, sp), Error);
}

TEST(Comparison, MarkerShowsNewDrawingsAndHolds) {
  const Motion m = cut(resample(make_sample_motion(), 24), 0, 12);
  const WorldPoses w = forward_kinematics(m);
  Comparison c;
  c.kept_frames = {0, 4, 8};
  c.result = {m.skeleton, hold_poses(w, c.kept_frames), "on 4s"};
  CameraSettings cs;
  cs.width = 640;
  cs.height = 360;
  const CompareSettings settings;
  const ComparisonFraming fr = frame_comparison(c, cs, settings);
  // The NEW badge is filled with the accent colour; a HOLD badge is not.
  auto accent_pixels = [&](int frame) {
    const Image img = render_comparison_frame(c, fr, frame, {}, settings);
    int n = 0;
    for (int y = 0; y < 80; ++y) {
      for (int x = 0; x < 320; ++x) n += colour_distance(img.pixel(x, y), settings.accent) < 0.05;
    }
    return n;
  };
  EXPECT_GT(accent_pixels(4), 200);
  EXPECT_EQ(accent_pixels(5), 0);
  EXPECT_GT(accent_pixels(8), 200);
  Comparison bad = c;
  bad.original = Clip{m.skeleton, forward_kinematics(cut(m, 0, 5)), "short"};
  EXPECT_THROW(frame_comparison(bad, cs, settings), Error);
}

}  // namespace
}  // namespace koma::render
