// koma — command-line entry point. Builds the subcommands and maps errors to exit codes in one place.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flags.hpp"
#include "koma/core/error.hpp"
#include "koma/core/simd.hpp"

namespace {

// Exit codes (docs/errors.md): 0 ok, 1 internal error, 2 usage, then one per ErrorCode; batch adds
// 7 (some files failed) and 8 (every file failed).
int exit_code(koma::ErrorCode code) {
  switch (code) {
    case koma::ErrorCode::invalid_settings: return 2;
    case koma::ErrorCode::bad_file: return 3;
    case koma::ErrorCode::bad_data: return 4;
    case koma::ErrorCode::mismatch: return 5;
    case koma::ErrorCode::io: return 6;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  koma::cli::install_interrupt_handler();  // first: a signal during start-up is handled too
  CLI::App app{
      "koma turns smooth 3D character animation into sharp cartoon / anime motion.\n"
      "Start with `koma demo`, then `koma info FILE` and `koma <command> --help`.",
      "koma"};
  app.set_version_flag("--version", std::string("koma ") + KOMA_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  koma::cli::add_info_command(app);
  koma::cli::add_convert_command(app);
  koma::cli::add_positions_command(app);
  koma::cli::add_demo_command(app);
  koma::cli::add_keys_command(app);
  koma::cli::add_cartoon_command(app);
  koma::cli::add_timing_command(app);
  koma::cli::add_retime_command(app);
  koma::cli::add_gait_command(app);
  koma::cli::add_render_command(app);
  koma::cli::add_view_command(app);
  koma::cli::add_batch_command(app);
  koma::cli::guard_outputs(app);
  try {
    (void)koma::simd::active();  // a bad KOMA_ISA is an error before any work (names the CPU's flags)
    app.parse(argc, argv);
    koma::cli::check_interrupt();
  } catch (const koma::cli::Interrupted&) {
    std::cout.flush();
    fmt::print(stderr, "\nkoma: interrupted; no output was left half-written\n");
    return koma::cli::interrupt_status();
  } catch (const koma::cli::ExitStatus& e) {  // batch: some or all files failed (docs/errors.md)
    std::cout.flush();
    return e.code;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Every usage error exits 2 with the same prefix as koma's own errors (docs/errors.md).
    fmt::print(stderr, "koma: error: {}\nRun with --help for the options.\n", e.what());
    return 2;
  } catch (const koma::Error& e) {
    std::cout.flush();
    if (koma::cli::interrupted()) {  // e.g. a reader's child process ended by the same Ctrl-C
      fmt::print(stderr, "\nkoma: interrupted; no output was left half-written\n");
      return koma::cli::interrupt_status();
    }
    fmt::print(stderr, "koma: error: {}\n", koma::cli::describe(e));
    return exit_code(e.code());
  } catch (const std::exception& e) {
    std::cout.flush();
    fmt::print(stderr, "koma: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
