#include "koma/core/skeleton.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/core/motion.hpp"
#include "koma/core/sample.hpp"

namespace koma {
namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Skeleton, ValidateNamesTheBrokenInvariant) {
  Skeleton s = sample_skeleton();
  EXPECT_NO_THROW(s.validate());
  Skeleton a = s;
  a.parents[3] = 5;
  EXPECT_NE(error_of([&] { a.validate(); }).find("invariant 2"), std::string::npos);
  Skeleton b = s;
  b.names[4] = b.names[2];
  EXPECT_NE(error_of([&] { b.validate(); }).find("used twice"), std::string::npos);
  Skeleton c = s;
  c.offsets[1].x() = NAN;
  EXPECT_NE(error_of([&] { c.validate(); }).find("invariant 5"), std::string::npos);
  Skeleton d = s;
  d.end_sites[0].parent = 99;
  EXPECT_NE(error_of([&] { d.validate(); }).find("invariant 6"), std::string::npos);
}

TEST(Skeleton, EulerOrderFollowsChannelOrder) {
  Skeleton s = sample_skeleton();
  EXPECT_EQ(s.euler_order(0), EulerOrder::ZXY);
  s.channels[1] = {Channel::Yrotation, Channel::Xrotation};
  EXPECT_EQ(s.euler_order(1), EulerOrder::YXZ);
}

TEST(Skeleton, PointNamesAndTopology) {
  const Skeleton s = sample_skeleton();
  EXPECT_EQ(s.point_name(s.joint_count()), "Head_end");
  EXPECT_EQ(s.find("LeftFoot"), 13);
  EXPECT_EQ(s.find("nope"), -1);
  Skeleton t = s;
  t.offsets[3] *= 2;  // other bone lengths, same topology
  EXPECT_NO_THROW(require_same_topology(s, t));
  t.names[5] = "Other";
  EXPECT_NE(error_of([&] { require_same_topology(s, t); }).find("LeftArm"), std::string::npos);
}

TEST(Motion, ValidateNamesFrameAndJoint) {
  Motion m = make_sample_motion();
  m.translations[static_cast<size_t>(7) * m.joint_count() + 2].y() = NAN;
  const std::string msg = error_of([&] { m.validate(); });
  EXPECT_NE(msg.find("frame 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Chest"), std::string::npos) << msg;
}

}  // namespace
}  // namespace koma
