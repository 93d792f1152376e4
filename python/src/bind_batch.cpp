// koma::batch (many files through one command), 1:1 with include/koma/batch/{batch,pipelines}.hpp.
// No logic here: koma/batch.py (koma.batch.run) builds the jobs from plain settings and maps the
// files locally or over Dask. The runs release the GIL.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "common.hpp"
#include "json.hpp"
#include "koma/batch/batch.hpp"
#include "koma/batch/pipelines.hpp"
#include "koma/core/error.hpp"

namespace koma::python {

namespace {

// The task each command runs per item (the same one `koma batch COMMAND` runs).
batch::Task keys_task(const batch::KeysJob& job) {
  return [job](const batch::Item& item, const std::function<void(double)>& progress, std::vector<std::string>& warnings) {
    batch::KeysJob j = job;
    j.input_label = item.input.string();
    batch::KeysFileResult r = batch::run_keys_file(item.input, item.output, j, progress);
    warnings = std::move(r.warnings);
    return batch::keys_figures(r);
  };
}

batch::Task cartoon_task(const batch::CartoonJob& job) {
  return [job](const batch::Item& item, const std::function<void(double)>& progress, std::vector<std::string>& warnings) {
    batch::CartoonFileResult r = batch::run_cartoon_file(item.input, item.output, job, progress);
    warnings = std::move(r.warnings);
    return r.summary;
  };
}

batch::Item make_item(const std::string& input, const std::string& relative, const std::string& output) {
  batch::Item it;
  it.input = input;
  it.relative = relative;
  it.output = output;
  return it;
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

  b.def(
      "plan",
      [](const std::vector<std::string>& inputs, const std::string& output_dir) {
        py::list out;
        for (const auto& it : batch::plan(inputs, output_dir)) {
          out.append(py::make_tuple(it.input.string(), it.relative.string(), it.output.string()));
        }
        return out;
      },
      py::arg("inputs"), py::arg("output_dir"),
      "Inputs (files, folders, glob patterns) -> [(input, relative, output)], sorted, mirroring the tree.");
  b.def(
      "run_keys",
      [](const std::vector<std::string>& inputs, const std::string& output_dir, const batch::KeysJob& job, int jobs,
         bool resume) {
        const auto records = [&] {
          py::gil_scoped_release release;
          batch::RunSettings rs{jobs, resume};
          return batch::run(batch::plan(inputs, output_dir), rs, keys_task(job));
        }();
        nlohmann::json files = nlohmann::json::array();
        for (const auto& r : records) files.push_back(batch::record_json(r));
        return to_python(files);
      },
      py::arg("inputs"), py::arg("output_dir"), py::arg("job"), py::arg("jobs") = 0, py::arg("resume") = false,
      "Runs the keys pipeline on every input on the oneTBB pool; returns the report's file entries.");
  b.def(
      "run_cartoon",
      [](const std::vector<std::string>& inputs, const std::string& output_dir, const batch::CartoonJob& job, int jobs,
         bool resume) {
        const auto records = [&] {
          py::gil_scoped_release release;
          batch::RunSettings rs{jobs, resume};
          return batch::run(batch::plan(inputs, output_dir), rs, cartoon_task(job));
        }();
        nlohmann::json files = nlohmann::json::array();
        for (const auto& r : records) files.push_back(batch::record_json(r));
        return to_python(files);
      },
      py::arg("inputs"), py::arg("output_dir"), py::arg("job"), py::arg("jobs") = 0, py::arg("resume") = false,
      "Runs the cartoon pipeline on every input on the oneTBB pool; returns the report's file entries.");
  b.def(
      "run_keys_item",
      [](const std::string& input, const std::string& relative, const std::string& output, const batch::KeysJob& job,
         bool resume) {
        batch::Record r;
        {
          py::gil_scoped_release release;
          r = batch::run_item(make_item(input, relative, output), keys_task(job), resume);
        }
        return to_python(batch::record_json(r));
      },
      py::arg("input"), py::arg("relative"), py::arg("output"), py::arg("job"), py::arg("resume") = false,
      "One file through the keys pipeline (what a Dask worker runs); returns its report entry.");
  b.def(
      "run_cartoon_item",
      [](const std::string& input, const std::string& relative, const std::string& output, const batch::CartoonJob& job,
         bool resume) {
        batch::Record r;
        {
          py::gil_scoped_release release;
          r = batch::run_item(make_item(input, relative, output), cartoon_task(job), resume);
        }
        return to_python(batch::record_json(r));
      },
      py::arg("input"), py::arg("relative"), py::arg("output"), py::arg("job"), py::arg("resume") = false,
      "One file through the cartoon pipeline (what a Dask worker runs); returns its report entry.");
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
