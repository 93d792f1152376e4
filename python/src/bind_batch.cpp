// koma::batch (many files through one command), 1:1 with include/koma/batch/{batch,pipelines,tasks}.hpp
// (RenderJob itself is bound by bind_render_file.cpp).
// No logic here: koma/batch.py (koma.batch.run) builds the jobs from plain settings and maps the
// files locally or over Dask. The runs release the GIL.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/batch/batch.hpp"
#include "koma/batch/pipelines.hpp"
#include "koma/batch/tasks.hpp"
#include "koma/core/error.hpp"

namespace koma::python {

namespace {

batch::Item make_item(const std::string& input, const std::string& relative, const std::string& output) {
  batch::Item it;
  it.input = input;
  it.relative = relative;
  it.output = output;
  return it;
}

// The default plan (a function: gcc 12 has an internal error on `PlanSettings{}` in def_runs).
batch::PlanSettings default_plan() { return batch::PlanSettings(); }

// run_NAME (every input on the oneTBB pool) and run_NAME_item (one file, what a Dask worker runs)
// for one command's job type, both over the library's task (koma/batch/tasks.hpp).
// The plan says how inputs become items (what folders yield, the outputs' names).
template <class Job>
void def_runs(py::module_& b, const std::string& name, batch::Task (*task)(const Job&)) {
  b.def(
      ("run_" + name).c_str(),
      [task](const std::vector<std::string>& inputs, const std::string& output_dir, const Job& job, int jobs,
             bool resume, const batch::PlanSettings& plan) {
        const auto records = [&] {
          py::gil_scoped_release release;
          batch::RunSettings rs{jobs, resume};
          return batch::run(batch::plan(inputs, output_dir, plan), rs, task(job));
        }();
        nlohmann::json files = nlohmann::json::array();
        for (const auto& r : records) files.push_back(batch::record_json(r));
        return to_python(files);
      },
      py::arg("inputs"), py::arg("output_dir"), py::arg("job"), py::arg("jobs") = 0, py::arg("resume") = false,
      py::arg("plan") = default_plan(),
      ("Runs the " + name + " pipeline on every input on the oneTBB pool; returns the report's file entries.").c_str());
  b.def(
      ("run_" + name + "_item").c_str(),
      [task](const std::string& input, const std::string& relative, const std::string& output, const Job& job,
             bool resume) {
        batch::Record r;
        {
          py::gil_scoped_release release;
          r = batch::run_item(make_item(input, relative, output), task(job), resume);
        }
        return to_python(batch::record_json(r));
      },
      py::arg("input"), py::arg("relative"), py::arg("output"), py::arg("job"), py::arg("resume") = false,
      ("One file through the " + name + " pipeline (what a Dask worker runs); returns its report entry.").c_str());
}

}  // namespace

void bind_batch(py::module_& m) {
  py::module_ b = m.def_submodule("_batch", "Many files through one command (the C++ side of koma.batch).");

  py::class_<batch::KeysJob> kj(b, "KeysJob", "Settings of the keys pipeline of one file (koma keys).");
  def_kwargs_init(kj);
  kj.def_readwrite("keys", &batch::KeysJob::keys, "keys.KeySettings (lengths in metres unless lengths_in_file_unit)")
      .def_readwrite("output_rate", &batch::KeysJob::output_rate, "output fps (default 24); 0 = the file's own")
      .def_readwrite("read", &batch::KeysJob::read, "io.ReadOptions (BVH unit, glTF animation)")
      .def_readwrite("lengths_in_file_unit", &batch::KeysJob::lengths_in_file_unit,
                     "max_error (unit^2) and camera position/target in the file's unit (the CLI's convention)")
      .def_readwrite("report", &batch::KeysJob::report, "also write the JSON report here ('' = no)")
      .def_readwrite("xsheet", &batch::KeysJob::xsheet, "also write the exposure sheet CSV here ('' = no)")
      .def_readwrite("input_label", &batch::KeysJob::input_label, "the input's name in the report ('' = its path)")
      .def_readwrite("spacing", &batch::KeysJob::spacing,
                     "keys.SpacingSettings: inbetweens between the keys by charts (None = the keys held)")
      .def_readwrite("chart_sheet", &batch::KeysJob::chart_sheet,
                     "with spacing: an exposure sheet whose gap_chart cells set single gaps' charts ('' = none)")
      .def("validate", &batch::KeysJob::validate);
  py::class_<batch::CartoonJob> cj(b, "CartoonJob", "Settings of the cartoon pipeline of one file (koma cartoon).");
  def_kwargs_init(cj);
  cj.def_readwrite("cartoon", &batch::CartoonJob::cartoon, "cartoon.CartoonSettings")
      .def_readwrite("sigma_frames", &batch::CartoonJob::sigma_frames, "> 0: a fixed sigma in frames of each file")
      .def_readwrite("read", &batch::CartoonJob::read, "io.ReadOptions")
      .def_readwrite("points_unit", &batch::CartoonJob::points_unit, "point-track CSV unit (default metre)")
      .def_readwrite("report", &batch::CartoonJob::report, "also write the full JSON report here ('' = no)")
      .def("validate", &batch::CartoonJob::validate);
  py::class_<batch::RetimeJob> rj(b, "RetimeJob", "Settings of the retime pipeline of one file (koma retime).");
  def_kwargs_init(rj);
  rj.def_readwrite("retime", &batch::RetimeJob::retime, "timing.RetimeSettings (output_rate 0 = the input's)")
      .def_readwrite("like", &batch::RetimeJob::like, "example motion, folder of examples, or saved timing .json")
      .def_readwrite("roles", &batch::RetimeJob::roles, "roles file for the input and the examples ('' = by name)")
      .def_readwrite("read", &batch::RetimeJob::read, "io.ReadOptions (its unit also for the examples)")
      .def_readwrite("write", &batch::RetimeJob::write, "io.WriteOptions (the character is set per file)")
      .def_readwrite("report", &batch::RetimeJob::report, "also write the JSON report here ('' = no)")
      .def("validate", &batch::RetimeJob::validate);
  py::class_<batch::GaitApplyJob> gj(b, "GaitApplyJob", "Settings of the gait apply pipeline of one file (koma gait apply).");
  def_kwargs_init(gj);
  gj.def_readwrite("apply", &batch::GaitApplyJob::apply, "gait.ApplySettings")
      .def_readwrite("adverbs", &batch::GaitApplyJob::adverbs, "[gait.WeightedAdverb] (gait.read_weighted_adverb)")
      .def_readwrite("roles", &batch::GaitApplyJob::roles, "roles file for a rig koma cannot name ('' = by name)")
      .def_readwrite("read", &batch::GaitApplyJob::read, "io.ReadOptions")
      .def_readwrite("write", &batch::GaitApplyJob::write, "io.WriteOptions (the character is set per file)")
      .def("validate", &batch::GaitApplyJob::validate);
  py::class_<batch::GaitStyleJob> sj(b, "GaitStyleJob", "Settings of the gait style pipeline of one file (koma gait style).");
  def_kwargs_init(sj);
  sj.def_readwrite("style", &batch::GaitStyleJob::style, "gait.StyleSettings (analysis, synthesis, then, target)")
      .def_readwrite("adverbs", &batch::GaitStyleJob::adverbs, "[gait.WeightedAdverb] (gait.read_weighted_adverb)")
      .def_readwrite("read", &batch::GaitStyleJob::read, "io.ReadOptions of a motion input")
      .def_readwrite("write", &batch::GaitStyleJob::write, "io.WriteOptions")
      .def_readwrite("csv_beside_output", &batch::GaitStyleJob::csv_beside_output,
                     "also write each output's joint angles beside it (out/walk.bvh -> out/walk.csv)")
      .def("validate", &batch::GaitStyleJob::validate);
  b.def("gait_style_extensions", &batch::gait_style_extensions,
        "What a gait-style batch finds in folders and globs: the motion formats and .gait.json.");
  py::class_<batch::FrameRange> fr(b, "FrameRange", "Input frames [first, end); negative counts from the end.");
  def_kwargs_init(fr);
  fr.def_readwrite("first", &batch::FrameRange::first).def_readwrite("end", &batch::FrameRange::end);
  b.def("parse_frame_range", &batch::parse_frame_range, py::arg("text"), "'A:B' -> FrameRange (ValueError otherwise).");
  py::class_<batch::ConvertJob> vj(b, "ConvertJob", "Settings of the convert pipeline of one file (koma convert).");
  def_kwargs_init(vj);
  vj.def_readwrite("range", &batch::ConvertJob::range, "FrameRange of input frames to keep (None = all)")
      .def_readwrite("output_rate", &batch::ConvertJob::output_rate, "output fps; 0 = the input's (no resampling)")
      .def_readwrite("read", &batch::ConvertJob::read, "io.ReadOptions")
      .def_readwrite("write", &batch::ConvertJob::write, "io.WriteOptions (unit: the BVH unit to write)")
      .def("validate", &batch::ConvertJob::validate);

  py::class_<batch::PlanSettings> ps(b, "PlanSettings", "How inputs become items (koma/batch/batch.hpp).");
  def_kwargs_init(ps);
  ps.def_readwrite("extensions", &batch::PlanSettings::extensions, "extensions a folder or glob search picks up")
      .def_readwrite("output_extension", &batch::PlanSettings::output_extension,
                     "outputs' extension ('' = the input's; '.png' = a folder of PNG frames)")
      .def_readwrite("output_formats", &batch::PlanSettings::output_formats, "the extensions the command writes")
      .def_readwrite("every_animation", &batch::PlanSettings::every_animation, "one item per glTF/FBX animation");
  b.def(
      "plan",
      [](const std::vector<std::string>& inputs, const std::string& output_dir, const batch::PlanSettings& settings) {
        py::list out;
        for (const auto& it : batch::plan(inputs, output_dir, settings)) {
          out.append(py::make_tuple(it.input.string(), it.relative.string(), it.output.string()));
        }
        return out;
      },
      py::arg("inputs"), py::arg("output_dir"), py::arg("settings") = default_plan(),
      "Inputs (files, folders, glob patterns) -> [(input, relative, output)], sorted, mirroring the tree.");
  b.def("render_plan", &batch::render_plan, py::arg("job"), py::arg("to") = "",
        "PlanSettings of a render batch: .mp4 (default), .gif or .png (a folder of frames; the default for "
        "transparent cels).");
  def_runs(b, "keys", batch::keys_task);
  def_runs(b, "cartoon", batch::cartoon_task);
  def_runs(b, "retime", batch::retime_task);
  def_runs(b, "convert", batch::convert_task);
  def_runs(b, "gait_apply", batch::gait_apply_task);
  def_runs(b, "gait_style", batch::gait_style_task);
  def_runs(b, "render", batch::render_task);
  b.def(
      "report",
      [](const std::string& command, const py::object& settings, int jobs, bool resume, const py::object& files,
         double seconds) {
        const auto json = py::module_::import("json");
        const auto parse = [&](const py::object& o) {
          return nlohmann::json::parse(py::cast<std::string>(json.attr("dumps")(o)));
        };
        batch::RunSettings rs{jobs, resume};
        return to_python(batch::report(command, parse(settings), rs, parse(files), seconds));
      },
      py::arg("command"), py::arg("settings"), py::arg("jobs"), py::arg("resume"), py::arg("files"), py::arg("seconds"),
      "The summary report (the same document `koma batch --report` writes) from file entries.");
  b.def(
      "claim_output_dir",
      [](const std::string& output_dir, const std::string& command, const py::object& settings, bool resume) {
        const auto json = py::module_::import("json");
        const auto parsed = nlohmann::json::parse(py::cast<std::string>(json.attr("dumps")(settings)));
        std::error_code ec;
        std::filesystem::create_directories(output_dir, ec);
        if (ec) throw Error(ErrorCode::io, output_dir, "cannot create the output folder: " + ec.message());
        batch::claim_output_dir(output_dir, command, "python", parsed, resume);
      },
      py::arg("output_dir"), py::arg("command"), py::arg("settings"), py::arg("resume"),
      "Records the batch in output_dir/.koma-batch.json; with resume, refuses a folder filled with other settings.");
}

}  // namespace koma::python
