// koma::timing, 1:1 with include/koma/timing: key times (keytimes.hpp), timing sources (source.hpp)
// and re-timing (retime.hpp). Joint roles and contacts are koma.body (bind_body.cpp).
// No logic here; whole-motion calls release the GIL.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/io/motion_file.hpp"
#include "koma/timing/files.hpp"
#include "koma/timing/keytimes.hpp"
#include "koma/timing/report.hpp"
#include "koma/timing/retime.hpp"
#include "koma/timing/source.hpp"

namespace koma::python {

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::vector<Vec3> points_of(const Array& a, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != 3) throw py::value_error(std::string(what) + ": expected an array of shape (n, 3)");
  return from_array<Vec3>(a, a.shape(0), what, "(n, 3)");
}

// Finite points: the polyline searches (hausdorff_distance, ...) never end on NaN / inf.
std::vector<Vec3> finite_points_of(const Array& a, const char* what) {
  auto points = points_of(a, what);
  check_finite(points, what);
  return points;
}

void check_joint(const Motion& motion, long long joint, const char* what) {
  check_index(joint, motion.joint_count(), what);
}

// Poses of the same motion: as many frames, one point per joint and end site.
void check_poses(const Motion& motion, const WorldPoses& poses, const char* what) {
  if (poses.frame_count != motion.frame_count || poses.point_count != motion.skeleton.point_count()) {
    throw py::value_error(std::string(what) + ": poses have " + std::to_string(poses.frame_count) + " frames x " +
                          std::to_string(poses.point_count) + " points; the motion needs " +
                          std::to_string(motion.frame_count) + " x " + std::to_string(motion.skeleton.point_count()));
  }
}

// Every role index names a point of the poses.
void check_roles(const body::JointRoles& roles, int point_count, const char* what) {
  for (const int index : roles.points) {
    if (index != -1) check_index(index, point_count, what);  // -1: role absent
  }
}

py::array_t<double> points_array(std::vector<Vec3> points) {
  py::array_t<double> out({static_cast<py::ssize_t>(points.size()), py::ssize_t{3}});
  std::memcpy(out.mutable_data(), static_cast<const void*>(points.data()), points.size() * sizeof(Vec3));
  return out;
}

