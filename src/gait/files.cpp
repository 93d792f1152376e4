#include "koma/gait/files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"

namespace koma::gait {

using nlohmann::json;

namespace {

// 2: the root rotation is heading-free (see GaitBasis). 3: per-channel harmonic counts (each
// channel's "harmonics", its arrays that long); version 2 files (one K) are still read.
constexpr int kVersion = 3;

json vec(const Vec3& v) { return json::array({v.x(), v.y(), v.z()}); }

// Reading: every access names the field on failure.
struct Reader {
  std::string_view name;

  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw Error(ErrorCode::bad_file, std::string(name), fmt::format("{}: {}", field, msg));
  }
  const json& at(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) fail(where.empty() ? key : where + "." + key, "missing");
    return j.at(key);
  }
  double number(const json& j, const std::string& field) const {
    if (!j.is_number()) fail(field, "must be a number");
    const double v = j.get<double>();
    if (!std::isfinite(v)) fail(field, "must be finite");
    return v;
  }
  int integer(const json& j, const std::string& field) const {
    if (!j.is_number_integer()) fail(field, "must be an integer");
    return j.get<int>();
  }
  std::string string(const json& j, const std::string& field) const {
    if (!j.is_string()) fail(field, "must be a string");
    return j.get<std::string>();
  }
  const json& array(const json& j, const std::string& field, size_t size = static_cast<size_t>(-1)) const {
    if (!j.is_array()) fail(field, "must be an array");
    if (size != static_cast<size_t>(-1) && j.size() != size) fail(field, fmt::format("must hold {} entries, has {}", size, j.size()));
    return j;
  }
  /// Checks that entry `where` of a list is named `expected` (rows are stored in a fixed order).
  void name_is(const json& j, const std::string& where, const std::string& expected, const char* order = "") const {
    if (string(at(j, "name", where), where + ".name") != expected) fail(where + ".name", fmt::format("must be '{}'{}", expected, order));
  }
  Vec3 vec3(const json& j, const std::string& field) const {
    array(j, field, 3);
    return {number(j[0], field + "[0]"), number(j[1], field + "[1]"), number(j[2], field + "[2]")};
  }
};

// The "channels" array of a gait or adverb file: per channel, in `names` order, its name, "dc",
// optionally "harmonics" (K_c, 0..harmonics; absent = harmonics, version 2 files) and two arrays
// of K_c numbers (keys first_key / second_key) that `make` turns into the complex coefficient of
// each harmonic. Rows are channels, column 0 the DC term, zeros above K_c. `per_channel` receives
// each K_c, or is cleared when no channel gives one.
template <class Make>
Eigen::MatrixXcd read_channels(const Reader& r, const json& doc, const std::vector<std::string>& names, int harmonics,
                               const char* first_key, const char* second_key, std::vector<int>& per_channel, Make make) {
  const json& channels = r.array(r.at(doc, "channels", ""), "channels", names.size());
  Eigen::MatrixXcd out = Eigen::MatrixXcd::Zero(static_cast<Eigen::Index>(names.size()), harmonics + 1);
  per_channel.assign(names.size(), harmonics);
  bool any = false;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string where = fmt::format("channels[{}]", i);
    const auto row = static_cast<Eigen::Index>(i);
    r.name_is(channels[i], where, names[i]);
    out(row, 0) = r.number(r.at(channels[i], "dc", where), where + ".dc");
    int k_c = harmonics;
    if (channels[i].contains("harmonics")) {
      k_c = r.integer(channels[i]["harmonics"], where + ".harmonics");
      if (k_c < 0 || k_c > harmonics) r.fail(where + ".harmonics", fmt::format("{} must be in 0..{} (the file's harmonics)", k_c, harmonics));
      any = true;
    }
    per_channel[i] = k_c;
    const std::string first = where + "." + first_key, second = where + "." + second_key;
    const json& a = r.array(r.at(channels[i], first_key, where), first, static_cast<size_t>(k_c));
    const json& b = r.array(r.at(channels[i], second_key, where), second, static_cast<size_t>(k_c));
    for (int k = 1; k <= k_c; ++k) out(row, k) = make(r.number(a[k - 1], first), r.number(b[k - 1], second));
  }
  if (!any) per_channel.clear();
  return out;
}

