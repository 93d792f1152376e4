#include "koma/render/plot.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/render/encode.hpp"
#include "koma/render/gallery.hpp"
#include "test_support.hpp"

namespace koma::render {
namespace {

namespace fs = std::filesystem;

// XML well-formedness: every tag closes in order, attributes are quoted, one root element.
// Handles the prolog, comments, CDATA and self-closing tags (what Cairo's SVG writer emits).
bool well_formed_xml(const std::string& x, std::string* why) {
  std::vector<std::string> stack;
  int roots = 0;
  size_t i = 0;
  auto fail = [&](const std::string& w) {
    *why = w + " at byte " + std::to_string(i);
    return false;
  };
  while ((i = x.find('<', i)) != std::string::npos) {
    if (x.compare(i, 4, "<!--") == 0) {
      const size_t e = x.find("-->", i);
      if (e == std::string::npos) return fail("unclosed comment");
      i = e + 3;
      continue;
    }
    if (x.compare(i, 9, "<![CDATA[") == 0) {
      const size_t e = x.find("]]>", i);
      if (e == std::string::npos) return fail("unclosed CDATA");
      i = e + 3;
      continue;
    }
    if (x.compare(i, 2, "<?") == 0 || x.compare(i, 2, "<!") == 0) {
      i = x.find('>', i);
      if (i == std::string::npos) return fail("unclosed declaration");
      continue;
    }
    // Find the end of the tag, skipping quoted attribute values.
    size_t j = i + 1;
    char quote = 0;
    for (; j < x.size(); ++j) {
      if (quote) {
        if (x[j] == quote) quote = 0;
      } else if (x[j] == '"' || x[j] == '\'') {
        quote = x[j];
      } else if (x[j] == '>') {
        break;
      } else if (x[j] == '<') {
        return fail("'<' inside a tag");
      }
    }
    if (j >= x.size()) return fail("unclosed tag");
    std::string tag = x.substr(i + 1, j - i - 1);
    if (tag.empty()) return fail("empty tag");
    if (tag[0] == '/') {
      const std::string name = tag.substr(1, tag.find_first_of(" \t\n") - 1);
      if (stack.empty() || stack.back() != name) return fail("mismatched </" + name + ">");
      stack.pop_back();
    } else {
      const bool self = tag.back() == '/';
      const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
      if (stack.empty()) ++roots;
      if (!self) stack.push_back(name);
    }
    i = j + 1;
  }
  if (!stack.empty()) return fail("unclosed <" + stack.back() + ">");
  if (roots != 1) return fail(std::to_string(roots) + " root elements");
  return true;
}

// PNG signature and IHDR width/height.
bool png_size(const std::string& bytes, int* w, int* h) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 24 || std::memcmp(bytes.data(), sig, 8) != 0 || bytes.compare(12, 4, "IHDR") != 0) return false;
  auto be32 = [&](size_t o) {
    return (static_cast<unsigned char>(bytes[o]) << 24) | (static_cast<unsigned char>(bytes[o + 1]) << 16) |
           (static_cast<unsigned char>(bytes[o + 2]) << 8) | static_cast<unsigned char>(bytes[o + 3]);
  };
  *w = static_cast<int>(be32(16));
  *h = static_cast<int>(be32(20));
  return true;
}

TEST(XmlChecker, CatchesBrokenDocuments) {
  std::string why;
  EXPECT_TRUE(well_formed_xml("<?xml version=\"1.0\"?><svg a=\"x>y\"><g/><!-- c --></svg>", &why)) << why;
  EXPECT_FALSE(well_formed_xml("<svg><g></svg>", &why));
  EXPECT_FALSE(well_formed_xml("<svg></svg><svg></svg>", &why));
  EXPECT_FALSE(well_formed_xml("<svg><path d=\"M0 0\"", &why));
}

void expect_valid_plot(const fs::path& dir, const std::string& stem,
                       const std::function<void(const fs::path&, const PlotSettings&)>& plot) {
  PlotSettings s;
  s.width = 640;
  s.height = 360;
  plot(dir / (stem + ".svg"), s);
  plot(dir / (stem + ".png"), s);
  std::string why;
  const std::string svg = read_file(dir / (stem + ".svg"));
  EXPECT_TRUE(well_formed_xml(svg, &why)) << stem << ": " << why;
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("width=\"640"), std::string::npos);
  int w = 0, h = 0;
  ASSERT_TRUE(png_size(read_file(dir / (stem + ".png")), &w, &h)) << stem;
  EXPECT_EQ(w, 640);
  EXPECT_EQ(h, 360);
}

