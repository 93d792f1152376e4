// koma::keys (key poses for limited animation), 1:1 with include/koma/keys/keys.hpp, body.hpp and
// the settings of features.hpp / select.hpp. No logic here; select_keys releases the GIL.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "koma/core/drawings.hpp"
#include "koma/keys/keys.hpp"

namespace koma::python {

namespace {

/// A C++ progress callback that calls a Python callable (taking the GIL) or does nothing.
std::function<void(double)> progress_of(const py::object& progress) {
  if (progress.is_none()) return {};
  return [&progress](double fraction) {
    py::gil_scoped_acquire gil;
    progress(fraction);
  };
}

// ---- features.hpp, metric.hpp, select.hpp: enums and their names -------------------------
void bind_enums(py::module_& k) {
  using namespace koma::keys;
  py::enum_<WeightMode>(k, "WeightMode").value("equal", WeightMode::equal).value("bone_length", WeightMode::bone_length);
  py::enum_<Projection>(k, "Projection")
      .value("none", Projection::none).value("front", Projection::front).value("side", Projection::side)
      .value("top", Projection::top).value("perspective", Projection::perspective);
  py::enum_<Interpolation>(k, "Interpolation")
      .value("linear", Interpolation::linear).value("cubic", Interpolation::cubic).value("slerp", Interpolation::slerp);
  py::enum_<Metric>(k, "Metric")
      .value("position", Metric::position).value("velocity", Metric::velocity)
      .value("acceleration", Metric::acceleration).value("hold", Metric::hold);
  py::enum_<Selector>(k, "Selector")
      .value("exact", Selector::exact).value("anneal", Selector::anneal).value("cumsum", Selector::cumsum)
      .value("cumsum_anneal", Selector::cumsum_anneal).value("uniform", Selector::uniform);
  py::enum_<Schedule>(k, "Schedule").value("geometric", Schedule::geometric).value("linear", Schedule::linear);
  py::enum_<AnnealEvaluation>(k, "AnnealEvaluation", "How the annealer measures a move (same moves, other cost).")
      .value("delta", AnnealEvaluation::delta).value("segments", AnnealEvaluation::segments)
      .value("patent", AnnealEvaluation::patent);
  k.def("parse_anneal_evaluation", &parse_anneal_evaluation, py::arg("text"));
  k.def("parse_selector", &parse_selector, py::arg("text"),
        "'exact', 'anneal', 'cumsum', 'cumsum+anneal', 'uniform' -> Selector, or None.");
  k.def("parse_interpolation", &parse_interpolation, py::arg("text"));
  k.def("parse_metric", &parse_metric, py::arg("text"));
}

// ---- features.hpp, select.hpp: settings -----------------------------------------------------
void bind_settings(py::module_& k) {
  using namespace koma::keys;
  py::class_<Camera> camera(k, "Camera", "The camera through which the error is measured (default: 3D error).");
  def_kwargs_init(camera);
  camera.def_readwrite("projection", &Camera::projection)
      .def_readwrite("position", &Camera::position, "perspective: eye position, metres")
      .def_readwrite("target", &Camera::target, "perspective: point looked at, metres")
      .def_readwrite("fov_degrees", &Camera::fov_degrees)
      .def("validate", &Camera::validate);

  py::class_<FeatureSettings> features(k, "FeatureSettings", "Which points the error is measured on, and how.");
  def_kwargs_init(features);
  features.def_readwrite("weights", &FeatureSettings::weights)
      .def_readwrite("point_weights", &FeatureSettings::point_weights, "[(point name, weight >= 0), ...]")
      .def_readwrite("camera", &FeatureSettings::camera)
      .def("validate", &FeatureSettings::validate);

  py::class_<HoldConstraints> hc(k, "HoldConstraints", "Hold limits every selector honours.");
  def_kwargs_init(hc);
  hc.def_readwrite("min_hold", &HoldConstraints::min_hold, "shortest hold in frames, >= 1 (default 1)")
      .def_readwrite("max_hold", &HoldConstraints::max_hold, "longest hold in frames; 0 = unlimited")
      .def_readwrite("locked", &HoldConstraints::locked, "frames that must be keys")
      .def("max_span", &HoldConstraints::max_span, py::arg("frames"))
      .def("anchors", &HoldConstraints::anchors, py::arg("frames"))
      .def("key_range", &HoldConstraints::key_range, py::arg("frames"))
      .def("validate", &HoldConstraints::validate, py::arg("frames"), py::arg("keys") = 0);

  py::class_<CumsumSettings> cs(k, "CumsumSettings", "The cumulative-sum selector's rule.");
  def_kwargs_init(cs);
  cs.def_readwrite("carry_remainder", &CumsumSettings::carry_remainder)
      .def_readwrite("bisection_steps", &CumsumSettings::bisection_steps)
      .def("validate", &CumsumSettings::validate);

  py::enum_<ExactMethod>(k, "ExactMethod", "How the exact selector finds the optimum.")
      .value("automatic", ExactMethod::automatic)
      .value("levels", ExactMethod::levels)
      .value("lagrange", ExactMethod::lagrange);
  k.def("parse_exact_method", &parse_exact_method, py::arg("text"), "'auto', 'levels', 'lagrange' -> ExactMethod, or None.");
  py::class_<ExactSettings> ex(k, "ExactSettings", "How the exact selector searches.");
  def_kwargs_init(ex);
  ex.def_readwrite("method", &ExactSettings::method, "automatic (default), levels or lagrange")
      .def_readwrite("level_work", &ExactSettings::level_work, "automatic: the level DP when n * N * H <= this")
      .def_readwrite("corridor_states", &ExactSettings::corridor_states, "Lagrangian: most DP states closing a gap")
      .def_readwrite("curve_keys", &ExactSettings::curve_keys,
                     "level DP: also the key frames of every curve point (CurvePoint.frames)")
      .def_readwrite("warm_start", &ExactSettings::warm_start,
                     "Lagrangian: next price from the previous solves (default True; the same keys, fewer solves)")
      .def("validate", &ExactSettings::validate);

  py::class_<AnnealSettings> as(k, "AnnealSettings", "Simulated annealing (explicit seed: deterministic).");
  def_kwargs_init(as);
  as.def_readwrite("seed", &AnnealSettings::seed)
      .def_readwrite("iterations", &AnnealSettings::iterations)
      .def_readwrite("initial_temperature", &AnnealSettings::initial_temperature)
      .def_readwrite("final_ratio", &AnnealSettings::final_ratio)
      .def_readwrite("schedule", &AnnealSettings::schedule)
      .def_readwrite("start_from_cumsum", &AnnealSettings::start_from_cumsum)
      .def_readwrite("evaluation", &AnnealSettings::evaluation)
      .def("validate", &AnnealSettings::validate);


  k.attr("ExtremeSettings") = py::type::of<ExtremeSettings>();  // = body.ReversalSettings (one detector)
}

// ---- body.hpp: layers, contacts, extremes ---------------------------------------------------
void bind_body_layers(py::module_& k) {
  using namespace koma::keys;
  py::class_<BodyPartLayer> layer(k, "BodyPartLayer", "A group of joints keyed on its own (e.g. legs on 3s).");
  def_kwargs_init(layer);
  layer.def_readwrite("group", &BodyPartLayer::group)
      .def_readwrite("on", &BodyPartLayer::on)
      .def_readwrite("offset", &BodyPartLayer::offset);
  k.def("parse_layers", &parse_layers, py::arg("text"), "'legs:3,arms:2+1' -> [BodyPartLayer].");
  k.def("group_joints", &group_joints, py::arg("skeleton"), py::arg("group"));

  py::class_<KeyEvent>(k, "KeyEvent", "A frame worth keeping and the joint that makes it so.")
      .def_readonly("frame", &KeyEvent::frame)
      .def_readonly("joint", &KeyEvent::joint)
      .def("__repr__", [](const KeyEvent& e) {
        return "KeyEvent(frame=" + std::to_string(e.frame) + ", joint=" + std::to_string(e.joint) + ")";
      });
  k.def("contact_keys", &contact_keys, py::arg("motion"), py::arg("settings") = koma::body::ContactSettings{},
        py::call_guard<py::gil_scoped_release>(),
        "Touch-down frames of the foot contacts (koma.timing's detector) as KeyEvents, sorted by frame.");
  k.def("detect_extremes", &detect_extremes, py::arg("motion"), py::arg("settings") = ExtremeSettings{},
        py::call_guard<py::gil_scoped_release>());
}

// ---- keys.hpp: KeySettings, KeySelection, select_keys, hold ------------------------------------
void bind_selection(py::module_& k) {
  using namespace koma::keys;
  py::class_<KeySettings> ks(k, "KeySettings",
                             "Everything select_keys() needs. Give at most one of keys, ratio, on, max_error; "
                             "none = on 2s.");
  def_kwargs_init(ks);
  ks.def_readwrite("features", &KeySettings::features)
      .def_readwrite("interpolation", &KeySettings::interpolation)
      .def_readwrite("metric", &KeySettings::metric)
      .def_readwrite("selector", &KeySettings::selector)
      .def_readwrite("keys", &KeySettings::keys, "keep n keys (>= 2)")
      .def_readwrite("ratio", &KeySettings::ratio, "keep round(ratio * frames) keys, in (0, 1]")
      .def_readwrite("on", &KeySettings::on, "as many keys as animating on Ns, no hold shorter than N")
      .def_readwrite("allow_ones", &KeySettings::allow_ones,
                     "with on: allow holds shorter than N on fast action (default False)")
      .def_readwrite("offset", &KeySettings::offset, "uniform with `on`: first inner key frame")
      .def_readwrite("max_error", &KeySettings::max_error, "fewest keys with MSE <= max_error (m^2)")
      .def_readwrite("constraints", &KeySettings::constraints)
      .def_readwrite("keep_contacts", &KeySettings::keep_contacts)
      .def_readwrite("keep_extremes", &KeySettings::keep_extremes)
      .def_readwrite("contacts", &KeySettings::contacts)
      .def_readwrite("extremes", &KeySettings::extremes)
      .def_readwrite("layers", &KeySettings::layers)
      .def_readwrite("anneal", &KeySettings::anneal)
      .def_readwrite("cumsum", &KeySettings::cumsum)
      .def_readwrite("max_hold_seconds", &KeySettings::max_hold_seconds,
                     "when constraints.max_hold is 0: the longest hold in seconds (default 2; 0 = unlimited)")
      .def_readwrite("exact", &KeySettings::exact, "how the exact selector searches")
      .def("validate", &KeySettings::validate);

  py::class_<CurvePoint>(k, "CurvePoint", "One point of the optimal error-vs-keys curve.")
      .def_readonly("keys", &CurvePoint::keys)
      .def_readonly("error", &CurvePoint::error)
      .def_readonly("hull", &CurvePoint::hull, "a convex-hull point met by the Lagrangian search")
      .def_readonly("frames", &CurvePoint::frames, "its key frames (with ExactSettings.curve_keys; else empty)");

  py::class_<LayerSelection>(k, "LayerSelection", "The selection of one timing layer ([0] = main).")
      .def_readonly("name", &LayerSelection::name)
      .def_readonly("joints", &LayerSelection::joints)
      .def_readonly("points", &LayerSelection::points)
      .def_readonly("target_keys", &LayerSelection::target_keys)
      .def_readonly("keys", &LayerSelection::keys)
      .def_readonly("auto_locked", &LayerSelection::auto_locked)
      .def_readonly("segment_errors", &LayerSelection::segment_errors)
      .def_readonly("error", &LayerSelection::error)
      .def_readonly("total", &LayerSelection::total)
      .def_readonly("normaliser", &LayerSelection::normaliser)
      .def_readonly("worst_error", &LayerSelection::worst_error)
      .def_readonly("worst_frame", &LayerSelection::worst_frame)
      .def_readonly("worst_point", &LayerSelection::worst_point)
      .def_readonly("curve", &LayerSelection::curve)
      .def_readonly("iterations", &LayerSelection::iterations)
      .def_readonly("max_hold", &LayerSelection::max_hold, "the longest hold allowed, after defaults")
      .def_readonly("min_hold", &LayerSelection::min_hold, "the shortest hold allowed, on's floor included")
      .def_readonly("lower_bound", &LayerSelection::lower_bound, "exact: certified lower bound on total")
      .def_readonly("optimal", &LayerSelection::optimal, "exact: proven optimal")
      .def_readonly("solves", &LayerSelection::solves, "exact, Lagrangian: shortest-path solves");

  py::class_<KeySelection>(k, "KeySelection", "The result of select_keys(): kept frames per layer and errors (m^2).")
      .def_readonly("frames", &KeySelection::frames)
      .def_readonly("frame_rate", &KeySelection::frame_rate)
      .def_readonly("layers", &KeySelection::layers)
      .def_readonly("joint_layer", &KeySelection::joint_layer)
      .def_readonly("error", &KeySelection::error)
      .def_readonly("worst_error", &KeySelection::worst_error)
      .def_readonly("worst_frame", &KeySelection::worst_frame)
      .def_readonly("worst_point", &KeySelection::worst_point)
      .def("keys", &KeySelection::keys, "Keys of the main layer.");

  k.def(
      "select_keys",
      [](const Motion& motion, const KeySettings& settings, const py::object& progress) {
        auto callback = progress_of(progress);
        py::gil_scoped_release release;
        return select_keys(motion, settings, callback);
      },
      py::arg("motion"), py::arg("settings") = KeySettings{}, py::arg("progress") = py::none(),
      "Selects key frames of `motion` at its own rate. Lossy. `progress(fraction)` is optional. "
      "Raises koma.BadDataError / ValueError. Releases the GIL.");
  k.def("hold", &hold, py::arg("motion"), py::arg("selection"), py::call_guard<py::gil_scoped_release>(),
        "The stepped motion: every frame shows the latest key's pose. Raises koma.MismatchError.");
  k.def("hold_map", &hold_map, py::arg("keys"), py::arg("frames"));
  k.def(
      "drawing_numbers",
      [](const std::vector<int>& keys, int frames) { return koma::drawing_numbers(keys, frames); }, py::arg("keys"),
      py::arg("frames"),
      "Per output frame, the 1-based drawing shown (core/drawings.hpp). Raises koma.MismatchError for keys that do "
      "not start at 0, do not increase or lie outside the frames.");
  k.def(
      "satisfies",
      [](const std::vector<int>& keys, int frames, const HoldConstraints& constraints) {
        return satisfies(keys, frames, constraints);
      },
      py::arg("keys"), py::arg("frames"), py::arg("constraints"));
}

}  // namespace

void bind_keys(py::module_& m) {
  using namespace koma::keys;
  py::module_ k = m.def_submodule("keys", "Key poses for limited animation (select_keys, hold).");
  bind_enums(k);
  bind_settings(k);
  bind_body_layers(k);
  bind_selection(k);
}

}  // namespace koma::python
