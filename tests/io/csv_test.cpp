#include "koma/io/csv.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

TEST(PointsCsv, RoundTripsInEveryUnit) {
  const Motion m = make_sample_motion(SampleSettings{.walk_cycles = 1, .jump = false});
  const PointTracks t = point_tracks(m, forward_kinematics(m));
  for (LengthUnit u : {LengthUnit::metre, LengthUnit::centimetre, LengthUnit::inch}) {
    const PointTracks back = parse_points_csv(format_points_csv(t, u), "p.csv", u);
    ASSERT_EQ(back.names, t.names);
    ASSERT_EQ(back.frame_count, t.frame_count);
    EXPECT_EQ(back.frame_rate, 60.0);
    for (size_t i = 0; i < t.positions.size(); ++i) ASSERT_LE((back.positions[i] - t.positions[i]).norm(), 1e-8);
  }
}

TEST(PointsCsv, HeaderNamesColumns) {
  const Motion m = make_sample_motion();
  const std::string csv = format_points_csv(point_tracks(m, forward_kinematics(m)), LengthUnit::centimetre);
  EXPECT_EQ(csv.substr(0, csv.find('\n')).substr(0, 40), "frame,time,Hips.x,Hips.y,Hips.z,Spine.x,");
  EXPECT_NE(csv.find("Head_end.z"), std::string::npos);
}

TEST(PointsCsv, MalformedInputsNameLine) {
  auto err = [](const std::string& text) {
    try {
      parse_points_csv(text, "p.csv", LengthUnit::metre);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err("").find("empty"), std::string::npos);
  EXPECT_NE(err("a,b,c\n").find("p.csv:1"), std::string::npos);
  EXPECT_NE(err("frame,time,a.x,a.y,a.z\n0,0,1,2,3\n1,0.1,1,2\n").find("p.csv:3"), std::string::npos);
  EXPECT_NE(err("frame,time,a.x,a.y,a.z\n0,0,1,x,3\n").find("'x'"), std::string::npos);
  EXPECT_NE(err("frame,time,a.x,a.y,a.z\n0,0,1,2,3\n1,0.1,1,2,3\n2,0.5,1,2,3\n").find("evenly"), std::string::npos);
}

}  // namespace
}  // namespace koma::io
