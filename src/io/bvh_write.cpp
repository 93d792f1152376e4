#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/text.hpp"
#include "koma/io/bvh.hpp"

namespace koma::io {

namespace {

// A number with `digits` significant digits in plain (non-exponent) notation, trailing zeros
// trimmed: 12.5, -0.00012, 0. Plain notation keeps every BVH consumer happy.
void append_number(std::string& out, double v, int digits) {
  if (v == 0.0 || std::abs(v) < 1e-12) {
    out += '0';
    return;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(v))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 17);
  // Fixed notation of the largest double is 309 digits, plus sign, point and 17 decimals.
  char buf[400];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  KOMA_ASSERT(ec == std::errc());
  std::string_view s(buf, static_cast<size_t>(ptr - buf));
  if (s.find('.') != std::string_view::npos) {
    while (s.back() == '0') s.remove_suffix(1);
    if (s.back() == '.') s.remove_suffix(1);
  }
  if (s == "-0") s = "0";
  out += s;
}

// Euler angles as exporters write them. Of the two equivalent solutions (and their whole-turn
// shifts), take the one nearest the previous frame when it is near (every angle within 60
// degrees), so curves stay continuous through +-180 and through gimbal passes; after a jump, or on
// the first frame, take the standard decomposition (middle angle in [-90, 90] degrees, the others
// in (-180, 180]). This reproduces the angles of every file in the test corpus modulo 360.
Vec3 file_style_euler(const Quat& q, EulerOrder order, const Vec3* previous) {
  if (previous) {
    const Vec3 near = quat_to_euler(q, order, *previous);
    if ((near - *previous).cwiseAbs().maxCoeff() < kPi / 3) return near;
  }
  Vec3 a = quat_to_euler(q, order, Vec3::Zero());
  if (std::abs(a[1]) > kPi / 2) a = Vec3(a[0] + kPi, kPi - a[1], a[2] + kPi);
  for (int i = 0; i < 3; ++i) a[i] -= 2 * kPi * std::round(a[i] / (2 * kPi));
  return a;
}

// Indentation stops deepening past this depth, so a deep chain's text stays linear in its size.
constexpr int kMaxIndentDepth = 16;

std::string indent_of(int depth) { return std::string(static_cast<size_t>(std::min(depth, kMaxIndentDepth)) * 2, ' '); }

void append_offset(std::string& out, const Vec3& offset, double inv_scale, int digits) {
  out += "OFFSET";
  for (int i = 0; i < 3; ++i) {
    out += ' ';
    append_number(out, offset[i] * inv_scale, digits);
  }
  out += '\n';
}

// Joint names as a BVH can hold them and koma's reader reads them back unchanged: valid UTF-8, the
// rest of the line (control characters and braces become '_', as the reader makes them; inner
// spaces stay; a space at either end becomes '_', as the reader trims the line), never empty,
// unique (a clash gets "_<joint>"). Names from FBX and glTF files may hold any of these.
std::vector<std::string> bvh_names(const Skeleton& sk) {
  std::vector<std::string> names;
  std::unordered_set<std::string> used;
  for (int j = 0; j < sk.joint_count(); ++j) {
    std::string name = valid_utf8(sk.names[static_cast<size_t>(j)]);
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F || c == '{' || c == '}') c = '_';
    if (!name.empty() && name.front() == ' ') name.front() = '_';
    if (!name.empty() && name.back() == ' ') name.back() = '_';
    if (name.empty()) name = fmt::format("joint{}", j);
    if (used.count(name) != 0) name = fmt::format("{}_{}", name, j);
    used.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

// The hierarchy, depth first from the root, without recursion (a chain of any depth) and with
// each joint's children and end sites found from lists built once (linear in the joint count).
void write_hierarchy(std::string& out, const Skeleton& sk, double inv_scale, int digits) {
  const int n = sk.joint_count();
  const std::vector<std::string> names = bvh_names(sk);
  std::vector<std::vector<int>> children(static_cast<size_t>(n)), sites(static_cast<size_t>(n));
  for (int k = 1; k < n; ++k) children[static_cast<size_t>(sk.parents[k])].push_back(k);
  for (size_t e = 0; e < sk.end_sites.size(); ++e) sites[static_cast<size_t>(sk.end_sites[e].parent)].push_back(static_cast<int>(e));
  // Each entry: a joint and its depth; a negative joint -(j + 1) closes joint j after its children.
  std::vector<std::pair<int, int>> todo{{0, 0}};
  while (!todo.empty()) {
    const auto [j, depth] = todo.back();
    todo.pop_back();
    const std::string indent = indent_of(depth);
    if (j < 0) {
      const int done = -j - 1;
      for (int e : sites[static_cast<size_t>(done)]) {
        const std::string inner = indent_of(depth + 1), site = indent_of(depth + 2);
        out += inner + "End Site\n" + inner + "{\n" + site;
        append_offset(out, sk.end_sites[static_cast<size_t>(e)].offset, inv_scale, digits);
        out += inner + "}\n";
      }
      out += indent + "}\n";
      continue;
    }
    out += indent;
    out += sk.parents[j] < 0 ? "ROOT " : "JOINT ";
    out += names[static_cast<size_t>(j)];
    const std::string inner = indent_of(depth + 1);
    out += '\n' + indent + "{\n" + inner;
    append_offset(out, sk.offsets[j], inv_scale, digits);
    out += inner + "CHANNELS " + std::to_string(sk.channels[j].size());
    for (Channel c : sk.channels[j]) {
      out += ' ';
      out += to_string(c);
    }
    out += '\n';
    todo.emplace_back(-j - 1, depth);
    const auto& kids = children[static_cast<size_t>(j)];
    for (auto k = kids.rbegin(); k != kids.rend(); ++k) todo.emplace_back(*k, depth + 1);
  }
}

// The motion rows, written block by block on every core and handed to `sink` in order.
//
// Euler angles depend on the previous frame's (continuity), so each block first finds the rows
// that differ from their previous row (frames in parallel), decomposes those rows' rotations joint
// by joint (joints in parallel, frames in order), then formats its rows in parallel (rows are
// independent once their angles are known). A joint whose rotation equals its previous frame's
// keeps the previous angles, and a row whose values all equal the previous row's is a copy of its
// text: a held take (keys at the source rate) decomposes and formats only its drawings.
class RowWriter {
 public:
  RowWriter(const Motion& motion, double inv_scale, int digits)
      : m_(motion), sk_(motion.skeleton), inv_scale_(inv_scale), digits_(digits) {
    const int joints = sk_.joint_count();
    // Depth-first order of joints, which is the order of values in a row.
    std::vector<std::vector<int>> children(static_cast<size_t>(joints));
    for (int k = 1; k < joints; ++k) children[static_cast<size_t>(sk_.parents[k])].push_back(k);
    std::vector<int> todo{0};
    while (!todo.empty()) {
      const int j = todo.back();
      todo.pop_back();
      if (!sk_.channels[j].empty()) order_.push_back(j);
      const auto& kids = children[static_cast<size_t>(j)];
      todo.insert(todo.end(), kids.rbegin(), kids.rend());
    }
    euler_.resize(static_cast<size_t>(joints));
    for (int j = 0; j < joints; ++j) euler_[j] = sk_.euler_order(j);
    previous_.assign(order_.size(), Vec3::Zero());
  }

  void write(const std::function<void(std::string_view)>& sink) {
    const int frames = m_.frame_count;
    for (int f0 = 0; f0 < frames; f0 += kBlock) {
      const int f1 = std::min(frames, f0 + kBlock);
      find_changes(f0, f1);
      decompose();
      constexpr int kRows = 64;  // rows per formatting task (fixed: the text does not depend on threads)
      const int tasks = (f1 - f0 + kRows - 1) / kRows;
      text_.resize(static_cast<size_t>(tasks));
      tbb::parallel_for(tbb::blocked_range<int>(0, tasks), [&](const tbb::blocked_range<int>& r) {
        for (int t = r.begin(); t < r.end(); ++t) {
          std::string& out = text_[static_cast<size_t>(t)];
          out.clear();
          const int a = f0 + t * kRows, b = std::min(f1, a + kRows);
          size_t last_row = 0;
          for (int f = a; f < b; ++f) {
            if (f > a && row_of_[static_cast<size_t>(f - f0)] == row_of_[static_cast<size_t>(f - 1 - f0)]) {
              // the previous row again, its '\n' included
              const size_t begin = out.size(), len = begin - last_row;
              out.reserve(begin + len);
              out.append(out.data() + last_row, len);
              last_row = begin;
              continue;
            }
            last_row = out.size();
            format_row(out, f, f0);
          }
        }
      });
      for (const std::string& t : text_) sink(t);
    }
  }

 private:
  static constexpr int kBlock = 8192;  // frames per block: angles and text of a block stay small

  // Frame f's values are bit for bit those of frame f - 1.
  bool same_row(int f) const {
    const int J = sk_.joint_count();
    const size_t a = static_cast<size_t>(f) * J, b = a - J;
    return std::memcmp(&m_.rotations[a], &m_.rotations[b], J * sizeof(Quat)) == 0 &&
           std::memcmp(&m_.translations[a], &m_.translations[b], J * sizeof(Vec3)) == 0;
  }

  // The block's frames whose row differs from the previous frame's (changed_, in order; frame 0
  // always), and per frame of the block the index in changed_ of the frame whose values it repeats
  // (row_of_). A held take's block has a few hundred changed rows of 8192.
  void find_changes(int f0, int f1) {
    const size_t n = static_cast<size_t>(f1 - f0);
    same_.resize(n);
    tbb::parallel_for(tbb::blocked_range<int>(f0, f1, 512), [&](const tbb::blocked_range<int>& r) {
      for (int f = r.begin(); f < r.end(); ++f) same_[static_cast<size_t>(f - f0)] = f > 0 && same_row(f);
    });
    changed_.clear();
    row_of_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (!same_[i]) changed_.push_back(f0 + static_cast<int>(i));
      row_of_[i] = static_cast<int>(changed_.size()) - 1;
    }
    // A block that starts with a repeated row repeats the previous block's last row (row_of_ -1,
    // whose angles are previous_).
  }

  // angles_[(c + 1) * joints-in-order + q] for the block's changed frames c (row 0: previous_, the
  // angles of the frame before the block). Frames repeating their previous row keep its angles (as
  // every joint's rotation is unchanged), so only changed rows are decomposed.
  void decompose() {
    const size_t Q = order_.size();
    angles_.resize((changed_.size() + 1) * Q);
    std::copy(previous_.begin(), previous_.end(), angles_.begin());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, Q), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t q = r.begin(); q < r.end(); ++q) {
        const int j = order_[q];
        bool rotates = false;
        for (Channel c : sk_.channels[j]) rotates |= is_rotation(c);
        if (!rotates) continue;
        Vec3 prev = previous_[q];
        for (size_t c = 0; c < changed_.size(); ++c) {
          const int f = changed_[c];
          const Quat& rot = m_.rotation(f, j);
          if (f > 0 && std::memcmp(&rot, &m_.rotation(f - 1, j), sizeof(Quat)) == 0) {
            // unchanged rotation: the same angles
          } else {
            prev = file_style_euler(rot, euler_[j], f > 0 ? &prev : nullptr);
          }
          angles_[(c + 1) * Q + q] = prev;
        }
        previous_[q] = prev;
      }
    });
  }

  void format_row(std::string& out, int f, int f0) const {
    const size_t Q = order_.size();
    bool first_value = true;
    for (size_t q = 0; q < Q; ++q) {
      const int j = order_[q];
      const auto axes = euler_axes(euler_[j]);
      const Vec3& angles = angles_[static_cast<size_t>(row_of_[static_cast<size_t>(f - f0)] + 1) * Q + q];
      const Vec3& t = m_.translation(f, j);
      for (Channel c : sk_.channels[j]) {
        if (!first_value) out += ' ';
        first_value = false;
        if (is_rotation(c)) {
          const int axis = channel_axis(c);
          const int slot = axis == axes[0] ? 0 : axis == axes[1] ? 1 : 2;
          append_number(out, angles[slot] * kRadToDeg, digits_);
        } else {
          append_number(out, t[channel_axis(c)] * inv_scale_, digits_);
        }
      }
    }
    out += '\n';
  }

  const Motion& m_;
  const Skeleton& sk_;
  double inv_scale_;
  int digits_;
  std::vector<int> order_;  // joints with channels, depth first
  std::vector<EulerOrder> euler_;
  std::vector<Vec3> previous_;  // per joint in order_: the angles of the last frame decomposed
  std::vector<Vec3> angles_;
  std::vector<char> same_;      // per frame of the block: its row repeats the previous frame's
  std::vector<int> changed_;    // the block's frames whose row differs from the previous frame's
  std::vector<int> row_of_;     // per frame of the block: index in changed_ of the row it shows (-1: the previous block's last)
  std::vector<std::string> text_;
};

