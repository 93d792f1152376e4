// BVH reader. Two phases over the text held in memory: a line-oriented hierarchy parser (names may
// contain spaces and colons; braces may share a line with their keyword), then a row parser over
// the motion section that converts numbers with std::from_chars straight into the dense arrays.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <unordered_set>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "koma/core/atomic_file.hpp"
#include "koma/core/checked.hpp"
#include "koma/core/error.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/core/fk.hpp"
#include "koma/body/height.hpp"
#include "koma/core/large_pages.hpp"
#include "koma/core/text.hpp"
#include "koma/io/bvh.hpp"
#include "fast_trig.hpp"

namespace koma::io {

namespace {

// A joint name as koma keeps it (the rest of the line, trimmed): valid UTF-8, with control
// characters and braces as '_', as bvh_write writes names, so a BVH koma wrote reads back with the
// names it was read with (docs/errors.md: names are made safe where they are read). Inner spaces
// stay ("mixamorig:Left Up Leg").
std::string bvh_joint_name(std::string_view raw) {
  std::string name = valid_utf8(raw);
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F || c == '{' || c == '}') c = '_';
  return name;
}

// Largest rotation value read, in degrees: beyond it the fast sine kernel loses its accuracy (and
// a value this size is a corrupt file, not a pose).
constexpr double kMaxRotationDeg = 1e7;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

// Parses one number (optionally with a leading '+'); returns false if `s` is not exactly a number.
bool parse_double(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Splits a line into whitespace-separated tokens.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// Walks the text line by line, keeping the 1-based line number for messages.
class LineReader {
 public:
  explicit LineReader(std::string_view text, int first_line = 0) : text_(text), line_no_(first_line) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const size_t end = text_.find('\n', pos_);
    const size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    pos_ = stop + 1;
    ++line_no_;
    return true;
  }
  int line_no() const { return line_no_; }
  size_t remaining() const { return pos_ < text_.size() ? text_.size() - pos_ : 0; }
  /// The text not read yet.
  std::string_view rest() const { return pos_ < text_.size() ? text_.substr(pos_) : std::string_view(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_no_ = 0;
};

struct Parser {
  std::string_view name;
  LineReader lines;
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorCode::bad_file, fmt::format("{}:{}", name, lines.line_no()), message);
  }
};

// The hierarchy as read, in file units, before conversion.
struct RawHierarchy {
  Skeleton skeleton;
  int pending_joint = -2;  // joint (or -3 for an end site) declared and waiting for its '{'
};

}  // namespace

LengthUnit detect_bvh_unit(double h) noexcept {
  try {
    return guess_length_unit(h).unit;
  } catch (...) {  // only an allocation failure while wording the rule
    return LengthUnit::metre;
  }
}

namespace {

// The steps of parse_bvh(), in order: hierarchy, motion header (frame count, frame time, rate),
// motion rows, unit.

// The hierarchy's parse state: the open braces and what the next line may declare.
struct HierarchyState {
  std::vector<int> stack;  // open joints; -1 marks an open End Site
  int pending = -2;        // -2 none; >= 0 joint waiting for '{'; -1 end site waiting for '{'
  int last_joint = -1;     // the node the next OFFSET / CHANNELS belongs to (-1: end site)
  bool in_end_site = false;
  bool any_root = false;
  std::unordered_set<std::string> names;  // joint names so far, as kept (bvh_joint_name)

