// One enum-name table per enum, and one convention for every to_string / parse_* pair:
//   to_string(value)      -> std::string_view, the value's name (noexcept);
//   parse_xxx(text)       -> std::optional<Enum>, nullopt for an unknown word (noexcept);
// callers that must fail throw koma::Error themselves, naming the accepted words (names()).
//
//   constexpr EnumNames<Metric, 4> kMetricNames{{{{Metric::position, "position"}, ...}}};
//   std::string_view to_string(Metric m) noexcept { return kMetricNames.name(m); }
//   std::optional<Metric> parse_metric(std::string_view t) noexcept { return kMetricNames.parse(t); }
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace koma {

/// One word of an enum: its value and its name.
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

/// Whether parse() compares words exactly or ignoring ASCII case.
enum class NameCase : unsigned char { exact, ignore };

/// An enum's words. The first entry of a value is its name (what name() returns); later entries
/// of the same value are aliases that parse() also accepts. `fallback` is the name of a value
/// the table lacks (only reachable through an out-of-range cast).
template <class E, std::size_t N>
struct EnumNames {
  std::array<EnumName<E>, N> entries;
  NameCase match = NameCase::exact;
  std::string_view fallback = "?";

  /// The value's name.
  constexpr std::string_view name(E value) const noexcept {
    for (const EnumName<E>& e : entries)
      if (e.value == value) return e.name;
    return fallback;
  }

  /// The value named `text` (a name or an alias), or nullopt.
  constexpr std::optional<E> parse(std::string_view text) const noexcept {
    for (const EnumName<E>& e : entries)
      if (same(e.name, text)) return e.value;
    return std::nullopt;
  }

  /// The accepted names (aliases left out) for messages: "a, b or c".
  std::string names(std::string_view last = " or ") const {
    std::string out;
    std::size_t count = 0, total = 0;
    for (std::size_t i = 0; i < N; ++i) total += is_name(i) ? 1 : 0;
    for (std::size_t i = 0; i < N; ++i) {
      if (!is_name(i)) continue;
      if (count > 0) out += count + 1 == total ? std::string(last) : std::string(", ");
      out += entries[i].name;
      ++count;
    }
    return out;
  }

  /// True when entry i is its value's name (the first entry of that value), not an alias.
  constexpr bool is_name(std::size_t i) const noexcept {
    for (std::size_t k = 0; k < i; ++k)
      if (entries[k].value == entries[i].value) return false;
    return true;
  }

 private:
  constexpr bool same(std::string_view a, std::string_view b) const noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      char x = a[i], y = b[i];
      if (match == NameCase::ignore) {
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
      }
      if (x != y) return false;
    }
    return true;
  }
};

}  // namespace koma