// ---- keytimes.hpp ---------------------------------------------------------------------------
void bind_key_times(py::module_& t) {
  using namespace koma::timing;
  py::enum_<KeyKind>(t, "KeyKind", "How a key time was found.")
      .value("contact", KeyKind::contact)
      .value("accel_min", KeyKind::accel_min);
  t.def("to_string", [](KeyKind k) { return std::string(to_string(k)); }, py::arg("kind"));

  py::class_<KeyTime>(t, "KeyTime", "One key time: frame, [begin, end) and confidence in [0, 1].")
      .def_readonly("frame", &KeyTime::frame)
      .def_readonly("begin", &KeyTime::begin)
      .def_readonly("end", &KeyTime::end)
      .def_readonly("confidence", &KeyTime::confidence);
  py::class_<EffectorKeyTimes>(t, "EffectorKeyTimes", "The key times of one effector, in time order.")
      .def_readonly("name", &EffectorKeyTimes::name)
      .def_readonly("kind", &EffectorKeyTimes::kind)
      .def_readonly("points", &EffectorKeyTimes::points)
      .def_readonly("keys", &EffectorKeyTimes::keys)
      .def_readonly("extremes", &EffectorKeyTimes::extremes, "hands/head: direction reversals relative to the hips")
      .def_readonly("still", &EffectorKeyTimes::still, "hands/head: barely moves relative to the hips")
      .def_readonly("note", &EffectorKeyTimes::note, "hands/head that move but get no key: why");
  py::class_<BeatSettings> bs(t, "BeatSettings", "Beat-grid fitting (include/koma/timing/beat.hpp).");
  def_kwargs_init(bs);
  bs.def_readwrite("min_bpm", &BeatSettings::min_bpm)
      .def_readwrite("max_bpm", &BeatSettings::max_bpm)
      .def_readwrite("near_best", &BeatSettings::near_best)
      .def_readwrite("on_beat_tolerance", &BeatSettings::on_beat_tolerance, "fraction of the period")
      .def("validate", &BeatSettings::validate);
  py::class_<Beat>(t, "Beat", "A beat grid: beats at phase + k * period (seconds).")
      .def_readonly("period", &Beat::period)
      .def_readonly("phase", &Beat::phase)
      .def_readonly("tempo_bpm", &Beat::tempo_bpm)
      .def_readonly("confidence", &Beat::confidence)
      .def_readonly("resultant", &Beat::resultant)
      .def_readonly("keys", &Beat::keys)
      .def_readonly("on_beat", &Beat::on_beat)
      .def_readonly("rms_seconds", &Beat::rms_seconds)
      .def("found", &Beat::found)
      .def("nearest", &Beat::nearest, py::arg("t"));
  t.def(
      "fit_beat",
      [](const std::vector<double>& times, const std::vector<double>& weights, const BeatSettings& s) {
        return fit_beat(times, weights, s);
      },
      py::arg("times"), py::arg("weights") = std::vector<double>{}, py::arg("settings") = BeatSettings{},
      "The beat grid of key times (seconds).");
  py::class_<ContactAttempt>(t, "ContactAttempt", "One attempt of the contact-threshold ladder.")
      .def_readonly("height_fraction", &ContactAttempt::height_fraction)
      .def_readonly("speed_threshold", &ContactAttempt::speed_threshold)
      .def_readonly("contacts", &ContactAttempt::contacts);

  py::class_<KeyTimeSettings> ks(t, "KeyTimeSettings", "Key-time detection settings (include/koma/timing/keytimes.hpp).");
  def_kwargs_init(ks);
  ks.def_readwrite("contact", &KeyTimeSettings::contact, "contact detection tried first")
      .def_readwrite("fallbacks", &KeyTimeSettings::fallbacks,
                     "[(height_fraction, speed_threshold), ...] tried in order when no contact is found")
      .def_readwrite("accel_cutoff_hz", &KeyTimeSettings::accel_cutoff_hz, "hand/head low-pass, Hz (default 4)")
      .def_readwrite("min_separation", &KeyTimeSettings::min_separation, "merge minima closer than this, s (default 0.2)")
      .def_readwrite("min_prominence", &KeyTimeSettings::min_prominence, "fraction of the robust |a| spread (default 0.25)")
      .def_readwrite("extremes", &KeyTimeSettings::extremes, "body.ReversalSettings for hand/head extremes")
      .def_readwrite("still_speed", &KeyTimeSettings::still_speed, "body sizes/s under which a hand is still")
      .def_readwrite("beat", &KeyTimeSettings::beat, "BeatSettings")
      .def_readwrite("hands_and_head", &KeyTimeSettings::hands_and_head, "detect hands and head too (default True)")
      .def_readwrite("require_contacts", &KeyTimeSettings::require_contacts, "raise when no foot contact (default True)")
      .def("validate", &KeyTimeSettings::validate);

  py::class_<KeyTimeReport>(t, "KeyTimeReport", "Result of detect_key_times().")
      .def_readonly("effectors", &KeyTimeReport::effectors)
      .def_readonly("attempts", &KeyTimeReport::attempts)
      .def_readonly("contacts", &KeyTimeReport::contacts)
      .def_readonly("beat", &KeyTimeReport::beat)
      .def("find", &KeyTimeReport::find, py::arg("name"), py::return_value_policy::reference_internal,
           "The effector named `name`, or None.");
  py::class_<StepKey>(t, "StepKey", "A foot key of the step sequence.")
      .def_readonly("frame", &StepKey::frame)
      .def_readonly("foot", &StepKey::foot)
      .def_readonly("confidence", &StepKey::confidence)
      .def_readonly("begin", &StepKey::begin, "the contact's first frame")
      .def_readonly("end", &StepKey::end, "one past the contact's last frame")
      .def("full", &StepKey::full, py::arg("frame_count"), "the contact touches neither clip end");

  t.def("detect_key_times",
        [](const Motion& motion, const body::JointRoles& roles, const KeyTimeSettings& settings) {
          check_roles(roles, motion.skeleton.point_count(), "detect_key_times: roles");
          return detect_key_times(motion, roles, settings);
        },
        py::arg("motion"), py::arg("roles"),
        py::arg("settings") = KeyTimeSettings{}, py::call_guard<py::gil_scoped_release>(),
        "Key times of the feet (contacts) and of hands and head (acceleration minima). Raises "
        "koma.BadDataError (no foot role, no contact, < 3 frames) / ValueError.");
  t.def(
      "acceleration_minima",
      [](const Array& track, double frame_rate, double cutoff_hz, double min_separation, double min_prominence) {
        const auto p = points_of(track, "acceleration_minima: track");
        py::gil_scoped_release release;
        return acceleration_minima(p, frame_rate, cutoff_hz, min_separation, min_prominence);
      },
      py::arg("track"), py::arg("frame_rate"), py::arg("cutoff_hz"), py::arg("min_separation"),
      py::arg("min_prominence"), "Local minima of |acceleration| of a (frames, 3) track.");
  t.def("step_keys", &step_keys, py::arg("report"), py::arg("min_gap_frames") = 2);
  t.def(
      "full_steps",
      [](const std::vector<StepKey>& keys, int frame_count, int max_split_gap_frames) {
        return full_steps(keys, frame_count, max_split_gap_frames);
      },
      py::arg("keys"), py::arg("frame_count"), py::arg("max_split_gap_frames") = 0,
      "The keys of full stances (a stance split by a brief hover merged; the clip's cut first and last "
      "stances dropped unless < 2 remain).");
}

