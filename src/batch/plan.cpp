// Inputs (files, folders, glob patterns) -> the batch's items, mirroring the input tree.
#include <glob.h>

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "koma/batch/batch.hpp"
#include "koma/core/error.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"

namespace koma::batch {

namespace fs = std::filesystem;

namespace {

std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// True when the file's name ends in one of the wanted extensions (".bvh", or ".gait.json"), any case.
bool is_wanted(const fs::path& p, const PlanSettings& st) {
  std::string name = p.filename().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::any_of(st.extensions.begin(), st.extensions.end(), [&](const std::string& e) { return name.ends_with(e); });
}

bool has_wildcard(std::string_view text) { return text.find_first_of("*?[") != std::string_view::npos; }

bool is_hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() > 1 && name[0] == '.' && name != "..";
}

// True if `p` is `dir` or inside it (both canonical).
bool is_inside(const fs::path& p, const fs::path& dir) {
  if (dir.empty()) return false;
  auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  return d == dir.end();
}

struct Found {
  fs::path input, relative;
};

// Every file below `dir` with a wanted extension, relative to `base`.
void search_folder(const fs::path& dir, const fs::path& base, const fs::path& skip, const PlanSettings& st,
                   std::vector<Found>& out) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec);
  if (ec) throw Error(ErrorCode::io, dir.string(), fmt::format("cannot list the folder: {}", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(ErrorCode::io, dir.string(), fmt::format("cannot list the folder: {}", ec.message()));
    const fs::path& p = it->path();
    const bool dir_entry = it->is_directory(ec);
    if (is_hidden(p) || (dir_entry && is_inside(fs::weakly_canonical(p, ec), skip))) {
      if (dir_entry) it.disable_recursion_pending();
      continue;
    }
    if (dir_entry || !it->is_regular_file(ec)) continue;
    if (!is_wanted(p, st)) continue;
    out.push_back({p, p.lexically_relative(base)});
  }
}

// The folder a glob's matches are relative to: its leading wildcard-free components.
fs::path glob_base(const std::string& pattern) {
  fs::path base;
  for (const fs::path& part : fs::path(pattern).parent_path()) {
    if (has_wildcard(part.string())) break;
    base /= part;
  }
  return base.empty() ? fs::path(".") : base;
}

void expand_glob(const std::string& pattern, const fs::path& skip, const PlanSettings& st, std::vector<Found>& out) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> matches;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (rc == GLOB_NOMATCH || (rc == 0 && matches.empty()))
    throw Error(ErrorCode::io, pattern, "the pattern matches no file");
  if (rc != 0) throw Error(ErrorCode::io, pattern, "cannot expand the pattern (read error or out of memory)");
  const fs::path base = glob_base(pattern);
  for (const std::string& m : matches) {
    const fs::path p(m);
    if (fs::is_directory(p)) {
      search_folder(p, base, skip, st, out);
    } else if (is_wanted(p, st)) {
      out.push_back({p, p.lexically_relative(base)});
    }
  }
}

// The animations of a glTF/FBX file as (what to ask the reader for, the label in the output name);
// FBX junk stacks are left out.
std::vector<std::pair<std::string, std::string>> animations_of(const fs::path& input) {
  std::vector<std::pair<int, std::string>> found;  // index, name
  if (io::is_gltf_file(input)) {
    for (const auto& a : io::list_gltf_animations(input)) found.emplace_back(a.index, a.name);
  } else if (io::is_fbx_file(input)) {
    for (const auto& a : io::list_fbx_animations(input))
      if (!a.junk) found.emplace_back(a.index, a.name);
  }
  std::map<std::string, int> uses;
  for (const auto& [index, name] : found) ++uses[name];
  std::set<std::string> labels;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [index, name] : found) {
    const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); });
    const std::string ask = name.empty() || digits || uses[name] > 1 ? std::to_string(index) : name;
    std::string label = name.substr(name.rfind('|') == std::string::npos ? 0 : name.rfind('|') + 1);
    for (char& c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    if (label.empty() || label == "." || label == ".." || labels.count(label) > 0)
      label = fmt::format("{}{}{}", label, label.empty() ? "" : "_", index);
    labels.insert(label);
    out.emplace_back(ask, label);
  }
  return out;
}

