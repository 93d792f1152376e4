#include "koma/io/clip_name.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "koma/core/error.hpp"

namespace koma::io {

namespace {

std::string listed(const std::vector<std::string>& names, const std::vector<int>& which) {
  std::string out;
  for (int i : which) out += fmt::format("{}{} '{}'", out.empty() ? "" : ", ", i, names[static_cast<size_t>(i)]);
  return out;
}

std::string_view after_bar(std::string_view name) {
  const size_t bar = name.rfind('|');
  return bar == std::string_view::npos ? name : name.substr(bar + 1);
}

}  // namespace

int choose_animation(const std::vector<std::string>& names, std::string_view wanted, std::string_view file) {
  const int n = static_cast<int>(names.size());
  for (int i = 0; i < n; ++i)
    if (names[static_cast<size_t>(i)] == wanted) return i;
  if (!wanted.empty() && wanted.size() < 9 &&
      std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const int i = std::stoi(std::string(wanted));
    if (i < n) return i;
  }
  std::vector<int> candidates;
  for (int i = 0; i < n; ++i)
    if (names[static_cast<size_t>(i)].find('|') != std::string::npos &&
        after_bar(names[static_cast<size_t>(i)]) == wanted)
      candidates.push_back(i);
  if (candidates.size() == 1) return candidates.front();
  if (candidates.size() > 1)
    throw Error(ErrorCode::bad_file, std::string(file),
                fmt::format("animation '{}' is ambiguous: {} animations end in '|{}': {}; name one in full or by "
                            "its index",
                            wanted, candidates.size(), wanted, listed(names, candidates)));
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  throw Error(ErrorCode::bad_file, std::string(file),
              fmt::format("no animation '{}'; the file has {}: {}", wanted, n, listed(names, all)));
}

std::string clip_name_from_path(const std::filesystem::path& path) {
  std::string stem = path.filename().string();
  // A staged output: ".NAME.koma-PID-N.tmp.EXT" -> NAME (its destination's file name).
  const size_t mark = stem.rfind(".koma-");
  if (!stem.empty() && stem.front() == '.' && mark != std::string::npos && mark > 1 &&
      stem.find(".tmp", mark) != std::string::npos)
    stem = stem.substr(1, mark - 1);
  return std::filesystem::path(stem).stem().string();
}

}  // namespace koma::io
