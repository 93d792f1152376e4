// Text from files, made safe to show and to write: every name koma reads from a file (joints,
// animations, URIs) can hold any bytes, and every output (JSON, BVH, a terminal) needs valid UTF-8
// and some need no control characters.
#pragma once

#include <string>
#include <string_view>

namespace koma {

/// `text` with every byte that does not start or continue a valid UTF-8 sequence (overlong forms,
/// surrogates and code points above U+10FFFF included) replaced by U+FFFD. Valid text is returned
/// unchanged.
std::string valid_utf8(std::string_view text);

/// True when valid_utf8(text) == text.
bool is_valid_utf8(std::string_view text) noexcept;

/// valid_utf8(text) with control characters (below U+0020, and U+007F) written as escapes: `\n`,
/// `\t`, `\r`, else `\xNN`. For quoting a file's names and URIs in messages on one line.
std::string printable(std::string_view text);

}  // namespace koma