  void open_brace(const Parser& p) {
    if (pending == -2) p.fail("unexpected '{': expected ROOT, JOINT or End Site before it");
    stack.push_back(pending);
    in_end_site = pending == -1;
    last_joint = pending;
    pending = -2;
  }
};

// An OFFSET line: three finite numbers.
Vec3 parse_offset(const Parser& p, const std::vector<std::string_view>& tok) {
  if (tok.size() != 4) p.fail(fmt::format("expected OFFSET and 3 numbers, found {} values", tok.size() - 1));
  Vec3 v;
  for (int i = 0; i < 3; ++i) {
    if (!parse_double(tok[i + 1], v[i])) p.fail(fmt::format("OFFSET value '{}' is not a number", tok[i + 1]));
    if (!std::isfinite(v[i])) p.fail(fmt::format("OFFSET value '{}' is not finite", tok[i + 1]));
  }
  return v;
}

// A CHANNELS line: the count, then that many distinct channel names, into an empty list.
void parse_channels(const Parser& p, const std::vector<std::string_view>& tok, std::vector<Channel>& list) {
  double n = 0;
  if (tok.size() < 2 || !parse_double(tok[1], n) || n != std::floor(n) || n < 0 || n > 6) {
    p.fail("expected CHANNELS followed by a count from 0 to 6");
  }
  if (tok.size() != static_cast<size_t>(n) + 2) {
    p.fail(fmt::format("CHANNELS declares {} channels but lists {}", n, tok.size() - 2));
  }
  if (!list.empty()) p.fail("a second CHANNELS line for the same joint");
  for (size_t i = 2; i < tok.size(); ++i) {
    const auto c = parse_channel(tok[i]);
    if (!c) {
      p.fail(fmt::format("unknown channel '{}'; expected Xposition, Yposition, Zposition, Xrotation, "
                         "Yrotation or Zrotation", tok[i]));
    }
    if (std::find(list.begin(), list.end(), *c) != list.end()) p.fail(fmt::format("channel '{}' listed twice", tok[i]));
    list.push_back(*c);
  }
}

// The hierarchy, from HIERARCHY through the MOTION line, into sk (file units).
void parse_hierarchy(Parser& p, Skeleton& sk) {
  std::string_view line;
  bool seen_hierarchy = false;
  bool done = false;
  HierarchyState h;
  while (!done && p.lines.next(line)) {
    std::string_view t = trim(line);
    if (t.empty()) continue;
    if (!seen_hierarchy) {
      // Tolerate a UTF-8 byte order mark.
      if (t.starts_with("\xEF\xBB\xBF")) t = trim(t.substr(3));
      if (t.empty()) continue;
      if (!iequals(tokens(t).front(), "HIERARCHY")) {
        p.fail(fmt::format("expected HIERARCHY as the first word, found '{}'", t.substr(0, 40)));
      }
      seen_hierarchy = true;
      continue;
    }
    // A '{' or '}' may follow a keyword on the same line ("JOINT Hips {"), or stand alone.
    bool trailing_open = false;
    if (t.size() > 1 && t.back() == '{') {
      trailing_open = true;
      t = trim(t.substr(0, t.size() - 1));
    }
    const auto tok = tokens(t);
    const std::string_view key = tok.front();
    if (key == "{") {
      if (tok.size() != 1) p.fail("expected nothing after '{'");
      h.open_brace(p);
    } else if (key == "}") {
      if (tok.size() != 1) p.fail("expected nothing after '}'");
      if (h.pending != -2) p.fail("'}' before the '{' of the joint declared above");
      if (h.stack.empty()) p.fail("unbalanced braces: '}' without a matching '{'");
      h.stack.pop_back();
      h.in_end_site = false;
      h.last_joint = h.stack.empty() ? -2 : h.stack.back();
    } else if (iequals(key, "ROOT") || iequals(key, "JOINT")) {
      const bool root = iequals(key, "ROOT");
      if (h.pending != -2) p.fail("expected '{' after the previous joint declaration");
      if (h.in_end_site) p.fail("an End Site cannot have child joints");
      if (root && h.any_root) p.fail("a second ROOT: koma reads files with one skeleton root");
      if (root != h.stack.empty()) {
        p.fail(root ? "ROOT inside another joint" : "JOINT outside any ROOT (unbalanced braces?)");
      }
      const std::string_view raw_name = trim(t.substr(key.size()));
      if (raw_name.empty()) p.fail(fmt::format("expected a joint name after {}", key));
      std::string joint_name = bvh_joint_name(raw_name);
      if (!h.names.insert(joint_name).second)
        p.fail(fmt::format("joint name '{}' is used twice{}", joint_name,
                           joint_name == raw_name ? "" : " (control characters and braces read as '_')"));
      sk.names.push_back(std::move(joint_name));
      sk.parents.push_back(root ? -1 : h.stack.back());
      sk.offsets.push_back(Vec3::Zero());
      sk.channels.emplace_back();
      h.pending = sk.joint_count() - 1;
      h.any_root = true;
    } else if (iequals(key, "End")) {
      if (tok.size() < 2 || !iequals(tok[1], "Site")) p.fail("expected 'End Site'");
      if (h.pending != -2) p.fail("expected '{' after the previous joint declaration");
      if (h.stack.empty() || h.in_end_site) p.fail("End Site outside a joint");
      sk.end_sites.push_back(EndSite{h.stack.back(), Vec3::Zero()});
      h.pending = -1;
    } else if (iequals(key, "OFFSET")) {
      if (h.pending != -2 || h.stack.empty()) p.fail("OFFSET outside a joint's braces");
      const Vec3 v = parse_offset(p, tok);
      if (h.in_end_site) sk.end_sites.back().offset = v;
      else sk.offsets[h.last_joint] = v;
    } else if (iequals(key, "CHANNELS")) {
      if (h.pending != -2 || h.stack.empty()) p.fail("CHANNELS outside a joint's braces");
      if (h.in_end_site) p.fail("an End Site has no CHANNELS");
      parse_channels(p, tok, sk.channels[h.last_joint]);
    } else if (iequals(key, "MOTION")) {
      if (!h.any_root) p.fail("MOTION before any ROOT: the hierarchy is missing");
      if (!h.stack.empty() || h.pending != -2) {
        p.fail(fmt::format("MOTION while {} brace(s) are still open: the hierarchy is truncated or unbalanced",
                           h.stack.size() + (h.pending != -2 ? 1 : 0)));
      }
      done = true;
      continue;
    } else {
      p.fail(fmt::format("unexpected '{}'; expected ROOT, JOINT, End Site, OFFSET, CHANNELS, braces or MOTION",
                         key.substr(0, 40)));
    }
    if (trailing_open) h.open_brace(p);
  }
  if (!seen_hierarchy) p.fail("the file has no content; expected HIERARCHY");
  if (!done) {
    if (!h.any_root) p.fail("the file ends before any ROOT: the hierarchy is missing");
    p.fail(h.stack.empty() && h.pending == -2 ? "the file ends without a MOTION section"
                                              : "the file ends inside the hierarchy (truncated; unbalanced braces)");
  }
}

// What the two lines after MOTION declare.
struct MotionHeader {
  int frames = 0;       // declared frame count
  int frames_line = 0;  // line of "Frames:" (for messages)
  double rate = 0.0;    // fps: 1 / frame time, snapped to a whole number when within 1e-4
};

MotionHeader parse_motion_header(Parser& p, int channels, int joints) {
  std::string_view line;
  auto next_content = [&](std::string_view what) {
    while (p.lines.next(line)) {
      if (!trim(line).empty()) return trim(line);
    }
    p.fail(fmt::format("the file ends after MOTION; expected '{}'", what));
  };
  std::string_view t = next_content("Frames: <count>");
  if (!(t.size() >= 7 && iequals(t.substr(0, 7), "Frames:"))) {
    p.fail(fmt::format("expected 'Frames: <count>', found '{}'", t.substr(0, 40)));
  }
  double declared = 0;
  if (!parse_double(trim(t.substr(7)), declared) || declared != std::floor(declared)) {
    p.fail(fmt::format("expected a whole number of frames, found '{}'", trim(t.substr(7))));
  }
  if (declared < 1) p.fail(fmt::format("declares {} frames; at least 1 is needed", declared));
  if (declared > static_cast<double>(kMaxFrames)) {
    p.fail(fmt::format("declares {} frames, more than koma's limit of {} (ten hours at 120 fps)", declared, kMaxFrames));
  }
  if (channels == 0) p.fail("the hierarchy declares no CHANNELS, so no frame can hold a value");
  MotionHeader h;
  h.frames = static_cast<int>(declared);
  h.frames_line = p.lines.line_no();
  try {
    check_motion_size(h.frames, joints, "");
  } catch (const Error& e) {
    p.fail(fmt::format("declares {}", e.message()));
  }
  t = next_content("Frame Time: <seconds>");
  const auto ftok = tokens(t);
  if (ftok.size() != 3 || !iequals(ftok[0], "Frame") || !iequals(ftok[1], "Time:")) {
    p.fail(fmt::format("expected 'Frame Time: <seconds>', found '{}'", t.substr(0, 40)));
  }
  double frame_time = 0;
  if (!parse_double(ftok[2], frame_time) || !std::isfinite(frame_time) || frame_time <= 0) {
    p.fail(fmt::format("frame time '{}' must be a number of seconds > 0", ftok[2]));
  }
  if (!valid_frame_rate(1.0 / frame_time)) {
    p.fail(fmt::format("frame time '{}' is outside 1e-05 to 60 seconds ({:g} to {:g} fps)", ftok[2], kMinFrameRate,
                       kMaxFrameRate));
  }
  // Each value needs at least two characters ("0 "): refuse counts the file cannot possibly hold
  // before allocating for them.
  if (channels > 0 && static_cast<double>(h.frames) * channels * 2 > static_cast<double>(p.lines.remaining()) + 1) {
    const double could = std::floor((static_cast<double>(p.lines.remaining()) + 1) / (2.0 * channels));
    p.fail(fmt::format("'Frames: {}' but the rest of the file can hold at most {} rows of {} values "
                       "(truncated file or wrong frame count)", h.frames, could, channels));
  }
  // Frame rate: snap 0.0333333 to exactly 30 fps when within 1e-4.
  h.rate = 1.0 / frame_time;
  if (std::abs(h.rate - std::round(h.rate)) <= 1e-4 * h.rate) h.rate = std::round(h.rate);
  return h;
}

// A plain decimal ("-12.345", "7", ".5"; no exponent) of at most 19 digits whose digits fit in 2^53
// and whose decimals are at most 22: the value is digits / 10^decimals, both exact doubles, so one
// correctly rounded division gives exactly what from_chars gives (Clinger's fast path). Returns
// the end of the number, or nullptr when the text is anything else (from_chars then decides).
inline const char* parse_plain_decimal(const char* c, const char* end, double& out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = c < end && *c == '-';
  if (negative) ++c;
  std::uint64_t m = 0;
  int digits = 0, decimals = 0;
  while (c < end && static_cast<unsigned>(*c - '0') < 10 && digits < 19) {
    m = m * 10 + static_cast<unsigned>(*c++ - '0');
    ++digits;
  }
  if (c < end && *c == '.') {
    ++c;
    while (c < end && static_cast<unsigned>(*c - '0') < 10 && digits < 19) {
      m = m * 10 + static_cast<unsigned>(*c++ - '0');
      ++digits;
      ++decimals;
    }
  }
  if (digits == 0 || (c < end && !is_space(*c)) || m > (std::uint64_t{1} << 53) || decimals > 22) return nullptr;
  const double v = static_cast<double>(m) / kPow10[decimals];
  out = negative ? -v : v;
  return c;
}

// One motion row's values into `row` (room for `channels`); returns how many (0: a blank line).
// Fails on a value that is not a finite number, or on more than `channels` values.
inline int parse_row(const Parser& p, std::string_view line, int f, int channels, double* row) {
  const char* c = line.data();
  const char* end = c + line.size();
  int n = 0;
  for (;;) {
    while (c < end && is_space(*c)) ++c;
    if (c == end) break;
    if (n == channels) {
      p.fail(fmt::format("frame {} has more than the {} values the hierarchy declares", f, channels));
    }
    if (*c == '+') ++c;
    double v;
    if (const char* stop = parse_plain_decimal(c, end, v)) {
      row[n++] = v;
      c = stop;
      continue;
    }
    const auto [ptr, ec] = std::from_chars(c, end, v);
    if (ec != std::errc() || (ptr < end && !is_space(*ptr))) {
      const char* stop = c;
      while (stop < end && !is_space(*stop)) ++stop;
      p.fail(fmt::format("frame {}, value {}: '{}' is not a number", f, n + 1,
                         std::string_view(c, static_cast<size_t>(stop - c)).substr(0, 40)));
    }
    if (!std::isfinite(v)) {
      p.fail(fmt::format("frame {}, value {}: '{}' is not finite", f, n + 1,
                         std::string_view(c, static_cast<size_t>(ptr - c))));
    }
    row[n++] = v;
    c = ptr;
  }
  return n;
}

// Converts rows of values into each joint's rotation and translation (file units): half-angle
// sines and cosines of a whole row in one tight loop, then each joint's rotation as the product
// of its axis rotations in channel order. One per chunk of rows (it owns its scratch buffers).
class RowConverter {
 public:
  explicit RowConverter(const Skeleton& sk) : sk_(sk) {
    const int channels = sk.channel_count();
    row_.resize(static_cast<size_t>(channels));
    half_.resize(row_.size());
    sines_.resize(row_.size());
    cosines_.resize(row_.size());
    quadrant_.resize(row_.size());
    // Half-angle factor per channel: rotations in degrees to half radians; positions never reach
    // the sine kernel (their factor is 0).
    factor_.assign(row_.size(), 0.0);
    size_t i = 0;
    for (const auto& ch : sk.channels)
      for (const Channel c : ch) factor_[i++] = is_rotation(c) ? 0.5 * kDegToRad : 0.0;
  }
  double* row() { return row_.data(); }

