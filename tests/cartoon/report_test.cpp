#include "koma/cartoon/report.hpp"

#include <gtest/gtest.h>

#include "koma/core/fk.hpp"
#include "koma/core/sample.hpp"

namespace koma::cartoon {
namespace {

// CartoonResult names the joint and frame of its largest change, and the report carries them.
TEST(CartoonReport, NamesWorstJointAndFrame) {
  const Motion m = make_sample_motion();
  CartoonSettings cs;
  cs.strength = 32.0;
  cs.keep_feet = true;
  const CartoonResult r = cartoon_motion(m, cs);
  const WorldPoses a = forward_kinematics(m), b = forward_kinematics(r.motion);
  double worst = 0;
  for (int f = 0; f < m.frame_count; ++f) {
    for (int j = 0; j < m.joint_count(); ++j) worst = std::max(worst, (a.position(f, j) - b.position(f, j)).norm());
  }
  EXPECT_DOUBLE_EQ(r.max_change_m, worst);
  EXPECT_DOUBLE_EQ((a.position(r.max_change_frame, r.max_change_joint) - b.position(r.max_change_frame, r.max_change_joint)).norm(),
                   r.max_change_m);
  const nlohmann::json s = cartoon_summary(r, cs);
  EXPECT_EQ(s["body_change_mm"]["worst_joint"], m.skeleton.names[static_cast<size_t>(r.max_change_joint)]);
  EXPECT_EQ(s["body_change_mm"]["worst_frame"], r.max_change_frame);
  EXPECT_EQ(s["contacts"], r.contacts.contact_count());
  const nlohmann::json rep = cartoon_report(r, cs);
  EXPECT_TRUE(rep["contacts"].is_array());
  EXPECT_EQ(rep["root_sigma_frames"].size(), static_cast<size_t>(m.frame_count));
  EXPECT_EQ(cartoon_points_summary(10, 3, 30.0, cs)["sigma_frames"], "auto");
  // Both strengths and both sigma units are reported.
  EXPECT_EQ(s["strength"], cs.strength);
  EXPECT_DOUBLE_EQ(s["strength_per_frame"].get<double>(), r.filter.strength);
  EXPECT_NEAR(s["sigma_seconds"]["mean"].get<double>(), r.sigma_mean / m.frame_rate, 1e-12);
  CartoonSettings per_frame = cs;
  per_frame.per_frame = FilterSettings{};
  per_frame.per_frame->sigma_frames = 4;
  const nlohmann::json p = cartoon_points_summary(10, 3, 120.0, per_frame);
  EXPECT_TRUE(p["strength"].is_null());
  EXPECT_EQ(p["sigma_frames"], 4.0);
}

}  // namespace
}  // namespace koma::cartoon
