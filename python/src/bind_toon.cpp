// koma::toon, the toon look's settings (koma/batch/render_file.hpp's RenderJob::style), 1:1 with
// include/koma/toon/renderer.hpp. The drawing itself is reached through koma.render_file.
#include <pybind11/stl.h>

#include "common.hpp"
#include "koma/toon/renderer.hpp"

namespace koma::python {

namespace {

// ---- renderer.hpp -------------------------------------------------------------------------------
void bind_renderer(py::module_& t) {
  using namespace koma::toon;
  py::enum_<Shading>(t, "Shading").value("cel", Shading::cel).value("smooth", Shading::smooth).value("flat", Shading::flat);
  py::enum_<Smear>(t, "Smear").value("off", Smear::off).value("smear", Smear::smear).value("multiples", Smear::multiples);
  py::class_<ToonStyle> s(t, "ToonStyle", "The toon look: cel tones, ink lines, paper, shadow, smears, transparent cels.");
  def_kwargs_init(s);
  s.def_readwrite("shading", &ToonStyle::shading, "Shading; cel")
      .def_readwrite("tones", &ToonStyle::tones, "cel tones per material, 2 or 3; 2")
      .def_readwrite("threshold", &ToonStyle::threshold, "lit where the cosine to the key light exceeds this; 0.15")
      .def_readwrite("core_threshold", &ToonStyle::core_threshold, "tones = 3: core shadow below this; -0.45")
      .def_readwrite("shadow", &ToonStyle::shadow, "render.Rgba: shadow tone = colour x this")
      .def_readwrite("core", &ToonStyle::core, "render.Rgba: core tone = colour x this")
      .def_readwrite("ink", &ToonStyle::ink, "render.Rgba: line colour")
      .def_readwrite("line_width", &ToonStyle::line_width, "outline width, px at 720p, 0 .. 40; 3")
      .def_readwrite("inner_width", &ToonStyle::inner_width, "inner lines, px at 720p, 0 .. 20; 1.6")
      .def_readwrite("crease_deg", &ToonStyle::crease_deg, "normals turning more than this draw a line; 70")
      .def_readwrite("depth_break", &ToonStyle::depth_break, "depth breaks over this share of the figure; 0.04")
      .def_readwrite("paper", &ToonStyle::paper, "render.Rgba: background")
      .def_readwrite("shadow_opacity", &ToonStyle::shadow_opacity, "contact shadow, 0 .. 1; 0.22")
      .def_readwrite("transparent", &ToonStyle::transparent, "RGBA cels: no background, no shadow; False")
      .def_readwrite("msaa", &ToonStyle::msaa, "samples per pixel, 1, 2 or 4; 4")
      .def_readwrite("smear", &ToonStyle::smear, "Smear of fast drawings; off")
      .def_readwrite("smear_threshold", &ToonStyle::smear_threshold, "fast above this many px at 720p; 12")
      .def("validate", &ToonStyle::validate);
  t.def("unavailable_reason", &unavailable_reason,
        "Why the toon look cannot run here (naming the package to install), or None when it can.");
}

}  // namespace

void bind_toon(py::module_& m) {
  py::module_ t = m.def_submodule("toon", "The toon look: cel-shaded, ink-outlined characters (OpenGL through EGL).");
  bind_renderer(t);
}

}  // namespace koma::python
