// koma::timing, 1:1 with include/koma/timing: joint roles and the shared foot-contact detector
// (contacts.hpp); key times and re-timing when those headers are part of the build. No logic here.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "common.hpp"
#include "koma/timing/contacts.hpp"

namespace koma::python {

void bind_timing(py::module_& m) {
  using namespace koma::timing;
  py::module_ t = m.def_submodule("timing", "Joint roles, foot contacts, key times and re-timing.");

  py::enum_<Role> role_enum(t, "Role", "What a joint is (found by name).");
  for (const auto name : role_names()) {
    const std::string n(name);
    role_enum.value(n.c_str(), parse_role(name));
  }
  t.def("role_name", [](Role r) { return std::string(role_name(r)); }, py::arg("role"));
  t.def("parse_role", &parse_role, py::arg("name"));

  py::class_<JointRoles>(t, "JointRoles", "Per role, the joint / point index or -1.")
      .def(py::init<>())
      .def("__getitem__", [](const JointRoles& r, Role role) { return r[role]; })
      .def("set", &JointRoles::set, py::arg("role"), py::arg("index"))
      .def("has", &JointRoles::has, py::arg("role"))
      .def_readwrite("points", &JointRoles::points);
  t.def("find_joint_roles", &find_joint_roles, py::arg("skeleton"));
  t.def("assign_role", &assign_role, py::arg("roles"), py::arg("skeleton"), py::arg("role"), py::arg("joint_name"));
  t.def("name_side", &name_side, py::arg("name"));

  py::class_<Effector> eff(t, "Effector", "A named set of points (joints then end sites) tracked together.");
  def_kwargs_init(eff);
  eff.def_readwrite("name", &Effector::name).def_readwrite("points", &Effector::points);
  t.def("foot_effectors", &foot_effectors, py::arg("roles"));

  py::class_<ContactSettings> cs(t, "ContactSettings", "Foot-contact detection (speeds in body sizes per second).");
  def_kwargs_init(cs);
  cs.def_readwrite("cutoff_hz", &ContactSettings::cutoff_hz)
      .def_readwrite("height_fraction", &ContactSettings::height_fraction)
      .def_readwrite("min_height_band", &ContactSettings::min_height_band)
      .def_readwrite("speed_threshold", &ContactSettings::speed_threshold)
      .def_readwrite("accel_threshold", &ContactSettings::accel_threshold)
      .def_readwrite("min_duration", &ContactSettings::min_duration)
      .def_readwrite("max_gap", &ContactSettings::max_gap)
      .def("validate", &ContactSettings::validate);

  py::class_<Contact>(t, "Contact", "One contact: frames [begin, end).")
      .def_readonly("begin", &Contact::begin)
      .def_readonly("end", &Contact::end)
      .def_readonly("key_frame", &Contact::key_frame)
      .def_readonly("mean_position", &Contact::mean_position)
      .def_readonly("confidence", &Contact::confidence)
      .def("length", &Contact::length);
  py::class_<EffectorContacts>(t, "EffectorContacts")
      .def_readonly("effector", &EffectorContacts::effector)
      .def_readonly("contacts", &EffectorContacts::contacts)
      .def_readonly("height_band", &EffectorContacts::height_band)
      .def_readonly("in_contact", &EffectorContacts::in_contact);
  py::class_<ContactReport>(t, "ContactReport")
      .def_readonly("effectors", &ContactReport::effectors)
      .def_readonly("speed_threshold", &ContactReport::speed_threshold)
      .def_readonly("accel_threshold", &ContactReport::accel_threshold)
      .def_readonly("smoothing_sigma_frames", &ContactReport::smoothing_sigma_frames)
      .def("find", &ContactReport::find, py::arg("name"), py::return_value_policy::reference_internal)
      .def("contact_count", &ContactReport::contact_count);

  t.def(
      "detect_contacts",
      [](const Motion& motion, const std::vector<Effector>& effectors, const ContactSettings& settings) {
        return detect_contacts(motion, effectors, settings);
      },
      py::arg("motion"), py::arg("effectors"), py::arg("settings") = ContactSettings{},
      py::call_guard<py::gil_scoped_release>());
  t.def("detect_foot_contacts", &detect_foot_contacts, py::arg("motion"), py::arg("settings") = ContactSettings{},
        py::call_guard<py::gil_scoped_release>(), "Roles by name, then the feet's contacts.");
}

}  // namespace koma::python
