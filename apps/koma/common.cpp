#include "common.hpp"

#include <csignal>
#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "flags.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::cli {

void add_input_options(CLI::App& cmd, InputOptions& opts) {
  cmd.add_option("--unit", opts.unit,
                 "Length unit of a BVH input: m, cm, mm, in, ft, cmu (1/0.45 in, the CMU releases), or a number of "
                 "metres per file unit (0.056). Default: detected, the reading that makes the figure human-sized "
                 "(1.4-2.1 m); `koma info` names the rule used");
  cmd.add_option("--animation", opts.animation,
                 "glTF or FBX input: animation (FBX: stack) to read: its name, its index, or the part of its name after "
                 "the last '|' (ZombieWalk for Zombie|ZombieWalk). Default: the first (FBX: the first longer than one "
                 "frame); `koma info` lists them");
  cmd.add_option("--asset-root", opts.asset_root,
                 "glTF input: the folder its buffer and image URIs may be read from (default: the file's own folder; a "
                 "URI that is absolute, a URL, or leads out of this folder with '..' or a symbolic link is refused). "
                 "Widen it on purpose for assets that share files with a sibling folder");
}

void add_output_options(CLI::App& cmd, OutputOptions& opts) {
  cmd.add_option("--name", opts.name,
                 "Name of the written animation (glTF) or take (FBX). Default: the input's animation name (FBX: "
                 "its stack, glTF: its animation, BVH: the file's name)");
  cmd.add_flag("--fbx-ascii", opts.fbx_ascii, "FBX output: write ASCII FBX 7.4 instead of binary");
  cmd.add_option("--fbx-unit", opts.fbx_unit,
                 "FBX output: length unit of the file (m, cm, mm, in, ft); the file's UnitScaleFactor says it")
      ->capture_default_str();
  cmd.add_option("--fbx-axes", opts.fbx_axes,
                 "FBX output: y-up (Maya, Unity, Unreal) or z-up (3ds Max); the file's axis settings say it")
      ->capture_default_str();
}

io::WriteOptions write_options(const OutputOptions& opts) {
  io::WriteOptions wo;
  wo.animation_name = opts.name;
  wo.fbx_ascii = opts.fbx_ascii;
  wo.fbx_unit = parse_unit_option(opts.fbx_unit, "--fbx-unit");
  const auto axes = io::kFbxUpAxisNames.parse(opts.fbx_axes);
  if (!axes)
    throw Error(ErrorCode::invalid_settings, "--fbx-axes", fmt::format("'{}': expected y-up or z-up", opts.fbx_axes));
  wo.fbx_up = *axes;
  return wo;
}

LengthUnit parse_unit_option(std::string_view text, std::string_view option) {
  return length_unit_named(text, option);
}

std::string unit_label(const Motion& m) { return m.source_unit_label(); }

void parse_input_unit(std::string_view text, io::ReadOptions& ro) {
  const FileUnit u = parse_file_unit(text, "--unit");
  ro.unit = u.unit;
  ro.scale = u.scale;
}

double parse_fps_option(std::string_view text, double source_rate, std::string_view option) {
  if (text == "source") return source_rate;
  double v = 0;
  try {
    size_t used = 0;
    v = std::stod(std::string(text), &used);
    if (used != text.size()) v = NAN;
  } catch (const std::exception&) {
    v = NAN;
  }
  if (!std::isfinite(v) || v <= 0 || v > 1000) {
    throw Error(ErrorCode::invalid_settings, std::string(option),
                fmt::format("'{}' is not a frame rate; expected a number of frames per second in (0, 1000] "
                            "or 'source'", text));
  }
  return v;
}

io::ReadOptions read_options(const InputOptions& opts) {
  io::ReadOptions ro;
  if (!opts.unit.empty()) parse_input_unit(opts.unit, ro);
  ro.animation = opts.animation;
  ro.asset_root = opts.asset_root;
  return ro;
}

void print_warning(const std::string& warning) { fmt::print(stderr, "koma: warning: {}\n", with_flags(warning)); }

io::ReadResult read_input(const InputOptions& opts, bool quiet) {
  io::ReadResult r = io::read_motion(opts.path, read_options(opts));
  if (!quiet) {
    for (const auto& w : r.warnings) fmt::print(stderr, "koma: warning: {}\n", with_flags(w));
  }
  return r;
}