  /// Converts the row; returns the index of a rotation value beyond kMaxRotationDeg (and converts
  /// nothing), or -1.
  int convert(Quat* rot, Vec3* tra) {
    const size_t channels = row_.size();
    constexpr double kLimit = 0.5 * kDegToRad * kMaxRotationDeg;
    double largest = 0.0;
    for (size_t i = 0; i < channels; ++i) {
      half_[i] = row_[i] * factor_[i];
      largest = std::max(largest, std::abs(half_[i]));
    }
    if (largest > kLimit) {
      for (size_t i = 0; i < channels; ++i)
        if (std::abs(half_[i]) > kLimit) return static_cast<int>(i);
    }
    detail::sincos_moderate(half_.data(), sines_.data(), cosines_.data(), quadrant_.data(), channels);
    int first = 0;
    for (int j = 0; j < sk_.joint_count(); ++j) {
      // q = q * (cos, sin * axis), written out per axis: 8 multiplies instead of a full product.
      double w = 1, x = 0, y = 0, z = 0;
      Vec3 tr = sk_.offsets[j];
      const auto& ch = sk_.channels[j];
      for (size_t k = 0; k < ch.size(); ++k) {
        const Channel cc = ch[k];
        const double co = cosines_[first + k], si = sines_[first + k];
        double nw, nx, ny, nz;
        switch (cc) {
          case Channel::Xrotation:
            nw = w * co - x * si; nx = x * co + w * si; ny = y * co + z * si; nz = z * co - y * si;
            break;
          case Channel::Yrotation:
            nw = w * co - y * si; nx = x * co - z * si; ny = y * co + w * si; nz = z * co + x * si;
            break;
          case Channel::Zrotation:
            nw = w * co - z * si; nx = x * co + y * si; ny = y * co - x * si; nz = z * co + w * si;
            break;
          default:
            tr[channel_axis(cc)] = row_[first + k];
            continue;
        }
        w = nw; x = nx; y = ny; z = nz;
      }
      first += static_cast<int>(ch.size());
      rot[j] = Quat(w, x, y, z);
      tra[j] = tr;
    }
    return -1;
  }

