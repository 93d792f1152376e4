#include "koma/io/angles_csv.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

TEST(AnglesCsv, OneColumnPerChannelInRadians) {
  SampleSettings s;
  s.walk_cycles = 1;
  s.jump = false;
  const Motion m = make_sample_motion(s);
  const std::string csv = format_angles_csv(m);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), 1 + m.skeleton.channel_count());
  EXPECT_NE(header.find("LeftUpLeg.Xrotation"), std::string::npos);
  // Row of frame 10: the ZXY angles of LeftUpLeg rebuild its rotation.
  size_t pos = 0;
  for (int line = 0; line < 11; ++line) pos = csv.find('\n', pos) + 1;
  std::vector<double> row;
  std::string cell;
  for (size_t i = pos; csv[i] != '\n'; ++i) {
    if (csv[i] == ',') {
      row.push_back(std::stod(cell));
      cell.clear();
    } else {
      cell += csv[i];
    }
  }
  row.push_back(std::stod(cell));
  int col = 2;
  for (int j = 0; j < 11; ++j) col += static_cast<int>(m.skeleton.channels[j].size());
  const Quat q = euler_to_quat(Vec3(row[col], row[col + 1], row[col + 2]), EulerOrder::ZXY);
  EXPECT_QUAT_NEAR(q, m.rotation(10, 11), 1e-7);
}

}  // namespace
}  // namespace koma::io
