// Adverbs applied to a take (apply.hpp): synthetic walks, then the real walks of ../shared/data.
#include "koma/gait/apply.hpp"
#include "koma/gait/files.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "gait_test_util.hpp"
#include "koma/body/contacts.hpp"
#include "koma/body/parts.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/io/motion_file.hpp"
#include "test_support.hpp"

namespace koma::gait {
namespace {

using test_util::sample_walk;
using body::Role;

// The sample walk's arm-swing adverb (arms swing twice as far).
const Adverb& arms_adverb() {
  static const Adverb a = make_adverb(analyze_gait(sample_walk()), analyze_gait(sample_walk(6, 2.0)));
  return a;
}

// RMS over frames and joints of the rotation angle between two motions of one skeleton, radians.
double rotation_rms(const Motion& a, const Motion& b) {
  double sum = 0;
  for (size_t i = 0; i < a.rotations.size(); ++i) sum += std::pow(a.rotations[i].angularDistance(b.rotations[i]), 2);
  return std::sqrt(sum / static_cast<double>(a.rotations.size()));
}

// Per frame, the world yaw (about +Y) of `b`'s root relative to `a`'s, radians in (-pi, pi].
std::vector<double> root_yaw_difference(const Motion& a, const Motion& b, int root) {
  const WorldPoses wa = forward_kinematics(a), wb = forward_kinematics(b);
  std::vector<double> out;
  for (int f = 0; f < a.frame_count; ++f) {
    const size_t i = static_cast<size_t>(f) * a.joint_count() + root;
    const Quat d = (wb.rotations[i] * wa.rotations[i].conjugate()).normalized();
    out.push_back(2 * std::atan2(d.y(), d.w()));
    if (out.back() > kPi) out.back() -= 2 * kPi;
    if (out.back() < -kPi) out.back() += 2 * kPi;
  }
  return out;
}

// Largest |mean over one period| of a per-frame series (a sliding window of `window` frames).
double max_window_mean(const std::vector<double>& x, int window) {
  double worst = 0;
  for (size_t s = 0; s + window <= x.size(); ++s) {
    double m = 0;
    for (int i = 0; i < window; ++i) m += x[s + i];
    worst = std::max(worst, std::abs(m / window));
  }
  return worst;
}

TEST(ApplyToTake, AlphaZeroIsTheIdentity) {
  const Motion take = sample_walk(5);
  const WeightedAdverb w{arms_adverb(), 0.0, "arms"};
  const ApplyResult r = apply_to_take(take, std::span(&w, 1));
  ASSERT_EQ(r.motion.frame_count, take.frame_count);
  EXPECT_LT(rotation_rms(r.motion, take), 1e-9);
  EXPECT_EQ(r.motion.translations, take.translations);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(ApplyToTake, MovesTheTakeTowardsTheStyledGait) {
  // The adverb learned on one pair, applied to another take of the neutral walk (other length):
  // the take's own gait must land much nearer the styled gait than it started.
  const Motion take = sample_walk(7);
  const Gait styled = analyze_gait(sample_walk(7, 2.0));
  const WeightedAdverb w{arms_adverb(), 1.0, "arms"};
  const ApplyResult r = apply_to_take(take, std::span(&w, 1));
  EXPECT_EQ(r.phase.source, PhaseSource::contacts);
  EXPECT_NEAR(r.phase.period, 1.1, 0.05);
  const double before = coefficient_distance(analyze_gait(take), styled);
  const double after = coefficient_distance(analyze_gait(r.motion), styled);
  std::printf("sample walk, arm adverb: coefficient distance to the styled gait %.4f -> %.4f rad\n", before, after);
  EXPECT_GT(before, 0.1);
  EXPECT_LT(after, 0.3 * before);  // at least 70 % of the way
  // Root translation untouched (the adverb has no height change worth a millimetre here).
  for (int f = 0; f < take.frame_count; ++f) {
    EXPECT_EQ(r.motion.translation(f, 0).x(), take.translation(f, 0).x());
    EXPECT_EQ(r.motion.translation(f, 0).z(), take.translation(f, 0).z());
  }
}

TEST(ApplyToTake, PhaseFollowsEachCycleLength) {
  // A walk whose second half is slowed down: every cycle keeps its own length, so the phase per
  // cycle is 2 pi in both halves and the period reported is the median cycle.
  const Motion a = sample_walk(4), b = sample_walk(4, 1.0, 45.0);  // b: same walk sampled slower
  Motion take = a;
  take.frame_count = a.frame_count + b.frame_count;
  take.rotations.insert(take.rotations.end(), b.rotations.begin(), b.rotations.end());
  take.translations.insert(take.translations.end(), b.translations.begin(), b.translations.end());
  // Continue b's travel from where a ended.
  const Vec3 shift = a.translation(a.frame_count - 1, 0) - b.translation(0, 0);
  for (int f = a.frame_count; f < take.frame_count; ++f) take.frame_translations(f)[0] += Vec3(shift.x(), 0, shift.z());
  const TakePhase p = track_phase(take);
  ASSERT_EQ(p.source, PhaseSource::contacts);
  // Cycles of 1.1 s at 60 fps (66 frames) then at 45 fps seen as 60 fps (1.1 * 60 * 60/45 = 88 frames).
  const double rate_a = (p.phase[120] - p.phase[60]) / 60, rate_b = (p.phase[a.frame_count + 150] - p.phase[a.frame_count + 90]) / 60;
  EXPECT_NEAR(rate_a, 2 * kPi / 66, 0.05 * 2 * kPi / 66);
  EXPECT_NEAR(rate_b, 2 * kPi / 49.5, 0.05 * 2 * kPi / 49.5);
}

TEST(ApplyToTake, BadInput) {
  const Motion take = sample_walk(4);
  WeightedAdverb w{arms_adverb(), std::numeric_limits<double>::quiet_NaN(), "arms.adverb.json"};
  try {
    apply_to_take(take, std::span(&w, 1));
    FAIL() << "a NaN alpha must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_NE(std::string(e.what()).find("adverb arms.adverb.json: alpha must be finite"), std::string::npos) << e.what();
  }
  w.weight = std::numeric_limits<double>::infinity();
  EXPECT_THROW(apply_to_take(take, std::span(&w, 1)), Error);
  // Past the documented range: applied, with a warning naming the adverb.
  w.weight = kAlphaWarnMax + 0.5;
  const ApplyResult r = apply_to_take(take, std::span(&w, 1));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("arms.adverb.json: alpha 2.5 is outside [-1, 2]"), std::string::npos) << r.warnings[0];
  w.weight = -0.5;  // inside the range: no warning
  EXPECT_TRUE(apply_to_take(take, std::span(&w, 1)).warnings.empty());
  // Another topology, from an adverb file without roles and frames (older files).
  Adverb other = arms_adverb();
  other.skeleton.names[1] = "Elsewhere";
  other.roles.clear();
  other.frames.clear();
  const WeightedAdverb wo{other, 1.0, "other"};
  try {
    apply_to_take(take, std::span(&wo, 1));
    FAIL() << "an old adverb of another rig must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(e.message().find("learn it again"), std::string::npos) << e.what();
  }
  ApplySettings s;
  s.stride = 0;
  EXPECT_THROW(apply_to_take(take, std::span(&w, 1), s), Error);
  s = {};
  s.fixed_period = -1;
  EXPECT_THROW(apply_to_take(take, std::span(&w, 1), s), Error);
}

TEST(ApplyToTake, OtherRigMapsByRoleOrNamesTheMissingRoles) {
  // The same walk on a rig whose joints are renamed (and so is another topology): the adverb maps
  // by role and does what it does on its own rig.
  const Motion take = sample_walk(5);
  Motion renamed = take;
  for (std::string& n : renamed.skeleton.names) n = "rig:" + n;
  const WeightedAdverb w{arms_adverb(), 1.0, "arms"};
  const ApplyResult own = apply_to_take(take, std::span(&w, 1));
  const ApplyResult mapped = apply_to_take(renamed, std::span(&w, 1));
  ASSERT_FALSE(mapped.adverbs[0].same_rig);
  EXPECT_TRUE(own.adverbs[0].same_rig);
  EXPECT_FALSE(mapped.adverbs[0].mapped.empty());
  // Joints with a role move as on the own rig (up to the mapping's mean-pose frames, taken from
  // the adverb's neutral and from this take: two takes of one walk, so within 1e-3 rad).
  const body::JointRoles roles = body::find_joint_roles(take.skeleton);
  for (Role r : {body::Role::left_shoulder, body::Role::left_elbow, body::Role::right_hip, body::Role::hips}) {
    const int j = roles[r];
    double worst = 0;
    for (int f = 0; f < take.frame_count; ++f) worst = std::max(worst, own.motion.rotation(f, j).angularDistance(mapped.motion.rotation(f, j)));
    EXPECT_LT(worst, 1e-3) << body::role_name(r);
  }
  // A rig without a left arm chain: the error names the roles it lacks.
  Motion armless = renamed;
  for (int j : {roles[body::Role::left_shoulder], roles[body::Role::left_elbow], roles[body::Role::left_hand]})
    armless.skeleton.names[j] = "rig:blob" + std::to_string(j);
  try {
    apply_to_take(armless, std::span(&w, 1));
    FAIL() << "missing roles must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::mismatch);
    EXPECT_NE(e.message().find("no joint for the roles left_shoulder, left_elbow, left_hand"), std::string::npos) << e.what();
  }
}

TEST(ApplyToTake, AdverbFilesKeepRolesAndFramesAndOldFilesStillRead) {
  const Adverb& a = arms_adverb();
  ASSERT_EQ(a.roles.size(), a.posture.size());
  ASSERT_EQ(a.frames.size(), a.posture.size());
  const Adverb back = parse_adverb_json(format_adverb_json(a), "arms.adverb.json");
  EXPECT_EQ(back.roles, a.roles);
  for (size_t j = 0; j < a.frames.size(); ++j) EXPECT_EQ(back.frames[j].coeffs(), a.frames[j].coeffs());
  // A file without them (written before they were stored) reads, and applies to its own rig.
  nlohmann::json doc = nlohmann::json::parse(format_adverb_json(a));
  for (auto& p : doc["posture"]) p.erase("role"), p.erase("frame_wxyz");
  const Adverb old = parse_adverb_json(doc.dump(), "old.adverb.json");
  EXPECT_TRUE(old.roles.empty());
  EXPECT_TRUE(old.frames.empty());
  const WeightedAdverb w{old, 1.0, "old"};
  EXPECT_EQ(apply_to_take(sample_walk(4), std::span(&w, 1)).motion.frame_count, sample_walk(4).frame_count);
}

TEST(ApplyToTake, NoGaitNamesTheConfidenceAndTheFixedPeriod) {
  // The walk's first frame held still: nothing repeats.
  const Motion walk = sample_walk(4);
  Motion still = rest_motion(walk.skeleton, walk.frame_rate, 200);
  for (int f = 0; f < still.frame_count; ++f) {
    for (int j = 0; j < still.joint_count(); ++j) {
      still.frame_rotations(f)[j] = walk.rotation(0, j);
      still.frame_translations(f)[j] = walk.translation(0, j);
    }
  }
  const WeightedAdverb w{arms_adverb(), 1.0, "arms"};
  try {
    apply_to_take(still, std::span(&w, 1));
    FAIL() << "a take without a gait must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_EQ(e.context(), "period");
    const std::string msg = e.message();
    EXPECT_NE(msg.find("no detectable gait"), std::string::npos) << msg;
    EXPECT_NE(msg.find("confidence"), std::string::npos) << msg;
    EXPECT_NE(msg.find("`fixed_period`"), std::string::npos) << msg;
  }
  ApplySettings s;
  s.fixed_period = 1.1;
  const ApplyResult r = apply_to_take(still, std::span(&w, 1), s);
  EXPECT_EQ(r.phase.source, PhaseSource::fixed);
  EXPECT_GT(rotation_rms(r.motion, still), 1e-3);  // the arms now swing
}

TEST(ApplyToTake, StrideScalesTheRootTravelOnly) {
  const Motion take = sample_walk(5);
  const WeightedAdverb w{arms_adverb(), 0.0, "arms"};
  ApplySettings s;
  s.stride = 1.2;
  s.plant_feet = false;
  const ApplyResult r = apply_to_take(take, std::span(&w, 1), s);
  const int last = take.frame_count - 1;
  const Vec3 d_in = take.translation(last, 0) - take.translation(0, 0), d_out = r.motion.translation(last, 0) - r.motion.translation(0, 0);
  EXPECT_NEAR(d_out.x(), 1.2 * d_in.x(), 1e-9);
  EXPECT_NEAR(d_out.z(), 1.2 * d_in.z(), 1e-9);
  EXPECT_EQ(d_out.y(), d_in.y());
}

// ---- real takes ----------------------------------------------------------------------------

Motion shared(const std::string& rel) { return io::read_motion(test::shared_data() / "bvh/styles" / rel).motion; }

// Fraction of the take's in-contact frames (per foot) still in contact in the output, the worst foot.
double contacts_kept(const Motion& take, const Motion& out, int& count_in, int& count_out) {
  const body::ContactReport a = body::detect_foot_contacts(take), b = body::detect_foot_contacts(out);
  double worst = 1;
  count_in = a.contact_count(), count_out = b.contact_count();
  for (size_t e = 0; e < a.effectors.size(); ++e) {
    int in = 0, kept = 0;
    for (size_t f = 0; f < a.effectors[e].in_contact.size(); ++f)
      if (a.effectors[e].in_contact[f]) ++in, kept += b.effectors[e].in_contact[f];
    if (in > 0) worst = std::min(worst, static_cast<double>(kept) / in);
  }
  return worst;
}

// A made-up style on a take's own skeleton (for takes whose rig no style pair shares): the arms
// swing 1.5 times as far, the pelvis sways 1.5 times as far (the root's harmonics: its yaw too) and
// leans 6 degrees, and the spine leans 10 degrees (about their local X).
Adverb own_rig_adverb(const Motion& take) {
  const Gait neutral = analyze_gait(take);
  Gait styled = neutral;
  const std::vector<body::BodyPart> parts = body::joint_parts(take.skeleton);
  for (int j = 0; j < take.joint_count(); ++j) {
    if (parts[j] == body::BodyPart::arms) styled.coefficients.block(joint_channel(j, 0), 1, 3, neutral.harmonics) *= 1.5;
  }
  const int root = neutral.basis.root_joint;
  styled.coefficients.block(joint_channel(root, 0), 1, 3, neutral.harmonics) *= 1.5;
  styled.basis.mean_rotations[root] = neutral.basis.mean_rotations[root] * Quat(Eigen::AngleAxisd(0.1, Vec3::UnitX()));
  const int spine = body::find_joint_roles(take.skeleton)[body::Role::spine];
  if (spine >= 0)
    styled.basis.mean_rotations[spine] = neutral.basis.mean_rotations[spine] * Quat(Eigen::AngleAxisd(0.17, Vec3::UnitX()));
  return make_adverb(neutral, styled);
}

struct RealCase {
  const char* neutral;
  const char* styled;
  const char* take;
};

TEST(ApplyToTakeReal, IdentityRootPathHeadingAndContacts) {
  KOMA_REQUIRE_SHARED_DATA();
  for (const RealCase& c : {RealCase{"bandai-namco-1/dataset-1_walk_normal_001.bvh", "bandai-namco-1/dataset-1_walk_tired_001.bvh",
                                     "bandai-namco-2/dataset-2_walk_normal_001.bvh"},
                            RealCase{"xia2015/neutral_01_000.bvh", "xia2015/old_01_000.bvh", "xia2015/neutral_01_000.bvh"},
                            // A figure-eight walk (turns through 360 degrees both ways), own-rig style.
                            RealCase{"", "", "../exporters/pymo/AV_8Walk_Meredith_HVHA_Rep1.bvh"}}) {
    SCOPED_TRACE(c.take);
    const Motion take = shared(c.take);
    const Adverb adverb = *c.neutral ? make_adverb(analyze_gait(shared(c.neutral)), analyze_gait(shared(c.styled)))
                                     : own_rig_adverb(take);
    const WeightedAdverb zero{adverb, 0.0, c.styled};
    const ApplyResult r0 = apply_to_take(take, std::span(&zero, 1));
    EXPECT_LT(rotation_rms(r0.motion, take), 1e-9);
    EXPECT_EQ(r0.motion.translations, take.translations);

    WeightedAdverb one = zero;
    one.weight = 1.0;
    const ApplyResult r = apply_to_take(take, std::span(&one, 1));
    ASSERT_EQ(r.motion.frame_count, take.frame_count);
    EXPECT_EQ(r.motion.frame_rate, take.frame_rate);
    const MotionChannels ch = motion_channels(take, AngleMode::log_map);
    const int root = ch.basis.root_joint;
    for (int f = 0; f < take.frame_count; ++f) {  // horizontal root path bit for bit
      ASSERT_EQ(r.motion.translation(f, root).x(), take.translation(f, root).x()) << f;
      ASSERT_EQ(r.motion.translation(f, root).z(), take.translation(f, root).z()) << f;
    }
    // The style changed the take (not a no-op), by a style's worth: a few degrees RMS.
    const double rms = rotation_rms(r.motion, take) * kRadToDeg;
    EXPECT_GT(rms, 1.0);
    // Heading: the root's world yaw, averaged over any one cycle, stays within 2 degrees of the
    // take's (the pelvis may swing more or less within the cycle; that is style).
    const int window = static_cast<int>(std::lround(r.phase.period * take.frame_rate));
    const double yaw = max_window_mean(root_yaw_difference(take, r.motion, root), window) * kRadToDeg;
    EXPECT_LT(yaw, 2.0);
    // Contacts stay contacts.
    int n_in = 0, n_out = 0;
    const double kept = contacts_kept(take, r.motion, n_in, n_out);
    EXPECT_GE(kept, 0.95);
    EXPECT_NEAR(n_out, n_in, 1);
    // Fully planted ankles sit where the take has them (within 1 cm, also where the style asks
    // for more reach than the leg has).
    EXPECT_LT(r.max_plant_error, 0.01);
    std::printf("%-48s %s %.3f s conf %.2f, %d cycles: %.2f deg RMS change, heading within %.2f deg per cycle, "
                "contacts %d -> %d, %.1f %% of contact frames kept, %d/%d leg-frames unreachable, plant error %.1f mm\n",
                c.take, std::string(to_string(r.phase.source)).c_str(), r.phase.period, r.phase.confidence, r.phase.cycles,
                rms, yaw, n_in, n_out, 100 * kept, r.unreachable_frames, r.planted_frames, 1000 * r.max_plant_error);
  }
}

}  // namespace
}  // namespace koma::gait

