// Key poses for limited animation: select_keys() picks the frames that characterise a motion,
// hold() turns them into "the second moving image" — every output frame shows the latest key.
//
//   source (resampled to 24 fps)   0 1 2 3 4 5 6 7 8 9
//   keys                           K     K   K       K
//   hold(): shown pose             0 0 0 3 3 5 5 5 5 9    (drawing numbers 1 1 1 2 2 3 3 3 3 4)
//
// Lossy by design. The caller resamples to the output rate first (koma::resample); select_keys
// works on the motion's own frames.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "koma/keys/body.hpp"
#include "koma/keys/features.hpp"
#include "koma/keys/metric.hpp"
#include "koma/keys/select.hpp"

namespace koma::keys {

/// Everything select_keys() needs. Give at most one of keys, ratio, on, max_error; none = on 2s.
struct KeySettings {
  FeatureSettings features;                          ///< points, weights, camera (default: all points, equal, 3D)
  Interpolation interpolation = Interpolation::linear;  ///< default linear
  Metric metric = Metric::position;                  ///< default position MSE
  Selector selector = Selector::exact;               ///< default exact (optimal)
  int keys = 0;             ///< keep n keys (>= 2)
  double ratio = 0;         ///< keep round(ratio * frames) keys, ratio in (0, 1]
  int on = 0;               ///< keep as many keys as "on Ns" would (uniform: exactly that grid), and
                            ///< hold no drawing shorter than N frames unless allow_ones (the
                            ///< default when no count is given is on 2s, so no 1-frame holds)
  bool allow_ones = false;  ///< with on (and layers' on): let fast action take holds shorter than N
                            ///< (1s on 2s), the optimiser trading them for longer holds elsewhere
  int offset = 0;           ///< uniform with `on`: first inner key frame (default 0 = frame `on`)
  double max_error = -1;    ///< fewest keys with mean squared error <= max_error (metric units, m^2)
  HoldConstraints constraints;   ///< min/max hold, locked frames
  double max_hold_seconds = 2.0; ///< when constraints.max_hold is 0: the longest hold, in seconds of
                                 ///< the motion's rate (default 2 s = 48 frames at 24 fps), raised to
                                 ///< twice the mean hold when fewer keys are asked for and to
                                 ///< 2 * min_hold - 1; 0 = unlimited. Keeps the cost table linear in
                                 ///< the take's length.
  ExactSettings exact;           ///< how the exact selector searches (default: automatic)
  bool keep_contacts = false;    ///< key every foot plant's touch-down (contact_keys)
  bool keep_extremes = false;    ///< key every velocity reversal of hands, feet, head (detect_extremes)
  body::ContactSettings contacts;
  ExtremeSettings extremes;
  std::vector<BodyPartLayer> layers;  ///< per-body-part timing; joints in no layer follow the main selection
  AnnealSettings anneal;
  CumsumSettings cumsum;

  /// Throws Error(invalid_settings) naming the field: several or invalid key-count options,
  /// invalid sub-settings. Frame-dependent checks happen in select_keys().
  void validate() const;
};

/// The selection of one layer (layer 0 is the main one, driving every joint in no other layer).
struct LayerSelection {
  std::string name;                 ///< "main" or the layer's group
  std::vector<int> joints;          ///< joints this layer drives
  std::vector<int> points;          ///< points (joints and end sites) its error is measured on
  int target_keys = 0;              ///< n asked for (0 = error budget)
  std::vector<int> keys;            ///< kept frames, sorted; first 0, last frames-1
  std::vector<int> auto_locked;     ///< frames keyed because of --keep-contacts / --keep-extremes
  std::vector<double> segment_errors;  ///< per segment [keys[a], keys[a+1]]: its share of the MSE
  double error = 0;                 ///< mean squared error per point and frame (metric unit, m^2)
  double total = 0;                 ///< sum of segment costs (weighted m^2 summed over frames)
  double normaliser = 1;            ///< error = total / normaliser
  double worst_error = 0;           ///< largest squared error of one point on one frame (m^2, unweighted)
  int worst_frame = 0;
  int worst_point = 0;              ///< skeleton point index (joint, or end site after the joints)
  std::vector<CurvePoint> curve;    ///< exact: optimal error for every n up to the answer (level DP)
                                    ///< or the hull points met (Lagrangian; each marked hull)
  int iterations = 0;
  int max_hold = 0;                 ///< the longest hold this layer allowed (frames; after defaults)
  int min_hold = 1;                 ///< the shortest hold this layer allowed (frames; on's floor included)
  double lower_bound = 0;           ///< exact: certified lower bound on the total (= total when optimal)
  bool optimal = false;             ///< exact: proven optimal
  int solves = 0;                   ///< exact, Lagrangian: shortest-path solves
};

/// The result of select_keys().
struct KeySelection {
  int frames = 0;
  double frame_rate = 0;
  std::vector<LayerSelection> layers;  ///< [0] = main
  std::vector<int> joint_layer;        ///< layer index driving each joint
  double error = 0;                    ///< MSE over all layers' points (m^2)
  double worst_error = 0;              ///< worst over layers (m^2)
  int worst_frame = 0;
  int worst_point = 0;

  /// Keys of the main layer.
  const std::vector<int>& keys() const { return layers.front().keys; }
};

/// Selects key frames of `motion` (at its own frame rate). Lossy. `progress` (optional) gets
/// fractions in [0, 1]. Throws Error(bad_data) for an invalid motion (NaN, < 2 frames),
/// Error(invalid_settings) for invalid settings, impossible constraints, n < 2 or n > frames,
/// unknown joints in layers.
KeySelection select_keys(const Motion& motion, const KeySettings& settings,
                         const std::function<void(double)>& progress = {});

/// Per frame, the latest key at or before it (keys sorted, first 0).
std::vector<int> hold_map(const std::vector<int>& keys, int frames);

/// The frames where the held motion shows a new pose: the sorted union of every layer's keys.
/// These are the drawings a STEP-interpolated file (glTF) needs one key each for.
std::vector<int> drawing_frames(const KeySelection& selection);

/// The stepped motion: every frame of joint j shows exactly the pose of the latest key of its
/// layer (rotation, translation, scale copied bit for bit). Same frame count and rate as `motion`.
/// Throws Error(mismatch) when the selection was made for another frame or joint count.
Motion hold(const Motion& motion, const KeySelection& selection);
/// hold() without a copy: every frame of `motion` is overwritten by its key's pose (key frames
/// are their own source and come first, so the order of the pass keeps them intact).
void hold_in_place(Motion& motion, const KeySelection& selection);

}  // namespace koma::keys
