// koma::io, 1:1 with include/koma/io (no logic here). File access releases the GIL.
#include <pybind11/stl.h>
#include <fmt/format.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "koma/io/angles_csv.hpp"
#include "koma/io/csv.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"
#include "koma/io/motion_file.hpp"

namespace koma::python {

namespace {

/// io::GltfScene is opaque (defined privately in src/io), so Python holds it through this handle.
struct GltfSceneHandle {
  std::shared_ptr<const io::GltfScene> scene;
};

py::object scene_or_none(const std::shared_ptr<const io::GltfScene>& scene) {
  if (!scene) return py::none();
  return py::cast(GltfSceneHandle{scene});
}

std::shared_ptr<const io::GltfScene> scene_of(const py::object& handle) {
  if (handle.is_none()) return nullptr;
  return handle.cast<const GltfSceneHandle&>().scene;
}

}  // namespace

void bind_io(py::module_& m) {
  py::module_ io = m.def_submodule("io", "Reading and writing motions (BVH, glTF, FBX) and point tracks.");

  py::class_<GltfSceneHandle>(io, "GltfScene",
                              "The parts of a glTF file that are not motion (meshes, skin, materials), opaque: "
                              "pass it to WriteOptions.gltf_scene to write the character again.");

  py::class_<io::ReadResult>(io, "ReadResult", "A read motion and the quirks the reader tolerated.")
      .def_readonly("motion", &io::ReadResult::motion)
      .def_readonly("warnings", &io::ReadResult::warnings)
      .def_readonly("unit_detected", &io::ReadResult::unit_detected)
      .def_readonly("unit_rule", &io::ReadResult::unit_rule)
      .def_property_readonly(
          "gltf_scene", [](const io::ReadResult& r) { return scene_or_none(r.gltf_scene); },
          "glTF input only: the character around the motion (a GltfScene), else None.");

  py::class_<io::ReadOptions> ro(io, "ReadOptions", "Options of read_motion().");
  def_kwargs_init(ro);
  ro.def_readwrite("unit", &io::ReadOptions::unit, "BVH: the file's LengthUnit; None detects it.")
      .def_readwrite("animation", &io::ReadOptions::animation, "glTF/FBX: animation name, index, or the part of its name after the last '|'; '' = the first.")
      .def_readwrite("frame_rate", &io::ReadOptions::frame_rate, "glTF: sampling rate in fps; 0 = from the key times.")
      .def_readwrite("scale", &io::ReadOptions::scale, "BVH: metres per file unit (a unit of its own); > 0 overrides unit.")
      .def_readwrite("asset_root", &io::ReadOptions::asset_root,
                     "glTF: the folder its buffer and image URIs must resolve inside; '' = the file's own folder.");

  py::enum_<io::FbxUpAxis>(io, "FbxUpAxis", "Up axis of a written FBX file.")
      .value("y", io::FbxUpAxis::y)
      .value("z", io::FbxUpAxis::z);

  py::class_<io::WriteOptions> wo(io, "WriteOptions", "Options of write_motion().");
  def_kwargs_init(wo);
  wo.def_readwrite("unit", &io::WriteOptions::unit, "BVH: LengthUnit to write; None restores the source unit.")
      .def_readwrite("step_keys", &io::WriteOptions::step_keys,
                     "glTF: kept frames; non-empty writes STEP samplers with one key per kept frame.")
      .def_readwrite("animation_name", &io::WriteOptions::animation_name,
                     "glTF/FBX: name of the written animation (take); '' = Motion.name, the source's.")
      .def_readwrite("fbx_ascii", &io::WriteOptions::fbx_ascii, "FBX: ASCII instead of binary FBX 7.4.")
      .def_readwrite("fbx_unit", &io::WriteOptions::fbx_unit, "FBX: the file's LengthUnit (default centimetre).")
      .def_readwrite("fbx_up", &io::WriteOptions::fbx_up, "FBX: the file's up axis, FbxUpAxis.y (default) or .z.")
      .def_property(
          "gltf_scene", [](const io::WriteOptions& o) { return scene_or_none(o.gltf_scene); },
          [](io::WriteOptions& o, const py::object& handle) { o.gltf_scene = scene_of(handle); },
          "glTF: the character read with the input (ReadResult.gltf_scene) to write the motion onto; "
          "None (default) writes the skeleton only.");

  io.def("read_motion", &io::read_motion, py::arg("path"), py::arg("options") = io::ReadOptions{},
         py::call_guard<py::gil_scoped_release>(),
         "Reads a motion, choosing the reader by extension. Raises koma.BadFileError / OSError.");
  io.def("write_motion", &io::write_motion, py::arg("path"), py::arg("motion"), py::arg("options") = io::WriteOptions{},
         py::call_guard<py::gil_scoped_release>(), "Writes a motion atomically, choosing the writer by extension.");
  io.def("is_motion_file", &io::is_motion_file, py::arg("path"));

  py::class_<io::FbxAnimationInfo>(io, "FbxAnimationInfo", "One animation stack of an FBX file (koma info lists them).")
      .def_readonly("index", &io::FbxAnimationInfo::index)
      .def_readonly("name", &io::FbxAnimationInfo::name)
      .def_readonly("frame_rate", &io::FbxAnimationInfo::frame_rate, "fps as the file defines it")
      .def_readonly("duration", &io::FbxAnimationInfo::duration, "seconds (may end between frames)")
      .def_readonly("frame_count", &io::FbxAnimationInfo::frame_count, "frames read_motion samples")
      .def_readonly("channel_count", &io::FbxAnimationInfo::channel_count)
      .def_readonly("max_keys", &io::FbxAnimationInfo::max_keys)
      .def_readonly("junk", &io::FbxAnimationInfo::junk, "at most one frame long (skipped by default)")
      .def("__repr__", [](const io::FbxAnimationInfo& a) {
        return fmt::format("FbxAnimationInfo({} '{}', {:g} fps, {:.3f} s, {} frames{})", a.index, a.name, a.frame_rate,
                           a.duration, a.frame_count, a.junk ? ", junk" : "");
      });
  io.def("list_fbx_animations", &io::list_fbx_animations, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
         "The animation stacks of an FBX file; pass one's index or name as ReadOptions.animation.");
  py::class_<io::GltfAnimationInfo>(io, "GltfAnimationInfo", "One animation of a glTF file.")
      .def_readonly("index", &io::GltfAnimationInfo::index)
      .def_readonly("name", &io::GltfAnimationInfo::name)
      .def_readonly("channel_count", &io::GltfAnimationInfo::channel_count)
      .def_readonly("max_keys", &io::GltfAnimationInfo::max_keys)
      .def_readonly("start", &io::GltfAnimationInfo::start, "earliest key time, s")
      .def_readonly("end", &io::GltfAnimationInfo::end, "latest key time, s")
      .def_readonly("interpolations", &io::GltfAnimationInfo::interpolations);
  io.def("list_gltf_animations", &io::list_gltf_animations, py::arg("path"), py::arg("asset_root") = std::filesystem::path(),
         py::call_guard<py::gil_scoped_release>(),
         "The animations of a .gltf/.glb file; pass one's index or name as ReadOptions.animation.");

  io.def("parse_bvh",
         [](std::string_view text, std::string_view name, std::optional<LengthUnit> unit) {
           return io::parse_bvh(text, name, io::BvhReadOptions{unit});
         },
         py::arg("text"), py::arg("name") = "<string>", py::arg("unit") = py::none(),
         py::call_guard<py::gil_scoped_release>(), "Parses BVH text; `name` appears in error messages.");
  io.def("format_bvh",
         [](const Motion& motion, std::optional<LengthUnit> unit, int significant_digits) {
           return io::format_bvh(motion, io::BvhWriteOptions{unit, significant_digits});
         },
         py::arg("motion"), py::arg("unit") = py::none(), py::arg("significant_digits") = 9,
         py::call_guard<py::gil_scoped_release>(), "BVH text of a motion.");

  py::class_<io::PointTracks>(io, "PointTracks", "Named point tracks (frames x points, metres) at a fixed rate.")
      .def_readonly("names", &io::PointTracks::names)
      .def_readonly("frame_rate", &io::PointTracks::frame_rate)
      .def_readonly("frame_count", &io::PointTracks::frame_count)
      .def_readonly("source_unit", &io::PointTracks::source_unit)
      .def_property_readonly(
          "positions",
          [](py::object self) {
            auto& t = self.cast<io::PointTracks&>();
            return view(t.positions, t.frame_count, static_cast<py::ssize_t>(t.names.size()), self);
          },
          "Positions (frames, points, 3) in metres: a numpy view (no copy).");
  io.def(
      "point_tracks",
      [](const Motion& motion, const WorldPoses& poses) {
        // The tracks' positions view is sized by the motion, so the poses must be the motion's.
        if (poses.frame_count != motion.frame_count || poses.point_count != motion.skeleton.point_count() ||
            poses.positions.size() != static_cast<size_t>(poses.frame_count) * poses.point_count) {
          throw py::value_error("point_tracks: poses have " + std::to_string(poses.frame_count) + " frames x " +
                                std::to_string(poses.point_count) + " points; the motion needs " +
                                std::to_string(motion.frame_count) + " x " +
                                std::to_string(motion.skeleton.point_count()));
        }
        return io::point_tracks(motion, poses);
      },
      py::arg("motion"), py::arg("poses"));
  io.def("write_points_csv", &io::write_points_csv, py::arg("path"), py::arg("tracks"), py::arg("unit"),
         py::call_guard<py::gil_scoped_release>());
  io.def("read_points_csv", &io::read_points_csv, py::arg("path"), py::arg("unit"),
         py::call_guard<py::gil_scoped_release>());
  io.def("format_angles_csv", &io::format_angles_csv, py::arg("motion"));
  io.def("write_angles_csv", &io::write_angles_csv, py::arg("path"), py::arg("motion"),
         py::call_guard<py::gil_scoped_release>(), "Joint angles (radians, one column per DOF) as CSV, atomically.");
}

}  // namespace koma::python
