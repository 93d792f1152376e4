// koma core types and functions, 1:1 with include/koma/core (no logic here).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <limits>

#include "common.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/fk.hpp"
#include "koma/core/motion.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/core/stats.hpp"

namespace koma::python {

namespace {

// A Skeleton query by point or joint index, the index checked against `count` first (IndexError).
template <class Query, class Count>
auto checked_query(Query query, Count count, const char* what) {
  return [=](const Skeleton& s, long long index) {
    check_index(index, (s.*count)(), what);
    return (s.*query)(static_cast<int>(index));
  };
}

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::string shape3(const Motion& m, int width) {
  return "(" + std::to_string(m.frame_count) + ", " + std::to_string(m.joint_count()) + ", " +
         std::to_string(width) + ")";
}

Motion make_motion(const Skeleton& skeleton, double frame_rate, const Array& rotations, const Array& translations,
                   const std::optional<Array>& scales, LengthUnit source_unit) {
  if (rotations.ndim() != 3 || rotations.shape(1) != skeleton.joint_count() || rotations.shape(2) != 4) {
    throw py::value_error("Motion: rotations must have shape (frames, " + std::to_string(skeleton.joint_count()) +
                          ", 4) (x, y, z, w)");
  }
  Motion m;
  m.skeleton = skeleton;
  m.frame_rate = frame_rate;
  m.frame_count = static_cast<int>(rotations.shape(0));
  m.source_unit = source_unit;
  const auto n = static_cast<py::ssize_t>(m.frame_count) * skeleton.joint_count();
  m.rotations = from_array<Quat>(rotations, n, "Motion: rotations", shape3(m, 4));
  m.translations = from_array<Vec3>(translations, n, "Motion: translations", shape3(m, 3));
  if (scales) m.scales = from_array<Vec3>(*scales, n, "Motion: scales", shape3(m, 3));
  m.validate();  // every invariant (skeleton, frame rate, sizes, finite unit rotations) at the boundary
  return m;
}

// The rotation/translation views are sized by the motion's joint count, so a new skeleton must keep it.
void set_skeleton(Motion& m, const Skeleton& skeleton) {
  skeleton.validate();
  if (skeleton.joint_count() != m.joint_count()) {
    throw py::value_error("Motion.skeleton: the new skeleton has " + std::to_string(skeleton.joint_count()) +
                          " joints; the motion's rotations and translations have " +
                          std::to_string(m.joint_count()));
  }
  m.skeleton = skeleton;
}

void set_frame_rate(Motion& m, double rate) {
  if (!std::isfinite(rate) || rate <= 0) {
    throw py::value_error("Motion.frame_rate: expected a finite rate > 0, got " + std::to_string(rate));
  }
  m.frame_rate = rate;
}

// End sites hang from existing joints: checked as one skeleton, the old list kept on failure.
void set_end_sites(Skeleton& s, std::vector<EndSite> end_sites) {
  Skeleton candidate = s;
  candidate.end_sites = std::move(end_sites);
  candidate.validate();
  s.end_sites = std::move(candidate.end_sites);
}

// ---- units.hpp ----------------------------------------------------------------------------
void bind_units(py::module_& m) {
  py::enum_<LengthUnit>(m, "LengthUnit", "A length unit of a file (internal lengths are always metres).")
      .value("metre", LengthUnit::metre)
      .value("centimetre", LengthUnit::centimetre)
      .value("millimetre", LengthUnit::millimetre)
      .value("inch", LengthUnit::inch)
      .value("foot", LengthUnit::foot)
      .value("cmu", LengthUnit::cmu);
  m.def("metres_per_unit", &metres_per_unit, py::arg("unit"), "Metres in one unit (centimetre -> 0.01).");
  m.def("parse_length_unit", &parse_length_unit, py::arg("text"), "'cm', 'metres', 'in', ... -> LengthUnit or None.");
  m.def("length_unit_named", &length_unit_named, py::arg("text"), py::arg("field") = "unit",
        "parse_length_unit, or ValueError naming `field` and the accepted names.");
  py::class_<FileUnit>(m, "FileUnit", "A file's length unit as a user writes it: a name or metres per file unit.")
      .def_readonly("unit", &FileUnit::unit, "the named LengthUnit, or None when given as a number")
      .def_readonly("scale", &FileUnit::scale, "metres per file unit when given as a number, else 0");
  m.def("parse_file_unit", &parse_file_unit, py::arg("text"), py::arg("field") = "unit",
        "The one parser of a user's unit: a unit name or a number > 0 of metres per file unit ('0.056'). "
        "ValueError naming `field` otherwise.");
}

// ---- rotation.hpp, skeleton.hpp -------------------------------------------------------------
void bind_skeleton(py::module_& m) {
  py::enum_<EulerOrder>(m, "EulerOrder", "Tait-Bryan order; ZXY means R = Rz * Rx * Ry.")
      .value("XYZ", EulerOrder::XYZ).value("XZY", EulerOrder::XZY).value("YXZ", EulerOrder::YXZ)
      .value("YZX", EulerOrder::YZX).value("ZXY", EulerOrder::ZXY).value("ZYX", EulerOrder::ZYX);

  py::enum_<Channel>(m, "Channel", "A BVH-style animation channel.")
      .value("Xposition", Channel::Xposition).value("Yposition", Channel::Yposition)
      .value("Zposition", Channel::Zposition).value("Xrotation", Channel::Xrotation)
      .value("Yrotation", Channel::Yrotation).value("Zrotation", Channel::Zrotation);

  py::class_<EndSite>(m, "EndSite", "A leaf point: a fixed offset (metres) from its parent joint.")
      .def(py::init([](int parent, const Vec3& offset) { return EndSite{parent, offset}; }), py::arg("parent"),
           py::arg("offset"))
      .def_readwrite("parent", &EndSite::parent)
      .def_readwrite("offset", &EndSite::offset);

  py::class_<Skeleton>(m, "Skeleton", "Joint hierarchy and rest layout, parents before children (metres).")
      .def(py::init([](std::vector<std::string> names, std::vector<std::int32_t> parents, const Array& offsets,
                       std::vector<std::vector<Channel>> channels, std::vector<EndSite> end_sites) {
             Skeleton s;
             const auto n = static_cast<py::ssize_t>(names.size());
             s.offsets = from_array<Vec3>(offsets, n, "Skeleton: offsets", "(" + std::to_string(n) + ", 3)");
             s.names = std::move(names);
             s.parents = std::move(parents);
             s.channels = std::move(channels);
             s.end_sites = std::move(end_sites);
             s.validate();  // sizes agree, parents index earlier joints, end sites hang from joints
             return s;
           }),
           py::arg("names"), py::arg("parents"), py::arg("offsets"), py::arg("channels"),
           py::arg("end_sites") = std::vector<EndSite>{},
           "A skeleton from names, parent indices (-1 for the root), rest offsets [joints x 3] in metres "
           "and each joint's channel list.")
      .def_readonly("names", &Skeleton::names)
      .def_readonly("parents", &Skeleton::parents)
      .def_property(
          "offsets",
          [](py::object self) {
            auto& s = self.cast<Skeleton&>();
            return view(s.offsets, s.joint_count(), self);
          },
          [](Skeleton& s, const Array& a) {
            assign(s.offsets, a, "Skeleton.offsets", "(" + std::to_string(s.joint_count()) + ", 3)");
          },
          "Rest offsets [joints x 3] in metres: a numpy view (no copy); assign an array of the same shape.")
      .def_readonly("channels", &Skeleton::channels)
      .def_property(
          "end_sites", [](const Skeleton& s) { return s.end_sites; }, &set_end_sites,
          "End sites (a copy); assigning checks each hangs from an existing joint.")
      .def_property_readonly("joint_count", &Skeleton::joint_count)
      .def_property_readonly("end_site_count", &Skeleton::end_site_count)
      .def_property_readonly("point_count", &Skeleton::point_count)
      .def("find", &Skeleton::find, py::arg("name"), "Index of the joint named `name`, or -1.")
      .def("point_name", checked_query(&Skeleton::point_name, &Skeleton::point_count, "Skeleton.point_name"),
           py::arg("p"))
      .def("point_parent", checked_query(&Skeleton::point_parent, &Skeleton::point_count, "Skeleton.point_parent"),
           py::arg("p"))
      .def("euler_order", checked_query(&Skeleton::euler_order, &Skeleton::joint_count, "Skeleton.euler_order"),
           py::arg("joint"))
      .def("has_position_channels",
           checked_query(&Skeleton::has_position_channels, &Skeleton::joint_count, "Skeleton.has_position_channels"),
           py::arg("joint"))
      .def("channel_count", &Skeleton::channel_count)
      .def("rest_height", &Skeleton::rest_height)
      .def("rest_extent", &Skeleton::rest_extent)
      .def("validate", &Skeleton::validate, "Raises koma.BadDataError naming the first broken invariant.")
      .def("__copy__", [](const Skeleton& s) { return s; })
      .def("__deepcopy__", [](const Skeleton& s, py::dict) { return s; }, py::arg("memo"));
  m.def("require_same_topology", &require_same_topology, py::arg("a"), py::arg("b"));
}

// ---- motion.hpp ---------------------------------------------------------------------------
void bind_motion(py::module_& m) {
  py::class_<Motion>(m, "Motion",
                     "Dense animation: local rotations [frames x joints x 4] (x, y, z, w) and translations "
                     "[frames x joints x 3] (metres) at a fixed frame rate.")
      .def(py::init(&make_motion), py::arg("skeleton"), py::arg("frame_rate"), py::arg("rotations"),
           py::arg("translations"), py::arg("scales") = py::none(), py::arg("source_unit") = LengthUnit::metre,
           "A motion from arrays (copied in): rotations (frames, joints, 4) as x, y, z, w; translations "
           "(frames, joints, 3) in metres; optional scales (frames, joints, 3).")
      .def_property(
          "skeleton", [](Motion& mo) -> Skeleton& { return mo.skeleton; }, &set_skeleton,
          py::return_value_policy::reference_internal,
          "The skeleton; assigning one checks it and that its joint count matches the motion's.")
      .def_property(
          "frame_rate", [](const Motion& mo) { return mo.frame_rate; }, &set_frame_rate,
          "Frames per second (finite, > 0).")
      .def_readonly("frame_count", &Motion::frame_count)
      .def_readwrite("source_unit", &Motion::source_unit)
      .def_readwrite("name", &Motion::name,
                     "The clip's name (the source animation or FBX stack, or the file's stem); writers name the "
                     "written animation with it")
      .def_readwrite("source_scale", &Motion::source_scale,
                     "Metres per file unit when the unit was given as a number; 0 = source_unit.")
      .def_property_readonly("joint_count", &Motion::joint_count)
      .def_property(
          "rotations",
          [](py::object self) {
            auto& mo = self.cast<Motion&>();
            return view(mo.rotations, mo.frame_count, mo.joint_count(), self);
          },
          [](Motion& mo, const Array& a) { assign(mo.rotations, a, "Motion.rotations", shape3(mo, 4)); },
          "Local rotations (frames, joints, 4) as x, y, z, w: a writable numpy view (no copy) that keeps "
          "the motion alive.")
      .def_property(
          "translations",
          [](py::object self) {
            auto& mo = self.cast<Motion&>();
            return view(mo.translations, mo.frame_count, mo.joint_count(), self);
          },
          [](Motion& mo, const Array& a) { assign(mo.translations, a, "Motion.translations", shape3(mo, 3)); },
          "Local translations (frames, joints, 3) in metres: a writable numpy view (no copy).")
      .def_property_readonly(
          "scales",
          [](py::object self) -> py::object {
            auto& mo = self.cast<Motion&>();
            if (mo.scales.empty()) return py::none();
            return view(mo.scales, mo.frame_count, mo.joint_count(), self);
          },
          "Local scales (frames, joints, 3) as a numpy view, or None when the motion has none.")
      .def("duration", &Motion::duration, "(frame_count - 1) / frame_rate seconds.")
      .def("time", &Motion::time, py::arg("frame"), "Time of a frame in seconds: frame / frame_rate.")
      .def("validate", &Motion::validate, "Raises koma.BadDataError naming the first broken invariant.")
      .def("__copy__", [](const Motion& mo) { return mo; })
      .def("__deepcopy__", [](const Motion& mo, py::dict) { return mo; }, py::arg("memo"));
  m.def(
      "rest_motion",
      [](const Skeleton& skeleton, double frame_rate, long long frames) {
        if (frames < 1 || frames > std::numeric_limits<int>::max()) {
          throw py::value_error("rest_motion: expected frames >= 1, got " + std::to_string(frames));
        }
        Motion mo = rest_motion(skeleton, frame_rate, static_cast<int>(frames));
        mo.validate();
        return mo;
      },
      py::arg("skeleton"), py::arg("frame_rate"), py::arg("frames"));
}

// ---- fk.hpp, resample.hpp ------------------------------------------------------------------
void bind_fk(py::module_& m) {
  py::class_<WorldPoses>(m, "WorldPoses",
                         "World transforms: positions (frames, points, 3) of joints then end sites, in metres, "
                         "and rotations (frames, joints, 4).")
      .def_readonly("frame_count", &WorldPoses::frame_count)
      .def_readonly("point_count", &WorldPoses::point_count)
      .def_readonly("joint_count", &WorldPoses::joint_count)
      .def_property_readonly(
          "positions",
          [](py::object self) {
            auto& w = self.cast<WorldPoses&>();
            return view(w.positions, w.frame_count, w.point_count, self);
          },
          "World positions (frames, points, 3) in metres: a numpy view (no copy).")
      .def_property_readonly(
          "rotations",
          [](py::object self) {
            auto& w = self.cast<WorldPoses&>();
            return view(w.rotations, w.frame_count, w.joint_count, self);
          },
          "World rotations (frames, joints, 4) as x, y, z, w: a numpy view (no copy).");
  m.def("forward_kinematics", py::overload_cast<const Motion&>(&forward_kinematics), py::arg("motion"),
        py::call_guard<py::gil_scoped_release>(), "World poses of every frame. Lossless. Releases the GIL.");

  m.def("resampled_frame_count", &resampled_frame_count, py::arg("frame_count"), py::arg("from_rate"),
        py::arg("to_rate"));
  m.def("resample", &resample, py::arg("motion"), py::arg("rate"), py::call_guard<py::gil_scoped_release>(),
        "The motion sampled at `rate` fps (slerp / linear). Raises ValueError for a bad rate.");
  m.def("cut", &cut, py::arg("motion"), py::arg("begin"), py::arg("end"), py::call_guard<py::gil_scoped_release>(),
        "Frames [begin, end) of the motion. Raises ValueError for an empty or out-of-range range.");
}

// ---- sample.hpp, stats.hpp, atomic_file.hpp -----------------------------------------------
void bind_files(py::module_& m) {
  py::class_<SampleSettings> sample(m, "SampleSettings", "What the built-in sample character does.");
  def_kwargs_init(sample);
  sample.def_readwrite("frame_rate", &SampleSettings::frame_rate)
      .def_readwrite("walk_cycles", &SampleSettings::walk_cycles)
      .def_readwrite("cycle_seconds", &SampleSettings::cycle_seconds)
      .def_readwrite("jump", &SampleSettings::jump)
      .def_readwrite("arm_swing", &SampleSettings::arm_swing)
      .def("validate", &SampleSettings::validate);
  m.def("sample_skeleton", &sample_skeleton);
  m.def("make_sample_motion", &make_sample_motion, py::arg("settings") = SampleSettings{},
        py::call_guard<py::gil_scoped_release>(), "A deterministic walk (+ jump), 19 joints, feet planted.");

  py::class_<MotionStats>(m, "MotionStats", "Summary numbers of a motion (metres, seconds).")
      .def_readonly("joints", &MotionStats::joints)
      .def_readonly("end_sites", &MotionStats::end_sites)
      .def_readonly("channels", &MotionStats::channels)
      .def_readonly("frames", &MotionStats::frames)
      .def_readonly("frame_rate", &MotionStats::frame_rate)
      .def_readonly("duration", &MotionStats::duration)
      .def_readonly("rest_height", &MotionStats::rest_height)
      .def_readonly("box_min", &MotionStats::box_min)
      .def_readonly("box_max", &MotionStats::box_max)
      .def_readonly("root_travel", &MotionStats::root_travel);
  m.def("motion_stats", &motion_stats, py::arg("motion"), py::call_guard<py::gil_scoped_release>());
  m.def("write_file_atomic", &write_file_atomic, py::arg("path"), py::arg("content"),
        py::call_guard<py::gil_scoped_release>(),
        "Writes text to a file atomically (temporary file, then rename). Raises koma.FileSystemError.");
  m.def("read_file", &read_file, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
        "A whole file as text. Raises koma.FileSystemError naming the path.");
}

}  // namespace

void bind_core(py::module_& m) {
  bind_units(m);
  bind_skeleton(m);
  bind_motion(m);
  bind_fk(m);
  bind_files(m);
}

}  // namespace koma::python
