#include "koma/core/simd.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "koma/core/error.hpp"

namespace koma::simd {

std::string_view to_string(Isa isa) noexcept { return kIsaNames.name(isa); }

std::optional<Isa> parse_isa(std::string_view t) noexcept { return kIsaNames.parse(t); }

bool supported(Isa isa) noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::scalar: return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
    case Isa::avx512:
      return supported(Isa::avx2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::scalar;
#endif
}

Isa best_supported() noexcept {
  if (supported(Isa::avx512)) return Isa::avx512;
  if (supported(Isa::avx2)) return Isa::avx2;
  return Isa::scalar;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (supported(i)) out.push_back(i);
  }
  return out;
}

std::string cpu_flags() {
  std::string out;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  auto add = [&out](bool has, const char* name) {
    if (!has) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(__builtin_cpu_supports("sse4.2"), "sse4.2");
  add(__builtin_cpu_supports("avx"), "avx");
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  add(__builtin_cpu_supports("bmi2"), "bmi2");
  add(__builtin_cpu_supports("avx512f"), "avx512f");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512dq"), "avx512dq");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
#endif
  return out.empty() ? std::string("(no SIMD extensions)") : out;
}

namespace {

void require_supported(Isa isa, std::string_view where) {
  if (!supported(isa)) {
    throw Error(ErrorCode::invalid_settings, std::string(where),
                fmt::format("this CPU cannot run the {} path; its flags: {}; supported paths: {}", to_string(isa),
                            cpu_flags(), supported(Isa::avx2) ? "scalar, avx2" : "scalar"));
  }
}

// -1 = not chosen yet.
std::atomic<int> g_active{-1};

}  // namespace

Isa active() {
  int v = g_active.load(std::memory_order_acquire);
  if (v >= 0) return static_cast<Isa>(v);
  Isa chosen = best_supported();
  if (const char* env = std::getenv("KOMA_ISA"); env != nullptr && *env != '\0') {
    const std::optional<Isa> parsed = parse_isa(env);
    if (!parsed) {
      throw Error(ErrorCode::invalid_settings, "KOMA_ISA",
                  fmt::format("'{}' is not a kernel path; use scalar, avx2 or avx512 (this CPU's flags: {})", env, cpu_flags()));
    }
    require_supported(*parsed, "KOMA_ISA");
    chosen = *parsed;
  }
  int expected = -1;
  g_active.compare_exchange_strong(expected, static_cast<int>(chosen), std::memory_order_acq_rel);
  return static_cast<Isa>(g_active.load(std::memory_order_acquire));
}

void set_active(Isa isa) {
  require_supported(isa, "simd::set_active");
  g_active.store(static_cast<int>(isa), std::memory_order_release);
}

}  // namespace koma::simd