json skeleton_json(const Skeleton& sk) {
  json joints = json::array();
  for (int j = 0; j < sk.joint_count(); ++j) {
    json ch = json::array();
    for (Channel c : sk.channels[j]) ch.push_back(std::string(to_string(c)));
    joints.push_back({{"name", sk.names[j]},
                      {"parent", sk.parents[j] < 0 ? json(nullptr) : json(sk.names[sk.parents[j]])},
                      {"offset", vec(sk.offsets[j])},
                      {"channels", ch}});
  }
  json ends = json::array();
  for (const EndSite& e : sk.end_sites) ends.push_back({{"parent", sk.names[e.parent]}, {"offset", vec(e.offset)}});
  return {{"joints", joints}, {"end_sites", ends}};
}

Skeleton read_skeleton(const Reader& r, const json& j) {
  Skeleton sk;
  const json& joints = r.array(r.at(j, "joints", "skeleton"), "skeleton.joints");
  for (size_t i = 0; i < joints.size(); ++i) {
    const std::string where = fmt::format("skeleton.joints[{}]", i);
    const json& jj = joints[i];
    sk.names.push_back(r.string(r.at(jj, "name", where), where + ".name"));
    const json& parent = r.at(jj, "parent", where);
    if (parent.is_null()) {
      sk.parents.push_back(-1);
    } else {
      const int p = sk.find(r.string(parent, where + ".parent"));
      if (p < 0) r.fail(where + ".parent", "must name an earlier joint");
      sk.parents.push_back(p);
    }
    sk.offsets.push_back(r.vec3(r.at(jj, "offset", where), where + ".offset"));
    std::vector<Channel> chans;
    const json& ch = r.array(r.at(jj, "channels", where), where + ".channels");
    for (const json& c : ch) {
      const std::string s = r.string(c, where + ".channels");
      bool found = false;
      for (Channel k : {Channel::Xposition, Channel::Yposition, Channel::Zposition, Channel::Xrotation,
                        Channel::Yrotation, Channel::Zrotation})
        if (to_string(k) == s) chans.push_back(k), found = true;
      if (!found) r.fail(where + ".channels", fmt::format("unknown channel '{}'", s));
    }
    sk.channels.push_back(std::move(chans));
  }
  const json& ends = r.array(r.at(j, "end_sites", "skeleton"), "skeleton.end_sites");
  for (size_t i = 0; i < ends.size(); ++i) {
    const std::string where = fmt::format("skeleton.end_sites[{}]", i);
    const int p = sk.find(r.string(r.at(ends[i], "parent", where), where + ".parent"));
    if (p < 0) r.fail(where + ".parent", "must name a joint");
    sk.end_sites.push_back({p, r.vec3(r.at(ends[i], "offset", where), where + ".offset")});
  }
  return sk;
}

AngleMode read_mode(const Reader& r, const json& doc) {
  const std::string m = r.string(r.at(doc, "angles", ""), "angles");
  if (m == "log_map") return AngleMode::log_map;
  if (m == "euler") return AngleMode::euler;
  r.fail("angles", fmt::format("'{}' must be log_map or euler", m));
}

void check_format(const Reader& r, const json& doc, const char* format) {
  if (!doc.is_object()) r.fail("document", "must be a JSON object");
  if (r.string(r.at(doc, "format", ""), "format") != format) r.fail("format", fmt::format("must be \"{}\"", format));
  const int v = r.integer(r.at(doc, "version", ""), "version");
  if (v == 1)
    r.fail("version", "1 was written by an older koma (root rotation with the heading in it): analyse the motions "
                      "again (koma gait analyze / adverb)");
  if (v != 2 && v != kVersion) r.fail("version", fmt::format("{} is not supported (this koma reads versions 2 and {})", v, kVersion));
}