// ---- source.hpp -----------------------------------------------------------------------------
void bind_sources(py::module_& t) {
  using namespace koma::timing;
  py::class_<PoseDescriptor>(t, "PoseDescriptor", "Role positions relative to the hips, facing +Z, in body sizes.")
      .def_property_readonly("positions",
                             [](const PoseDescriptor& d) {
                               return points_array(std::vector<Vec3>(d.positions.begin(), d.positions.end()));
                             })
      .def_property_readonly("present", [](const PoseDescriptor& d) {
        return std::vector<bool>(d.present.begin(), d.present.end());
      });
  t.def("pose_distance", &pose_distance, py::arg("a"), py::arg("b"));
  t.def(
      "pose_descriptor",
      [](const WorldPoses& poses, long long frame, const body::JointRoles& roles, double body_size) {
        check_index(frame, poses.frame_count, "pose_descriptor: frame");
        check_roles(roles, poses.point_count, "pose_descriptor: roles");
        return pose_descriptor(poses, static_cast<int>(frame), roles, body_size);
      },
      py::arg("poses"), py::arg("frame"), py::arg("roles"), py::arg("body_size"));

  py::class_<SegmentTiming>(t, "SegmentTiming", "Timing of one step segment of an example.")
      .def_readonly("example", &SegmentTiming::example)
      .def_readonly("begin", &SegmentTiming::begin)
      .def_readonly("end", &SegmentTiming::end)
      .def_readonly("start_foot", &SegmentTiming::start_foot)
      .def_readonly("end_foot", &SegmentTiming::end_foot)
      .def_readonly("duration", &SegmentTiming::duration, "seconds")
      .def_readonly("length", &SegmentTiming::length, "body sizes")
      .def_readonly("speed", &SegmentTiming::speed, "body sizes per second")
      .def_readonly("speed_ratio", &SegmentTiming::speed_ratio)
      .def_readonly("cycle_fraction", &SegmentTiming::cycle_fraction)
      .def_readonly("progress", &SegmentTiming::progress)
      .def_readonly("pose", &SegmentTiming::pose);
  py::class_<ChainLag>(t, "ChainLag", "A parent->child rotation-peak lag.")
      .def_readonly("parent", &ChainLag::parent)
      .def_readonly("child", &ChainLag::child)
      .def_readonly("lag_seconds", &ChainLag::lag_seconds)
      .def_readonly("lag_cycles", &ChainLag::lag_cycles)
      .def_readonly("correlation", &ChainLag::correlation);
  py::class_<JointAmplitude>(t, "JointAmplitude", "Rotation range of a role joint, radians.")
      .def_readonly("role", &JointAmplitude::role)
      .def_readonly("range", &JointAmplitude::range);
  py::class_<TimingSource>(t, "TimingSource", "Everything re-timing takes from one or several examples.")
      .def(py::init<>())
      .def_readonly("version", &TimingSource::version)
      .def_readonly("examples", &TimingSource::examples)
      .def_readonly("mean_cycle_seconds", &TimingSource::mean_cycle_seconds)
      .def_readonly("segments", &TimingSource::segments)
      .def_readonly("lags", &TimingSource::lags)
      .def_readonly("amplitudes", &TimingSource::amplitudes)
      .def_readonly("beat", &TimingSource::beat, "the examples' beat (period 0 = none)")
      .def_readonly("step_times", &TimingSource::step_times,
                    "seconds between touch-downs of alternating feet: the cadence's steps");

  py::class_<SourceSettings> ss(t, "SourceSettings", "Settings for measuring timing (sources and inputs alike).");
  def_kwargs_init(ss);
  ss.def_readwrite("keys", &SourceSettings::keys)
      .def_readwrite("path_cutoff_hz", &SourceSettings::path_cutoff_hz, "travel-direction low-pass, Hz (default 1)")
      .def_readwrite("progress_epsilon", &SourceSettings::progress_epsilon, "body sizes per second (default 1e-3)")
      .def_readwrite("lag_cutoff_hz", &SourceSettings::lag_cutoff_hz, "angular-speed low-pass, Hz (default 6)")
      .def_readwrite("max_split_gap", &SourceSettings::max_split_gap,
                     "seconds: a foot's contacts this close, nothing between, are one stance (default 0.12)")
      .def("validate", &SourceSettings::validate);

  t.def("succession_links", &succession_links);
  t.def("amplitude_roles", &amplitude_roles);
  t.def(
      "root_progress",
      [](const Motion& motion, const WorldPoses& poses, long long root_point, const SourceSettings& settings) {
        check_poses(motion, poses, "root_progress");
        check_index(root_point, poses.point_count, "root_progress: root_point");
        py::gil_scoped_release release;
        return root_progress(motion, poses, static_cast<int>(root_point), settings);
      },
      py::arg("motion"), py::arg("poses"), py::arg("root_point"), py::arg("settings") = SourceSettings{},
        "Root progress per frame along the travel direction, metres (strictly increasing).");
  t.def("path_point", &path_point, py::arg("roles"));
  t.def(
      "segment_timings",
      [](const Motion& motion, const WorldPoses& poses, const body::JointRoles& roles, const std::vector<StepKey>& keys,
         const std::vector<double>& progress, int example) {
        check_poses(motion, poses, "segment_timings");
        check_roles(roles, poses.point_count, "segment_timings: roles");
        return segment_timings(motion, poses, roles, keys, progress, example);
      },
      py::arg("motion"), py::arg("poses"), py::arg("roles"), py::arg("keys"), py::arg("progress"),
      py::arg("example") = 0, py::call_guard<py::gil_scoped_release>());
  t.def(
      "rotation_peak_lag",
      [](const Motion& motion, long long parent, long long child, int window_frames, double cutoff_hz) {
        check_joint(motion, parent, "rotation_peak_lag: parent");
        check_joint(motion, child, "rotation_peak_lag: child");
        py::gil_scoped_release release;
        return rotation_peak_lag(motion, static_cast<int>(parent), static_cast<int>(child), window_frames, cutoff_hz);
      },
      py::arg("motion"), py::arg("parent"), py::arg("child"), py::arg("window_frames"), py::arg("cutoff_hz"),
      "(lag_seconds, |correlation|) of child after parent (joint indices).");
  t.def(
      "rotation_range",
      [](const Motion& motion, long long joint, int begin, int end) {
        check_joint(motion, joint, "rotation_range: joint");
        py::gil_scoped_release release;
        return rotation_range(motion, static_cast<int>(joint), begin, end);
      },
      py::arg("motion"), py::arg("joint"), py::arg("begin") = 0, py::arg("end") = -1,
      "95th percentile angle (radians) of a joint from its mean rotation over frames [begin, end).");
  t.def(
      "make_timing_source",
      [](const std::vector<Motion>& examples, const body::JointRoles& roles, const std::vector<std::string>& names,
         const SourceSettings& settings) {
        for (const Motion& e : examples) {
          require_same_topology(examples.front().skeleton, e.skeleton);  // MismatchError before any index
          check_roles(roles, e.skeleton.point_count(), "make_timing_source: roles");
        }
        return make_timing_source(examples, roles, names, settings);
      },
      py::arg("examples"), py::arg("roles"), py::arg("names") = std::vector<std::string>{},
      py::arg("settings") = SourceSettings{}, py::call_guard<py::gil_scoped_release>(),
      "A timing source from example motions of one topology. Raises koma.MismatchError (topologies), "
      "koma.BadDataError (fewer than two foot key times).");
  t.def("timing_source_to_json", &timing_source_to_json, py::arg("source"));
  t.def("timing_source_from_json", &timing_source_from_json, py::arg("text"), py::arg("context") = "timing source",
        "Raises koma.BadFileError for malformed JSON, missing fields, an unknown version or role.");
}