 private:
  const Skeleton& sk_;
  std::vector<double> row_, factor_, half_, sines_, cosines_;
  std::vector<std::int32_t> quadrant_;
};

bool blank(std::string_view line) { return std::all_of(line.begin(), line.end(), is_space); }

// A piece of the motion section that starts at a line start, with what precedes it.
struct Chunk {
  std::string_view text;
  int lines = 0;           // lines in the chunk
  int rows = 0;            // non-blank lines in the chunk
  int first_line = 0;      // lines before the chunk (its first line is first_line + 1)
  int first_frame = 0;     // rows before the chunk
  int last_frame_line = 0; // line of the last declared frame's row, when it is in this chunk
  std::exception_ptr error;
};

// Splits the motion section into chunks at line starts (4 MiB or more each, at most 64) and counts
// each chunk's lines and rows in parallel; then numbers them.
std::vector<Chunk> split_rows(std::string_view rest, int line_before) {
  const size_t want = std::clamp<size_t>(rest.size() >> 22, 1, 64);  // 4 MiB or more each: small files stay on one thread
  std::vector<Chunk> chunks;
  size_t begin = 0;
  for (size_t c = 1; c <= want && begin < rest.size(); ++c) {
    size_t end = c == want ? rest.size() : rest.size() / want * c;
    if (end < begin) end = begin;
    if (end < rest.size()) {
      const size_t nl = rest.find('\n', end);
      end = nl == std::string_view::npos ? rest.size() : nl + 1;
    }
    if (end > begin) {
      Chunk piece;
      piece.text = rest.substr(begin, end - begin);
      chunks.push_back(std::move(piece));
    }
    begin = end;
  }
  tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
    LineReader lines(chunks[c].text);
    std::string_view line;
    while (lines.next(line)) chunks[c].rows += blank(line) ? 0 : 1;
    chunks[c].lines = lines.line_no();
  });
  int line = line_before, frame = 0;
  for (Chunk& c : chunks) {
    c.first_line = line;
    c.first_frame = frame;
    line += c.lines;
    frame += c.rows;
  }
  return chunks;
}

