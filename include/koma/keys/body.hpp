// Timing layers, foot plants and extremes for key selection: which joints a timing layer drives, and
// which frames should be kept as keys because a viewer notices them. The body vocabulary itself
// (body parts, joint roles, the contact detector) lives in koma::body.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "koma/core/motion.hpp"
#include "koma/body/contacts.hpp"
#include "koma/body/extremes.hpp"
#include "koma/body/parts.hpp"

namespace koma::keys {

/// Joints of a group: a body part "legs", "arms", "head" or "torso" (alias "spine"; parts by
/// body::joint_parts()), or else a joint name (that joint and its descendants; "root" is a joint
/// name here, not the root-translation part). Throws Error(invalid_settings, "layers") naming an
/// unknown group or joint, or a body part with no joint in this skeleton.
std::vector<int> group_joints(const Skeleton& skeleton, std::string_view group);

/// One timing layer: a group of joints keyed on its own, e.g. legs on 3s, arms on 2s offset by 1.
struct BodyPartLayer {
  std::string group;  ///< "legs", "arms", "head", "torso" (alias "spine") or a joint name (its subtree)
  int on = 2;         ///< average hold in frames ("on 3s"), >= 1; sets the layer's key count
  int offset = 0;     ///< uniform selector: first inner key at this frame (>= 0); ignored by the others
};

/// Parses "legs:3,arms:2+1" (group:on[+offset], comma separated). Throws Error(invalid_settings,
/// "layers") on a malformed item. Group names are checked later, against the skeleton.
std::vector<BodyPartLayer> parse_layers(std::string_view text);

/// A frame worth keeping and the joint that makes it so.
struct KeyEvent {
  int frame = 0;
  int joint = 0;
};

/// Foot plants as keys: the touch-down frame (first frame) of every foot contact that
/// koma::body's detector finds (the one contact detector timing, gait and the cartoon filter
/// use), except contacts already under way at frame 0; joint = that foot's ankle. Sorted by frame.
/// Throws Error(bad_data, "skeleton") when no foot can be identified by name, Error(bad_data) for
/// a motion shorter than 3 frames, Error(invalid_settings) for bad settings.
std::vector<KeyEvent> contact_keys(const Motion& motion, const body::ContactSettings& settings = {});

/// Settings of detect_extremes(): the one direction-reversal detector of koma::body (window in
/// seconds, travel in body sizes), shared with key times (timing detect's extremes).
using ExtremeSettings = body::ReversalSettings;

/// Extremes: frames where a hand, foot or head (relative to the root joint) reverses direction
/// (body::direction_reversals(): the displacements over `window` seconds before and after point
/// more than 90 degrees apart and both are at least min_travel body sizes long). Each run of such
/// frames yields its slowest frame (the turn). Sorted by frame. Throws Error(invalid_settings).
std::vector<KeyEvent> detect_extremes(const Motion& motion, const ExtremeSettings& settings = {});

}  // namespace koma::keys
