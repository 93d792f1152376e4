// koma::gait (Fourier gait style), 1:1 with include/koma/gait (cycle, fourier, adverb, synth, and
// files: the gait / adverb JSON files). No logic here; whole-motion calls release the GIL.
// Eigen members (GaitCycle.samples, Gait.coefficients, Adverb.delta) are numpy views (no copy) that
// keep their owner alive; per-joint vectors of Quat / Vec3 are (joints, 4) / (joints, 3) views.
#include <algorithm>

#include <pybind11/eigen.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/gait/apply.hpp"
#include "koma/gait/files.hpp"
#include "koma/gait/report.hpp"
#include "koma/gait/style.hpp"
#include "koma/gait/synth.hpp"

namespace koma::python {

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// A (joints, width) numpy view property of a per-joint std::vector<Quat or Vec3> member; assigning
/// copies in and may change the length (these vectors are sized by the skeleton, not by views).
template <class Owner, class T>
void def_joint_array(py::class_<Owner>& cls, const char* name, std::vector<T> Owner::*member, const char* doc) {
  cls.def_property(
      name,
      [member](py::object self) {
        auto& values = self.cast<Owner&>().*member;
        return view(values, static_cast<py::ssize_t>(values.size()), self);
      },
      [member, name](Owner& o, const Array& a) {
        auto& values = o.*member;
        const std::string shape = "(joints, " + std::to_string(kWidth<T>) + ")";
        // Only an empty vector may change its length: a reallocation would leave existing views dangling.
        if (values.empty() && a.ndim() == 2 && a.shape(1) == kWidth<T>) {
          values = from_array<T>(a, a.shape(0), name, shape);
        } else {
          assign(values, a, name, "(" + std::to_string(values.size()) + ", " + std::to_string(kWidth<T>) + ")");
        }
      },
      doc);
}

/// A numpy view property of an Eigen matrix member (writable, no copy, keeps the owner alive).
/// Assigning copies in; the shape may only change while the matrix is empty (views stay valid).
template <class Owner, class M>
void def_matrix(py::class_<Owner>& cls, const char* name, M Owner::*member, const char* doc) {
  cls.def_property(
      name, py::cpp_function([member](Owner& o) -> M& { return o.*member; }, py::return_value_policy::reference_internal),
      [member, name](Owner& o, const M& value) {
        M& target = o.*member;
        if (target.size() != 0 && (target.rows() != value.rows() || target.cols() != value.cols())) {
          throw py::value_error(std::string(name) + ": expected a matrix of shape (" + std::to_string(target.rows()) +
                                ", " + std::to_string(target.cols()) + ")");
        }
        target = value;
      },
      doc);
}

// A rotation as the (x, y, z, w) array the rest of the module uses for quaternions.
Eigen::Vector4d xyzw(const Quat& q) { return {q.x(), q.y(), q.z(), q.w()}; }

// ---- cycle.hpp ----------------------------------------------------------------------------
void bind_cycle(py::module_& g) {
  using namespace koma::gait;
  py::enum_<PeriodMethod>(g, "PeriodMethod", "How the period is found.")
      .value("automatic", PeriodMethod::automatic)
      .value("autocorrelation", PeriodMethod::autocorrelation)
      .value("contacts", PeriodMethod::contacts);
  g.def("to_string", [](PeriodMethod p) { return std::string(to_string(p)); }, py::arg("method"));
  py::class_<CycleSettings> cs(g, "CycleSettings", "Settings of cycle analysis (include/koma/gait/cycle.hpp).");
  def_kwargs_init(cs);
  cs.def_readwrite("samples", &CycleSettings::samples, "samples per averaged cycle, >= 8 (default 64)")
      .def_readwrite("min_period", &CycleSettings::min_period, "shortest period searched, seconds (default 0.3)")
      .def_readwrite("max_period", &CycleSettings::max_period, "longest period searched, seconds (default 3)")
      .def_readwrite("min_confidence", &CycleSettings::min_confidence, "reject a period below this, [0, 1] (default 0.5)")
      .def_readwrite("outlier_factor", &CycleSettings::outlier_factor, "drop cycles this many times the median "
                     "distance from the median cycle; 0 keeps all (default 2)")
      .def_readwrite("angles", &CycleSettings::angles, "joint channel kind (default log_map)")
      .def_readwrite("period_joint", &CycleSettings::period_joint, "joint driving the period search; '' = all")
      .def_readwrite("period_method", &CycleSettings::period_method,
                     "PeriodMethod.automatic (default), .autocorrelation or .contacts")
      .def_readwrite("contact", &CycleSettings::contact, "koma.body.ContactSettings of the contacts route")
      .def_readwrite("feet", &CycleSettings::feet,
                     "list of koma.body.Effector for the contacts route; [] (default) = found by name "
                     "(koma.body.foot_effectors(roles) for a rig koma cannot name)")
      .def("validate", &CycleSettings::validate);

  py::class_<PeriodEstimate>(g, "PeriodEstimate", "The period found, and how.")
      .def_readonly("period_frames", &PeriodEstimate::period_frames)
      .def_readonly("period", &PeriodEstimate::period, "seconds")
      .def_readonly("confidence", &PeriodEstimate::confidence, "[0, 1]")
      .def_readonly("method", &PeriodEstimate::method, "the route that gave the period")
      .def_readonly("contacts", &PeriodEstimate::contacts, "touch-downs used (contacts route)");

  py::class_<RotationJump>(g, "RotationJump", "A joint turning > 90 degrees between two frames (a data glitch).")
      .def_readonly("joint", &RotationJump::joint)
      .def_readonly("frame", &RotationJump::frame, "the later frame of the pair")
      .def_readonly("angle", &RotationJump::angle, "radians");
  g.def("heading_rotation", [](const Eigen::Vector2d& forward) { return xyzw(heading_rotation(forward)); },
        py::arg("forward"),
        "The yaw about +Y (x, y, z, w) that turns +Z into the travel direction (x, z).");

  py::class_<GaitBasis> basis(g, "GaitBasis", "Skeleton, channel kind, travel frame and period of a gait.");
  basis.def(py::init<>())
      .def_readwrite("skeleton", &GaitBasis::skeleton)
      .def_readwrite("source_unit", &GaitBasis::source_unit)
      .def_readwrite("angles", &GaitBasis::angles)
      .def_readwrite("root_joint", &GaitBasis::root_joint)
      .def_readwrite("forward", &GaitBasis::forward, "unit travel direction (x, z) in the world XZ plane")
      .def_readwrite("period", &GaitBasis::period, "seconds per cycle (two steps of a walk)")
      .def_readwrite("confidence", &GaitBasis::confidence)
      .def_readwrite("period_method", &GaitBasis::period_method, "the route that gave the period")
      .def_readwrite("cycles_found", &GaitBasis::cycles_found)
      .def_readwrite("cycles_used", &GaitBasis::cycles_used)
      .def("channel_count", &GaitBasis::channel_count)
      .def("validate", &GaitBasis::validate);
  def_joint_array(basis, "mean_rotations", &GaitBasis::mean_rotations,
                  "per joint mean local rotation (joints, 4) x, y, z, w: a numpy view");
  def_joint_array(basis, "bones", &GaitBasis::bones, "per joint mean local translation (joints, 3), metres: a view");
  g.def("channel_names", &channel_names, py::arg("basis"));
  g.def("joint_rotation",
        [](const GaitBasis& b, long long joint, const Vec3& v) {
          const auto joints = std::min(static_cast<long long>(b.skeleton.joint_count()),
                                       static_cast<long long>(b.mean_rotations.size()));
          check_index(joint, joints, "joint_rotation: joint");
          return xyzw(joint_rotation(b, static_cast<int>(joint), v));
        },
        py::arg("basis"), py::arg("joint"), py::arg("v"),
        "The local rotation (x, y, z, w) of a joint from its three channel values (radians).");

  py::class_<GaitCycle> cycle(g, "GaitCycle", "One averaged cycle.");
  cycle.def(py::init<>())
      .def_readwrite("basis", &GaitCycle::basis)
      .def_readwrite("max_seam_correction", &GaitCycle::max_seam_correction, "radians: largest ramp removed from the averaged cycle")
      .def_readwrite("seam_correction", &GaitCycle::seam_correction, "per joint, radians")
      .def_readwrite("max_cycle_drift", &GaitCycle::max_cycle_drift, "radians: largest single-cycle drift (diagnostic)")
      .def_readwrite("starts", &GaitCycle::starts, "kept cycles' first input frames (fractional)")
      .def_readwrite("period_frames", &GaitCycle::period_frames, "the period in input frames")
      .def_readonly("jumps", &GaitCycle::jumps, "joints that jumped > 90 degrees between input frames");
  def_matrix(cycle, "samples", &GaitCycle::samples, "(channels, samples): column i is phase 2 pi i / samples");
  py::class_<MotionChannels>(g, "MotionChannels", "Every frame of a motion as gait channels (channels, frames).")
      .def_readonly("basis", &MotionChannels::basis)
      .def_readonly("values", &MotionChannels::values);
  g.def("motion_channels", &motion_channels, py::arg("motion"), py::arg("angles") = AngleMode::log_map,
        py::call_guard<py::gil_scoped_release>());
  g.def("estimate_period", &estimate_period, py::arg("motion"), py::arg("settings") = CycleSettings{},
        py::call_guard<py::gil_scoped_release>(),
        "The period of a motion. Raises koma.BadDataError (low confidence, too short) / ValueError.");
  g.def("extract_cycle", &extract_cycle, py::arg("motion"), py::arg("settings") = CycleSettings{},
        py::call_guard<py::gil_scoped_release>(), "The averaged cycle of a periodic motion. Lossy.");
}

// ---- fourier.hpp --------------------------------------------------------------------------
void bind_fourier(py::module_& g) {
  using namespace koma::gait;
  py::class_<FourierSettings> fs(g, "FourierSettings", "Settings of the Fourier analysis.");
  def_kwargs_init(fs);
  fs.def_readwrite("harmonics", &FourierSettings::harmonics, "K on every channel; 0 (default) = per channel by the tolerances")
      .def_readwrite("tolerance", &FourierSettings::tolerance, "per joint RMS rotation left, radians (default 0.5 deg)")
      .def_readwrite("height_tolerance", &FourierSettings::height_tolerance, "root height RMS left, metres (default 0.001)")
      .def_readwrite("speed_tolerance", &FourierSettings::speed_tolerance, "root speed RMS left, m/s (default 0.01)")
      .def_readwrite("max_harmonics", &FourierSettings::max_harmonics, "cap on the per-channel K (default 16)")
      .def_readwrite("reference_joint", &FourierSettings::reference_joint, "phase-0 joint; '' = a thigh")
      .def("validate", &FourierSettings::validate);

  py::class_<Gait> gait_cls(g, "Gait", "A gait as a spectrum.");
  def_matrix(gait_cls, "coefficients", &Gait::coefficients,
             "(channels, K + 1) complex: column 0 the DC, column k the c_k with relative phases; a view");
  gait_cls.def(py::init<>())
      .def_readwrite("basis", &Gait::basis)
      .def_readwrite("harmonics", &Gait::harmonics, "the most harmonics any channel keeps")
      .def_readwrite("channel_harmonics", &Gait::channel_harmonics, "per channel K_c ([] = every channel has harmonics)")
      .def_readwrite("reference_channel", &Gait::reference_channel)
      .def_readwrite("reference_phase", &Gait::reference_phase)
      .def("validate", &Gait::validate, "Raises koma.BadDataError naming the first broken invariant.")
      .def("__copy__", [](const Gait& x) { return x; })
      .def("__deepcopy__", [](const Gait& x, py::dict) { return x; }, py::arg("memo"));
  g.def("fourier_analyze", &fourier_analyze, py::arg("cycle"), py::arg("settings") = FourierSettings{},
        py::call_guard<py::gil_scoped_release>(), "The spectrum of an averaged cycle. Lossy.");
  g.def("analyze_gait", &analyze_gait, py::arg("motion"), py::arg("cycle") = CycleSettings{},
        py::arg("fourier") = FourierSettings{}, py::call_guard<py::gil_scoped_release>(),
        "extract_cycle() then fourier_analyze(): the gait of a periodic motion.");
  g.def("evaluate", &evaluate, py::arg("gait"), py::arg("phi"), py::arg("stride") = 1.0,
        "Channel values at relative phase phi (radians).");
  g.def("reconstruct_cycle", &reconstruct_cycle, py::arg("gait"), py::arg("samples"),
        py::call_guard<py::gil_scoped_release>());
  py::class_<ReconstructionError>(g, "ReconstructionError", "How well a spectrum reproduces its cycle (radians).")
      .def_readonly("joint_rms", &ReconstructionError::joint_rms)
      .def_readonly("worst_joint", &ReconstructionError::worst_joint)
      .def_readonly("worst_rms", &ReconstructionError::worst_rms)
      .def_readonly("height_rms", &ReconstructionError::height_rms, "metres");
  g.def("reconstruction_error", &reconstruction_error, py::arg("cycle"), py::arg("gait"),
        py::call_guard<py::gil_scoped_release>());
  g.def("energy_above", &energy_above, py::arg("cycle"), py::arg("harmonics"),
        "Per joint, radians: RMS of the cycle above harmonic K (= the K-harmonic reconstruction error).");
  g.def("channel_energy_above", &channel_energy_above, py::arg("cycle"), py::arg("harmonics"),
        "Per channel: RMS of the cycle above that channel's K_c, in the channel's unit.");
  g.def("raw_energy_above", &raw_energy_above, py::arg("motion"), py::arg("cycle"), py::arg("gait"),
        py::call_guard<py::gil_scoped_release>(),
        "Per joint, radians: RMS of what DC + trend + K_c harmonics leave of each raw kept cycle.");
  g.def("joint_harmonics", &joint_harmonics, py::arg("gait"), "Per joint: the largest K_c of its three channels.");
  g.def("channel_harmonic_count", &channel_harmonic_count, py::arg("gait"), py::arg("row"));
  g.def("joint_amplitudes", &joint_amplitudes, py::arg("gait"),
        "Per joint, per harmonic 1..K: amplitude of the joint's rotation, radians.");
  g.def("coefficient_distance", &coefficient_distance, py::arg("a"), py::arg("b"));
  g.def("require_compatible", &require_compatible, py::arg("a"), py::arg("b"));
}

// ---- adverb.hpp ---------------------------------------------------------------------------
void bind_adverb(py::module_& g) {
  using namespace koma::gait;
  py::class_<Adverb> adverb(g, "Adverb", "A style as styled minus neutral gait; delta is a complex numpy view.");
  adverb.def(py::init<>())
      .def_readwrite("skeleton", &Adverb::skeleton)
      .def_readwrite("angles", &Adverb::angles)
      .def_readwrite("harmonics", &Adverb::harmonics)
      .def_readwrite("channel_harmonics", &Adverb::channel_harmonics, "per channel K_c ([] = every channel has harmonics)")
      .def_readwrite("reference_channel", &Adverb::reference_channel)
      .def_readwrite("log_period_ratio", &Adverb::log_period_ratio, "ln(T_styled / T_neutral)")
      .def_readwrite("roles", &Adverb::roles, "per joint: body role name or '' (how other rigs map it)")
      .def("channel_count", &Adverb::channel_count)
      .def("validate", &Adverb::validate);
  def_matrix(adverb, "delta", &Adverb::delta, "C_styled - C_neutral, (channels, K + 1) complex; a view");
  def_joint_array(adverb, "posture", &Adverb::posture, "per joint log(m_neutral^-1 m_styled) (joints, 3), radians");
  def_joint_array(adverb, "frames", &Adverb::frames, "per joint world rotation of the neutral mean pose (joints, 4) xyzw");
  g.def("make_adverb", &make_adverb, py::arg("neutral"), py::arg("styled"),
        "styled - neutral. Raises koma.MismatchError naming the first mismatched joint.");

  py::class_<WeightedAdverb> wa(g, "WeightedAdverb", "An adverb with its weight alpha (0 = no effect, 1 = full).");
  wa.def(py::init([](Adverb a, double weight, std::string name) { return WeightedAdverb{std::move(a), weight, std::move(name)}; }),
         py::arg("adverb"), py::arg("weight") = 1.0, py::arg("name") = "")
      .def_readwrite("adverb", &WeightedAdverb::adverb)
      .def_readwrite("weight", &WeightedAdverb::weight)
      .def_readwrite("name", &WeightedAdverb::name);
  g.def(
      "apply_adverbs",
      [](const Gait& in, const std::vector<WeightedAdverb>& adverbs) { return apply_adverbs(in, adverbs); },
      py::arg("gait"), py::arg("adverbs"), py::call_guard<py::gil_scoped_release>(),
      "C_in + sum alpha_j dC_j. alpha = 0 returns the input. Raises ValueError (non-finite alpha), "
      "koma.MismatchError (another topology).");
  g.def("blend_gaits", &blend_gaits, py::arg("a"), py::arg("b"), py::arg("w"));
}

// ---- synth.hpp ----------------------------------------------------------------------------
void bind_synth(py::module_& g) {
  using namespace koma::gait;
  py::class_<SynthSettings> ss(g, "SynthSettings", "Settings of synthesize().");
  def_kwargs_init(ss);
  ss.def_readwrite("seconds", &SynthSettings::seconds, "length of the output, seconds (default 10)")
      .def_readwrite("frame_rate", &SynthSettings::frame_rate, "output fps (default 24)")
      .def_readwrite("stride", &SynthSettings::stride, "beta: swing amplitude and distance per cycle (default 1)")
      .def_readwrite("speed", &SynthSettings::speed, "scales the cadence omega (default 1)")
      .def_readwrite("loop", &SynthSettings::loop, "fit whole cycles so the clip loops (default True)")
      .def_readwrite("in_place", &SynthSettings::in_place, "keep the root over the origin (default False)")
      .def_readwrite("transition_cycles", &SynthSettings::transition_cycles, "gait change blend, cycles (default 1)")
      .def("validate", &SynthSettings::validate);
  py::class_<GaitSegment>(g, "GaitSegment", "One gait of a sequence, from `start` seconds.")
      .def(py::init([](Gait gait, double start) { return GaitSegment{std::move(gait), start}; }), py::arg("gait"),
           py::arg("start") = 0.0)
      .def_readwrite("gait", &GaitSegment::gait)
      .def_readwrite("start", &GaitSegment::start);
  g.def(
      "synthesize", [](const Gait& gait, const SynthSettings& s) { return synthesize(gait, s); }, py::arg("gait"),
      py::arg("settings") = SynthSettings{}, py::call_guard<py::gil_scoped_release>(),
      "The gait as a motion on its skeleton. Raises ValueError (settings), koma.BadDataError (gait).");
  g.def(
      "synthesize",
      [](const std::vector<GaitSegment>& segments, const SynthSettings& s) { return synthesize(segments, s); },
      py::arg("segments"), py::arg("settings") = SynthSettings{}, py::call_guard<py::gil_scoped_release>(),
      "A sequence of gaits with transitions.");
  g.def(
      "retarget",
      [](const Gait& gait, const Skeleton& target, const Array& bones) {
        const auto n = static_cast<py::ssize_t>(target.joint_count());
        const auto b = from_array<Vec3>(bones, n, "retarget: bones", "(" + std::to_string(n) + ", 3)");
        py::gil_scoped_release release;
        return retarget(gait, target, b);
      },
      py::arg("gait"), py::arg("target"), py::arg("bones"),
      "The gait driving another skeleton of the same topology; bones (joints, 3) metres.");
}

// ---- style.hpp, report.hpp ------------------------------------------------------------------
void bind_style(py::module_& g) {
  using namespace koma::gait;
  py::class_<GaitAnalysis>(g, "GaitAnalysis", "A motion's gait with its averaged cycle and reconstruction error.")
      .def_readonly("cycle", &GaitAnalysis::cycle)
      .def_readonly("gait", &GaitAnalysis::gait)
      .def_readonly("error", &GaitAnalysis::error)
      .def_readonly("raw_above", &GaitAnalysis::raw_above, "per joint, radians: the raw cycles' content above K_c");
  g.def("analyse_gait", &analyse_gait, py::arg("motion"), py::arg("cycle") = CycleSettings{},
        py::arg("fourier") = FourierSettings{}, py::call_guard<py::gil_scoped_release>(),
        "extract_cycle, fourier_analyze and reconstruction_error in one call.");
  py::class_<StyleSettings> sts(g, "StyleSettings", "Settings of style() / style_gait().");
  def_kwargs_init(sts);
  sts.def_readwrite("cycle", &StyleSettings::cycle, "analysis of the input (style only)")
      .def_readwrite("fourier", &StyleSettings::fourier, "harmonics of the analysis (style only)")
      .def_readwrite("synth", &StyleSettings::synth, "length, rate, stride, speed, loop")
      .def_readwrite("then", &StyleSettings::then, "later gaits (GaitSegment) blended into at their start")
      .def_readwrite("target", &StyleSettings::target, "skeleton to drive (empty = the gait's own)")
      .def_readwrite("target_bones", &StyleSettings::target_bones, "its rest bone vectors per joint, metres");
  g.def("set_target", &set_target, py::arg("settings"), py::arg("character"),
        "Sets settings.target / target_bones to drive the character's skeleton (its first frame's bones).");
  py::class_<StyleResult>(g, "StyleResult", "A styled gait played back.")
      .def_readonly("motion", &StyleResult::motion)
      .def_readonly("styled", &StyleResult::styled)
      .def_readonly("loop", &StyleResult::loop);
  g.def(
      "style_gait",
      [](const Gait& gait, const std::vector<WeightedAdverb>& adverbs, const StyleSettings& s) {
        return style_gait(gait, adverbs, s);
      },
      py::arg("gait"), py::arg("adverbs") = std::vector<WeightedAdverb>{}, py::arg("settings") = StyleSettings{},
      py::call_guard<py::gil_scoped_release>(), "Adverbs, transitions, retargeting, synthesis.");
  g.def(
      "style",
      [](const Motion& motion, const std::vector<WeightedAdverb>& adverbs, const StyleSettings& s) {
        return style(motion, adverbs, s);
      },
      py::arg("motion"), py::arg("adverbs") = std::vector<WeightedAdverb>{}, py::arg("settings") = StyleSettings{},
      py::call_guard<py::gil_scoped_release>(), "analyse_gait then style_gait: the gait style pipeline.");
  g.def(
      "gait_summary", [](const Gait& gait) { return to_python(gait_summary(gait)); }, py::arg("gait"));
  g.def(
      "analysis_report", [](const GaitAnalysis& a) { return to_python(analysis_report(a)); }, py::arg("analysis"),
      "The dict `koma gait analyze --json` prints (without file names).");
  g.def(
      "style_summary", [](const StyleResult& r) { return to_python(style_summary(r)); }, py::arg("result"));
}

// ---- apply.hpp: adverbs on a take -----------------------------------------------------------
void bind_apply(py::module_& g) {
  using namespace koma::gait;
  g.attr("ALPHA_WARN_MIN") = kAlphaWarnMin;
  g.attr("ALPHA_WARN_MAX") = kAlphaWarnMax;
  py::class_<ApplySettings> aps(g, "ApplySettings", "Settings of apply_to_take() (include/koma/gait/apply.hpp).");
  def_kwargs_init(aps);
  aps.def_readwrite("cycle", &ApplySettings::cycle, "gait detection: periods, confidence, contact detector")
      .def_readwrite("fixed_period", &ApplySettings::fixed_period, "seconds; 0 = detect the gait, > 0 = apply at this period")
      .def_readwrite("stride", &ApplySettings::stride, "beta: scales the root's horizontal travel (1 keeps the path)")
      .def_readwrite("blend_seconds", &ApplySettings::blend_seconds, "ease in/out where the take is not periodic, s")
      .def_readwrite("hold_posture", &ApplySettings::hold_posture, "posture part at full alpha also outside the gait")
      .def_readwrite("plant_feet", &ApplySettings::plant_feet, "keep the take's foot contacts planted (leg IK)")
      .def_readwrite("root_height", &ApplySettings::root_height, "add the adverbs' root height difference")
      .def_readwrite("roles", &ApplySettings::roles, "the take's body.JointRoles; None = found by name (checked against the take)")
      .def("validate", &ApplySettings::validate);
  py::enum_<PhaseSource>(g, "PhaseSource", "How a take's gait phase was tracked.")
      .value("contacts", PhaseSource::contacts)
      .value("period", PhaseSource::period)
      .value("fixed", PhaseSource::fixed);
  g.def("to_string", [](PhaseSource p) { return std::string(to_string(p)); }, py::arg("source"));
  py::class_<TakePhase>(g, "TakePhase", "Per-frame gait phase (radians) and periodic weight [0, 1] of a take.")
      .def_readonly("phase", &TakePhase::phase)
      .def_readonly("weight", &TakePhase::weight)
      .def_readonly("source", &TakePhase::source)
      .def_readonly("period", &TakePhase::period)
      .def_readonly("confidence", &TakePhase::confidence)
      .def_readonly("cycles", &TakePhase::cycles)
      .def_readonly("foot", &TakePhase::foot);
  py::class_<AppliedAdverb>(g, "AppliedAdverb", "One adverb's effect on a take.")
      .def_readonly("name", &AppliedAdverb::name)
      .def_readonly("weight", &AppliedAdverb::weight)
      .def_readonly("phase_offset", &AppliedAdverb::phase_offset)
      .def_readonly("period_ratio_ignored", &AppliedAdverb::period_ratio_ignored)
      .def_readonly("same_rig", &AppliedAdverb::same_rig)
      .def_readonly("mapped", &AppliedAdverb::mapped)
      .def_readonly("left_alone", &AppliedAdverb::left_alone);
  py::class_<ApplyResult>(g, "ApplyResult", "A take with adverbs applied.")
      .def_readonly("motion", &ApplyResult::motion)
      .def_readonly("phase", &ApplyResult::phase)
      .def_readonly("adverbs", &ApplyResult::adverbs)
      .def_readonly("warnings", &ApplyResult::warnings)
      .def_readonly("planted_frames", &ApplyResult::planted_frames)
      .def_readonly("unreachable_frames", &ApplyResult::unreachable_frames);
  g.def("track_phase", &track_phase, py::arg("take"), py::arg("settings") = ApplySettings{},
        py::call_guard<py::gil_scoped_release>(), "The take's gait phase; koma.BadDataError naming the confidence.");
  g.def(
      "apply_to_take",
      [](const Motion& take, const std::vector<WeightedAdverb>& adverbs, const ApplySettings& s) {
        return apply_to_take(take, adverbs, s);
      },
      py::arg("take"), py::arg("adverbs"), py::arg("settings") = ApplySettings{}, py::call_guard<py::gil_scoped_release>(),
      "`koma gait apply`: adverbs applied to the take itself (frames, timing, root path, heading, contacts kept).");
  g.def(
      "apply_report", [](const ApplyResult& r) { return to_python(apply_report(r)); }, py::arg("result"),
      "The dict `koma gait apply --json` prints (without file names).");
}

// ---- files.hpp: gait and adverb files -----------------------------------------------------
void bind_files(py::module_& g) {
  using namespace koma::gait;
  g.def("format_gait_json", &format_gait_json, py::arg("gait"));
  g.def("parse_gait_json", &parse_gait_json, py::arg("text"), py::arg("name") = "<string>",
        "Raises koma.BadFileError naming the missing or malformed field.");
  g.def("write_gait", &write_gait, py::arg("path"), py::arg("gait"), py::call_guard<py::gil_scoped_release>(),
        "Writes a gait file (.gait.json) atomically.");
  g.def("read_gait", &read_gait, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
        "Reads a gait file. Raises OSError (unreadable) / koma.BadFileError (malformed).");
  g.def("format_adverb_json", &format_adverb_json, py::arg("adverb"));
  g.def("parse_adverb_json", &parse_adverb_json, py::arg("text"), py::arg("name") = "<string>");
  g.def("write_adverb", &write_adverb, py::arg("path"), py::arg("adverb"),
        py::call_guard<py::gil_scoped_release>(), "Writes an adverb file (.adverb.json) atomically.");
  g.def("read_adverb", &read_adverb, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
        "Reads an adverb file. Raises OSError / koma.BadFileError.");
  g.def("read_weighted_adverb", &read_weighted_adverb, py::arg("arg"), py::call_guard<py::gil_scoped_release>(),
        "'FILE[:ALPHA]' -> WeightedAdverb (the file read, alpha 1 without ':ALPHA'), as the CLI's --adverb.");
  g.def("read_gait_segment", &read_gait_segment, py::arg("arg"), py::call_guard<py::gil_scoped_release>(),
        "'GAIT.json@SECONDS' -> GaitSegment, as the CLI's --then.");
}

}  // namespace

void bind_gait(py::module_& m) {
  using namespace koma::gait;
  py::module_ g = m.def_submodule("gait", "Fourier gait style: cycles, spectra, adverbs, synthesis.");

  py::enum_<AngleMode>(g, "AngleMode", "How joint rotations become channels.")
      .value("log_map", AngleMode::log_map)
      .value("euler", AngleMode::euler);
  g.def("to_string", [](AngleMode a) { return std::string(to_string(a)); }, py::arg("mode"));
  g.attr("kRootChannels") = kRootChannels;
  g.def("joint_channel", &joint_channel, py::arg("joint"), py::arg("axis"), "Row of joint `joint`'s component `axis`.");
  bind_cycle(g);
  bind_fourier(g);
  bind_adverb(g);
  bind_synth(g);
  bind_style(g);
  bind_apply(g);
  bind_files(g);
}

}  // namespace koma::python
