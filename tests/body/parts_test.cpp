#include "koma/body/parts.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/core/sample.hpp"
#include "test_support.hpp"

namespace koma::body {
namespace {

TEST(BodyParts, EveryNameRoundTrips) {
  for (int p = 0; p < kBodyPartCount; ++p) {
    const auto part = static_cast<BodyPart>(p);
    EXPECT_EQ(parse_part(part_name(part)), part) << part_name(part);
    EXPECT_EQ(find_part(part_name(part)), part) << part_name(part);
    EXPECT_EQ(part_names()[p], part_name(part));
  }
}

TEST(BodyParts, OldWordsAreAliases) {
  // Key layers said "torso", cartoon parts said "spine": one part.
  EXPECT_EQ(parse_part("spine"), BodyPart::torso);
  EXPECT_EQ(parse_part("torso"), BodyPart::torso);
  EXPECT_EQ(parse_part("spine"), parse_part("torso"));
  EXPECT_EQ(part_name(parse_part("spine")), "torso");  // the canonical word comes back
}

TEST(Error, ParsePart) {
  EXPECT_FALSE(find_part("tail").has_value());
  EXPECT_FALSE(find_part("Torso").has_value());  // exact lower-case spelling
  try {
    parse_part("tail");
    FAIL() << "unknown part accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(std::string(e.what()).find("root, torso, head, arms, legs"), std::string::npos) << e.what();
  }
}

TEST(BodyParts, ByName) {
  EXPECT_EQ(body_part_of("LeftForeArm"), BodyPart::arms);
  EXPECT_EQ(body_part_of("mixamorig:RightHandThumb1"), BodyPart::arms);
  EXPECT_EQ(body_part_of("Shoulder_L"), BodyPart::arms);
  EXPECT_EQ(body_part_of("lShldr"), BodyPart::arms);
  EXPECT_EQ(body_part_of("clavicle_R"), BodyPart::arms);
  EXPECT_EQ(body_part_of("LHipJoint"), BodyPart::legs);
  EXPECT_EQ(body_part_of("rThigh"), BodyPart::legs);
  EXPECT_EQ(body_part_of("calf_L"), BodyPart::legs);
  EXPECT_EQ(body_part_of("Toes_R"), BodyPart::legs);
  EXPECT_EQ(body_part_of("Neck1"), BodyPart::head);
  EXPECT_EQ(body_part_of("HeadTop_End"), BodyPart::head);
  EXPECT_EQ(body_part_of("hip"), BodyPart::torso);
  EXPECT_EQ(body_part_of("Hips"), BodyPart::torso);
  EXPECT_EQ(body_part_of("LowerBack"), BodyPart::torso);
  EXPECT_EQ(body_part_of("Chest2"), BodyPart::torso);
  EXPECT_EQ(body_part_of("RightHip"), BodyPart::legs);
}

TEST(BodyParts, JointPartsInheritDownTheTree) {
  const Skeleton s = sample_skeleton();
  const std::vector<BodyPart> parts = joint_parts(s);
  ASSERT_EQ(static_cast<int>(parts.size()), s.joint_count());
  EXPECT_EQ(parts[0], BodyPart::torso);  // the root
  for (int j = 1; j < s.joint_count(); ++j) {
    EXPECT_NE(parts[j], BodyPart::root) << s.names[j];
    if (parts[s.parents[j]] != BodyPart::torso) {
      EXPECT_EQ(parts[j], parts[s.parents[j]]) << s.names[j];
    }
  }
  int legs = 0, arms = 0, head = 0;
  for (BodyPart p : parts) {
    legs += p == BodyPart::legs;
    arms += p == BodyPart::arms;
    head += p == BodyPart::head;
  }
  EXPECT_GT(legs, 0);
  EXPECT_GT(arms, 0);
  EXPECT_GT(head, 0);
}

}  // namespace
}  // namespace koma::body
