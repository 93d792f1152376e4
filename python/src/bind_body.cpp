// koma::body, 1:1 with include/koma/body: joint roles and sides (roles.hpp), body parts (parts.hpp),
// the roles file (roles_file.hpp), the zero-phase low-pass (lowpass.hpp) and the one foot-contact detector (contacts.hpp). No logic
// here; whole-motion calls release the GIL.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "koma/body/contacts.hpp"
#include "koma/body/extremes.hpp"
#include "koma/body/lowpass.hpp"
#include "koma/body/parts.hpp"
#include "koma/body/roles.hpp"
#include "koma/body/roles_file.hpp"
#include "koma/core/error.hpp"

namespace koma::python {

namespace {

// ---- roles.hpp, roles_file.hpp -----------------------------------------------------------
void bind_roles(py::module_& b) {
  using namespace koma::body;
  py::enum_<Role> role_enum(b, "Role", "What a joint is (found by name).");
  for (const auto name : role_names()) {
    const std::string n(name);
    role_enum.value(n.c_str(), parse_role(name));
  }
  b.def("role_name", [](Role r) { return std::string(role_name(r)); }, py::arg("role"));
  b.def("parse_role", &parse_role, py::arg("name"));

  py::class_<JointRoles>(b, "JointRoles", "Per role, the joint / point index or -1.")
      .def(py::init<>())
      .def("__getitem__", [](const JointRoles& r, Role role) { return r[role]; })
      .def("set", &JointRoles::set, py::arg("role"), py::arg("index"))
      .def("has", &JointRoles::has, py::arg("role"))
      .def_readwrite("points", &JointRoles::points);
  b.def("find_joint_roles", &find_joint_roles, py::arg("skeleton"));
  b.def("assign_role", &assign_role, py::arg("roles"), py::arg("skeleton"), py::arg("role"), py::arg("joint_name"));
  b.def("name_side", &name_side, py::arg("name"));
  b.def("roles_from_json", &roles_from_json, py::arg("skeleton"), py::arg("text"), py::arg("where") = "roles",
        "Roles found by name, overridden by a JSON object {role: joint name}. Raises koma.BadFileError, "
        "ValueError (unknown role), koma.MismatchError (no such joint).");
  b.def(
      "read_roles", [](const Skeleton& skeleton, const std::filesystem::path& path) { return read_roles(skeleton, path); },
      py::arg("skeleton"), py::arg("path"), "roles_from_json of a roles file (find_joint_roles when path is empty).");
}

// ---- contacts.hpp ---------------------------------------------------------------------------
void bind_contacts(py::module_& b) {
  using namespace koma::body;
  py::class_<Effector> eff(b, "Effector", "A named set of points (joints then end sites) tracked together.");
  def_kwargs_init(eff);
  eff.def_readwrite("name", &Effector::name).def_readwrite("points", &Effector::points);
  b.def("foot_effectors", &foot_effectors, py::arg("roles"));

  py::class_<ContactCalibration> cc(b, "ContactCalibration",
                                    "Per-frame score to probability: 1 / (1 + exp(-(slope * score + offset))). "
                                    "The defaults are fitted to koma's hand-labelled frames.");
  def_kwargs_init(cc);
  cc.def_readwrite("slope", &ContactCalibration::slope)
      .def_readwrite("offset", &ContactCalibration::offset)
      .def("probability", &ContactCalibration::probability, py::arg("score"));
  b.def(
      "fit_contact_calibration",
      [](const std::vector<double>& scores, const std::vector<std::uint8_t>& labels) {
        return fit_contact_calibration(scores, labels);
      },
      py::arg("scores"), py::arg("labels"),
      "Logistic fit of labels (1 = in contact) on EffectorContacts.score of the same frames.");
  b.def(
      "expected_calibration_error",
      [](const std::vector<double>& p, const std::vector<std::uint8_t>& labels, int bins) {
        if (p.size() != labels.size()) throw koma::Error(koma::ErrorCode::bad_data, "labels", "probabilities and labels differ in length");
        if (bins < 1) throw koma::Error(koma::ErrorCode::invalid_settings, "bins", "must be >= 1");
        return expected_calibration_error(p, labels, bins);
      },
      py::arg("probabilities"), py::arg("labels"), py::arg("bins") = 10);

  py::class_<ContactSettings> cs(b, "ContactSettings", "Foot-contact detection (speeds in body sizes per second).");
  def_kwargs_init(cs);
  cs.def_readwrite("cutoff_hz", &ContactSettings::cutoff_hz)
      .def_readwrite("height_fraction", &ContactSettings::height_fraction)
      .def_readwrite("min_height_band", &ContactSettings::min_height_band, "body sizes")
      .def_readwrite("speed_threshold", &ContactSettings::speed_threshold)
      .def_readwrite("accel_threshold", &ContactSettings::accel_threshold)
      .def_readwrite("min_duration", &ContactSettings::min_duration)
      .def_readwrite("max_gap", &ContactSettings::max_gap)
      .def_readwrite("release", &ContactSettings::release, "hysteresis: a contact lasts within release x thresholds")
      .def_readwrite("max_shift_gap", &ContactSettings::max_shift_gap, "seconds: contacts this close in time ...")
      .def_readwrite("same_place", &ContactSettings::same_place, "... and in place (body sizes) are one")
      .def_readwrite("key_tolerance", &ContactSettings::key_tolerance,
                     "body sizes: positions this near the nearest one count as equally near the mean")
      .def_readwrite("calibration", &ContactSettings::calibration, "score to probability (ContactCalibration)")
      .def("validate", &ContactSettings::validate);

  py::class_<ReversalSettings> rs(b, "ReversalSettings",
                                  "Direction reversals (extremes): window in seconds, travel in body sizes. "
                                  "keys.ExtremeSettings is this class.");
  def_kwargs_init(rs);
  rs.def_readwrite("window", &ReversalSettings::window, "seconds each side (default 0.08)")
      .def_readwrite("min_travel", &ReversalSettings::min_travel, "body sizes (default 0.018)")
      .def_readwrite("cutoff_hz", &ReversalSettings::cutoff_hz, "low-pass before measuring, Hz (default 8)")
      .def("validate", &ReversalSettings::validate);
  py::class_<Reversal>(b, "Reversal", "One direction reversal of a track.")
      .def_readonly("frame", &Reversal::frame)
      .def_readonly("sharpness", &Reversal::sharpness, "-cos of the turn, in (0, 1]")
      .def_readonly("travel", &Reversal::travel, "body sizes");
  b.def(
      "direction_reversals",
      [](const std::vector<Vec3>& track, double frame_rate, double body_size, const ReversalSettings& s) {
        check_finite(track, "track");
        return direction_reversals(track, frame_rate, body_size, s);
      },
      py::arg("track"), py::arg("frame_rate"), py::arg("body_size"), py::arg("settings") = ReversalSettings{},
      "Extremes of a track (frames x 3): the frames where it reverses direction (the --keep-extremes rule).");

  py::class_<Contact>(b, "Contact", "One contact: frames [begin, end).")
      .def_readonly("begin", &Contact::begin)
      .def_readonly("end", &Contact::end)
      .def_readonly("key_time", &Contact::key_time, "fractional frames: the soft nearest-to-mean moment")
      .def_readonly("key_frame", &Contact::key_frame)
      .def_readonly("mean_position", &Contact::mean_position)
      .def_readonly("confidence", &Contact::confidence)
      .def("length", &Contact::length);
  py::class_<EffectorContacts>(b, "EffectorContacts")
      .def_readonly("effector", &EffectorContacts::effector)
      .def_readonly("contacts", &EffectorContacts::contacts)
      .def_readonly("height_band", &EffectorContacts::height_band)
      .def_readonly("in_contact", &EffectorContacts::in_contact)
      .def_readonly("score", &EffectorContacts::score,
                    "per frame: how far inside the thresholds (1 resting, 0 on a threshold, < 0 outside)")
      .def_readonly("probability", &EffectorContacts::probability, "per frame: calibrated probability of contact");
  py::class_<ContactReport>(b, "ContactReport")
      .def_readonly("effectors", &ContactReport::effectors)
      .def_readonly("speed_threshold", &ContactReport::speed_threshold)
      .def_readonly("accel_threshold", &ContactReport::accel_threshold)
      .def_readonly("smoothing_sigma_frames", &ContactReport::smoothing_sigma_frames)
      .def("find", &ContactReport::find, py::arg("name"), py::return_value_policy::reference_internal)
      .def("contact_count", &ContactReport::contact_count);

  b.def(
      "detect_contacts",
      [](const Motion& motion, const std::vector<Effector>& effectors, const ContactSettings& settings) {
        for (const Effector& e : effectors) {
          for (const int p : e.points) check_index(p, motion.skeleton.point_count(), "detect_contacts: effector points");
        }
        return detect_contacts(motion, effectors, settings);
      },
      py::arg("motion"), py::arg("effectors"), py::arg("settings") = ContactSettings{},
      py::call_guard<py::gil_scoped_release>());
  b.def("detect_foot_contacts", &detect_foot_contacts, py::arg("motion"), py::arg("settings") = ContactSettings{},
        py::call_guard<py::gil_scoped_release>(), "Roles by name, then the feet's contacts.");
}

// ---- parts.hpp ------------------------------------------------------------------------------
void bind_parts(py::module_& b) {
  using namespace koma::body;
  py::enum_<BodyPart> part_enum(b, "BodyPart", "A part of the body (canonical names; 'spine' is an alias of torso).");
  for (const auto name : part_names()) {
    const std::string n(name);
    part_enum.value(n.c_str(), parse_part(name));
  }
  b.def("part_name", [](BodyPart p) { return std::string(part_name(p)); }, py::arg("part"));
  b.def("part_names", [] {
    std::vector<std::string> out;
    for (const auto n : part_names()) out.emplace_back(n);
    return out;
  });
  b.def("find_part", &find_part, py::arg("name"), "The part a name or alias stands for, or None.");
  b.def("parse_part", &parse_part, py::arg("name"), "A part name or alias; raises koma.InvalidSettingsError.");
  b.def("body_part_of", &body_part_of, py::arg("name"), "Part of one joint or point from its own name.");
  b.def("joint_parts", &joint_parts, py::arg("skeleton"), "Part of every joint, inherited down the tree.");
}

// ---- lowpass.hpp, contacts.hpp: contact fades -----------------------------------------------
void bind_lowpass(py::module_& b) {
  using namespace koma::body;
  b.def(
      "lowpass_zero_phase",
      [](const std::vector<Vec3>& track, double frame_rate, double cutoff_hz) {
        return lowpass_zero_phase(track, frame_rate, cutoff_hz);
      },
      py::arg("track"), py::arg("frame_rate"), py::arg("cutoff_hz"), "Zero-phase Gaussian low-pass of a list of points.");
  b.def("frames_to_contact", [](const std::vector<std::uint8_t>& in_contact) { return frames_to_contact(in_contact); },
        py::arg("in_contact"));
  b.def("contact_fade",
        [](const std::vector<std::uint8_t>& in_contact, double fade_frames) {
          if (!(fade_frames > 0)) throw py::value_error("contact_fade: fade_frames must be > 0");
          return contact_fade(in_contact, fade_frames);
        },
        py::arg("in_contact"), py::arg("fade_frames"), "1 in contact, easing to 0 at fade_frames from it.");
}

}  // namespace

void bind_body(py::module_& m) {
  using namespace koma::body;
  py::module_ b = m.def_submodule("body", "The body vocabulary: joint roles, body parts, foot contacts, low-pass.");
  bind_roles(b);
  bind_contacts(b);
  bind_parts(b);
  bind_lowpass(b);
}

}  // namespace koma::python