// The whole file to `sink`: the hierarchy, the motion header, then the rows in blocks.
void emit_bvh(const Motion& motion, const BvhWriteOptions& options, const std::function<void(std::string_view)>& sink) {
  motion.validate();
  if (options.significant_digits < 3 || options.significant_digits > 17) {
    throw Error(ErrorCode::invalid_settings, "BVH writer",
                fmt::format("significant digits {} must be within 3..17", options.significant_digits));
  }
  const Skeleton& sk = motion.skeleton;
  // The named unit asked for, else the source file's unit (a number of metres per unit included).
  const double inv_scale = 1.0 / (options.unit ? metres_per_unit(*options.unit) : motion.source_metres_per_unit());
  const int digits = options.significant_digits;
  std::string head = "HIERARCHY\n";
  // Joints are written depth-first; a valid skeleton in parent-before-child order whose children
  // are listed after their parents is reproduced in the same order.
  write_hierarchy(head, sk, inv_scale, digits);
  head += fmt::format("MOTION\nFrames: {}\nFrame Time: ", motion.frame_count);
  append_number(head, 1.0 / motion.frame_rate, 10);
  head += '\n';
  sink(head);
  RowWriter(motion, inv_scale, digits).write(sink);
}

}  // namespace

std::string format_bvh(const Motion& motion, const BvhWriteOptions& options) {
  std::string out;
  emit_bvh(motion, options, [&](std::string_view s) { out += s; });
  return out;
}

void write_bvh(const std::filesystem::path& path, const Motion& motion, const BvhWriteOptions& options) {
  // Streamed to the temporary file block by block: a long take's text is never held whole.
  AtomicFile file(path);
  std::FILE* f = std::fopen(file.temp_path().c_str(), "wb");
  if (!f) throw Error(ErrorCode::io, path.string(), fmt::format("cannot write: {}", std::strerror(errno)));
  bool ok = true;
  try {
    emit_bvh(motion, options, [&](std::string_view s) { ok = ok && std::fwrite(s.data(), 1, s.size(), f) == s.size(); });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  ok = std::fflush(f) == 0 && ok;
  const int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw Error(ErrorCode::io, path.string(), fmt::format("write failed: {}", std::strerror(err)));
  file.commit();
}

}  // namespace koma::io