// The rows of one chunk that are declared frames, into the motion's arrays.
void parse_chunk(std::string_view name, const MotionHeader& header, Chunk& chunk, Motion& m) {
  const int channels = m.skeleton.channel_count(), joints = m.skeleton.joint_count();
  Parser p{name, LineReader(chunk.text, chunk.first_line)};
  RowConverter conv(m.skeleton);
  std::string_view line;
  for (int f = chunk.first_frame; f < header.frames && p.lines.next(line);) {
    const int n = parse_row(p, line, f, channels, conv.row());
    if (n == 0) continue;  // blank line between rows
    if (n != channels) {
      p.fail(fmt::format("frame {} has {} values; the hierarchy declares {} channels", f, n, channels));
    }
    const int bad = conv.convert(m.rotations.data() + static_cast<size_t>(f) * joints,
                                 m.translations.data() + static_cast<size_t>(f) * joints);
    if (bad >= 0) {
      p.fail(fmt::format("frame {}, value {}: rotation {:g} degrees is beyond koma's limit of +-{:g}", f, bad + 1,
                         conv.row()[bad], kMaxRotationDeg));
    }
    if (++f == header.frames) chunk.last_frame_line = p.lines.line_no();
  }
}

// The motion rows: each joint's rotation and translation per declared frame (file units), chunks
// of rows on every core. Errors are those of a reading from the top: the first bad row's. Rows
// beyond the declared count are not read; a warning says how many there were.
void parse_motion_rows(Parser& p, const MotionHeader& header, Motion& m, ReadResult& result) {
  const int frames = header.frames;
  m.frame_rate = header.rate;
  m.frame_count = frames;
  const size_t values = static_cast<size_t>(frames) * m.skeleton.joint_count();
  // Left unwritten until the chunks write them (Eigen types do not zero-initialise), so each
  // page is first touched by the thread that fills it.
  m.rotations.resize(values);
  m.translations.resize(values);
  advise_huge_pages(m.rotations.data(), values * sizeof(Quat));
  advise_huge_pages(m.translations.data(), values * sizeof(Vec3));
  std::vector<Chunk> chunks = split_rows(p.lines.rest(), p.lines.line_no());
  tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
    if (chunks[c].first_frame >= frames) return;
    try {
      parse_chunk(p.name, header, chunks[c], m);
    } catch (...) {
      chunks[c].error = std::current_exception();
    }
  });
  int rows = 0, last_line = p.lines.line_no(), last_frame_line = 0;
  for (const Chunk& c : chunks) {
    if (c.error) std::rethrow_exception(c.error);
    rows += c.rows;
    last_line = c.first_line + c.lines;
    if (c.last_frame_line) last_frame_line = c.last_frame_line;
  }
  if (rows < frames) {
    throw Error(ErrorCode::bad_file, fmt::format("{}:{}", p.name, last_line),
                fmt::format("the file ends after {} of the {} frames declared on line {} (truncated?)", rows, frames,
                            header.frames_line));
  }
  if (rows > frames) {
    result.warnings.push_back(fmt::format("{}:{}: {} motion row(s) beyond the {} frames declared on line {} "
                                          "were ignored",
                                          p.name, last_frame_line + 1, rows - frames, header.frames, header.frames_line));
  }
}