int channel_row(const Reader& r, const std::vector<std::string>& names, const std::string& name, const std::string& field) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  r.fail(field, fmt::format("'{}' is not a channel of this skeleton", name));
}

json parse_doc(std::string_view text, std::string_view name) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 33e333333333
    throw Error(ErrorCode::bad_file, std::string(name), fmt::format("not valid JSON: {}", e.what()));
  }
}

// Turns a model invariant failure into a file error naming the file.
template <typename T>
void validate_as_file(const T& value, std::string_view name) {
  try {
    value.validate();
  } catch (const Error& e) {
    throw Error(ErrorCode::bad_file, std::string(name), e.what());
  }
}

}  // namespace

std::string format_gait_json(const Gait& g) {
  g.validate();
  const GaitBasis& b = g.basis;
  const std::vector<std::string> names = channel_names(b);
  json doc;
  doc["format"] = "koma.gait";
  doc["version"] = kVersion;
  doc["skeleton"] = skeleton_json(b.skeleton);
  doc["source_unit"] = std::string(to_string(b.source_unit));
  doc["angles"] = to_string(b.angles);
  doc["root_joint"] = b.skeleton.names[b.root_joint];
  doc["forward_xz"] = {b.forward.x(), b.forward.y()};
  doc["period_s"] = b.period;
  doc["confidence"] = b.confidence;
  doc["period_method"] = to_string(b.period_method);
  doc["cycles_found"] = b.cycles_found;
  doc["cycles_used"] = b.cycles_used;
  doc["harmonics"] = g.harmonics;
  doc["reference_channel"] = names[g.reference_channel];
  doc["reference_phase"] = g.reference_phase;
  json joints = json::array();
  for (int j = 0; j < b.skeleton.joint_count(); ++j) {
    const Quat& q = b.mean_rotations[j];
    joints.push_back({{"name", b.skeleton.names[j]}, {"mean_rotation_wxyz", {q.w(), q.x(), q.y(), q.z()}},
                      {"bone", vec(b.bones[j])}});
  }
  doc["joints"] = joints;
  json channels = json::array();
  for (int r = 0; r < b.channel_count(); ++r) {
    json amp = json::array(), phase = json::array();
    const int k_c = channel_harmonic_count(g, r);
    for (int k = 1; k <= k_c; ++k) {
      amp.push_back(std::abs(g.coefficients(r, k)));
      phase.push_back(std::arg(g.coefficients(r, k)));
    }
    channels.push_back({{"name", names[r]},
                        {"unit", r == 0 ? "m" : r < kRootChannels ? "m/s" : "rad"},
                        {"dc", g.coefficients(r, 0).real()},
                        {"harmonics", k_c},
                        {"amplitude", amp},
                        {"phase", phase}});
  }
  doc["channels"] = channels;
  return doc.dump(1) + "\n";
}