// One item per animation of a glTF/FBX item (PlanSettings::every_animation); others unchanged.
std::vector<Item> per_animation(const Item& item) {
  if (!io::is_gltf_file(item.input) && !io::is_fbx_file(item.input)) return {item};
  std::vector<Item> out;
  for (const auto& [ask, label] : animations_of(item.input)) {
    Item it = item;
    it.animation = ask;
    const std::string ext = item.output.extension().string();
    it.output.replace_filename(item.output.stem().string() + "." + label + ext);
    out.push_back(std::move(it));
  }
  return out;
}

}  // namespace

namespace {

// Throws when `to` is not one of the command's output formats: "expected bvh, glb, gltf or fbx".
void check_output_extension(const PlanSettings& settings) {
  const std::string& to = settings.output_extension;
  const auto& formats = settings.output_formats;
  if (to.empty() || std::find(formats.begin(), formats.end(), to) != formats.end()) return;
  std::string expected;
  for (size_t i = 0; i < formats.size(); ++i) {
    expected += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i].substr(formats[i].front() == '.');
  }
  static const std::set<std::string> kWritten = {".bvh", ".glb", ".gltf", ".fbx", ".mp4", ".gif", ".png"};
  throw Error(ErrorCode::invalid_settings, "output_extension",
              fmt::format("'{}' is not an output format {}; expected {}", to.front() == '.' ? to.substr(1) : to,
                          kWritten.count(to) > 0 ? "of this command" : "koma writes", expected));
}

// ".png" outputs are folders of frames: OUTDIR/<relative path without extension>/.
void as_folder(Item& item) {
  item.output.replace_extension();
  item.output /= "";
}

}  // namespace

std::vector<Item> plan(const std::vector<std::string>& inputs, const fs::path& output_dir, const PlanSettings& settings) {
  check_output_extension(settings);
  std::error_code ec;
  const fs::path skip = output_dir.empty() ? fs::path() : fs::weakly_canonical(output_dir, ec);
  std::vector<Found> found;
  for (const std::string& in : inputs) {
    const fs::path p(in);
    if (fs::is_directory(p, ec)) {
      search_folder(p, p, skip, settings, found);
    } else if (fs::exists(p, ec)) {
      found.push_back({p, p.filename()});
    } else if (has_wildcard(in)) {
      expand_glob(in, skip, settings, found);
    } else {
      throw Error(ErrorCode::io, in, "no such file or folder");
    }
  }
  std::vector<Item> items;
  std::set<fs::path> seen;                    // canonical inputs already taken
  std::map<fs::path, fs::path> output_owner;  // output -> the input that writes it
  for (const Found& f : found) {
    const fs::path canonical = fs::weakly_canonical(f.input, ec);
    if (!seen.insert(canonical).second) continue;
    Item it;
    it.input = f.input;
    it.relative = f.relative.lexically_normal();
    it.output = output_dir / it.relative;
    if (!settings.output_extension.empty()) it.output.replace_extension(settings.output_extension);
    else if (lower_extension(it.output) == ".fbx") it.output.replace_extension(".glb");  // default kept: --to fbx for FBX
    else if (lower_extension(it.output) == ".json") it.output.replace_extension(".bvh");  // a gait file plays as BVH
    it.bytes = fs::file_size(f.input, ec);
    if (ec) it.bytes = 0;
    for (Item& one : settings.every_animation ? per_animation(it) : std::vector<Item>{it}) {
      const auto [owner, fresh] = output_owner.emplace(one.output, one.input);
      if (!fresh) {
        throw Error(ErrorCode::invalid_settings, "inputs",
                    fmt::format("'{}' and '{}' would both write '{}'; give their folders instead, so the outputs "
                                "mirror the tree", owner->second.string(), one.input.string(), one.output.string()));
      }
      if (settings.output_extension == ".png") as_folder(one);
      items.push_back(std::move(one));
    }
  }
  if (items.empty()) {
    throw Error(ErrorCode::invalid_settings, "inputs",
                fmt::format("no input file found (searched for {})", fmt::join(settings.extensions, ", ")));
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return std::tie(a.relative, a.output) < std::tie(b.relative, b.output); });
  return items;
}

}  // namespace koma::batch