// Unit: given (a name or a number of metres per unit) or detected from the figure's size, then
// everything converted to metres; a warning when a detected unit makes a figure of no human size.
void convert_unit(const BvhReadOptions& options, std::string_view name, ReadResult& result) {
  Motion& m = result.motion;
  Skeleton& sk = m.skeleton;
  if (!std::isfinite(options.scale) || options.scale < 0) {
    throw Error(ErrorCode::invalid_settings, "scale",
                fmt::format("{} metres per file unit; expected a finite number > 0 (or 0 to use unit)", options.scale));
  }
  double scale = 0;
  if (options.scale > 0) {
    scale = m.source_scale = options.scale;
    result.unit_rule = fmt::format("given: {:g} m per file unit", scale);
  } else if (options.unit) {
    m.source_unit = *options.unit;
    scale = metres_per_unit(m.source_unit);
    result.unit_rule = fmt::format("given: {}", to_string(m.source_unit));
  } else {
    const body::HeightEstimate h = body::estimate_height(m);
    const UnitGuess g = guess_length_unit(h.height);
    m.source_unit = g.unit;
    scale = metres_per_unit(g.unit);
    result.unit_detected = true;
    result.unit_rule = fmt::format("{} (height from the {})", g.rule, h.rule);
    if (!g.human_sized) {
      result.warnings.push_back(fmt::format("{}: {}, outside {:.1f}-{:.1f} m; set `unit` or `scale` if the file "
                                            "uses another unit",
                                            name, g.rule, kHumanMinHeight, kHumanMaxHeight));
    }
  }
  for (Vec3& o : sk.offsets) o *= scale;
  for (EndSite& e : sk.end_sites) e.offset *= scale;
  // Frames in parallel: a long take has tens of millions of translations.
  tbb::parallel_for(tbb::blocked_range<size_t>(0, m.translations.size(), size_t{1} << 16),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i < r.end(); ++i) m.translations[i] *= scale;
                    });
}

}  // namespace