Gait parse_gait_json(std::string_view text, std::string_view name) {
  const json doc = parse_doc(text, name);
  const Reader r{name};
  check_format(r, doc, "koma.gait");
  Gait g;
  GaitBasis& b = g.basis;
  b.skeleton = read_skeleton(r, r.at(doc, "skeleton", ""));
  validate_as_file(b.skeleton, name);
  const std::string unit = r.string(r.at(doc, "source_unit", ""), "source_unit");
  const auto u = parse_length_unit(unit);
  if (!u) r.fail("source_unit", fmt::format("unknown unit '{}'", unit));
  b.source_unit = *u;
  b.angles = read_mode(r, doc);
  b.root_joint = b.skeleton.find(r.string(r.at(doc, "root_joint", ""), "root_joint"));
  if (b.root_joint < 0) r.fail("root_joint", "must name a joint");
  const json& fwd = r.array(r.at(doc, "forward_xz", ""), "forward_xz", 2);
  b.forward = {r.number(fwd[0], "forward_xz[0]"), r.number(fwd[1], "forward_xz[1]")};
  b.period = r.number(r.at(doc, "period_s", ""), "period_s");
  b.confidence = r.number(r.at(doc, "confidence", ""), "confidence");
  const std::string pm = r.string(r.at(doc, "period_method", ""), "period_method");
  if (pm == "contacts") b.period_method = PeriodMethod::contacts;
  else if (pm != "autocorrelation") r.fail("period_method", fmt::format("'{}' must be autocorrelation or contacts", pm));
  b.cycles_found = r.integer(r.at(doc, "cycles_found", ""), "cycles_found");
  b.cycles_used = r.integer(r.at(doc, "cycles_used", ""), "cycles_used");
  g.harmonics = r.integer(r.at(doc, "harmonics", ""), "harmonics");
  if (g.harmonics < 1 || g.harmonics > 1000) r.fail("harmonics", "must be in 1..1000");
  const int nj = b.skeleton.joint_count();
  const json& joints = r.array(r.at(doc, "joints", ""), "joints", static_cast<size_t>(nj));
  for (int j = 0; j < nj; ++j) {
    const std::string where = fmt::format("joints[{}]", j);
    r.name_is(joints[j], where, b.skeleton.names[j], " (skeleton order)");
    const json& q = r.array(r.at(joints[j], "mean_rotation_wxyz", where), where + ".mean_rotation_wxyz", 4);
    b.mean_rotations.emplace_back(r.number(q[0], where), r.number(q[1], where), r.number(q[2], where), r.number(q[3], where));
    b.bones.push_back(r.vec3(r.at(joints[j], "bone", where), where + ".bone"));
  }
  const std::vector<std::string> names = channel_names(b);
  g.reference_channel = channel_row(r, names, r.string(r.at(doc, "reference_channel", ""), "reference_channel"), "reference_channel");
  g.reference_phase = r.number(r.at(doc, "reference_phase", ""), "reference_phase");
  g.coefficients = read_channels(r, doc, names, g.harmonics, "amplitude", "phase", g.channel_harmonics,
                                 [](double amp, double ph) { return std::polar(amp, ph); });
  validate_as_file(g, name);
  return g;
}

void write_gait(const std::filesystem::path& path, const Gait& gait) {
  write_file_atomic(path, format_gait_json(gait));
}

Gait read_gait(const std::filesystem::path& path) { return parse_gait_json(read_file(path), path.string()); }

std::string format_adverb_json(const Adverb& a) {
  a.validate();
  GaitBasis b;  // only for channel names
  b.skeleton = a.skeleton;
  b.angles = a.angles;
  const std::vector<std::string> names = channel_names(b);
  json doc;
  doc["format"] = "koma.adverb";
  doc["version"] = kVersion;
  doc["skeleton"] = skeleton_json(a.skeleton);
  doc["angles"] = to_string(a.angles);
  doc["harmonics"] = a.harmonics;
  doc["reference_channel"] = names[a.reference_channel];
  doc["log_period_ratio"] = a.log_period_ratio;
  json posture = json::array();
  for (int j = 0; j < a.skeleton.joint_count(); ++j) {
    json e = {{"name", a.skeleton.names[j]}, {"delta", vec(a.posture[j])}};
    if (!a.roles.empty()) e["role"] = a.roles[j];
    if (!a.frames.empty()) {
      const Quat& q = a.frames[j];
      e["frame_wxyz"] = {q.w(), q.x(), q.y(), q.z()};
    }
    posture.push_back(e);
  }
  doc["posture"] = posture;
  json channels = json::array();
  for (int r = 0; r < a.channel_count(); ++r) {
    json re = json::array(), im = json::array();
    const int k_c = a.channel_harmonics.empty() ? a.harmonics : a.channel_harmonics[static_cast<size_t>(r)];
    for (int k = 1; k <= k_c; ++k) re.push_back(a.delta(r, k).real()), im.push_back(a.delta(r, k).imag());
    channels.push_back({{"name", names[r]}, {"dc", a.delta(r, 0).real()}, {"harmonics", k_c}, {"re", re}, {"im", im}});
  }
  doc["channels"] = channels;
  return doc.dump(1) + "\n";
}

