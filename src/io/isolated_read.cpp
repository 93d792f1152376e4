#include "isolated_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include "gltf_scene.hpp"
#include "koma/core/checked.hpp"
#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"
#include "koma/core/text.hpp"

namespace koma::io::isolation_detail {

namespace {

// Limits of a read, from the file's size: 768 MiB + 64 bytes per file byte of memory (896 MiB
// for a 2 MB file), 60 s + 20 s per MB of CPU time; KOMA_READ_MEMORY_MB sets the memory instead.
IsolationLimits limits_for(std::uint64_t file_bytes) {
  IsolationLimits limits;
  limits.memory_bytes = std::min<std::uint64_t>((std::uint64_t{768} << 20) + 64 * file_bytes, std::uint64_t{16} << 30);
  if (const char* mb = std::getenv("KOMA_READ_MEMORY_MB")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(mb, &end, 10);
    if (end != mb && *end == '\0' && v > 0 && v < (1ULL << 24)) limits.memory_bytes = std::uint64_t{v} << 20;
  }
  limits.cpu_seconds = 60.0 + 20.0 * static_cast<double>(file_bytes) / 1e6;
  limits.wall_seconds = 4.0 * limits.cpu_seconds + 60.0;
  return limits;
}

// --- bytes ------------------------------------------------------------------------------------

class Out {
 public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    pod<std::uint64_t>(s.size());
    bytes_.append(s);
  }
  void vec3(const Vec3& v) {
    for (int i = 0; i < 3; ++i) pod<double>(v[i]);
  }
  void quat(const Quat& q) {
    for (int i = 0; i < 4; ++i) pod<double>(q.coeffs()[i]);
  }
  template <class T, class F>
  void list(const std::vector<T>& items, F&& each) {
    pod<std::uint64_t>(items.size());
    for (const T& item : items) each(item);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class In {
 public:
  In(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    std::string s(bytes_.substr(at_, n));
    at_ += n;
    return s;
  }
  Vec3 vec3() {
    Vec3 v;
    for (int i = 0; i < 3; ++i) v[i] = pod<double>();
    return v;
  }
  Quat quat() {
    Quat q;
    for (int i = 0; i < 4; ++i) q.coeffs()[i] = pod<double>();
    return q;
  }
  // A count of items that take at least `each` bytes apiece, checked against what is left.
  size_t count(size_t each) {
    const auto n = pod<std::uint64_t>();
    if (each > 0 && n > (bytes_.size() - at_) / each) broken();
    return static_cast<size_t>(n);
  }
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void broken() const {
    throw Error(ErrorCode::bad_file, file_,
                "the reader's child process sent back a result that does not decode (it was cut short or "
                "overwritten)");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - at_) broken();
  }
  std::string_view bytes_;
  const std::string& file_;
  size_t at_ = 0;
};

constexpr std::uint64_t kMagic = 0x31524f4d414b4f4bULL;  // "KOKAMOR1"

void pack_motion(Out& out, const Motion& m) {
  const Skeleton& sk = m.skeleton;
  out.pod<double>(m.frame_rate);
  out.pod<std::int64_t>(m.frame_count);
  out.pod<std::uint8_t>(static_cast<std::uint8_t>(m.source_unit));
  out.pod<double>(m.source_scale);
  out.list(sk.names, [&](const std::string& s) { out.str(s); });
  out.list(sk.parents, [&](std::int32_t p) { out.pod(p); });
  out.list(sk.offsets, [&](const Vec3& v) { out.vec3(v); });
  out.list(sk.channels, [&](const std::vector<Channel>& cs) {
    out.list(cs, [&](Channel c) { out.pod<std::uint8_t>(static_cast<std::uint8_t>(c)); });
  });
  out.list(sk.end_sites, [&](const EndSite& e) {
    out.pod(e.parent);
    out.vec3(e.offset);
  });
  out.list(m.rotations, [&](const Quat& q) { out.quat(q); });
  out.list(m.translations, [&](const Vec3& v) { out.vec3(v); });
  out.list(m.scales, [&](const Vec3& v) { out.vec3(v); });
  out.str(m.name);
}

Motion unpack_motion(In& in) {
  Motion m;
  Skeleton& sk = m.skeleton;
  m.frame_rate = in.pod<double>();
  const auto frames = in.pod<std::int64_t>();
  if (frames < 0 || frames > kMaxFrames) in.broken();
  m.frame_count = static_cast<int>(frames);
  const auto unit = in.pod<std::uint8_t>();
  if (unit > static_cast<std::uint8_t>(LengthUnit::cmu)) in.broken();
  m.source_unit = static_cast<LengthUnit>(unit);
  m.source_scale = in.pod<double>();
  sk.names.resize(in.count(8));
  for (auto& s : sk.names) s = in.str();
  sk.parents.resize(in.count(4));
  for (auto& p : sk.parents) p = in.pod<std::int32_t>();
  sk.offsets.resize(in.count(24));
  for (auto& v : sk.offsets) v = in.vec3();
  sk.channels.resize(in.count(8));
  for (auto& cs : sk.channels) {
    cs.resize(in.count(1));
    for (auto& c : cs) {
      const auto v = in.pod<std::uint8_t>();
      if (v > 5) in.broken();
      c = static_cast<Channel>(v);
    }
  }
  sk.end_sites.resize(in.count(28));
  for (auto& e : sk.end_sites) {
    e.parent = in.pod<std::int32_t>();
    e.offset = in.vec3();
  }
  m.rotations.resize(in.count(32));
  for (auto& q : m.rotations) q = in.quat();
  m.translations.resize(in.count(24));
  for (auto& v : m.translations) v = in.vec3();
  m.scales.resize(in.count(24));
  for (auto& v : m.scales) v = in.vec3();
  m.name = in.str();
  return m;
}

// The last line the child wrote to stderr before it failed ("ai_assert failure in ...: out_idx !=
// nullptr"), to quote in koma's error; empty when it wrote none.
std::string last_words(const std::string& said) {
  size_t end = said.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  const size_t start = said.rfind('\n', end);
  const size_t from = start == std::string::npos ? 0 : start + 1;
  std::string line = said.substr(from, end + 1 - from);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return fmt::format("; it said: \"{}\"", printable(line));
}

}  // namespace

bool in_process() {
  const char* v = std::getenv("KOMA_READ_IN_PROCESS");
  return v != nullptr && std::string_view(v) == "1";
}

std::string run_reader(const std::filesystem::path& file, std::string_view parser,
                       const std::function<std::string()>& read) {  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const IsolationLimits limits = limits_for(ec ? 0 : size);
  const std::string name = file.string();
  IsolatedOutcome r = run_isolated(read, limits);
  using End = IsolatedOutcome::End;
  switch (r.end) {
    case End::returned:
      return std::move(r.bytes);
    case End::out_of_memory:
      throw Error(ErrorCode::bad_file, name,
                  fmt::format("reading it needs more than {} MiB of memory, the limit for a file of {} bytes "
                              "(768 MiB + 64 bytes per file byte; the environment variable KOMA_READ_MEMORY_MB "
                              "sets another): what it declares does not fit its size",
                              limits.memory_bytes >> 20, ec ? 0 : size));
    case End::cpu_limit:
      throw Error(ErrorCode::bad_file, name,
                  fmt::format("reading it took more than {:.0f} s of CPU time, the limit for a file of {} bytes "
                              "(60 s + 20 s per MB); {} is stuck on it",
                              limits.cpu_seconds, ec ? 0 : size, parser));
    case End::wall_limit:
      throw Error(ErrorCode::bad_file, name,
                  fmt::format("reading it took more than {:.0f} s; {} is stuck on it", limits.wall_seconds, parser));
    case End::signal:
      if (r.signal == SIGINT || r.signal == SIGTERM)
        throw Error(ErrorCode::io, name, fmt::format("reading it was interrupted ({})", r.detail));
      throw Error(ErrorCode::bad_file, name,
                  fmt::format("{} crashed on it with {}: the file is malformed in a way that parser does not "
                              "survive (koma read it in a child process, so nothing else was lost){}",
                              parser, r.detail, last_words(r.said)));
    case End::exception:
      break;
  }
  throw Error(ErrorCode::bad_file, name, fmt::format("{} failed on it: {}{}", parser, r.detail, last_words(r.said)));
}

std::string pack(const ReadResult& result) {
  Out out;
  out.pod(kMagic);
  pack_motion(out, result.motion);
  // Text that reaches Python and JSON is valid UTF-8 (a warning may quote a file's bytes).
  out.list(result.warnings, [&](const std::string& s) { out.str(valid_utf8(s)); });
  out.pod<std::uint8_t>(result.unit_detected ? 1 : 0);
  out.str(result.unit_rule);
  const GltfScene* scene = result.gltf_scene.get();
  out.pod<std::uint8_t>(scene ? 1 : 0);
  if (scene) {
    out.list(scene->joint_nodes, [&](int n) { out.pod<std::int32_t>(n); });
    out.list(scene->joint_names, [&](const std::string& s) { out.str(s); });
    out.quat(scene->ancestor_rotation);
    out.vec3(scene->ancestor_translation);
    out.pod<double>(scene->ancestor_scale);
    out.str(gltf_detail::scene_glb(scene->model));
  }
  return out.take();
}

ReadResult unpack(std::string_view bytes, const std::string& file) {
  In in(bytes, file);
  if (in.pod<std::uint64_t>() != kMagic) in.broken();
  ReadResult r;
  r.motion = unpack_motion(in);
  r.warnings.resize(in.count(8));
  for (auto& s : r.warnings) s = in.str();
  r.unit_detected = in.pod<std::uint8_t>() != 0;
  r.unit_rule = in.str();
  if (in.pod<std::uint8_t>() != 0) {
    auto scene = std::make_shared<GltfScene>();
    scene->joint_nodes.resize(in.count(4));
    for (int& n : scene->joint_nodes) n = in.pod<std::int32_t>();
    scene->joint_names.resize(in.count(8));
    for (auto& s : scene->joint_names) s = in.str();
    scene->ancestor_rotation = in.quat();
    scene->ancestor_translation = in.vec3();
    scene->ancestor_scale = in.pod<double>();
    scene->model = gltf_detail::load_scene_glb(in.str(), file);
    for (int n : scene->joint_nodes)
      if (n < 0 || static_cast<size_t>(n) >= scene->model.nodes.size()) in.broken();
    r.gltf_scene = std::move(scene);
  }
  if (!in.done()) in.broken();
  r.motion.validate();
  return r;
}

std::string pack(const std::vector<FbxAnimationInfo>& infos) {
  Out out;
  out.pod(kMagic);
  out.list(infos, [&](const FbxAnimationInfo& a) {
    out.pod<std::int32_t>(a.index);
    out.str(valid_utf8(a.name));
    out.pod(a.frame_rate);
    out.pod(a.duration);
    out.pod<std::int32_t>(a.frame_count);
    out.pod<std::int32_t>(a.channel_count);
    out.pod<std::int32_t>(a.max_keys);
    out.pod<std::uint8_t>(a.junk ? 1 : 0);
  });
  return out.take();
}

std::vector<FbxAnimationInfo> unpack_fbx_infos(std::string_view bytes, const std::string& file) {
  In in(bytes, file);
  if (in.pod<std::uint64_t>() != kMagic) in.broken();
  std::vector<FbxAnimationInfo> infos(in.count(41));  // 4 + 8 + 8 + 8 + 4 + 4 + 4 + 1 bytes and the name
  for (auto& a : infos) {
    a.index = in.pod<std::int32_t>();
    a.name = in.str();
    a.frame_rate = in.pod<double>();
    a.duration = in.pod<double>();
    a.frame_count = in.pod<std::int32_t>();
    a.channel_count = in.pod<std::int32_t>();
    a.max_keys = in.pod<std::int32_t>();
    a.junk = in.pod<std::uint8_t>() != 0;
  }
  if (!in.done()) in.broken();
  return infos;
}

std::string pack(const std::vector<GltfAnimationInfo>& infos) {
  Out out;
  out.pod(kMagic);
  out.list(infos, [&](const GltfAnimationInfo& a) {
    out.pod<std::int32_t>(a.index);
    out.str(valid_utf8(a.name));
    out.pod<std::int32_t>(a.channel_count);
    out.pod<std::int32_t>(a.max_keys);
    out.pod(a.start);
    out.pod(a.end);
    out.list(a.interpolations, [&](const std::string& s) { out.str(valid_utf8(s)); });
  });
  return out.take();
}

std::vector<GltfAnimationInfo> unpack_gltf_infos(std::string_view bytes, const std::string& file) {
  In in(bytes, file);
  if (in.pod<std::uint64_t>() != kMagic) in.broken();
  std::vector<GltfAnimationInfo> infos(in.count(44));
  for (auto& a : infos) {
    a.index = in.pod<std::int32_t>();
    a.name = in.str();
    a.channel_count = in.pod<std::int32_t>();
    a.max_keys = in.pod<std::int32_t>();
    a.start = in.pod<double>();
    a.end = in.pod<double>();
    a.interpolations.resize(in.count(8));
    for (auto& s : a.interpolations) s = in.str();
  }
  if (!in.done()) in.broken();
  return infos;
}

}  // namespace koma::io::isolation_detail
