// Issue 19: `--layers legs:3` keeps contacts. The layer that holds both feet also holds the joints
// above them (root, pelvis), so a held foot stands where it stood on its key frame: no sliding and
// no going below the floor beyond what the input itself does, on every shared walk and action.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "koma/body/contacts.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/body.hpp"
#include "koma/keys/keys.hpp"
#include "test_support.hpp"

namespace koma::keys {
namespace {

struct FootCheck {
  double input_min_height = 0, output_min_height = 0;  // lowest foot point, metres
  double input_slide = 0, output_slide = 0;            // horizontal travel while planted, metres
  int contacts = 0;
};

double horizontal(const Vec3& a, const Vec3& b) { return std::hypot(a.x() - b.x(), a.z() - b.z()); }

// Foot heights over the take, and per contact the feet's horizontal travel from the first frame
// the output shows a pose from inside the contact (its first key at or after touch-down) to the end.
FootCheck check_feet(const Motion& in, const Motion& out, const KeySelection& sel) {
  const body::JointRoles roles = body::find_joint_roles(in.skeleton);
  const auto feet = body::foot_effectors(roles);
  const body::ContactReport contacts = body::detect_contacts(in, feet);
  const WorldPoses pin = forward_kinematics(in), pout = forward_kinematics(out);
  const int layer = sel.joint_layer[static_cast<size_t>(roles[body::Role::left_ankle])];
  const std::vector<int>& keys = sel.layers[static_cast<size_t>(layer)].keys;
  FootCheck c;
  c.input_min_height = c.output_min_height = INFINITY;
  for (const auto& e : contacts.effectors) {
    for (int p : e.effector.points) {
      for (int f = 0; f < in.frame_count; ++f) {
        c.input_min_height = std::min(c.input_min_height, pin.position(f, p).y());
        c.output_min_height = std::min(c.output_min_height, pout.position(f, p).y());
      }
    }
    for (const body::Contact& k : e.contacts) {
      const auto first = std::lower_bound(keys.begin(), keys.end(), k.begin);
      if (first == keys.end() || *first >= k.end) continue;
      ++c.contacts;
      for (int p : e.effector.points) {
        for (int f = *first + 1; f < k.end; ++f) {
          c.input_slide += horizontal(pin.position(f, p), pin.position(f - 1, p));
          c.output_slide += horizontal(pout.position(f, p), pout.position(f - 1, p));
        }
      }
    }
  }
  return c;
}

void expect_feet_kept(const Motion& m, const std::string& name) {
  KeySettings st;
  st.on = 2;
  st.layers = parse_layers("legs:3");
  const KeySelection sel = select_keys(m, st);
  const Motion held = hold(m, sel);
  const FootCheck c = check_feet(m, held, sel);
  EXPECT_GE(c.output_min_height, c.input_min_height - 1e-9) << name << ": a held foot goes below the input's lowest";
  EXPECT_LE(c.output_slide, c.input_slide + 1e-9) << name << ": planted feet slide more than in the input over "
                                                  << c.contacts << " contacts";
}

TEST(LayersKeepContacts, RootJoinsTheLayerHoldingBothFeet) {
  const Motion m = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.layers = parse_layers("legs:3");
  const KeySelection sel = select_keys(m, st);
  EXPECT_EQ(sel.joint_layer[0], 1);  // the root (Hips) follows the legs
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  EXPECT_EQ(sel.joint_layer[static_cast<size_t>(roles[body::Role::head])], 0);  // the head stays main
  // One leg alone does not take the root: the other leg would then slide.
  st.layers = parse_layers("LeftUpLeg:3");
  EXPECT_EQ(select_keys(m, st).joint_layer[0], 0);
}

TEST(LayersKeepContacts, SampleWalk) { expect_feet_kept(resample(make_sample_motion(), 24.0), "sample"); }

TEST(LayersKeepContacts, EverySharedWalkAndAction) {
  KOMA_REQUIRE_SHARED_DATA();
  int clips = 0;
  for (const auto& path : test::shared_bvh_files("bvh/styles")) {
    const Motion m = resample(io::read_motion(path).motion, 24.0);
    if (m.frame_count < 12) continue;
    expect_feet_kept(m, path.string());
    ++clips;
  }
  EXPECT_GT(clips, 30);
}

}  // namespace
}  // namespace koma::keys
