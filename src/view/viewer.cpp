#include "koma/view/viewer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "koma/body/parts.hpp"
#include "koma/body/roles.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/io/gltf.hpp"

namespace koma::view {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kThreeFiles[] = {"three/three.min.js", "three/GLTFLoader.js", "three/OrbitControls.js",
                                       "three/SkeletonUtils.js", "three/OutlineEffect.js", "three/LICENSE"};
constexpr const char* kPageFiles[] = {"index.html", "viewer.js", "viewer.css"};

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto a = static_cast<unsigned char>(bytes[i]), b = static_cast<unsigned char>(bytes[i + 1]),
               c = static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[a >> 2];
    out += kAlphabet[((a & 3) << 4) | (b >> 4)];
    out += kAlphabet[((b & 15) << 2) | (c >> 6)];
    out += kAlphabet[c & 63];
  }
  if (i < bytes.size()) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const unsigned b = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0u;
    out += kAlphabet[a >> 2];
    out += kAlphabet[((a & 3) << 4) | (b >> 4)];
    out += i + 1 < bytes.size() ? kAlphabet[(b & 15) << 2] : '=';
    out += '=';
  }
  return out;
}

// What the page's procedural body needs per joint (by name): its body part, side and role, from
// koma's one body vocabulary, so limbs, trunk and head get their own thickness and colour.
json figure_json(const Skeleton& skeleton) {
  const std::vector<body::BodyPart> parts = body::joint_parts(skeleton);
  const body::JointRoles roles = body::find_joint_roles(skeleton);
  std::vector<std::string> role(static_cast<size_t>(skeleton.joint_count()));
  for (int r = 0; r < body::kRoleCount; ++r) {
    const int j = roles.points[static_cast<size_t>(r)];
    if (j >= 0 && j < skeleton.joint_count()) role[static_cast<size_t>(j)] = body::role_name(static_cast<body::Role>(r));
  }
  json out = json::array();
  for (int j = 0; j < skeleton.joint_count(); ++j) {
    const auto i = static_cast<size_t>(j);
    out.push_back({{"name", skeleton.names[i]}, {"part", body::part_name(parts[i])},
                   {"side", body::name_side(skeleton.names[i])}, {"role", role[i]}});
  }
  return out;
}

json clip_json(const ViewClip& clip, std::string_view side) {
  const std::string name = fmt::format("{} viewport ({})", side, clip.label);
  if (!clip.drawings.empty()) check_drawings(clip.drawings, clip.motion.frame_count, name);
  io::GltfWriteOptions w;
  w.step_keys = clip.drawings;
  w.scene = clip.scene;
  w.animation_name = std::string(side);
  json j;
  j["label"] = clip.label;
  j["character"] = clip.scene ? "gltf" : "procedural";
  j["joints"] = clip.motion.joint_count();
  j["stepped"] = !clip.drawings.empty();
  j["glb"] = base64(io::gltf_glb_bytes(clip.motion, w, name));
  if (!clip.scene) j["figure"] = figure_json(clip.motion.skeleton);
  return j;
}

bool near(const Quat& a, const Quat& b, double tol) {
  // q and -q are the same rotation.
  const double same = (a.coeffs() - b.coeffs()).cwiseAbs().maxCoeff();
  const double flip = (a.coeffs() + b.coeffs()).cwiseAbs().maxCoeff();
  return std::min(same, flip) <= tol;
}

}  // namespace

void ViewerSettings::validate() const {
  if (title.empty()) throw Error(ErrorCode::invalid_settings, "title", "the page title is empty");
  if (look != "toon" && look != "plain" && look != "flat")
    throw Error(ErrorCode::invalid_settings, "look", fmt::format("'{}': expected toon, plain or flat", look));
  if (smear != "off" && smear != "smear" && smear != "multiples")
    throw Error(ErrorCode::invalid_settings, "smear", fmt::format("'{}': expected off, smear or multiples", smear));
  if (chosen_keys < 0)
    throw Error(ErrorCode::invalid_settings, "chosen_keys", fmt::format("{}: expected 0 (none) or more", chosen_keys));
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i].first <= 0 || !(curve[i].second >= 0) || !std::isfinite(curve[i].second)) {
      throw Error(ErrorCode::invalid_settings, fmt::format("curve[{}]", i),
                  fmt::format("({}, {}): expected a positive key count and a finite error >= 0", curve[i].first,
                              curve[i].second));
    }
  }
}

std::vector<int> held_drawings(const Motion& motion, double tolerance) {
  std::vector<int> out;
  const int J = motion.joint_count();
  for (int f = 0; f < motion.frame_count; ++f) {
    bool same = f > 0;
    for (int j = 0; same && j < J; ++j) {
      same = near(motion.rotation(f, j), motion.rotation(f - 1, j), tolerance) &&
             (motion.translation(f, j) - motion.translation(f - 1, j)).cwiseAbs().maxCoeff() <= tolerance;
      if (same && !motion.scales.empty()) {
        const size_t a = static_cast<size_t>(f) * J + j, b = a - J;
        same = (motion.scales[a] - motion.scales[b]).cwiseAbs().maxCoeff() <= tolerance;
      }
    }
    if (!same) out.push_back(f);
  }
  return out;
}

