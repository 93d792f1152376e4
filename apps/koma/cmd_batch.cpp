// `koma batch COMMAND [COMMAND's options] INPUTS... -o OUTDIR`: many files through one command on a
// oneTBB pool (koma/batch/batch.hpp), with a progress bar or JSON progress lines and a summary
// report. Parsing and reporting only: the per-file pipelines are the single-file commands' own.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>

#include "cartoon_options.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "convert_options.hpp"
#include "flags.hpp"
#include "gait_options.hpp"
#include "keys_options.hpp"
#include "koma/batch/batch.hpp"
#include "koma/batch/tasks.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "render_options.hpp"
#include "retime_options.hpp"

namespace koma::cli {

namespace {

// What folders and globs yield by default: the motion formats koma reads.
std::vector<std::string> motion_extensions() { return batch::PlanSettings{}.extensions; }

struct BatchOptions {
  std::vector<std::string> inputs;
  std::string output_dir, report, to, animations = "first";
  std::vector<std::string> extensions = motion_extensions();  // what folders and globs yield
  int jobs = 0;
  bool resume = false, json = false;
};

void add_batch_options(CLI::App& cmd, BatchOptions& b) {
  cmd.add_option("inputs", b.inputs,
                 fmt::format("Input files, folders (searched recursively for {}) or quoted glob patterns", fmt::join(b.extensions, ", ")))
      ->required();
  cmd.add_option("-o,--output-dir", b.output_dir, "Output folder: outputs mirror the input tree below it")->required();
  cmd.add_option("--jobs", b.jobs, "Files processed at once (default: the cores)");
  cmd.add_option("--to", b.to,
                 "Output format: bvh, glb, gltf or fbx (default: the input's own, except that FBX inputs write glb; glb, gltf "
                 "and fbx outputs carry a glTF or FBX input's character)");
  cmd.add_option("--animations", b.animations,
                 "glTF/FBX files: 'first' (default: the first animation, or --animation) or 'all' (one output per "
                 "animation, NAME.ANIM.EXT; FBX stacks of one frame left out)")
      ->check(CLI::IsMember({"first", "all"}))
      ->capture_default_str();
  cmd.add_flag("--resume", b.resume,
               "Skip files whose output exists and is not older than the input; refused when OUTDIR was filled "
               "with other settings (OUTDIR/.koma-batch.json records them)");
  cmd.add_option("--report", b.report, "Summary report (JSON); default OUTDIR/batch-report.json");
  cmd.add_flag("--json", b.json, "Progress as JSON lines on stdout (one per file, then a summary line)");
}

std::string clock_text(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

// Files per second over the files actually run (skipped ones cost nothing), and the time left.
std::pair<double, double> rate_and_eta(const batch::Counts& c) {
  const int run = c.ok + c.failed + c.cancelled;
  const double rate = c.seconds > 0 ? run / c.seconds : 0;
  const double eta = rate > 0 ? (c.total - c.finished()) / rate : 0;
  return {rate, eta};
}

// One line per finished file: a progress bar (terminal) or a JSON line (--json); failures on stderr.
class BatchProgress {
 public:
  BatchProgress(std::string label, bool json) : label_(std::move(label)), json_(json), bar_(!json && ::isatty(STDERR_FILENO)) {}
  void file(const batch::Record& r, const batch::Counts& c) {
    const auto [rate, eta] = rate_and_eta(c);
    if (json_) {
      nlohmann::json line = {{"event", "file"},  {"input", r.item.input.string()}, {"output", r.item.output.string()},
                             {"status", std::string(batch::to_string(r.status))}, {"seconds", r.seconds},
                             {"done", c.finished()}, {"total", c.total}, {"ok", c.ok}, {"failed", c.failed},
                             {"skipped", c.skipped}, {"files_per_second", rate}, {"eta_seconds", eta}};
      if (r.status == batch::Status::failed) line["error"] = {{"code", r.error_code}, {"message", message(r)}};
      std::cout << line.dump() << std::endl;
      return;
    }
    if (r.status == batch::Status::failed) {
      // The context usually names the file already ("walk.bvh:12"); else say which file it was.
      const std::string input = r.item.input.string();
      const std::string where = r.error_context.rfind(input, 0) == 0 ? std::string() : input + ": ";
      fmt::print(stderr, "{}koma: batch: failed [{}]: {}{}\n", bar_ ? "\r\033[K" : "", r.error_code, where, message(r));
    }
    if (!bar_) return;
    const int width = 24;
    const int filled = c.total > 0 ? c.finished() * width / c.total : width;
    fmt::print(stderr, "\r{} [{}{}] {}/{} done, {} failed, {:.2f} files/s, ETA {} ", label_, std::string(filled, '#'),
               std::string(width - filled, '.'), c.finished(), c.total, c.failed, rate, clock_text(eta));
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) fmt::print(stderr, "\r\033[K");
    drawn_ = false;
  }
  static std::string message(const batch::Record& r) {
    if (r.error_code == "internal") return r.error_message;
    return describe(Error(ErrorCode::bad_file, r.error_context, r.error_message));  // flags for settings fields
  }

 private:
  std::string label_;
  bool json_, bar_, drawn_ = false;
};

// What a batch subcommand runs: the task, its settings (for the report and --resume) and how its
// outputs are named (motion files by default; --to overrides the extension).
struct BatchJob {
  batch::Task task;
  nlohmann::json settings;
  batch::PlanSettings plan;
  BatchJob(batch::Task t, nlohmann::json s, batch::PlanSettings p = {})
      : task(std::move(t)), settings(std::move(s)), plan(std::move(p)) {}
  BatchJob(std::pair<batch::Task, nlohmann::json> p) : BatchJob(std::move(p.first), std::move(p.second)) {}  // NOLINT
};

// Plans, runs, reports; throws ExitStatus for "some failed" (7) or "all failed" (8), Interrupted on Ctrl-C.
void run_batch(const std::string& command, const BatchOptions& b, const BatchJob& job) {
  const nlohmann::json& options = job.settings;
  const batch::Task& task = job.task;
  nlohmann::json settings = options;
  if (b.animations == "all") settings["animations"] = "all";  // other outputs: recorded for --resume
  batch::RunSettings rs;
  rs.jobs = b.jobs;
  rs.resume = b.resume;
  rs.validate();
  batch::PlanSettings ps = job.plan;
  if (!b.to.empty()) ps.output_extension = "." + b.to;  // checked by plan()
  ps.every_animation = b.animations == "all";
  ps.extensions = b.extensions;
  const std::vector<batch::Item> items = batch::plan(b.inputs, b.output_dir, ps);
  const std::filesystem::path report_path = b.report.empty() ? std::filesystem::path(b.output_dir) / "batch-report.json"
                                                             : std::filesystem::path(b.report);
  // The folders of the outputs and of the report exist before any file runs, so a long batch
  // cannot end with a report that has nowhere to go.
  for (const std::filesystem::path& dir : {std::filesystem::path(b.output_dir), report_path.parent_path()}) {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(ErrorCode::io, dir.string(), fmt::format("cannot create the folder: {}", ec.message()));
  }
  // A resumed batch must have the settings that filled the folder (outputs of other settings would be kept).
  batch::claim_output_dir(b.output_dir, command, "cli", settings, b.resume);
  BatchProgress progress("batch " + command, b.json);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<batch::Record> records = batch::run(
      items, rs, task, [&](const batch::Record& r, const batch::Counts& c) { progress.file(r, c); },
      [] { return interrupted(); });
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nlohmann::json report = batch::report(command, settings, rs, records, seconds);
  write_file_atomic(report_path, report.dump(2) + "\n");
  const batch::Counts c = batch::count(records);
  const int code = interrupted() ? 130 : c.failed == 0 ? 0 : c.failed == c.total - c.skipped ? 8 : 7;
  double frames = 0;
  for (const auto& r : records) {
    if (r.status == batch::Status::ok && r.figures.contains("frames")) frames += r.figures["frames"].get<double>();
  }
  if (b.json) {
    std::cout << nlohmann::json{{"event", "summary"}, {"command", command}, {"counts", report["counts"]},
                                {"seconds", seconds}, {"frames", frames}, {"report", report_path.string()}, {"exit", code}}
                     .dump()
              << std::endl;
  } else {
    fmt::print("koma batch {}: {} files: {} ok, {} failed, {} skipped{} in {:.1f} s ({:.2f} files/s, {:.0f} frames/s)\n",
               command, c.total, c.ok, c.failed, c.skipped,
               c.total - c.finished() + c.cancelled > 0 ? fmt::format(", {} not done", c.total - c.finished() + c.cancelled) : "",
               seconds, seconds > 0 ? (c.ok + c.failed) / seconds : 0.0, seconds > 0 ? frames / seconds : 0.0);
    fmt::print("  report {}\n", report_path.string());
  }
  if (interrupted()) {
    fmt::print(stderr, "koma: batch: interrupted; finished outputs are complete, run again with --resume\n");
    throw Interrupted();
  }
  if (code != 0) throw ExitStatus{code};
}

// `koma batch NAME`: the single command's own options (`add`), its pipeline's task on every file.
template <class Options, class Add, class Job>
CLI::App* add_batch_subcommand(CLI::App& parent, const char* name, const char* help, Add add, Job job,
                          std::vector<std::string> extensions = motion_extensions()) {
  struct Opts {
    Options c;
    BatchOptions b;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = parent.add_subcommand(name, help);
  o->b.extensions = std::move(extensions);
  add(*cmd, o->c);
  add_batch_options(*cmd, o->b);
  cmd->callback([o, cmd, name, job] { run_batch(name, o->b, BatchJob(job(o->c, *cmd))); });
  return cmd;
}

// `koma batch render`: each take to OUTDIR/<relative path>.mp4 (--to gif, --to png: a folder of
// frames; the default with --transparent).
BatchJob render_batch_job(const RenderOptions& o, const CLI::App& cmd) {
  const batch::RenderJob job = render_job(o);
  const CLI::Option* to = cmd.get_option("--to");
  batch::PlanSettings plan = batch::render_plan(job, to->count() > 0 ? "." + to->as<std::string>() : "");
  return {batch::render_task(job), render_options_json(o), plan};
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("batch", "Run a command on many files (folders, globs) on all cores, with a summary report");
  cmd->require_subcommand(1);
  cmd->footer(
      "Outputs mirror the input tree under OUTDIR; one bad file never stops the batch. Exit status:\n"
      "0 all done, 7 some files failed, 8 every file failed, 130 interrupted (resume with --resume).\n"
      "See docs/batch.md. Examples:\n"
      "  koma batch keys --on 2 mocap/ -o held/ --jobs 2\n"
      "  koma batch keys --keys 40 'takes/*/walk_*.bvh' -o out/ --report out.json --json\n"
      "  koma batch cartoon --keep-feet mocap/ -o cartoon/ --resume\n"
      "  koma batch retime --like sad_walk.bvh walks/ -o sad/\n"
      "  koma batch convert --fps 24 mocap/ -o glb/ --to glb\n"
      "  koma batch gait-apply --adverb tired.adverb.json:0.8 takes/ -o tired/\n"
      "  koma batch gait-style --adverb happy.adverb.json --seconds 8 walks/ gaits/ -o happy/ --csv\n"
      "  koma batch render --look toon takes/ -o renders/             # renders/<path>/<take>.mp4\n"
      "  koma batch render cartoon/ --compare mocap/ -o cmp/ --to png  # cmp/<path>/<take>/frame_00000.png ...\n"
      "  koma batch keys --on 2 characters/ -o held/ --animations all --to fbx   # hero.Walk.fbx, hero.Run.fbx, ...");
  add_batch_subcommand<KeysOptions>(
      *cmd, "keys", "koma keys on every file (same options; outputs keep the input's format)", add_keys_options,
      [](const KeysOptions& o, const CLI::App& c) { return std::pair(batch::keys_task(keys_job(o, c)), keys_options_json(o)); });
  add_batch_subcommand<CartoonOptions>(
      *cmd, "cartoon", "koma cartoon on every file (same options; outputs keep the input's format)", add_cartoon_options,
      [](const CartoonOptions& o, const CLI::App&) { return std::pair(batch::cartoon_task(cartoon_job(o)), cartoon_options_json(o)); });
  add_batch_subcommand<RetimeOptions>(
      *cmd, "retime", "koma retime on every file (same options: one --like for all; outputs keep the input's format)",
      add_retime_options,
      [](const RetimeOptions& o, const CLI::App&) { return std::pair(batch::retime_task(retime_job(o)), retime_options_json(o)); });
  add_batch_subcommand<ConvertOptions>(
      *cmd, "convert", "koma convert on every file (same options; --to chooses the output format)", add_convert_options,
      [](const ConvertOptions& o, const CLI::App&) { return std::pair(batch::convert_task(convert_job(o)), convert_options_json(o)); });
  add_batch_subcommand<GaitApplyOptions>(
      *cmd, "gait-apply", "koma gait apply on every file (same options; outputs keep the input's format)",
      add_gait_apply_options, [](const GaitApplyOptions& o, const CLI::App&) {
        return std::pair(batch::gait_apply_task(gait_apply_job(o)), gait_apply_options_json(o));
      });
  add_batch_subcommand<GaitStyleBatchOptions>(
      *cmd, "gait-style",
      "koma gait style on every walk or gait file (same options; --csv writes each output's angles beside it; a "
      ".gait.json input writes .bvh)",
      add_gait_style_batch_options,
      [](const GaitStyleBatchOptions& o, const CLI::App& c) {
        // `koma gait style --csv FILE` habit: here FILE would be taken as an input.
        for (const std::string& in : c.get_option("inputs")->as<std::vector<std::string>>())
          if (in.ends_with(".csv"))
            throw Error(ErrorCode::invalid_settings, "--csv",
                        fmt::format("'{}' is an input here: in a batch --csv is a flag that writes each output's "
                                    "angles beside it (out/walk.bvh -> out/walk.csv)", in));
        return std::pair(batch::gait_style_task(gait_style_batch_job(o)), gait_style_options_json(o));
      },
      batch::gait_style_extensions())
      ->footer(
          "Inputs are walks (analysed with the options above) and gait files (.gait.json; folders yield them, not\n"
          "other .json files); each output mirrors its input, a gait file's as .bvh (walk.gait.json -> walk.gait.bvh).\n"
          "Examples:\n"
          "  koma batch gait-style --adverb happy.adverb.json walks/ -o happy/\n"
          "  koma batch gait-style --adverb sad.adverb.json:2 --speed 0.7 --seconds 20 gaits/ -o sad/ --csv --json\n"
          "  koma batch gait-style --skeleton hero.bvh --adverb tired.adverb.json walks/ -o tired/ --to glb --resume");
  CLI::App* render = add_batch_subcommand<RenderOptions>(
      *cmd, "render",
      "koma render on every file (same options; --to mp4 (default), gif or png frames; --keys and --compare take "
      "folders that mirror the inputs)",
      [](CLI::App& c, RenderOptions& o) {
        add_render_options(c, o, true);
      },
      [](const RenderOptions& o, const CLI::App& c) { return render_batch_job(o, c); });
  render->get_option("--to")->description(
      "Output format: mp4 (default: OUTDIR/<relative path>.mp4), gif, or png (a folder of PNG frames, "
      "OUTDIR/<relative path without extension>/; the default with --transparent)");
}

}  // namespace koma::cli
