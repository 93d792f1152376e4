// Which SIMD kernels run: the instruction sets koma has kernels for, what this CPU supports, and
// the KOMA_ISA override that pins every kernel to one path (for tests, benchmarks and for
// comparing machines).
//
//   KOMA_ISA unset          the best path the CPU runs (avx512 > avx2 > scalar)
//   KOMA_ISA=avx2           every kernel takes its AVX2 + FMA path (error if the CPU lacks it)
//   KOMA_ISA=scalar         the baseline x86-64 path (SSE2), which every x86-64 CPU runs
//
// The choice is made once per process, the first time a kernel asks (like OpenBLAS's
// OPENBLAS_CORETYPE); results do not depend on it beyond floating-point rounding of reductions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/core/enum_names.hpp"

namespace koma::simd {

/// Instruction-set paths of koma's kernels, from the most portable to the widest.
enum class Isa : std::uint8_t {
  scalar = 0,  ///< baseline x86-64 (SSE2); the compiler's generic vector code
  avx2 = 1,    ///< x86-64-v3: AVX2 + FMA + BMI2, 4 doubles per instruction
  avx512 = 2,  ///< x86-64-v4: AVX-512 F/BW/DQ/VL, 8 doubles per instruction
};

/// The paths' names, then the aliases parse accepts.
inline constexpr EnumNames<Isa, 5> kIsaNames{{{{Isa::scalar, "scalar"},
                                              {Isa::avx2, "avx2"},
                                              {Isa::avx512, "avx512"},
                                              {Isa::scalar, "baseline"},
                                              {Isa::scalar, "sse2"}}}};

/// "scalar", "avx2", "avx512".
std::string_view to_string(Isa isa) noexcept;
/// "scalar" (also "baseline", "sse2"), "avx2", "avx512"; nullopt otherwise.
std::optional<Isa> parse_isa(std::string_view text) noexcept;

/// True if this CPU (and OS) can run the path.
bool supported(Isa isa) noexcept;
/// The widest path this CPU runs.
Isa best_supported() noexcept;
/// Every path this CPU runs, scalar first.
std::vector<Isa> supported_isas();
/// The CPU's SIMD feature flags that matter to koma, space separated ("sse4.2 avx avx2 fma ...").
std::string cpu_flags();

/// The path every kernel takes in this process: KOMA_ISA when set, else best_supported().
/// Read once (thread-safe). Throws Error(invalid_settings, "KOMA_ISA") when the variable names an
/// unknown path or one this CPU cannot run; the message lists the CPU's flags.
Isa active();

/// Pins the path for this process (tests and benchmarks run every supported path in one
/// process). Throws Error(invalid_settings) for a path this CPU cannot run. Not thread-safe with
/// running kernels: call between calls.
void set_active(Isa isa);

}  // namespace koma::simd
