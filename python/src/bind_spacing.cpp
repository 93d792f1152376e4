// koma.keys spacing charts, 1:1 with include/koma/keys/spacing.hpp and the spacing parts of
// report.hpp (the exposure sheet of a spaced run and the charts read back from one). No logic here.
#include <pybind11/stl.h>

#include "common.hpp"
#include "koma/keys/report.hpp"
#include "koma/keys/spacing.hpp"

namespace koma::python {

void bind_spacing(py::module_& m) {
  using namespace koma::keys;
  py::module_ k = m.attr("keys");

  py::enum_<ChartKind>(k, "ChartKind", "The timing charts (custom: a list of fractions).")
      .value("source", ChartKind::source).value("even", ChartKind::even).value("slow_in", ChartKind::slow_in)
      .value("slow_out", ChartKind::slow_out).value("slow_in_out", ChartKind::slow_in_out)
      .value("halves", ChartKind::halves).value("custom", ChartKind::custom);
  k.def("parse_chart_kind", &parse_chart_kind, py::arg("text"), "'slow-in-out' -> ChartKind, or None.");

  py::class_<Chart> chart(k, "Chart", "A timing chart: a named one, or a custom list of fractions of the pose path.");
  def_kwargs_init(chart);
  chart.def_readwrite("kind", &Chart::kind, "default source (the capture's own spacing)")
      .def_readwrite("fractions", &Chart::fractions, "custom: shares of the way, increasing, in [0, 1]")
      .def("validate", &Chart::validate)
      .def("name", &Chart::name, "'slow-in', or the fractions '0.1 0.35 0.8' (parse_chart reads it back)")
      .def("__repr__", [](const Chart& c) { return "Chart('" + c.name() + "')"; });
  k.def("parse_chart", &parse_chart, py::arg("text"),
        "'even', 'slow-in', ... or fractions '0.1,0.35,0.8' -> Chart. Raises ValueError naming the bad fraction.");
  k.def(
      "chart_fractions",
      [](const Chart& c, const std::vector<double>& times) { return chart_fractions(c, times); },
      py::arg("chart"), py::arg("times"),
        "The chart's fractions for inbetweens at time fractions `times` of their gap ([] for source).");

  py::class_<GapChart> gap_chart(k, "GapChart", "The chart of the gap opened by the key on output frame `start`.");
  def_kwargs_init(gap_chart);
  gap_chart.def_readwrite("start", &GapChart::start).def_readwrite("chart", &GapChart::chart);

  py::class_<SpacingSettings> ss(k, "SpacingSettings", "Where the inbetweens go between key poses.");
  def_kwargs_init(ss);
  ss.def_readwrite("on", &SpacingSettings::on, "an inbetween every `on` output frames after each key (default 2)")
      .def_readwrite("chart", &SpacingSettings::chart, "every gap's chart (default source)")
      .def_readwrite("gaps", &SpacingSettings::gaps, "[GapChart]: charts of single gaps, overriding `chart`")
      .def("validate", &SpacingSettings::validate);

  py::enum_<DrawingKind>(k, "DrawingKind").value("key", DrawingKind::key).value("inbetween", DrawingKind::inbetween);
  py::class_<Drawing>(k, "Drawing", "One drawing: its frame, the source time of its pose, key or inbetween, its share.")
      .def_readonly("frame", &Drawing::frame)
      .def_readonly("source_frame", &Drawing::source_frame)
      .def_readonly("source_time", &Drawing::source_time, "seconds")
      .def_readonly("kind", &Drawing::kind)
      .def_readonly("chart", &Drawing::chart, "share of its gap's pose path covered (0 for a key)")
      .def_readonly("gap", &Drawing::gap);
  py::class_<GapSpacing>(k, "GapSpacing", "One gap between consecutive keys.")
      .def_readonly("start", &GapSpacing::start)
      .def_readonly("end", &GapSpacing::end)
      .def_readonly("chart", &GapSpacing::chart)
      .def_readonly("inbetweens", &GapSpacing::inbetweens)
      .def_readonly("held", &GapSpacing::held, "too short for an inbetween: its first key is held")
      .def_readonly("path", &GapSpacing::path, "pose path length, metres summed over joints");
  py::class_<Spacing>(k, "Spacing", "The result of space_drawings(): every drawing and gap.")
      .def_readonly("frames", &Spacing::frames)
      .def_readonly("frame_rate", &Spacing::frame_rate)
      .def_readonly("on", &Spacing::on)
      .def_readonly("drawings", &Spacing::drawings)
      .def_readonly("gaps", &Spacing::gaps)
      .def("drawing_frames", &Spacing::drawing_frames);
  k.def(
      "space_drawings",
      [](const Motion& source, const std::vector<int>& keys, double rate, const SpacingSettings& settings) {
        return space_drawings(source, keys, rate, settings);
      },
      py::arg("source"), py::arg("keys"), py::arg("rate"),
        py::arg("settings") = SpacingSettings{}, py::call_guard<py::gil_scoped_release>(),
        "Places inbetweens between `keys` (output frames at `rate`) by the charts, on the pose path of `source` "
        "(at its own rate). Raises ValueError / koma.MismatchError. Releases the GIL.");
  k.def("spaced_motion", &spaced_motion, py::arg("source"), py::arg("spacing"), py::call_guard<py::gil_scoped_release>(),
        "The spaced motion at the output rate: each frame shows its latest drawing's pose.");
  k.def("spacing_sheet_csv", py::overload_cast<const Spacing&>(&exposure_sheet_csv), py::arg("spacing"),
        "The exposure sheet of a spaced run (CSV text), with a gap_chart cell per key.");
  py::class_<SheetCharts>(k, "SheetCharts", "The charts an exposure sheet sets per gap.")
      .def_readonly("keys", &SheetCharts::keys)
      .def_readonly("gaps", &SheetCharts::gaps);
  k.def("read_sheet_charts", &read_sheet_charts, py::arg("csv"), py::arg("context") = "exposure sheet",
        "The key rows and gap_chart cells of an exposure sheet's text. Raises koma.BadFileError.");
}

}  // namespace koma::python