void print_json(const nlohmann::json& doc) { std::cout << doc.dump(2) << std::endl; }

Progress::Progress(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() { finish(); }

namespace {
volatile std::sig_atomic_t g_interrupted = 0;  // the signal number, once one arrived
// Seconds the command has to unwind after the first signal before the process ends anyway.
constexpr unsigned kUnwindSeconds = 3;
extern "C" void on_signal(int sig) {
  if (g_interrupted) {  // a second signal, or the unwinding took too long (SIGALRM)
    remove_temp_files_now();
    std::_Exit(128 + g_interrupted);
  }
  g_interrupted = sig == SIGALRM ? SIGTERM : sig;
  ::alarm(kUnwindSeconds);
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGALRM, &sa, nullptr);
}
int interrupt_status() noexcept { return 128 + (g_interrupted ? g_interrupted : SIGINT); }

namespace {
// Output options: the files a command writes (their folders are checked before any work).
constexpr const char* kOutputOptions[] = {"--output", "--report", "--xsheet", "--xsheet-png", "--contact-sheet",
                                          "--plot"};

void check_leaf_outputs(const CLI::App& cmd) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (const CLI::Option* o : cmd.get_options())
    if (o->get_positional() && o->get_name() != "output")
      for (const std::string& v : o->results()) inputs.emplace_back(v);
  const bool force = cmd.get_option_no_throw("--force") && cmd.get_option_no_throw("--force")->count() > 0;
  for (const char* name : kOutputOptions) {
    const CLI::Option* o = cmd.get_option_no_throw(name);
    if (!o && std::string_view(name) == "--output") o = cmd.get_option_no_throw("output");  // convert IN OUT
    if (!o || o->count() == 0) continue;
    for (const std::string& v : o->results()) {
      if (v.empty() || v == "-") continue;
      const fs::path out(v);
      if (v.back() == '/') continue;  // a folder of frames (render): made by the command
      require_output_path(out);
      if (std::string_view(name) != "--output" || force) continue;
      std::error_code ec;
      for (const fs::path& in : inputs) {
        if (fs::exists(out, ec) && fs::equivalent(in, out, ec)) {
          throw Error(ErrorCode::invalid_settings, o->get_positional() ? "output" : name,
                      fmt::format("'{}' is also the input; writing would replace it (add --force to allow it)", v));
        }
      }
    }
  }
}

void add_force_flags(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if ((sub->get_option_no_throw("--output") || sub->get_option_no_throw("output")) &&
        !sub->get_option_no_throw("--force")) {
      sub->add_flag("--force")->description("Allow --output to replace one of the input files");
    }
    add_force_flags(*sub);
  }
}
}  // namespace

void guard_outputs(CLI::App& app) {
  add_force_flags(app);
  app.parse_complete_callback([&app] {
    const CLI::App* leaf = &app;
    for (;;) {
      const auto chosen = leaf->get_subcommands();
      if (chosen.empty()) break;
      leaf = chosen.front();
      if (leaf->get_name() == "batch") return;  // batch makes its output folders and checks them itself
    }
    if (leaf != &app) check_leaf_outputs(*leaf);
  });
}
bool interrupted() noexcept { return g_interrupted != 0; }
void check_interrupt() {
  if (g_interrupted) throw Interrupted();
}

void Progress::update(double fraction) {
  check_interrupt();
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // Only draw after 0.3 s (short jobs stay quiet), then at most 10 times a second.
  if (now - start_ < std::chrono::milliseconds(300) || (drawn_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  drawn_ = true;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int width = 30;
  const int filled = static_cast<int>(fraction * width);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = fraction > 0.01 ? elapsed * (1 - fraction) / fraction : 0;
  fmt::print(stderr, "\r{} [{}{}] {:3.0f}%  {:.1f}s elapsed, ~{:.1f}s left ", label_, std::string(filled, '#'),
             std::string(width - filled, '.'), fraction * 100, elapsed, eta);
  std::fflush(stderr);
}

void Progress::finish() {
  if (drawn_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace koma::cli
