// koma::cartoon (the cartoon animation filter), 1:1 with include/koma/cartoon/filter.hpp. No logic
// here; cartoon_motion releases the GIL.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/cartoon/filter.hpp"
#include "koma/cartoon/report.hpp"
#include "koma/core/fk.hpp"

#include <fmt/format.h>

namespace koma::python {

void bind_cartoon(py::module_& m) {
  using namespace koma::cartoon;
  py::module_ c = m.def_submodule("cartoon", "The cartoon animation filter (Wang et al. 2006).");

  py::class_<FilterSettings> fs(c, "FilterSettings", "The one-dimensional filter core, in frames (CartoonSettings.per_frame).");
  def_kwargs_init(fs);
  fs.def_readwrite("strength", &FilterSettings::strength, "strength A (default 1; 0 = identity)")
      .def_readwrite("sigma_frames", &FilterSettings::sigma_frames, "fixed sigma in frames; 0 = adaptive")
      .def_readwrite("window", &FilterSettings::window)
      .def_readwrite("min_sigma", &FilterSettings::min_sigma)
      .def_readwrite("max_sigma", &FilterSettings::max_sigma)
      .def_readwrite("hop", &FilterSettings::hop)
      .def_readwrite("smooth", &FilterSettings::smooth)
      .def("validate", &FilterSettings::validate);
  c.def("sigma_for_frequency", &sigma_for_frequency, py::arg("omega"));
  c.def(
      "filter_channel",
      [](const std::vector<double>& x, double sigma, double strength) { return filter_channel(x, sigma, strength); },
      py::arg("x"), py::arg("sigma"), py::arg("strength"), "One channel, fixed sigma (frames).");

  py::class_<CartoonSettings> cs(c, "CartoonSettings", "Whole-motion settings of cartoon_motion().");
  def_kwargs_init(cs);
  cs.def_readwrite("strength", &CartoonSettings::strength,
                   "strength A in (1/30 s)^2: the same value does the same at every frame rate (default 1)")
      .def_readwrite("sigma_seconds", &CartoonSettings::sigma_seconds, "fixed sigma in seconds; 0 = adaptive")
      .def_readwrite("min_sigma_seconds", &CartoonSettings::min_sigma_seconds, "adaptive sigma lower clamp, seconds")
      .def_readwrite("max_sigma_seconds", &CartoonSettings::max_sigma_seconds, "adaptive sigma upper clamp, seconds")
      .def_readwrite("window_seconds", &CartoonSettings::window_seconds, "adaptive sigma window, seconds")
      .def_readwrite("per_frame", &CartoonSettings::per_frame,
                     "FilterSettings used as given at every rate (None = derived from the seconds fields)")
      .def("filter_at", &CartoonSettings::filter_at, py::arg("frame_rate"), "the per-frame FilterSettings at a rate")
      .def_property(
          "part_strength", [](const CartoonSettings& s) { return s.part_strength; },
          [](CartoonSettings& s, const std::array<double, body::kBodyPartCount>& v) { s.part_strength = v; },
          "strength multiplier per body.BodyPart (root, torso, head, arms, legs); default all 1")
      .def_readwrite("squash", &CartoonSettings::squash, "squash-and-stretch amount K (0 = off)")
      .def_readwrite("squash_joint", &CartoonSettings::squash_joint)
      .def_readwrite("squash_delay", &CartoonSettings::squash_delay, "seconds (default 0.05)")
      .def_readwrite("keep_feet", &CartoonSettings::keep_feet, "keep planted feet planted (IK)")
      .def_readwrite("blend_seconds", &CartoonSettings::blend_seconds, "IK blend in/out around contacts, seconds")
      .def_readwrite("contacts", &CartoonSettings::contacts)
      .def_readwrite("bound_share", &CartoonSettings::bound_share,
                     "added rotation per joint within this share of the joint's own range (default 0.5; 0 = no bound)")
      .def_readwrite("cut_speed", &CartoonSettings::cut_speed,
                     "a step faster than this (body sizes / s) splits the take (default 12; 0 = never)")
      .def_readwrite("cut_ratio", &CartoonSettings::cut_ratio,
                     "... or faster than this times its neighbours (default 8)")
      .def("validate", &CartoonSettings::validate);
  py::class_<Segment>(c, "Segment", "Frames [begin, end) filtered together.")
      .def_readonly("begin", &Segment::begin)
      .def_readonly("end", &Segment::end)
      .def("__repr__", [](const Segment& s) { return fmt::format("Segment({}, {})", s.begin, s.end); });
  py::class_<BoundReport>(c, "BoundReport", "A joint whose added rotation the bound reduced.")
      .def_readonly("joint", &BoundReport::joint)
      .def_readonly("translation", &BoundReport::translation, "True: the joint's translation (metres)")
      .def_readonly("frames", &BoundReport::frames)
      .def_readonly("range", &BoundReport::range, "radians")
      .def_readonly("bound", &BoundReport::bound, "radians")
      .def_readonly("requested", &BoundReport::requested, "radians")
      .def_readonly("requested_frame", &BoundReport::requested_frame);

  py::class_<SquashFrame>(c, "SquashFrame")
      .def_readonly("stretch", &SquashFrame::stretch)
      .def_readonly("direction", &SquashFrame::direction)
      .def_readonly("axis_scale", &SquashFrame::axis_scale);
  py::class_<CartoonResult>(c, "CartoonResult", "The filtered motion and what the filter did.")
      .def_readonly("motion", &CartoonResult::motion)
      .def_readonly("root_sigma", &CartoonResult::root_sigma)
      .def_readonly("sigma_min", &CartoonResult::sigma_min)
      .def_readonly("sigma_mean", &CartoonResult::sigma_mean)
      .def_readonly("sigma_max", &CartoonResult::sigma_max)
      .def_readonly("frame_rate", &CartoonResult::frame_rate)
      .def_readonly("filter", &CartoonResult::filter, "the per-frame FilterSettings applied")
      .def_readonly("squash", &CartoonResult::squash)
      .def_readonly("contacts", &CartoonResult::contacts)
      .def_readonly("skating_input_mm", &CartoonResult::skating_input_mm)
      .def_readonly("skating_output_mm", &CartoonResult::skating_output_mm)
      .def_readonly("body_change_m", &CartoonResult::body_change_m)
      .def_readonly("max_change_m", &CartoonResult::max_change_m)
      .def_readonly("max_change_joint", &CartoonResult::max_change_joint, "joint index of max_change_m")
      .def_readonly("max_change_frame", &CartoonResult::max_change_frame, "frame of max_change_m")
      .def_readonly("unreachable_frames", &CartoonResult::unreachable_frames)
      .def_readonly("segments", &CartoonResult::segments)
      .def_readonly("bounded", &CartoonResult::bounded);
  c.def("cartoon_motion", &cartoon_motion, py::arg("motion"), py::arg("settings") = CartoonSettings{},
        py::call_guard<py::gil_scoped_release>(),
        "Applies the cartoon filter to a motion. Lossy. Raises ValueError / koma.BadDataError.");
  c.def("find_segments",
        [](const Motion& motion, const CartoonSettings& s) { return find_segments(motion, forward_kinematics(motion), s); },
        py::arg("motion"), py::arg("settings") = CartoonSettings{}, "The segments between discontinuities.");
  c.def("foot_skating_mm", &foot_skating_mm, py::arg("motion"), py::arg("contacts"));
  c.def("cartoon_summary", [](const CartoonResult& r, const CartoonSettings& s) { return to_python(cartoon_summary(r, s)); },
        py::arg("result"), py::arg("settings") = CartoonSettings{},
        "The summary dict `koma cartoon --json` prints (without input/output names).");
  c.def("cartoon_report", [](const CartoonResult& r, const CartoonSettings& s) { return to_python(cartoon_report(r, s)); },
        py::arg("result"), py::arg("settings") = CartoonSettings{},
        "The report dict `koma cartoon --report` writes (without input/output names).");
}

}  // namespace koma::python