TEST(Plots, EveryKindIsValidSvgAndPng) {
  const fs::path dir = test::temp_dir("render_plots");
  const std::vector<int> counts = {2, 3, 4, 5, 6, 8, 10, 14, 20};
  const std::vector<double> errors = {9.5, 5.1, 3.0, 2.2, 1.4, 0.8, 0.45, 0.2, 0.0};
  expect_valid_plot(dir, "curve", [&](const fs::path& p, const PlotSettings& s) {
    plot_error_curve(p, counts, errors, 6, s);
  });
  expect_valid_plot(dir, "curve_log", [&](const fs::path& p, PlotSettings s) {
    s.log_y = true;
    plot_error_curve(p, counts, errors, 0, s);
  });
  std::vector<double> per_frame(97);
  for (size_t i = 0; i < per_frame.size(); ++i) per_frame[i] = static_cast<double>(i % 4) * 0.01;
  expect_valid_plot(dir, "frame", [&](const fs::path& p, const PlotSettings& s) {
    plot_frame_error(p, per_frame, std::vector<int>{0, 4, 8, 96}, 24, s);
  });
  const std::vector<std::string> joints = {"LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg", "Spine & <Chest>"};
  const std::vector<std::vector<double>> amp = {
      {0.4, 0.1, 0.05}, {0.5, 0.2, 0.02}, {0.4, 0.1, 0.06}, {0.5, 0.2, 0.01}, {0.05, 0.1, 0}};
  expect_valid_plot(dir, "spectra", [&](const fs::path& p, const PlotSettings& s) { plot_spectra(p, joints, amp, s); });
  const std::vector<std::string> eff = {"LeftFoot", "RightFoot", "LeftHand"};
  const std::vector<std::vector<double>> times = {{0.1, 1.2, 2.3}, {0.65, 1.75}, {}};
  expect_valid_plot(dir, "timeline",
                    [&](const fs::path& p, const PlotSettings& s) { plot_key_timeline(p, eff, times, 3.0, s); });
}

TEST(Plots, BadInputsAreErrorsAndWriteNothing) {
  const fs::path dir = test::temp_dir("render_plots_bad");
  const std::vector<int> counts = {1, 2, 3};
  const std::vector<double> errors = {3, 2, 1};
  auto code = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return static_cast<ErrorCode>(0);
  };
  EXPECT_EQ(code([&] { plot_error_curve(dir / "a.svg", counts, std::vector<double>{1, 2}, 0); }),
            ErrorCode::bad_data);
  EXPECT_EQ(code([&] { plot_error_curve(dir / "a.svg", counts, errors, 7); }), ErrorCode::bad_data);
  EXPECT_EQ(code([&] { plot_error_curve(dir / "a.svg", std::vector<int>{3, 2, 1}, errors, 0); }),
            ErrorCode::bad_data);
  EXPECT_EQ(code([&] { plot_error_curve(dir / "a.svg", counts, std::vector<double>{1, NAN, 2}, 0); }),
            ErrorCode::bad_data);
  EXPECT_EQ(code([&] { plot_error_curve(dir / "a.pdf", counts, errors, 0); }), ErrorCode::invalid_settings);
  EXPECT_EQ(code([&] { plot_error_curve(dir / "missing" / "a.svg", counts, errors, 0); }), ErrorCode::io);
  EXPECT_EQ(code([&] { plot_frame_error(dir / "b.svg", std::vector<double>{1, 2}, std::vector<int>{5}, 24); }),
            ErrorCode::bad_data);
  EXPECT_EQ(code([&] {
              plot_spectra(dir / "c.svg", std::vector<std::string>{"a", "b"},
                           std::vector<std::vector<double>>{{1, 2}, {1}});
            }),
            ErrorCode::bad_data);
  EXPECT_EQ(code([&] {
              plot_key_timeline(dir / "d.svg", std::vector<std::string>{"a"}, std::vector<std::vector<double>>{{4.0}},
                                3.0);
            }),
            ErrorCode::bad_data);
  PlotSettings tiny;
  tiny.width = 0;
  EXPECT_EQ(code([&] { plot_error_curve(dir / "e.png", counts, errors, 0, tiny); }), ErrorCode::invalid_settings);
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(Gallery, ShowsVideosPicturesAndLinksEscaped) {
  const std::vector<std::string> files = {"walk.mp4", "sheet.png", "plot.svg", "keys.bvh", "a&b <x>.json",
                                          "index.html", ".hidden.tmp"};
  const std::string html = gallery_html(files, "koma demo", "note");
  EXPECT_NE(html.find("<video src=\"walk.mp4\""), std::string::npos);
  EXPECT_NE(html.find("<img src=\"sheet.png\""), std::string::npos);
  EXPECT_NE(html.find("<img src=\"plot.svg\""), std::string::npos);
  EXPECT_NE(html.find("<a href=\"keys.bvh\">"), std::string::npos);
  EXPECT_NE(html.find("a%26b%20%3Cx%3E.json"), std::string::npos);
  EXPECT_NE(html.find("a&amp;b &lt;x&gt;.json"), std::string::npos);
  EXPECT_EQ(html.find("index.html\""), std::string::npos);
  EXPECT_EQ(html.find(".hidden"), std::string::npos);
}

}  // namespace
}  // namespace koma::render
