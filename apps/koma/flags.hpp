// The one table from library settings fields to the CLI flags that set them. The library names
// its settings fields in errors and warnings (`constraints.max_hold`), so Python and Blender users
// see the names they typed; the CLI prints the flags its users typed (`--max-hold`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "koma/core/error.hpp"

namespace koma::cli {

/// The flag that sets a library settings field ("constraints.max_hold" -> "--max-hold"), or
/// nullopt for a field the CLI has no flag for.
std::optional<std::string_view> flag_for_field(std::string_view field);

/// A library message with every backtick-quoted field that has a flag replaced by that flag
/// ("set `constraints.max_hold`" -> "set --max-hold"). Other text is unchanged.
std::string with_flags(std::string_view message);

/// "<context>: <message>" as the CLI prints it: an invalid_settings context that is a settings
/// field becomes its flag, and the message goes through with_flags().
std::string describe(const Error& error);

}  // namespace koma::cli