namespace koma::gait {
namespace {

// Mean over frames of how far the head leans ahead of the hips along the travel direction, as a
// fraction of their distance (sin of the forward lean).
double forward_lean(const Motion& m) {
  const body::JointRoles roles = body::find_joint_roles(m.skeleton);
  const int hips = roles[body::Role::hips], head = roles[body::Role::head];
  const WorldPoses w = forward_kinematics(m);
  const Vec3 d = w.position(m.frame_count - 1, hips) - w.position(0, hips);
  const Vec3 fwd = Vec3(d.x(), 0, d.z()).normalized();
  double sum = 0;
  for (int f = 0; f < m.frame_count; ++f) {
    const Vec3 up = w.position(f, head) - w.position(f, hips);
    sum += up.dot(fwd) / up.norm();
  }
  return sum / m.frame_count;
}

TEST(ApplyToTakeReal, BandaiNamcoAdverbOnXiaAndCmuRigs) {
  KOMA_REQUIRE_SHARED_DATA();
  const WeightedAdverb tired{make_adverb(analyze_gait(shared("bandai-namco-1/dataset-1_walk_normal_001.bvh")),
                                         analyze_gait(shared("bandai-namco-1/dataset-1_walk_tired_001.bvh"))),
                             1.0, "bandai tired"};
  // On its own rig (another take): the reference change of the forward lean.
  const Motion own = shared("bandai-namco-2/dataset-2_walk_normal_001.bvh");
  const double own_lean = forward_lean(apply_to_take(own, std::span(&tired, 1)).motion) - forward_lean(own);
  std::printf("Bandai-Namco tired adverb, forward lean change on its own rig: %+.3f\n", own_lean);
  ASSERT_GT(std::abs(own_lean), 0.02);  // a visible lean (over 1 degree)
  for (const char* rel : {"xia2015/neutral_01_000.bvh", "../cmu/cmu-daz/16_15.bvh"}) {
    SCOPED_TRACE(rel);
    const Motion take = shared(rel);
    const ApplyResult r = apply_to_take(take, std::span(&tired, 1));
    const AppliedAdverb& a = r.adverbs[0];
    EXPECT_FALSE(a.same_rig);
    // Every body role of the Bandai-Namco rig (hips, spine, neck, head, arms, legs) is mapped.
    EXPECT_GE(a.mapped.size(), 16u);
    const double lean = forward_lean(r.motion) - forward_lean(take);
    int n_in = 0, n_out = 0;
    const double kept = contacts_kept(take, r.motion, n_in, n_out);
    std::printf("%-28s %zu joints mapped, %zu left alone; lean change %+.3f; phase %s %.3f s; contacts %d -> %d, %.1f %% "
                "kept, plant error %.1f mm, %d/%d unreachable\n",
                rel, a.mapped.size(), a.left_alone.size(), lean, std::string(to_string(r.phase.source)).c_str(),
                r.phase.period, n_in, n_out, 100 * kept, 1000 * r.max_plant_error, r.unreachable_frames, r.planted_frames);
    // The axes were carried over: the take leans the same way, by a similar amount.
    EXPECT_GT(lean / own_lean, 0.5);
    EXPECT_LT(lean / own_lean, 2.0);
    EXPECT_GE(kept, 0.8);
    EXPECT_LT(r.max_plant_error, 0.02);
    for (int f = 0; f < take.frame_count; ++f) ASSERT_EQ(r.motion.translation(f, 0).x(), take.translation(f, 0).x());
  }
}

// The same lean for a walk in place (the game characters' loops): forward is the facing, from the
// hips' left-right axis, (left hip - right hip) x up, per frame.
double facing_lean(const Motion& m, const body::JointRoles& roles) {
  const int hips = roles[body::Role::hips], head = roles[body::Role::head];
  const int lh = roles[body::Role::left_hip], rh = roles[body::Role::right_hip];
  const WorldPoses w = forward_kinematics(m);
  double sum = 0;
  for (int f = 0; f < m.frame_count; ++f) {
    const Vec3 side = w.position(f, lh) - w.position(f, rh);
    const Vec3 fwd = Vec3(side.x(), 0, side.z()).cross(Vec3::UnitY()).normalized();
    const Vec3 up = w.position(f, head) - w.position(f, hips);
    sum += up.dot(fwd) / up.norm();
  }
  return sum / m.frame_count;
}

bool has_entry(const std::vector<std::string>& list, const std::string& text) {
  for (const std::string& s : list)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

TEST(ApplyToTakeReal, BandaiNamcoAdverbOnFbxAndGltfCharacters) {
  // The game characters of ../shared/data: Mixamo names (two extra spine joints, clavicles), a
  // Blender rig (Abdomen/Torso, Shoulder.L), and CesiumMan, whose names koma does not know (its
  // roles are given). They walk in place, one loop each: the gait is applied at a fixed period.
  KOMA_REQUIRE_SHARED_DATA();
  const WeightedAdverb tired{make_adverb(analyze_gait(shared("bandai-namco-1/dataset-1_walk_normal_001.bvh")),
                                         analyze_gait(shared("bandai-namco-1/dataset-1_walk_tired_001.bvh"))),
                             1.0, "bandai tired"};
  const Motion own = shared("bandai-namco-2/dataset-2_walk_normal_001.bvh");
  const body::JointRoles own_roles = body::find_joint_roles(own.skeleton);
  const double own_lean = facing_lean(apply_to_take(own, std::span(&tired, 1)).motion, own_roles) - facing_lean(own, own_roles);
  ASSERT_GT(own_lean, 0.02);
  struct Case {
    const char* file;
    const char* animation;
    std::vector<std::pair<const char*, const char*>> roles;  // given roles (CesiumMan)
    std::vector<const char*> expect;                         // report entries that must appear
  };
  const std::vector<Case> cases = {
      {"fbx/quaternius_AnimatedHuman.fbx", "Human Armature|Walk", {},
       {"Shoulder_L -> LeftShoulder (clavicle, above left_shoulder)", "Chest -> Spine1 x0.50 + Spine2 x0.50 (torso chain"}},
      {"fbx/quaternius_Male_Casual.fbx", "HumanArmature|Man_Walk", {}, {"Shoulder_L -> Shoulder.L", "Chest -> Torso (torso chain"}},
      {"gltf/CesiumMan/CesiumMan.gltf", "",
       {{"hips", "Skeleton_torso_joint_1"}, {"spine", "Skeleton_torso_joint_2"}, {"neck", "Skeleton_neck_joint_1"},
        {"head", "Skeleton_neck_joint_2"}, {"left_shoulder", "Skeleton_arm_joint_L__4_"},
        {"left_elbow", "Skeleton_arm_joint_L__3_"}, {"left_hand", "Skeleton_arm_joint_L__2_"},
        {"right_shoulder", "Skeleton_arm_joint_R"}, {"right_elbow", "Skeleton_arm_joint_R__2_"},
        {"right_hand", "Skeleton_arm_joint_R__3_"}, {"left_hip", "leg_joint_L_1"}, {"left_knee", "leg_joint_L_2"},
        {"left_ankle", "leg_joint_L_3"}, {"left_toe", "leg_joint_L_5"}, {"right_hip", "leg_joint_R_1"},
        {"right_knee", "leg_joint_R_2"}, {"right_ankle", "leg_joint_R_3"}, {"right_toe", "leg_joint_R_5"}},
       {"Chest -> torso_joint_3 (torso chain"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    io::ReadOptions read;
    read.animation = c.animation;
    const Motion take = io::read_motion(test::shared_data() / c.file, read).motion;
    ApplySettings s;
    s.fixed_period = 1.0;
    body::JointRoles roles = body::find_joint_roles(take.skeleton);
    if (!c.roles.empty()) {
      // Without roles the rig cannot be mapped: the error names what is missing and the remedy.
      try {
        apply_to_take(take, std::span(&tired, 1), s);
        ADD_FAILURE() << "a rig of unknown names must be refused without roles";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::mismatch);
        EXPECT_NE(e.message().find("roles"), std::string::npos) << e.what();
      }
      roles = body::JointRoles{};
      for (const auto& [role, joint] : c.roles) body::assign_role(roles, take.skeleton, role, joint);
      s.roles = roles;
    }
    const ApplyResult r = apply_to_take(take, std::span(&tired, 1), s);
    const AppliedAdverb& a = r.adverbs[0];
    EXPECT_FALSE(a.same_rig);
    EXPECT_GE(a.mapped.size(), 18u);  // every role, and the chest
    for (const char* e : c.expect) EXPECT_TRUE(has_entry(a.mapped, e)) << e;
    const double lean = facing_lean(r.motion, roles) - facing_lean(take, roles);
    std::printf("%-36s %zu joints mapped, %zu left alone; lean change %+.3f (own rig %+.3f)\n", c.file, a.mapped.size(),
                a.left_alone.size(), lean, own_lean);
    EXPECT_GT(lean / own_lean, 0.5);
    EXPECT_LT(lean / own_lean, 2.0);
    EXPECT_EQ(r.motion.frame_count, take.frame_count);
  }
}

TEST(ApplyToTake, GivenRolesAreCheckedAndDriveTheMapping) {
  const Motion take = sample_walk(5);
  Motion renamed = take;
  for (size_t j = 0; j < renamed.skeleton.names.size(); ++j) renamed.skeleton.names[j] = std::string("j").append(std::to_string(j));
  const WeightedAdverb w{arms_adverb(), 1.0, "arms"};
  EXPECT_THROW(apply_to_take(renamed, std::span(&w, 1)), Error);  // nothing to map by
  // The take's own roles, given by index: the same result as the named rig's.
  ApplySettings s;
  s.roles = body::find_joint_roles(take.skeleton);
  const ApplyResult own = apply_to_take(take, std::span(&w, 1));
  const ApplyResult given = apply_to_take(renamed, std::span(&w, 1), s);
  EXPECT_FALSE(given.adverbs[0].same_rig);
  EXPECT_EQ(given.phase.source, own.phase.source);  // the given feet found the contacts
  EXPECT_NEAR(given.phase.period, own.phase.period, 1e-9);
  for (Role r : {Role::left_shoulder, Role::left_elbow, Role::right_hip, Role::left_knee, Role::hips}) {
    const int j = (*s.roles)[r];
    double worst = 0;
    for (int f = 0; f < take.frame_count; ++f) worst = std::max(worst, own.motion.rotation(f, j).angularDistance(given.motion.rotation(f, j)));
    EXPECT_LT(worst, 1e-3) << body::role_name(r);
  }
  // A role pointing past the skeleton is refused, naming the setting.
  s.roles->set(Role::left_ankle, renamed.joint_count() + 7);
  try {
    apply_to_take(renamed, std::span(&w, 1), s);
    FAIL() << "an out-of-range role must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_settings);
    EXPECT_EQ(e.context(), "roles");
  }
}

}  // namespace
}  // namespace koma::gait
