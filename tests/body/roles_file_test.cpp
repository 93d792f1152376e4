// The one roles-file reader (body/roles_file.hpp): overrides of the roles found by name.
#include "koma/body/roles_file.hpp"

#include <gtest/gtest.h>

#include "koma/core/error.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::body {
namespace {

const Motion& walk30() {
  static const Motion m = io::read_motion(test::test_data("timing_walk30.bvh")).motion;
  return m;
}

TEST(RolesFile, OverridesRolesFoundByName) {
  const Skeleton& sk = walk30().skeleton;
  const JointRoles found = find_joint_roles(sk);
  const std::string hand = sk.point_name(found[Role::left_hand]);
  const JointRoles r = roles_from_json(sk, "{\"left_ankle\": \"" + hand + "\"}", "roles.json");
  EXPECT_EQ(r[Role::left_ankle], found[Role::left_hand]);
  EXPECT_EQ(r[Role::right_ankle], found[Role::right_ankle]);
  EXPECT_EQ(read_roles(sk, "").points, found.points);
}

TEST(Error, RolesFile) {
  const Skeleton& sk = walk30().skeleton;
  auto context_of = [&](std::string_view text) {
    try {
      roles_from_json(sk, text, "roles.json");
    } catch (const Error& e) {
      return std::make_pair(e.code(), e.context());
    }
    return std::make_pair(ErrorCode::io, std::string("no error"));
  };
  EXPECT_EQ(context_of("{"), std::make_pair(ErrorCode::bad_file, std::string("roles.json")));
  EXPECT_EQ(context_of("[1]"), std::make_pair(ErrorCode::bad_file, std::string("roles.json")));
  EXPECT_EQ(context_of("{\"left_ankle\": 3}"), std::make_pair(ErrorCode::bad_file, std::string("roles.json")));
  EXPECT_EQ(context_of("{\"left_tentacle\": \"Hips\"}").first, ErrorCode::invalid_settings);
  EXPECT_EQ(context_of("{\"left_ankle\": \"NoSuchJoint\"}").first, ErrorCode::mismatch);
  EXPECT_THROW(read_roles(sk, "no/such/roles.json"), Error);
}

}  // namespace
}  // namespace koma::body
