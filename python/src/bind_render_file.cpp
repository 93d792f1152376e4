// koma::batch's render pipeline, 1:1 with include/koma/batch/render_file.hpp (into koma._batch,
// beside the other pipelines' jobs). No logic here: koma.render_file builds the job from plain
// settings and turns the result's warnings into KomaWarning. The run releases the GIL.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/batch/render_file.hpp"

namespace koma::python {

void bind_render_file(py::module_& m) {
  py::module_ b = m.attr("_batch");
  py::enum_<batch::Look>(b, "Look").value("toon", batch::Look::toon).value("sticks", batch::Look::sticks);
  py::class_<batch::RenderJob> rj(b, "RenderJob", "Settings of the render pipeline of one file (koma render).");
  def_kwargs_init(rj);
  rj.def_readwrite("read", &batch::RenderJob::read, "io.ReadOptions (also the compare file's)")
      .def_readwrite("keys", &batch::RenderJob::keys, "koma keys JSON report to hold the input on ('' = not held)")
      .def_readwrite("compare", &batch::RenderJob::compare, "second motion shown beside or under the input ('' = none)")
      .def_readwrite("compare_animation", &batch::RenderJob::compare_animation, "its animation ('' = read.animation)")
      .def_readwrite("output_rate", &batch::RenderJob::output_rate, "fps; 0 = the report's, else 24")
      .def_readwrite("look", &batch::RenderJob::look, "Look.toon (default) or Look.sticks")
      .def_readwrite("camera", &batch::RenderJob::camera, "render.CameraSettings (default side, fixed, 1280x720)")
      .def_readwrite("style", &batch::RenderJob::style, "toon.ToonStyle")
      .def_readwrite("compare_settings", &batch::RenderJob::compare_settings, "render.CompareSettings")
      .def("validate", &batch::RenderJob::validate);
  py::class_<batch::RenderFileResult>(b, "RenderFileResult", "What run_render_file() wrote.")
      .def_readonly("format", &batch::RenderFileResult::format)
      .def_readonly("frames", &batch::RenderFileResult::frames)
      .def_readonly("frame_rate", &batch::RenderFileResult::frame_rate)
      .def_readonly("width", &batch::RenderFileResult::width)
      .def_readonly("height", &batch::RenderFileResult::height)
      .def_readonly("view", &batch::RenderFileResult::view)
      .def_readonly("follow", &batch::RenderFileResult::follow)
      .def_readonly("look", &batch::RenderFileResult::look, "the look drawn (sticks when the toon look fell back)")
      .def_readonly("smear", &batch::RenderFileResult::smear)
      .def_readonly("drawings", &batch::RenderFileResult::drawings, "kept frames of the report; 0 = not held")
      .def_readonly("fallback", &batch::RenderFileResult::fallback, "the fall-back warning ('' = drawn as asked)")
      .def_readonly("warnings", &batch::RenderFileResult::warnings)
      .def_readonly("notes", &batch::RenderFileResult::notes);
  b.def(
      "run_render_file",
      [](const std::filesystem::path& input, const std::filesystem::path& output, const batch::RenderJob& job) {
        return batch::run_render_file(input, output, job);
      },
      py::arg("input"), py::arg("output"), py::arg("job"), py::call_guard<py::gil_scoped_release>(),
        "Reads, draws and writes `output` (.mp4, .gif, or a folder ending in '/' of PNG frames); atomic.");
  b.def(
      "render_figures", [](const batch::RenderFileResult& r) { return to_python(batch::render_figures(r)); },
      py::arg("result"), "The figures of a run as a dict (what `koma render --json` prints, without paths and time).");
}

}  // namespace koma::python
