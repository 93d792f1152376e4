// Issue 19: "on 2s" means no drawing held shorter than 2 frames, unless allow_ones asks for 1s on
// fast action; on the built-in walk and on every shared walk and action.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/keys/body.hpp"
#include "koma/keys/keys.hpp"
#include "test_support.hpp"

namespace koma::keys {
namespace {

// Shortest hold of a key list (the last key shows one frame and is exempt).
int shortest_hold(const std::vector<int>& keys) {
  int h = 1 << 30;
  for (size_t i = 0; i + 1 < keys.size(); ++i) h = std::min(h, keys[i + 1] - keys[i]);
  return h;
}

TEST(OnTwos, DefaultAndOnNHoldAtLeastN) {
  const Motion m = resample(make_sample_motion(), 24.0);
  KeySettings st;  // no count: on 2s
  const KeySelection none = select_keys(m, st);
  EXPECT_GE(shortest_hold(none.keys()), 2);
  EXPECT_EQ(none.layers[0].min_hold, 2);
  for (int on : {2, 3, 4}) {
    st.on = on;
    const KeySelection s = select_keys(m, st);
    EXPECT_GE(shortest_hold(s.keys()), on) << "on " << on;
  }
}

TEST(OnTwos, AllowOnesTradesShortHoldsOnFastAction) {
  const Motion m = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.on = 2;
  const KeySelection twos = select_keys(m, st);
  st.allow_ones = true;
  const KeySelection ones = select_keys(m, st);
  EXPECT_EQ(ones.keys().size(), twos.keys().size());
  EXPECT_EQ(shortest_hold(ones.keys()), 1);  // the sample's jump is fast enough to take 1s
  EXPECT_LE(ones.error, twos.error);         // fewer constraints: never worse
}

TEST(OnTwos, LayersHoldAtLeastTheirOwnN) {
  const Motion m = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.on = 2;
  st.layers = parse_layers("legs:3,arms:2");
  const KeySelection s = select_keys(m, st);
  ASSERT_EQ(s.layers.size(), 3u);
  EXPECT_GE(shortest_hold(s.layers[0].keys), 2);
  EXPECT_GE(shortest_hold(s.layers[1].keys), 3);
  EXPECT_GE(shortest_hold(s.layers[2].keys), 2);
}

TEST(OnTwos, RefusedWhereItCannotApply) {
  const Motion m = resample(make_sample_motion(), 24.0);
  KeySettings st;
  st.keys = 20;
  st.allow_ones = true;  // nothing to allow: keys has no floor
  EXPECT_THROW(st.validate(), Error);
  st = KeySettings{};
  st.on = 2;
  st.constraints.locked = {10, 11};  // two drawings one frame apart cannot be on 2s
  try {
    select_keys(m, st);
    ADD_FAILURE() << "locked frames 1 apart on 2s should be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("allow_ones"), std::string::npos) << e.what();
  }
  st.allow_ones = true;
  EXPECT_NO_THROW(select_keys(m, st));
}

// The case: a Bandai walk on 2s made 1-frame holds; no shared walk or action does now.
TEST(OnTwos, SharedWalksAndActionsHaveNoOnes) {
  KOMA_REQUIRE_SHARED_DATA();
  int clips = 0;
  for (const char* dir : {"bvh/styles/bandai-namco-1", "bvh/styles/xia2015"}) {
    int in_dir = 0;
    for (const auto& path : test::shared_bvh_files(dir)) {
      if (++in_dir > 6) break;
      const Motion m = resample(io::read_motion(path).motion, 24.0);
      KeySettings st;
      st.on = 2;
      const KeySelection s = select_keys(m, st);
      EXPECT_GE(shortest_hold(s.keys()), 2) << path;
      ++clips;
    }
  }
  EXPECT_GT(clips, 0);
}

}  // namespace
}  // namespace koma::keys
