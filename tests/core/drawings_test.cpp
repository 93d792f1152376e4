// The one drawing numbering (core/drawings.hpp) that the keys reports, sheets and videos share.
#include "koma/core/drawings.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "koma/core/error.hpp"

namespace koma {
namespace {

TEST(Drawings, EachFrameShowsTheLatestKeptFrame) {
  const std::vector<int> kept = {0, 3, 4, 9};
  const std::vector<int> d = drawing_numbers(kept, 12);
  EXPECT_EQ(d, (std::vector<int>{1, 1, 1, 2, 3, 3, 3, 3, 3, 4, 4, 4}));
  EXPECT_EQ(drawing_numbers(std::vector<int>{0}, 3), (std::vector<int>{1, 1, 1}));  // one drawing held throughout
}

TEST(Drawings, KeptFramesThatDoNotMatchTheMotionAreMismatchErrors) {
  for (const std::vector<int>& bad : {std::vector<int>{}, std::vector<int>{1, 4}, std::vector<int>{0, 5, 5},
                                      std::vector<int>{0, 7, 3}, std::vector<int>{0, 10}, std::vector<int>{0, -1}}) {
    try {
      check_kept_frames(bad, 10, "report.json");
      FAIL() << "accepted a bad list";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::mismatch);
      EXPECT_EQ(e.context(), "report.json");
    }
  }
  EXPECT_NO_THROW(check_kept_frames(std::vector<int>{0, 9}, 10, "r"));
}

TEST(Drawings, DrawingNumbersCheckTheirKeptFrames) {
  EXPECT_THROW(drawing_numbers(std::vector<int>{1, 4}, 10), Error);
  EXPECT_THROW(drawing_numbers(std::vector<int>{}, 10), Error);
}

}  // namespace
}  // namespace koma