ReadResult parse_bvh(std::string_view text, std::string_view name, const BvhReadOptions& options) {
  Parser p{name, LineReader(text)};
  if (text.empty()) p.fail("the file is empty; expected a BVH file starting with HIERARCHY");
  if (std::any_of(text.begin(), text.begin() + std::min<size_t>(text.size(), 4096), [](char c) { return c == '\0'; })) {
    throw Error(ErrorCode::bad_file, fmt::format("{}:1", name),
                "the file is binary (contains NUL bytes); expected BVH text starting with HIERARCHY");
  }
  // A file cut in the middle of its last number ("0.2468" cut to "0.") would still parse.
  if (const char last = text.back(); last == '.' || last == '-' || last == '+' || last == 'e' || last == 'E') {
    const auto lines = std::count(text.begin(), text.end(), '\n') + 1;
    throw Error(ErrorCode::bad_file, fmt::format("{}:{}", name, lines),
                fmt::format("the file ends in the middle of a number ('{}' with no line end); truncated?", last));
  }
  ReadResult result;
  parse_hierarchy(p, result.motion.skeleton);
  const MotionHeader header = parse_motion_header(p, result.motion.skeleton.channel_count(),
                                                     result.motion.skeleton.joint_count());
  parse_motion_rows(p, header, result.motion, result);
  convert_unit(options, name, result);
  // Every value was checked finite as it was read and rotations are products of unit
  // quaternions, so only the skeleton's invariants remain to check.
  result.motion.skeleton.validate();
  return result;
}

ReadResult read_bvh(const std::filesystem::path& path, const BvhReadOptions& options) {
  const FileBytes text(path);
  ReadResult r = parse_bvh(text.view(), path.string(), options);
  r.motion.name = clip_name_from_path(path);  // BVH has no animation names: the file's ("walk.bvh" -> "walk")
  return r;
}

}  // namespace koma::io
