// Helpers shared by koma's GoogleTest suites.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "koma/core/motion.hpp"

namespace koma::test {

/// The real-motion corpus (../shared/data beside the checkout, or $KOMA_SHARED_DATA).
std::filesystem::path shared_data();
/// True if the corpus is present.
bool have_shared_data();
/// Every *.bvh below shared_data()/sub, sorted; empty when absent.
std::vector<std::filesystem::path> shared_bvh_files(const std::string& sub = "bvh");
/// Tiny self-made fixtures in tests/data.
std::filesystem::path test_data(const std::string& name);
/// A fresh empty temporary directory for one test.
std::filesystem::path temp_dir(const std::string& name);

/// Skips the current test with a clear message when the corpus is absent.
#define KOMA_REQUIRE_SHARED_DATA()                                                               \
  do {                                                                                           \
    if (!::koma::test::have_shared_data())                                                       \
      GTEST_SKIP() << "real motion corpus not found at " << ::koma::test::shared_data()          \
                   << " (it sits beside the checkout as ../shared/data; set KOMA_SHARED_DATA)"; \
  } while (0)

/// Angle between two rotations in radians (sign-insensitive).
double rotation_angle(const Quat& a, const Quat& b);

}  // namespace koma::test

/// Quaternions equal up to sign within `tol` radians of rotation angle.
#define EXPECT_QUAT_NEAR(a, b, tol) EXPECT_LE(::koma::test::rotation_angle((a), (b)), (tol))
/// Vectors equal within `tol` in every component.
#define EXPECT_VEC3_NEAR(a, b, tol) EXPECT_LE(((a) - (b)).cwiseAbs().maxCoeff(), (tol)) << (a).transpose() << " vs " << (b).transpose()
