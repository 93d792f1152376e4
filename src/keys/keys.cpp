#include "koma/keys/keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/body/roles.hpp"

namespace koma::keys {

void KeySettings::validate() const {
  features.validate();
  const int given = (keys != 0) + (ratio != 0) + (on != 0) + (max_error >= 0);
  if (given > 1) {
    throw Error(ErrorCode::invalid_settings, "keys", "give only one of `keys`, `ratio`, `on` and `max_error`");
  }
  if (keys < 0 || keys == 1) {
    throw Error(ErrorCode::invalid_settings, "keys", fmt::format("n = {} keys; at least 2 (first and last frame) are kept", keys));
  }
  if (ratio != 0 && !(ratio > 0 && ratio <= 1)) {
    throw Error(ErrorCode::invalid_settings, "ratio", fmt::format("ratio {} must be in (0, 1]", ratio));
  }
  if (on < 0) throw Error(ErrorCode::invalid_settings, "on", fmt::format("{} must be >= 1", on));
  if (allow_ones && (keys > 0 || ratio > 0 || max_error >= 0) && layers.empty()) {
    throw Error(ErrorCode::invalid_settings, "allow_ones",
                "only applies to a count given by `on` (or the default on 2s) or to `layers`; with `keys`, `ratio` "
                "or `max_error` holds are already limited by `constraints.min_hold` alone");
  }
  if (offset < 0) throw Error(ErrorCode::invalid_settings, "offset", "offset must be >= 0");
  if (max_error >= 0 && !std::isfinite(max_error)) throw Error(ErrorCode::invalid_settings, "max_error", "must be finite");
  if (interpolation == Interpolation::slerp && metric == Metric::hold) {
    // Allowed: hold ignores the interpolator.
  }
  contacts.validate();
  extremes.validate();
  anneal.validate();
  cumsum.validate();
  exact.validate();
  if (!(max_hold_seconds >= 0) || !std::isfinite(max_hold_seconds)) {
    throw Error(ErrorCode::invalid_settings, "max_hold_seconds", fmt::format("{} must be >= 0 (0 = unlimited)", max_hold_seconds));
  }
  for (const BodyPartLayer& l : layers) {
    if (l.on < 1 || l.offset < 0) throw Error(ErrorCode::invalid_settings, "layers", fmt::format("layer '{}': on must be >= 1, offset >= 0", l.group));
  }
}

std::vector<int> hold_map(const std::vector<int>& keys, int frames) {
  std::vector<int> m(static_cast<size_t>(std::max(frames, 0)), 0);
  size_t a = 0;
  for (int f = 0; f < frames; ++f) {
    while (a + 1 < keys.size() && keys[a + 1] <= f) ++a;
    m[f] = keys.empty() ? 0 : keys[a];
  }
  return m;
}

int default_max_hold(const HoldConstraints& c, double seconds, double rate, int frames, int keys) {
  if (c.max_hold > 0 || seconds <= 0) return c.max_hold;
  int cap = std::max(1, static_cast<int>(std::lround(seconds * rate)));
  if (keys >= 2) cap = std::max(cap, 2 * ((frames - 1 + keys - 2) / (keys - 1)));
  cap = std::max(cap, 2 * c.min_hold - 1);
  HoldConstraints t = c;
  for (t.max_hold = cap; t.max_hold < frames - 1; t.max_hold *= 2) {
    if (keys < 2 || t.key_range(frames).first <= keys) break;
  }
  return t.max_hold >= frames - 1 ? 0 : t.max_hold;
}

namespace {

// Longest hold (frames) for which select_keys generates the features per table window.
constexpr int kGeneratedFeaturesMaxHold = 1024;

int grid_count(int frames, int on, int offset) {
  int n = 2;
  for (int f = offset > 0 ? offset : on; f < frames - 1; f += on) ++n;
  return n;
}

// Pose interpolation (slerp of local rotations, lerp of translations, FK), projected like the features.
InteriorFn slerp_interior(const Motion& motion, const FeatureMatrix& features, const Camera& camera) {
  struct Scratch {
    std::vector<Quat> rot, wrot;
    std::vector<Vec3> trans, pos;
    FeatureMatrix layout;
  };
  auto s = std::make_shared<Scratch>();
  const int J = motion.joint_count();
  s->rot.resize(static_cast<size_t>(J));
  s->wrot.resize(static_cast<size_t>(J));
  s->trans.resize(static_cast<size_t>(J));
  s->pos.resize(static_cast<size_t>(motion.skeleton.point_count()));
  s->layout.coords_per_point = features.coords_per_point;
  s->layout.point_ids = features.point_ids;
  s->layout.weights = features.weights;
  s->layout.dims = features.dims;
  return [&motion, camera, s, J](int i, int j, int k, std::span<double> out) {
    const double t = static_cast<double>(k - i) / (j - i);
    for (int q = 0; q < J; ++q) {
      s->rot[q] = slerp(motion.rotation(i, q), motion.rotation(j, q), t);
      s->trans[q] = (1 - t) * motion.translation(i, q) + t * motion.translation(j, q);
    }
    forward_kinematics(motion.skeleton, s->rot, s->trans, {}, s->pos, s->wrot);
    project_points(s->pos, s->layout, camera, out);
  };
}

// Adds event frames as locks while the constraints stay satisfiable (with n keys when n > 0).
std::vector<int> add_auto_locks(HoldConstraints& c, std::vector<int> frames_in, int frames, int n) {
  std::sort(frames_in.begin(), frames_in.end());
  frames_in.erase(std::unique(frames_in.begin(), frames_in.end()), frames_in.end());
  std::vector<int> added;
  for (int f : frames_in) {
    if (std::find(c.locked.begin(), c.locked.end(), f) != c.locked.end()) continue;
    if (f <= 0 || f >= frames - 1) continue;
    HoldConstraints trial = c;
    trial.locked.push_back(f);
    try {
      trial.validate(frames, n);
    } catch (const Error&) {
      continue;
    }
    c = std::move(trial);
    added.push_back(f);
  }
  return added;
}

// "On Ns" holds every drawing at least N frames unless allow_ones (an offset grid's first hold is
// its offset, so the floor is the offset when that is shorter). Refused, naming both, when the
// user's locked frames or hold limits leave no room for it.
void apply_on_floor(HoldConstraints& c, int on, int offset, int frames, bool allow_ones) {
  if (on <= 0 || allow_ones) return;
  const int floor = std::min(offset > 0 ? std::min(on, offset) : on, frames - 1);
  if (floor <= c.min_hold) return;
  HoldConstraints t = c;
  t.min_hold = floor;
  if (t.max_hold > 0 && t.max_hold < floor) t.max_hold = floor;
  try {
    t.validate(frames);
  } catch (const Error& e) {
    throw Error(ErrorCode::invalid_settings, "allow_ones",
                fmt::format("on {}s holds every drawing at least {} frames, which the other constraints do not allow "
                            "({}); set `allow_ones` to allow shorter holds",
                            on, floor, e.what()));
  }
  c = std::move(t);
}


// Layers keep contacts: when one layer holds both feet, the joints above them that would follow the
// main selection (the root, a dummy root, the pelvis) join that layer, so a held leg is never
// carried by hips that keep moving under it. Every point from the root to each foot is then held
// together, so a held foot stands exactly where it stood on its key frame.
void feet_layer_takes_root(const Skeleton& sk, std::vector<int>& joint_layer) {
  const body::JointRoles roles = body::find_joint_roles(sk);
  const int left = roles[body::Role::left_ankle], right = roles[body::Role::right_ankle];
  if (left < 0 || right < 0) return;
  const int feet = joint_layer[static_cast<size_t>(left)];
  if (feet == 0 || joint_layer[static_cast<size_t>(right)] != feet) return;
  for (int j : {left, right}) {
    for (int a = sk.parents[static_cast<size_t>(j)]; a >= 0; a = sk.parents[static_cast<size_t>(a)]) {
      if (joint_layer[static_cast<size_t>(a)] == 0) joint_layer[static_cast<size_t>(a)] = feet;
    }
  }
}

// The layers of a selection before any key is chosen: which layer drives each joint, and the
// points (joints and end sites) each layer's error is measured on.
KeySelection layer_skeleton(const Motion& motion, const std::vector<BodyPartLayer>& layers) {
  const Skeleton& sk = motion.skeleton;
  const int J = sk.joint_count();
  const int N = motion.frame_count;
  KeySelection out;
  out.frames = N;
  out.frame_rate = motion.frame_rate;
  out.joint_layer.assign(static_cast<size_t>(J), 0);
  out.layers.resize(layers.size() + 1);
  out.layers[0].name = "main";
  for (size_t l = 0; l < layers.size(); ++l) {
    out.layers[l + 1].name = layers[l].group;
    for (int j : group_joints(sk, layers[l].group)) {
      if (out.joint_layer[j] != 0) {
        throw Error(ErrorCode::invalid_settings, "layers",
                    fmt::format("joint {} is in both layers '{}' and '{}'", sk.names[j], out.layers[out.joint_layer[j]].name, layers[l].group));
      }
      out.joint_layer[j] = static_cast<int>(l + 1);
    }
  }
  feet_layer_takes_root(sk, out.joint_layer);
  for (int j = 0; j < J; ++j) out.layers[out.joint_layer[j]].joints.push_back(j);
  for (size_t l = 0; l < out.layers.size(); ++l) {
    LayerSelection& L = out.layers[l];
    if (L.joints.empty() && l == 0) {
      // Every joint is in a layer: the main selection is still reported, measured on all points.
      for (int p = 0; p < sk.point_count(); ++p) L.points.push_back(p);
      continue;
    }
    for (int j : L.joints) L.points.push_back(j);
    for (int e = 0; e < sk.end_site_count(); ++e) {
      if (out.joint_layer[sk.end_sites[e].parent] == static_cast<int>(l)) L.points.push_back(J + e);
    }
  }

  return out;
}

}  // namespace

KeySelection select_keys(const Motion& motion, const KeySettings& st, const std::function<void(double)>& progress) {
  st.validate();
  motion.validate();
  const int N = motion.frame_count;
  if (N < 2) throw Error(ErrorCode::bad_data, "keys", fmt::format("the motion has {} frame(s); key selection needs at least 2", N));
  st.constraints.validate(N, 0);
  KeySelection out = layer_skeleton(motion, st.layers);

  std::vector<KeyEvent> events;
  if (st.keep_contacts) {
    auto c = contact_keys(motion, st.contacts);
    events.insert(events.end(), c.begin(), c.end());
  }
  if (st.keep_extremes) {
    auto e = detect_extremes(motion, st.extremes);
    events.insert(events.end(), e.begin(), e.end());
  }

  const size_t layer_count = out.layers.size();
  double grand_total = 0, grand_norm = 0;
  for (size_t l = 0; l < layer_count; ++l) {
    LayerSelection& L = out.layers[l];
    auto sub = [&](double a, double b) {
      return [&progress, l, layer_count, a, b](double f) {
        if (progress) progress((static_cast<double>(l) + a + (b - a) * f) / static_cast<double>(layer_count));
      };
    };
    // Target.
    SelectionTarget target;
    int on = 0, offset = 0;
    if (l == 0) {
      on = st.on;
      offset = st.offset;
      if (st.keys > 0) target.keys = st.keys;
      else if (st.ratio > 0) target.keys = std::clamp(static_cast<int>(std::lround(st.ratio * N)), 2, N);
      else if (st.max_error >= 0) target.max_error = st.max_error;
      else on = on > 0 ? on : 2;
    } else {
      on = st.layers[l - 1].on;
      offset = st.layers[l - 1].offset;
    }
    // Constraints: the user's, plus this layer's contacts and extremes.
    HoldConstraints c = st.constraints;
    apply_on_floor(c, on, offset, N, st.allow_ones);
    if (on > 0) {
      // "On Ns" sets the count; clamped to what the hold limits allow (an offset grid starts with a short hold).
      const auto [nmin, nmax] = c.key_range(N);
      target.keys = std::clamp(grid_count(N, on, offset), nmin, nmax);
    }
    c.max_hold = default_max_hold(c, st.max_hold_seconds, motion.frame_rate, N, target.keys);
    if (on > 0) {
      const auto [nmin, nmax] = c.key_range(N);
      target.keys = std::clamp(grid_count(N, on, offset), nmin, nmax);
    }
    L.max_hold = c.max_span(N);
    L.min_hold = c.min_hold;
    L.target_keys = target.keys;
    target.validate(N);
    std::vector<int> ev;
    for (const KeyEvent& e : events) {
      if (out.joint_layer[e.joint] == static_cast<int>(l)) ev.push_back(e.frame);
    }
    L.auto_locked = add_auto_locks(c, ev, N, target.keys);

    // Features and costs.
    // The exact selector's closed-form table reads the features a window at a time: they are
    // generated there from the motion (FK again for each window's overlap of max_span frames)
    // instead of stored, which on a long take would be a second copy of the motion (a million
    // frames of 38 points: 0.9 GB, and seconds of the kernel zeroing fresh pages). Bit for bit the
    // same rows, so the same table and keys. Long or unlimited holds keep stored features (the
    // overlap would cost more FK than it saves).
    const bool generate = st.selector == Selector::exact &&
                          (st.metric == Metric::hold || (st.metric == Metric::position && st.interpolation == Interpolation::linear)) &&
                          std::max(c.min_hold, 1) <= c.max_span(N) && c.max_span(N) <= kGeneratedFeaturesMaxHold;
    FeatureMatrix feats = generate ? detail::generated_features_of_valid(motion, st.features, L.points)
                                   : detail::extract_features_of_valid(motion, st.features, L.points);  // validated above
    L.points = feats.point_ids;  // weight-0 points dropped
    InteriorFn interior;
    if (st.interpolation == Interpolation::slerp && st.metric != Metric::hold) interior = slerp_interior(motion, feats, st.features.camera);
    const SegmentCosts costs = make_segment_costs(std::move(feats), st.interpolation, st.metric, c.min_hold,
                                                  c.max_span(N), interior, sub(0.0, 0.3));

    // Selection.
    Selection s;
    switch (st.selector) {
      case Selector::exact: s = select_exact(costs, c, target, st.exact, sub(0.3, 1.0)); break;
      case Selector::uniform: s = select_uniform(costs, c, target, on, offset); break;
      case Selector::cumsum: s = select_cumsum(costs, c, target, st.cumsum); break;
      case Selector::anneal:
      case Selector::cumsum_anneal: {
        AnnealSettings a = st.anneal;
        if (st.selector == Selector::cumsum_anneal) a.start_from_cumsum = true;
        s = select_anneal(costs, c, target, a, sub(0.3, 1.0));
        break;
      }
    }
    KOMA_ASSERT(satisfies(s.keys, N, c));

    // Report.
    L.keys = s.keys;
    L.curve = std::move(s.curve);
    L.iterations = s.iterations;
    L.lower_bound = s.lower_bound;
    L.optimal = s.optimal;
    L.solves = s.solves;
    L.total = s.total;
    L.normaliser = costs.normaliser();
    L.error = s.error;
    const ResidualSummary rs = summarize_residuals(costs, L.keys);
    for (double sc : rs.segment_costs) L.segment_errors.push_back(sc / L.normaliser);
    if (rs.worst > L.worst_error) {
      L.worst_error = rs.worst;
      L.worst_frame = rs.worst_frame;
      L.worst_point = L.points[static_cast<size_t>(rs.worst_point)];
    }
    if (l > 0 || !L.joints.empty()) {
      grand_total += L.total;
      grand_norm += L.normaliser;
    }
    if (L.worst_error > out.worst_error) {
      out.worst_error = L.worst_error;
      out.worst_frame = L.worst_frame;
      out.worst_point = L.worst_point;
    }
  }
  out.error = grand_norm > 0 ? grand_total / grand_norm : out.layers[0].error;
  if (progress) progress(1.0);
  return out;
}

std::vector<int> drawing_frames(const KeySelection& selection) {
  std::vector<int> frames;
  for (const auto& layer : selection.layers) frames.insert(frames.end(), layer.keys.begin(), layer.keys.end());
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  return frames;
}

Motion hold(const Motion& motion, const KeySelection& sel) {
  Motion out = motion;
  hold_in_place(out, sel);
  return out;
}

void hold_in_place(Motion& motion, const KeySelection& sel) {
  if (sel.frames != motion.frame_count || static_cast<int>(sel.joint_layer.size()) != motion.joint_count()) {
    throw Error(ErrorCode::mismatch, "hold",
                fmt::format("selection for {} frames x {} joints, motion has {} x {}", sel.frames, sel.joint_layer.size(),
                            motion.frame_count, motion.joint_count()));
  }
  const int J = motion.joint_count();
  std::vector<std::vector<int>> maps;
  for (const LayerSelection& L : sel.layers) maps.push_back(hold_map(L.keys, motion.frame_count));
  // A frame's source is its layer's latest key (<= it), which maps to itself and so is never
  // written: frames can be copied in any order, and are, in parallel.
  tbb::parallel_for(tbb::blocked_range<int>(0, motion.frame_count, 1024), [&](const tbb::blocked_range<int>& r) {
    for (int f = r.begin(); f < r.end(); ++f) {
      for (int j = 0; j < J; ++j) {
        const int src = maps[sel.joint_layer[j]][f];
        if (src == f) continue;
        const size_t o = static_cast<size_t>(f) * J + j, s = static_cast<size_t>(src) * J + j;
        motion.rotations[o] = motion.rotations[s];
        motion.translations[o] = motion.translations[s];
        if (!motion.scales.empty()) motion.scales[o] = motion.scales[s];
      }
    }
  });
}

}  // namespace koma::keys
