#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <random>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/io/bvh.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/core/units.hpp"
#include "test_support.hpp"

namespace koma::io {
namespace {

// A small valid file: root with 6 channels, one joint with 3, End Sites, two frames.
const std::string kGood =
    "HIERARCHY\n"
    "ROOT Hips\n"
    "{\n"
    "  OFFSET 0 0 0\n"
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "  JOINT Spine\n"
    "  {\n"
    "    OFFSET 0 10 0\n"
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "    End Site\n"
    "    {\n"
    "      OFFSET 0 10 0\n"
    "    }\n"
    "  }\n"
    "}\n"
    "MOTION\n"
    "Frames: 2\n"
    "Frame Time: 0.0333333\n"
    "0 90 0 0 0 0 0 0 0\n"
    "1 90 0 0 0 90 90 0 0\n";

// Runs the parser and returns the error (code + text); fails the test if it does not throw.
Error parse_error(const std::string& text, const BvhReadOptions& o = {}) {
  try {
    parse_bvh(text, "t.bvh", o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error for:\n" << text.substr(0, 400);
  return Error(ErrorCode::io, "", "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
  const Error e = parse_error(text);
  EXPECT_EQ(e.code(), ErrorCode::bad_file) << e.what();
  EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << "want '" << where << "' in: " << e.what();
  EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << "want '" << what << "' in: " << e.what();
}

TEST(BvhRead, ReadsSmallFileWithUnitsAndAngles) {
  const ReadResult r = parse_bvh(kGood, "t.bvh", {LengthUnit::centimetre});
  const Motion& m = r.motion;
  EXPECT_EQ(m.joint_count(), 2);
  EXPECT_EQ(m.frame_count, 2);
  EXPECT_EQ(m.frame_rate, 30.0);  // 0.0333333 snaps to exactly 30 fps
  EXPECT_EQ(m.skeleton.end_site_count(), 1);
  EXPECT_VEC3_NEAR(m.skeleton.offsets[1], Vec3(0, 0.1, 0), 1e-15);
  EXPECT_VEC3_NEAR(m.translation(1, 0), Vec3(0.01, 0.9, 0), 1e-15);
  const WorldPoses w = forward_kinematics(m);
  // Frame 1: Spine turned 90 deg about Z maps its +Y bone to -X.
  // Frame 1: root turned 90 deg about Y, Spine 90 deg about Z: the Spine's +Y bone goes to -X in
  // the root's frame, which the root's Y turn maps to +Z.
  EXPECT_VEC3_NEAR(w.position(1, 2), Vec3(0.01, 0.9 + 0.1, 0.1), 1e-12);
  EXPECT_TRUE(r.warnings.empty());  // the unit was given: no guess to warn about
}

TEST(BvhRead, AcceptsCrlfTabsBomAndNamesWithSpaces) {
  std::string t = "\xEF\xBB\xBF" + replace(replace(kGood, "JOINT Spine", "JOINT\tmixamorig:Left Up Leg"), "  ", "\t");
  std::string crlf;
  for (char c : t) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const ReadResult r = parse_bvh(crlf, "t.bvh");
  EXPECT_EQ(r.motion.skeleton.names[1], "mixamorig:Left Up Leg");
  EXPECT_EQ(r.motion.frame_count, 2);
}

TEST(BvhRead, BraceOnKeywordLineAndOddChannelOrders) {
  std::string t = replace(kGood, "JOINT Spine\n  {\n", "JOINT Spine {\n");
  t = replace(t, "CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Yrotation Xrotation Zrotation");
  const ReadResult r = parse_bvh(t, "t.bvh");
  EXPECT_EQ(r.motion.skeleton.euler_order(1), EulerOrder::YXZ);
}

TEST(BvhRead, MoreRowsThanDeclaredReadsDeclaredAndWarns) {
  const ReadResult r = parse_bvh(kGood + "2 90 0 0 0 0 0 0 0\n", "t.bvh", {LengthUnit::metre});
  EXPECT_EQ(r.motion.frame_count, 2);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("t.bvh:21"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("1 motion row"), std::string::npos) << r.warnings[0];
}

TEST(BvhRead, DetectsUnitFromSize) {
  EXPECT_EQ(detect_bvh_unit(1.7), LengthUnit::metre);
  EXPECT_EQ(detect_bvh_unit(65), LengthUnit::inch);
  EXPECT_EQ(detect_bvh_unit(170), LengthUnit::centimetre);
  EXPECT_EQ(detect_bvh_unit(1700), LengthUnit::millimetre);
  const ReadResult r = parse_bvh(replace(replace(kGood, "OFFSET 0 10 0", "OFFSET 0 20 0"), "OFFSET 0 10 0", "OFFSET 0 150 0"), "t.bvh");
  EXPECT_EQ(r.motion.source_unit, LengthUnit::centimetre);
  EXPECT_TRUE(r.unit_detected);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_NE(r.unit_rule.find("150 file units"), std::string::npos) << r.unit_rule;
  // A 10-unit figure is nearest a person in CMU units (0.56 m), with a warning naming that reading.
  const ReadResult small = parse_bvh(kGood, "t.bvh");
  EXPECT_EQ(small.motion.source_unit, LengthUnit::cmu);
  ASSERT_EQ(small.warnings.size(), 1u);
  EXPECT_NE(small.warnings[0].find("CMU units (1/0.45 in)"), std::string::npos) << small.warnings[0];
  EXPECT_NE(small.warnings[0].find("0.56 m"), std::string::npos) << small.warnings[0];
}

// Issue 19: the cgspeed CMU / Xia / Truebones figures (24-27 file units) read as CMU units, not as
// inches (a 0.6 m doll); each band edge of the documented rule, and feet never guessed.
TEST(BvhRead, GuessPrefersAHumanSizedReading) {
  const UnitGuess cmu = guess_length_unit(26);
  EXPECT_EQ(cmu.unit, LengthUnit::cmu);
  EXPECT_NEAR(cmu.height, 26 * 0.0254 / 0.45, 1e-12);
  EXPECT_TRUE(cmu.human_sized);
  EXPECT_FALSE(guess_length_unit(24).human_sized);  // 1.35 m: still CMU units, but warned
  EXPECT_EQ(guess_length_unit(24).unit, LengthUnit::cmu);
  EXPECT_EQ(guess_length_unit(5).unit, LengthUnit::metre);  // not 5 ft
  EXPECT_EQ(guess_length_unit(7.1).unit, LengthUnit::metre);
  EXPECT_EQ(guess_length_unit(7.3).unit, LengthUnit::cmu);
  EXPECT_EQ(guess_length_unit(45.0).unit, LengthUnit::cmu);
  EXPECT_EQ(guess_length_unit(45.6).unit, LengthUnit::inch);
  EXPECT_EQ(guess_length_unit(107).unit, LengthUnit::inch);
  EXPECT_EQ(guess_length_unit(108).unit, LengthUnit::centimetre);
  EXPECT_EQ(guess_length_unit(541).unit, LengthUnit::centimetre);
  EXPECT_EQ(guess_length_unit(543).unit, LengthUnit::millimetre);
  EXPECT_FALSE(guess_length_unit(0).human_sized);
  EXPECT_FALSE(guess_length_unit(NAN).human_sized);
  // Every size in the human band of some candidate is human-sized under the guess (property).
  for (LengthUnit u : {LengthUnit::metre, LengthUnit::cmu, LengthUnit::inch, LengthUnit::centimetre,
                       LengthUnit::millimetre}) {
    for (double h = 1.4; h <= 2.1; h += 0.05) {
      const UnitGuess g = guess_length_unit(h / metres_per_unit(u));
      EXPECT_EQ(g.unit, u) << h << " m in " << to_string(u);
      EXPECT_TRUE(g.human_sized) << g.rule;
    }
  }
}

// Issue 19: a numeric scale (metres per file unit) is applied, kept, and restored by the writer.
TEST(BvhRead, NumericScaleReadsAndRoundTrips) {
  BvhReadOptions o;
  o.scale = 0.056;
  const ReadResult r = parse_bvh(kGood, "t.bvh", o);
  EXPECT_FALSE(r.unit_detected);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_DOUBLE_EQ(r.motion.source_scale, 0.056);
  EXPECT_DOUBLE_EQ(r.motion.source_metres_per_unit(), 0.056);
  EXPECT_NEAR(r.motion.skeleton.offsets[1].y(), 0.56, 1e-12);
  EXPECT_NEAR(r.motion.translation(0, 0).y(), 90 * 0.056, 1e-12);
  const std::string back = format_bvh(r.motion);
  EXPECT_NE(back.find("OFFSET 0 10 0"), std::string::npos) << back.substr(0, 300);
  o.scale = -1;
  EXPECT_EQ(parse_error(kGood, o).code(), ErrorCode::invalid_settings);
  o.scale = NAN;
  EXPECT_EQ(parse_error(kGood, o).code(), ErrorCode::invalid_settings);
}

// ---- one test per malformed case of the issue --------------------------------------------------

TEST(BvhMalformed, EmptyFile) { expect_error("", "t.bvh", "empty"); }
TEST(BvhMalformed, OnlyWhitespace) { expect_error("  \n\n", "t.bvh", "HIERARCHY"); }
TEST(BvhMalformed, BinaryGarbage) { expect_error(std::string("\x89PNG\r\n\x1a\n\0\0\0", 11), "t.bvh:1", "binary"); }
TEST(BvhMalformed, NotBvh) { expect_error("hello world\n", "t.bvh:1", "expected HIERARCHY"); }
TEST(BvhMalformed, TruncatedHierarchy) { expect_error(kGood.substr(0, kGood.find("End Site")), "t.bvh", "truncated"); }
TEST(BvhMalformed, UnbalancedBracesExtraClose) {
  expect_error(replace(kGood, "  }\n}\n", "  }\n}\n}\n"), "t.bvh:16", "unbalanced");
}
TEST(BvhMalformed, UnbalancedBracesMissingClose) {
  expect_error(replace(kGood, "  }\n}\nMOTION", "  }\nMOTION"), "t.bvh:15", "still open");
}
TEST(BvhMalformed, MissingMotion) { expect_error(kGood.substr(0, kGood.find("MOTION")), "t.bvh", "without a MOTION"); }
TEST(BvhMalformed, UnknownChannel) {
  expect_error(replace(kGood, "Xrotation Yrotation\n    End", "Xrotation Wrotation\n    End"), "t.bvh:9", "unknown channel 'Wrotation'");
}
TEST(BvhMalformed, ChannelCountDisagrees) {
  expect_error(replace(kGood, "CHANNELS 3", "CHANNELS 4"), "t.bvh:9", "declares 4 channels but lists 3");
}
TEST(BvhMalformed, TooFewValuesOnRow) { expect_error(replace(kGood, "1 90 0 0 0 90 90 0 0", "1 90 0 0 0 90 90 0"), "t.bvh:20", "has 8 values"); }
TEST(BvhMalformed, TooManyValuesOnRow) { expect_error(replace(kGood, "1 90 0 0 0 90 90 0 0", "1 90 0 0 0 90 90 0 0 7"), "t.bvh:20", "more than the 9"); }
TEST(BvhMalformed, NonNumericValue) { expect_error(replace(kGood, "1 90 0 0 0 90", "1 90 0 abc 0 90"), "t.bvh:20", "'abc' is not a number"); }
TEST(BvhMalformed, NanValue) { expect_error(replace(kGood, "1 90 0 0 0 90", "1 90 0 nan 0 90"), "t.bvh:20", "not finite"); }
TEST(BvhMalformed, InfValue) { expect_error(replace(kGood, "1 90 0 0 0 90", "1 90 0 -inf 0 90"), "t.bvh:20", "not finite"); }
TEST(BvhMalformed, NanOffset) { expect_error(replace(kGood, "OFFSET 0 10 0", "OFFSET 0 nan 0"), "t.bvh:8", "not finite"); }
TEST(BvhMalformed, NegativeFrameCount) { expect_error(replace(kGood, "Frames: 2", "Frames: -5"), "t.bvh:17", "-5 frames"); }
TEST(BvhMalformed, ZeroFrameCount) { expect_error(replace(kGood, "Frames: 2", "Frames: 0"), "t.bvh:17", "at least 1"); }
TEST(BvhMalformed, AbsurdFrameCount) {
  expect_error(replace(kGood, "Frames: 2", "Frames: 99999999999"), "t.bvh:17", "limit");
  // Plausible count, but far more rows than the file can hold: refused before allocating.
  expect_error(replace(kGood, "Frames: 2", "Frames: 4000000"), "t.bvh:18", "at most");
}
TEST(BvhMalformed, FractionalFrameCount) { expect_error(replace(kGood, "Frames: 2", "Frames: 2.5"), "t.bvh:17", "whole number"); }
TEST(BvhMalformed, ZeroFrameTime) { expect_error(replace(kGood, "0.0333333", "0"), "t.bvh:18", "> 0"); }
TEST(BvhMalformed, NegativeFrameTime) { expect_error(replace(kGood, "0.0333333", "-0.01"), "t.bvh:18", "> 0"); }
TEST(BvhMalformed, FewerRowsThanDeclared) { expect_error(replace(kGood, "Frames: 2", "Frames: 3"), "t.bvh", "truncated"); }
TEST(BvhMalformed, MissingFramesLine) { expect_error(replace(kGood, "Frames: 2\n", ""), "t.bvh:17", "expected 'Frames: <count>'"); }
TEST(BvhMalformed, EndsAfterMotion) { expect_error(kGood.substr(0, kGood.find("Frames")), "t.bvh", "ends after MOTION"); }
TEST(BvhMalformed, JointOutsideRoot) { expect_error("HIERARCHY\nJOINT A\n{\n}\nMOTION\n", "t.bvh:2", "outside any ROOT"); }
TEST(BvhMalformed, DuplicateJointName) { expect_error(replace(kGood, "JOINT Spine", "JOINT Hips"), "t.bvh:6", "used twice"); }
TEST(BvhMalformed, OffsetWithTwoNumbers) { expect_error(replace(kGood, "OFFSET 0 10 0", "OFFSET 0 10"), "t.bvh:8", "3 numbers"); }

// kGood's skeleton with `frames` rows, long enough (several MiB) that the motion section is read
// in many chunks on every core. Row f: root X position f / 100 cm, root Z rotation f mod 360 - 180,
// spine X rotation f mod 170 - 85; a blank line after every 1000th row and CRLF on every 7th.
std::string long_file(int frames) {
  std::string out = kGood.substr(0, kGood.find("Frames:"));
  out += "Frames: " + std::to_string(frames) + "\nFrame Time: 0.0083333\n";
  for (int f = 0; f < frames; ++f) {
    out += std::to_string(f / 100.0) + " 90 0 " + std::to_string(f % 360 - 180) + " 0 0 0 " + std::to_string(f % 170 - 85) + " 0";
    out += f % 7 == 0 ? "\r\n" : "\n";
    if (f % 1000 == 999) out += "  \n";
  }
  return out;
}

// The file line of frame f's row in long_file(): 18 header lines, then rows and blank lines.
int long_file_line(int f) { return 19 + f + f / 1000; }

TEST(BvhRead, LongMotionIsReadInChunksLikeRowByRow) {
  const int frames = 450000;
  const std::string text = long_file(frames);
  ASSERT_GT(text.size(), 12u << 20);  // three chunks of 4 MiB or more
  BvhReadOptions o;
  o.unit = LengthUnit::centimetre;
  const ReadResult r = parse_bvh(text, "long.bvh", o);
  ASSERT_EQ(r.motion.frame_count, frames);
  EXPECT_TRUE(r.warnings.empty());
  for (int f = 0; f < frames; f += 997) {
    EXPECT_NEAR(r.motion.translation(f, 0).x(), f / 100.0 * 0.01, 1e-12) << f;
    const Quat root = euler_to_quat(Vec3((f % 360 - 180) * kDegToRad, 0, 0), EulerOrder::ZXY);
    const Quat spine = euler_to_quat(Vec3(0, (f % 170 - 85) * kDegToRad, 0), EulerOrder::ZXY);
    EXPECT_LT(test::rotation_angle(r.motion.rotation(f, 0), root), 1e-12) << f;
    EXPECT_LT(test::rotation_angle(r.motion.rotation(f, 1), spine), 1e-12) << f;
  }
}

TEST(BvhMalformed, LongFileNamesTheFirstBadRowWhateverChunkItIsIn) {
  std::string text = long_file(450000);
  // Two bad rows in different chunks: the error is the first one's, as read from the top.
  for (int f : {420000, 270001}) {
    const std::string row = std::to_string(f / 100.0) + " 90 0";
    const size_t at = text.find("\n" + row + " ") + 1;
    ASSERT_NE(at, std::string::npos);
    text.replace(at, row.size(), std::to_string(f / 100.0) + " 90 x");
  }
  expect_error(text, "t.bvh:" + std::to_string(long_file_line(270001)) + ":", "frame 270001, value 3: 'x' is not a number");
}

TEST(BvhMalformed, LongFileTruncatedOrLongerThanDeclared) {
  const std::string text = long_file(420000);
  // Declares more rows than it has: the count read and the last line are named.
  const std::string more = replace(text, "Frames: 420000", "Frames: 420500");
  const int last_line = long_file_line(419999) + 1;  // the blank line after frame 419999
  expect_error(more, "t.bvh:" + std::to_string(last_line) + ":", "ends after 420000 of the 420500 frames declared on line 17");
  // Declares fewer: those are read, and the warning names the first row ignored.
  BvhReadOptions o;
  o.unit = LengthUnit::centimetre;
  const ReadResult r = parse_bvh(replace(text, "Frames: 420000", "Frames: 300000"), "t.bvh", o);
  EXPECT_EQ(r.motion.frame_count, 300000);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("t.bvh:" + std::to_string(long_file_line(299999) + 1) + ": 120000 motion row(s) beyond"),
            std::string::npos) << r.warnings[0];
}

// Positions are read exactly as std::from_chars reads them, bit for bit, whether the reader's
// plain-decimal fast path or from_chars itself takes the number: short and long digit strings,
// many decimals, signs, leading zeros, exponents, 2^53 and beyond.
TEST(BvhRead, NumbersAreReadExactlyAsFromChars) {
  std::mt19937_64 rng(7);
  std::vector<std::string> numbers = {"0", "-0", "7", ".5", "-.25", "1.", "9007199254740992", "9007199254740993",
                                      "0.1", "123456789012345678", "1234567890123456789012", "0.0000000000000000000000001",
                                      "1e5", "-2.5E-3", "3.14159265358979323846", "000012.500", "+4.75"};
  for (int q = 0; q < 3000; ++q) {
    std::string t;
    if (rng() % 2) t.push_back('-');
    const int whole = static_cast<int>(rng() % 12), dec = static_cast<int>(rng() % 26);
    for (int d = 0; d < whole; ++d) t += static_cast<char>('0' + rng() % 10);
    if (dec > 0) t += '.';
    for (int d = 0; d < dec; ++d) t += static_cast<char>('0' + rng() % 10);
    if (whole + dec == 0) t += '3';
    if (rng() % 8 == 0) {
      t.push_back('e');
      t.append(std::to_string(static_cast<int>(rng() % 40) - 20));
    }
    numbers.push_back(t);
  }
  std::string text = kGood.substr(0, kGood.find("Frames:"));
  text += "Frames: " + std::to_string(numbers.size()) + "\nFrame Time: 0.0333333\n";
  for (const std::string& v : numbers) text += v + " " + v + " 0 0 0 0 0 0 0\n";
  BvhReadOptions o;
  o.unit = LengthUnit::metre;
  const ReadResult r = parse_bvh(text, "numbers.bvh", o);
  for (size_t f = 0; f < numbers.size(); ++f) {
    const std::string& v = numbers[f];
    double want = 0;
    const char* b = v.data() + (v[0] == '+' ? 1 : 0);
    ASSERT_EQ(std::from_chars(b, v.data() + v.size(), want).ec, std::errc()) << v;
    const double got = r.motion.translation(static_cast<int>(f), 0).x();
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << v << ": " << got << " vs " << want;
  }
}

TEST(BvhRead, MissingFileIsIoError) {
  try {
    read_bvh("/nonexistent/walk.bvh");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/walk.bvh"), std::string::npos);
  }
}

TEST(MotionFile, UnknownExtensionNamesSupported) {
  try {
    read_motion("walk.c3d");  // .fbx is read since issue 23; C3D is not
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".bvh"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".fbx"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace koma::io

#include "../../src/io/fast_trig.hpp"

namespace koma::io {
namespace {

TEST(FastTrig, MatchesLibmOverBvhAngleRange) {
  std::vector<double> x, s, c;
  for (double deg = -1080.0; deg <= 1080.0; deg += 0.0137) x.push_back(0.5 * deg * kDegToRad);
  for (double special : {0.0, -0.0, kPi / 4, kPi / 2, -kPi / 2, kPi, 3 * kPi / 2}) x.push_back(special);
  s.resize(x.size());
  c.resize(x.size());
  std::vector<std::int32_t> q(x.size());
  detail::sincos_moderate(x.data(), s.data(), c.data(), q.data(), x.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max({worst, std::abs(s[i] - std::sin(x[i])), std::abs(c[i] - std::cos(x[i]))});
  }
  EXPECT_LE(worst, 4e-16);
}

}  // namespace
}  // namespace koma::io