// ---- retime.hpp -----------------------------------------------------------------------------
void bind_retime(py::module_& t) {
  using namespace koma::timing;
  py::enum_<SpeedFrom>(t, "SpeedFrom", "Where the output's overall speed comes from.")
      .value("cadence", SpeedFrom::cadence)
      .value("source", SpeedFrom::source)
      .value("input", SpeedFrom::input);

  py::class_<RetimeSettings> rs(t, "RetimeSettings", "Re-timing settings (include/koma/timing/retime.hpp).");
  def_kwargs_init(rs);
  rs.def_readwrite("measure", &RetimeSettings::measure, "how the input is measured (SourceSettings)")
      .def_readwrite("succession", &RetimeSettings::succession, "apply succession lags (default True)")
      .def_readwrite("amplitude", &RetimeSettings::amplitude, "apply amplitude scaling (default True)")
      .def_readwrite("speed", &RetimeSettings::speed, "SpeedFrom.cadence (default: the example's step times), .source (its speed) or .input")
      .def_readwrite("output_rate", &RetimeSettings::output_rate, "output fps; 0 = the input's (default)")
      .def_readwrite("max_duration_scale", &RetimeSettings::max_duration_scale, ">= 1 (default 4)")
      .def_readwrite("min_lag_correlation", &RetimeSettings::min_lag_correlation, "(default 0.6)")
      .def_readwrite("max_shift_cycles", &RetimeSettings::max_shift_cycles, "(default 0.1)")
      .def_readwrite("max_amplitude_scale", &RetimeSettings::max_amplitude_scale, ">= 1 (default 2)")
      .def_readwrite("key_iterations", &RetimeSettings::key_iterations,
                     "key-correction passes so the output's own foot keys land on the planned times; 0 = off (default 6)")
      .def_readwrite("max_key_shift", &RetimeSettings::max_key_shift,
                     "largest key move, as a fraction of the shorter neighbouring step, in [0, 0.5] (default 0.5)")
      .def_readwrite("on_beat", &RetimeSettings::on_beat,
                     "make each step a whole number of the source's beat periods (default False)")
      .def("validate", &RetimeSettings::validate);

  py::class_<KeyReport>(t, "KeyReport", "One foot key of the output: planned (source timing) vs detected on the output.")
      .def_readonly("foot", &KeyReport::foot)
      .def_readonly("input_key", &KeyReport::input_key, "the input's key frame")
      .def_readonly("planned", &KeyReport::planned, "planned output frame (fractional)")
      .def_readonly("input_frame", &KeyReport::input_frame, "input frame shown at the planned time")
      .def_readonly("detected", &KeyReport::detected, "matched output key frame, or -1")
      .def_readonly("interior", &KeyReport::interior, "False when the input contact touches the first or last frame");

  py::class_<SegmentReport>(t, "SegmentReport", "How one input step segment was re-timed.")
      .def_readonly("input_begin", &SegmentReport::input_begin)
      .def_readonly("input_end", &SegmentReport::input_end)
      .def_readonly("output_begin", &SegmentReport::output_begin)
      .def_readonly("output_end", &SegmentReport::output_end)
      .def_readonly("source_segment", &SegmentReport::source_segment)
      .def_readonly("pose_distance", &SegmentReport::pose_distance)
      .def_readonly("input_duration", &SegmentReport::input_duration)
      .def_readonly("output_duration", &SegmentReport::output_duration);
  py::class_<ShiftReport>(t, "ShiftReport", "A succession shift applied to one chain child (seconds).")
      .def_readonly("parent", &ShiftReport::parent)
      .def_readonly("child", &ShiftReport::child)
      .def_readonly("source_lag", &ShiftReport::source_lag)
      .def_readonly("input_lag", &ShiftReport::input_lag)
      .def_readonly("correlation", &ShiftReport::correlation)
      .def_readonly("shift", &ShiftReport::shift);
  py::class_<AmplitudeReport>(t, "AmplitudeReport", "An amplitude scale applied to one role joint.")
      .def_readonly("role", &AmplitudeReport::role)
      .def_readonly("source_range", &AmplitudeReport::source_range)
      .def_readonly("input_range", &AmplitudeReport::input_range)
      .def_readonly("scale", &AmplitudeReport::scale);
  py::class_<RetimeReport>(t, "RetimeReport", "What retime() did.")
      .def_readonly("input_frames", &RetimeReport::input_frames)
      .def_readonly("output_frames", &RetimeReport::output_frames)
      .def_readonly("input_rate", &RetimeReport::input_rate)
      .def_readonly("output_rate", &RetimeReport::output_rate)
      .def_readonly("input_keys", &RetimeReport::input_keys)
      .def_readonly("segments", &RetimeReport::segments)
      .def_readonly("warp", &RetimeReport::warp, "per output frame, the input frame (fractional) it shows")
      .def_readonly("shifts", &RetimeReport::shifts)
      .def_readonly("amplitudes", &RetimeReport::amplitudes)
      .def_readonly("path_deviation", &RetimeReport::path_deviation, "metres")
      .def_readonly("path_length", &RetimeReport::path_length, "metres")
      .def_readonly("keys", &RetimeReport::keys, "one KeyReport per input step key")
      .def_readonly("key_error", &RetimeReport::key_error, "largest |detected - planned| output frames over interior keys")
      .def_readonly("cycle_error", &RetimeReport::cycle_error,
                    "largest error of a key normalised per two-step cycle, output frames")
      .def_readonly("key_passes", &RetimeReport::key_passes)
      .def_readonly("keys_unmatched", &RetimeReport::keys_unmatched)
      .def_readonly("beat_period", &RetimeReport::beat_period, "seconds; the beat the steps were put on, 0 = off")
      .def_readonly("speed", &RetimeReport::speed, "the SpeedFrom applied")
      .def_readonly("output_step", &RetimeReport::output_step, "median output step, seconds")
      .def_readonly("source_step", &RetimeReport::source_step, "median step of the example(s), seconds")
      .def_readonly("input_step", &RetimeReport::input_step, "median input step, seconds")
      .def_readonly("output_speed", &RetimeReport::output_speed, "mean step speed of the output, m/s")
      .def_readonly("input_speed", &RetimeReport::input_speed, "mean step speed of the input, m/s")
      .def_readonly("path_hausdorff", &RetimeReport::path_hausdorff, "metres, symmetric, between the root polylines");
  py::class_<RetimeResult>(t, "RetimeResult", "The re-timed motion and the report.")
      .def_readonly("motion", &RetimeResult::motion)
      .def_readonly("report", &RetimeResult::report);

  t.def(
      "retime",
      [](const Motion& input, const body::JointRoles& roles, const TimingSource& source, const RetimeSettings& settings) {
        check_roles(roles, input.skeleton.point_count(), "retime: roles");
        return retime(input, roles, source, settings);
      },
      py::arg("input"), py::arg("roles"), py::arg("source"),
        py::arg("settings") = RetimeSettings{}, py::call_guard<py::gil_scoped_release>(),
        "Re-times `input` to `source`: the root path stays, the timing changes. Lossy. Raises ValueError "
        "(settings), koma.BadDataError (too few foot key times, an empty source).");
  t.def(
      "is_monotone_warp",
      [](const std::vector<double>& warp, double last_frame) { return is_monotone_warp(warp, last_frame); },
      py::arg("warp"), py::arg("last_frame"));
  t.def("shift_warp", &shift_warp, py::arg("frame_count"), py::arg("shift_frames"), py::arg("ramp_frames"));
  t.def(
      "joint_path",
      [](const Motion& motion, long long joint) {
        check_joint(motion, joint, "joint_path: joint");
        return points_array(joint_path(motion, static_cast<int>(joint)));
      },
      py::arg("motion"), py::arg("joint"), "World path (frames, 3) of a joint, metres.");
  t.def(
      "polyline_deviation",
      [](const Array& a, const Array& b) {
        return polyline_deviation(finite_points_of(a, "polyline_deviation: a"), finite_points_of(b, "polyline_deviation: b"));
      },
      py::arg("a"), py::arg("b"), "Largest distance (metres) of a point of b from the polyline a.");
  t.def(
      "polyline_length", [](const Array& a) { return polyline_length(finite_points_of(a, "polyline_length: a")); },
      py::arg("a"));
  t.def(
      "hausdorff_distance",
      [](const Array& a, const Array& b) {
        return hausdorff_distance(finite_points_of(a, "hausdorff_distance: a"), finite_points_of(b, "hausdorff_distance: b"));
      },
      py::arg("a"), py::arg("b"),
      "Symmetric Hausdorff distance between two polylines given as (n, 3) arrays (every point of both curves).");
}