Adverb parse_adverb_json(std::string_view text, std::string_view name) {
  const json doc = parse_doc(text, name);
  const Reader r{name};
  check_format(r, doc, "koma.adverb");
  Adverb a;
  a.skeleton = read_skeleton(r, r.at(doc, "skeleton", ""));
  validate_as_file(a.skeleton, name);
  a.angles = read_mode(r, doc);
  a.harmonics = r.integer(r.at(doc, "harmonics", ""), "harmonics");
  if (a.harmonics < 1 || a.harmonics > 1000) r.fail("harmonics", "must be in 1..1000");
  GaitBasis b;
  b.skeleton = a.skeleton;
  b.angles = a.angles;
  const std::vector<std::string> names = channel_names(b);
  a.reference_channel = channel_row(r, names, r.string(r.at(doc, "reference_channel", ""), "reference_channel"), "reference_channel");
  a.log_period_ratio = r.number(r.at(doc, "log_period_ratio", ""), "log_period_ratio");
  const int nj = a.skeleton.joint_count();
  const json& posture = r.array(r.at(doc, "posture", ""), "posture", static_cast<size_t>(nj));
  for (int j = 0; j < nj; ++j) {
    const std::string where = fmt::format("posture[{}]", j);
    r.name_is(posture[j], where, a.skeleton.names[j], " (skeleton order)");
    a.posture.push_back(r.vec3(r.at(posture[j], "delta", where), where + ".delta"));
    // "role" and "frame_wxyz" (for applying on other rigs) are absent from older files.
    if (posture[j].contains("role")) {
      a.roles.resize(static_cast<size_t>(nj));
      a.roles[j] = r.string(posture[j]["role"], where + ".role");
    }
    if (posture[j].contains("frame_wxyz")) {
      const json& q = r.array(posture[j]["frame_wxyz"], where + ".frame_wxyz", 4);
      a.frames.resize(static_cast<size_t>(nj), Quat::Identity());
      a.frames[j] = Quat(r.number(q[0], where), r.number(q[1], where), r.number(q[2], where), r.number(q[3], where));
    }
  }
  a.delta = read_channels(r, doc, names, a.harmonics, "re", "im", a.channel_harmonics,
                          [](double re, double im) { return std::complex<double>(re, im); });
  validate_as_file(a, name);
  return a;
}

void write_adverb(const std::filesystem::path& path, const Adverb& adverb) {
  write_file_atomic(path, format_adverb_json(adverb));
}

Adverb read_adverb(const std::filesystem::path& path) {
  return parse_adverb_json(read_file(path), path.string());
}

WeightedAdverb read_weighted_adverb(std::string_view arg) {
  WeightedAdverb w;
  std::string path(arg);
  const auto colon = arg.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < arg.size()) {
    const std::string tail(arg.substr(colon + 1));
    char* end = nullptr;
    const double v = std::strtod(tail.c_str(), &end);
    if (end && *end == '\0') {
      path = std::string(arg.substr(0, colon));
      w.weight = v;
    }
  }
  w.name = path;
  w.adverb = read_adverb(path);
  return w;
}

GaitSegment read_gait_segment(std::string_view arg) {
  const auto at = arg.rfind('@');
  if (at == std::string_view::npos)
    throw Error(ErrorCode::invalid_settings, "then", fmt::format("'{}' must be GAIT.json@SECONDS", arg));
  char* end = nullptr;
  const std::string secs(arg.substr(at + 1));
  const double start = std::strtod(secs.c_str(), &end);
  if (secs.empty() || !end || *end != '\0' || !std::isfinite(start))
    throw Error(ErrorCode::invalid_settings, "then", fmt::format("'{}' is not a time in seconds", secs));
  return {read_gait(std::string(arg.substr(0, at))), start};
}

}  // namespace koma::gait
