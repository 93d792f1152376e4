// koma::render, the settings the render pipeline takes (koma/batch/render_file.hpp), 1:1 with
// include/koma/render/figure.hpp (the camera, colours and how users write them) and compare.hpp
// (the layout of two motions). The drawing itself is reached through koma.render_file.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "koma/render/compare.hpp"
#include "koma/render/encode.hpp"
#include "koma/render/figure.hpp"

namespace koma::python {

namespace {

// ---- figure.hpp ---------------------------------------------------------------------------------
void bind_figure(py::module_& r) {
  using namespace koma::render;
  py::class_<Rgba> rgba(r, "Rgba", "A colour with straight alpha; each component in [0, 1].");
  def_kwargs_init(rgba);
  rgba.def_readwrite("r", &Rgba::r).def_readwrite("g", &Rgba::g).def_readwrite("b", &Rgba::b).def_readwrite("a", &Rgba::a);
  py::enum_<CameraView>(r, "CameraView")
      .value("front", CameraView::front)
      .value("side", CameraView::side)
      .value("top", CameraView::top)
      .value("perspective", CameraView::perspective);
  py::class_<CameraSettings> cs(r, "CameraSettings", "How to frame the picture (view, size, margin, follow).");
  def_kwargs_init(cs);
  cs.def_readwrite("view", &CameraSettings::view, "CameraView; default front")
      .def_readwrite("width", &CameraSettings::width, "frame width in pixels, 1 .. 8192; 1280")
      .def_readwrite("height", &CameraSettings::height, "frame height in pixels, 1 .. 8192; 720")
      .def_readwrite("margin", &CameraSettings::margin, "empty border, fraction of the smaller side; 0.08")
      .def_readwrite("persp_yaw_deg", &CameraSettings::persp_yaw_deg, "perspective: turn toward the right; 35")
      .def_readwrite("persp_pitch_deg", &CameraSettings::persp_pitch_deg, "perspective: look down; 15")
      .def_readwrite("persp_fov_deg", &CameraSettings::persp_fov_deg, "perspective: vertical field of view; 35")
      .def_readwrite("follow", &CameraSettings::follow, "pan with a travelling figure (stepped on drawings); False")
      .def("validate", &CameraSettings::validate);
  r.def("parse_camera_spec", &parse_camera_spec, py::arg("text"), py::arg("camera") = CameraSettings{},
        "'side,follow' -> CameraSettings: a view and/or a framing, the rest as in `camera` (ValueError otherwise).");
  r.def("parse_frame_size", &parse_frame_size, py::arg("text"), "'1280x720' -> (1280, 720) (ValueError otherwise).");
  r.def("parse_colour", &parse_colour, py::arg("text"), py::arg("field"),
        "'#1a171f' -> Rgba (ValueError naming `field` otherwise).");
}

// ---- compare.hpp / encode.hpp -------------------------------------------------------------------
void bind_compare(py::module_& r) {
  using namespace koma::render;
  py::enum_<CompareLayout>(r, "CompareLayout")
      .value("side_by_side", CompareLayout::side_by_side)
      .value("overlay", CompareLayout::overlay);
  py::class_<CompareSettings> cs(r, "CompareSettings", "Layout of two motions and the overlays of a comparison.");
  def_kwargs_init(cs);
  cs.def_readwrite("layout", &CompareSettings::layout, "CompareLayout; side_by_side")
      .def_readwrite("frame_counter", &CompareSettings::frame_counter, "frame number and time in the corner")
      .def_readwrite("key_marker", &CompareSettings::key_marker, "NEW/HOLD badge with the drawing number")
      .def_readwrite("timeline", &CompareSettings::timeline, "strip of the kept frames along the bottom")
      .def_readwrite("onion_skin", &CompareSettings::onion_skin, "previous drawings shown as ghosts, 0 .. 8; 0")
      .def_readwrite("ghost", &CompareSettings::ghost, "Rgba of the original in the overlay layout")
      .def_readwrite("onion", &CompareSettings::onion, "Rgba of onion-skin ghosts")
      .def_readwrite("accent", &CompareSettings::accent, "Rgba of the new-drawing marker and kept-frame ticks")
      .def("validate", &CompareSettings::validate);
  py::enum_<VideoFormat>(r, "VideoFormat")
      .value("mp4", VideoFormat::mp4)
      .value("gif", VideoFormat::gif)
      .value("png_sequence", VideoFormat::png_sequence);
  r.def("video_format_for", &video_format_for, py::arg("path"),
        "The format a path asks for: .mp4, .gif, or a folder (ending in '/') of PNG frames.");
}

}  // namespace

void bind_render(py::module_& m) {
  py::module_ r = m.def_submodule("render", "Cameras, colours and comparison layouts of rendered videos.");
  bind_figure(r);
  bind_compare(r);
}

}  // namespace koma::python