// ---- files.hpp, report.hpp ------------------------------------------------------------------
void bind_files_and_reports(py::module_& t) {
  using namespace koma::timing;
  t.def(
      "load_timing_source",
      [](const std::filesystem::path& like, const std::filesystem::path& roles_path, const SourceSettings& settings) {
        MotionFileReader reader;
        reader.is_motion_file = [](const std::filesystem::path& p) { return io::is_motion_file(p); };
        reader.read = [](const std::filesystem::path& p) { return io::read_motion(p).motion; };
        return load_timing_source(like, reader, roles_path, settings);
      },
      py::arg("like"), py::arg("roles_path") = std::filesystem::path{}, py::arg("settings") = SourceSettings{},
      py::call_guard<py::gil_scoped_release>(),
      "A timing source from a saved .json, a folder of example motions (one skeleton) or one motion file.");
  t.def(
      "key_times_report",
      [](const Motion& m, const body::JointRoles& roles, const KeyTimeReport& r) { return to_python(key_times_report(m, roles, r)); },
      py::arg("motion"), py::arg("roles"), py::arg("report"), "The dict `koma timing detect --json` prints.");
  t.def(
      "timing_source_summary", [](const TimingSource& s) { return to_python(timing_source_summary(s)); },
      py::arg("source"), "The dict `koma timing source --json` prints (without the output name).");
  t.def(
      "retime_report",
      [](const RetimeReport& r, const TimingSource& s, bool with_warp) { return to_python(retime_report(r, s, with_warp)); },
      py::arg("report"), py::arg("source"), py::arg("with_warp") = true,
      "The dict `koma retime --report` writes (without input/output names).");
}

}  // namespace

void bind_timing(py::module_& m) {
  using namespace koma::timing;
  py::module_ t = m.def_submodule("timing", "Key times, timing sources and re-timing.");

  bind_key_times(t);
  bind_sources(t);
  bind_retime(t);
  bind_files_and_reports(t);
}

}  // namespace koma::python