void check_drawings(const std::vector<int>& drawings, int frame_count, const std::string& context) {
  if (drawings.empty()) throw Error(ErrorCode::mismatch, context, "no drawings: expected at least frame 0");
  if (drawings.front() != 0)
    throw Error(ErrorCode::mismatch, context,
                fmt::format("the first drawing is at frame {}: expected 0 (every frame shows a drawing)",
                            drawings.front()));
  for (size_t i = 0; i < drawings.size(); ++i) {
    if (drawings[i] >= frame_count) {
      throw Error(ErrorCode::mismatch, context,
                  fmt::format("drawing {} starts at frame {}, but the clip has {} frames (0 .. {})", i + 1,
                              drawings[i], frame_count, frame_count - 1));
    }
    if (i > 0 && drawings[i] <= drawings[i - 1]) {
      throw Error(ErrorCode::mismatch, context,
                  fmt::format("drawing {} starts at frame {}, not after drawing {} (frame {}): expected strictly "
                              "increasing frames",
                              i + 1, drawings[i], i, drawings[i - 1]));
    }
  }
}

std::string viewer_data_script(const ViewClip& original, const ViewClip& result, const ViewerSettings& settings) {
  settings.validate();
  const Motion& a = original.motion;
  const Motion& b = result.motion;
  if (std::abs(a.frame_rate - b.frame_rate) > 1e-9 * a.frame_rate) {
    throw Error(ErrorCode::mismatch, result.label,
                fmt::format("{:g} fps, but {} is at {:g} fps: the viewer plays both at one rate", b.frame_rate,
                            original.label, a.frame_rate));
  }
  if (a.frame_count != b.frame_count) {
    throw Error(ErrorCode::mismatch, result.label,
                fmt::format("{} frames, but {} has {}: the viewer plays clips of the same length", b.frame_count,
                            original.label, a.frame_count));
  }
  if (a.frame_count < 1) throw Error(ErrorCode::bad_data, original.label, "no frames to show");
  json doc;
  doc["format"] = "koma-view 1";
  doc["title"] = settings.title;
  doc["fps"] = a.frame_rate;
  doc["frames"] = a.frame_count;
  doc["source"] = settings.source;
  doc["look"] = settings.look;
  doc["smear"] = settings.smear;
  doc["original"] = clip_json(original, "original");
  doc["result"] = clip_json(result, "result");
  json curve = json::array();
  for (const auto& [k, e] : settings.curve) curve.push_back({k, e});
  doc["curve"] = curve;
  doc["chosen_keys"] = settings.chosen_keys;
  doc["report_drawings"] = result.drawings;
  // `</` never occurs in JSON numbers or base64, but a label could hold it: keep the script closed.
  std::string text = doc.dump();
  for (size_t p = text.find("</"); p != std::string::npos; p = text.find("</", p + 2)) text.replace(p, 2, "<\\/");
  return "// Written by koma view. The motion of both viewports; viewer.js reads window.KOMA_VIEW.\n"
         "window.KOMA_VIEW = " + text + ";\n";
}

std::vector<std::string> viewer_asset_files() {
  std::vector<std::string> out;
  for (const char* f : kPageFiles) out.push_back(fmt::format("page/{}", f));
  for (const char* f : kThreeFiles) out.emplace_back(f);
  return out;
}

std::vector<fs::path> write_viewer(const fs::path& dir, const fs::path& assets, const ViewClip& original,
                                   const ViewClip& result, const ViewerSettings& settings) {
  std::vector<std::pair<fs::path, std::string>> files;
  for (const std::string& rel : viewer_asset_files()) {
    const fs::path src = assets / rel;
    if (!fs::is_regular_file(src)) {
      throw Error(ErrorCode::io, src.string(),
                  "missing: the viewer's three.js files and page are copied there by the build; install node and "
                  "npm and run `make deps` (npm ci in view/), then rebuild");
    }
    const std::string out_rel = rel.rfind("page/", 0) == 0 ? rel.substr(5) : rel;
    files.emplace_back(dir / out_rel, read_file(src));
  }
  files.emplace_back(dir / "motion.js", viewer_data_script(original, result, settings));
  // The title goes into index.html's <title>; escape what HTML would read as markup.
  std::string title;
  for (char c : settings.title) {
    if (c == '<') title += "&lt;";
    else if (c == '>') title += "&gt;";
    else if (c == '&') title += "&amp;";
    else title += c;
  }
  for (auto& [path, text] : files) {
    if (path.filename() != "index.html") continue;
    const size_t p = text.find("{{TITLE}}");
    if (p != std::string::npos) text.replace(p, 9, title);
  }
  std::vector<fs::path> written;
  fs::create_directories(dir / "three");
  for (const auto& [path, text] : files) {
    write_file_atomic(path, text);
    written.push_back(path);
  }
  return written;
}

}  // namespace koma::view
