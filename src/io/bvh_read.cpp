// BVH reader. Two phases over the text held in memory: a line-oriented hierarchy parser (names may
// contain spaces and colons; braces may share a line with their keyword), then a row parser over
// the motion section that converts numbers with std::from_chars straight into the dense arrays.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "koma/core/atomic_file.hpp"
#include "koma/core/error.hpp"
#include "koma/core/fk.hpp"
#include "koma/body/height.hpp"
#include "koma/io/bvh.hpp"
#include "fast_trig.hpp"

namespace koma::io {

namespace {

// Upper bound on declared frames: ten hours at 120 fps. Beyond it a count is a corrupt header.
constexpr long long kMaxFrames = 10LL * 3600 * 120;

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
  explicit LineReader(std::string_view text) : text_(text) {}
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
      if (t.starts_with("\xEF\xBB\xBF")) t.remove_prefix(3);
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
      std::string_view joint_name = trim(t.substr(key.size()));
      if (joint_name.empty()) p.fail(fmt::format("expected a joint name after {}", key));
      if (sk.find(joint_name) >= 0) p.fail(fmt::format("joint name '{}' is used twice", joint_name));
      sk.names.emplace_back(joint_name);
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

MotionHeader parse_motion_header(Parser& p, int channels) {
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
  MotionHeader h;
  h.frames = static_cast<int>(declared);
  h.frames_line = p.lines.line_no();
  t = next_content("Frame Time: <seconds>");
  const auto ftok = tokens(t);
  if (ftok.size() != 3 || !iequals(ftok[0], "Frame") || !iequals(ftok[1], "Time:")) {
    p.fail(fmt::format("expected 'Frame Time: <seconds>', found '{}'", t.substr(0, 40)));
  }
  double frame_time = 0;
  if (!parse_double(ftok[2], frame_time) || !std::isfinite(frame_time) || frame_time <= 0) {
    p.fail(fmt::format("frame time '{}' must be a number of seconds > 0", ftok[2]));
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

// The motion rows: each joint's rotation and translation per declared frame (file units).
void parse_motion_rows(Parser& p, const MotionHeader& header, Motion& m) {
  const Skeleton& sk = m.skeleton;
  const int frames = header.frames;
  const int channels = sk.channel_count();
  m.frame_rate = header.rate;
  m.frame_count = frames;
  const int joints = sk.joint_count();
  m.rotations.resize(static_cast<size_t>(frames) * joints);
  m.translations.resize(m.rotations.size());

  // Per joint: where its values start in a row, and a small plan for converting them.
  struct Plan {
    int first = 0;
    int count = 0;
  };
  std::vector<Plan> plan(joints);
  {
    int at = 0;
    for (int j = 0; j < joints; ++j) {
      plan[j] = {at, static_cast<int>(sk.channels[j].size())};
      at += plan[j].count;
    }
  }
  std::vector<double> row(static_cast<size_t>(channels));
  const double half_deg = 0.5 * kDegToRad;
  std::vector<double> half(static_cast<size_t>(channels)), sines(half.size()), cosines(half.size());
  std::vector<std::int32_t> quadrant(half.size());
  std::string_view line;
  int f = 0;
  while (f < frames) {
    if (!p.lines.next(line)) {
      p.fail(fmt::format("the file ends after {} of the {} frames declared on line {} (truncated?)", f, frames,
                         header.frames_line));
    }
    const int n = parse_row(p, line, f, channels, row.data());
    if (n == 0) continue;  // blank line between rows
    if (n != channels) {
      p.fail(fmt::format("frame {} has {} values; the hierarchy declares {} channels", f, n, channels));
    }
    // Half-angle sines and cosines of the whole row in one tight loop, then each joint's rotation
    // as the product of its axis rotations in channel order.
    for (int i = 0; i < channels; ++i) half[i] = row[i] * half_deg;
    detail::sincos_moderate(half.data(), sines.data(), cosines.data(), quadrant.data(), half.size());
    Quat* rot = m.rotations.data() + static_cast<size_t>(f) * joints;
    Vec3* tra = m.translations.data() + static_cast<size_t>(f) * joints;
    for (int j = 0; j < joints; ++j) {
      // q = q * (cos, sin * axis), written out per axis: 8 multiplies instead of a full product.
      double w = 1, x = 0, y = 0, z = 0;
      Vec3 tr = sk.offsets[j];
      const int first = plan[j].first;
      const auto& ch = sk.channels[j];
      for (int k = 0; k < plan[j].count; ++k) {
        const Channel cc = ch[k];
        const double co = cosines[first + k], si = sines[first + k];
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
            tr[channel_axis(cc)] = row[static_cast<size_t>(first + k)];
            continue;
        }
        w = nw; x = nx; y = ny; z = nz;
      }
      const Quat q(w, x, y, z);
      rot[j] = q;
      tra[j] = tr;
    }
    ++f;
  }
}

// Rows beyond the declared count: the header's count is what is read; a warning says what was
// ignored.
void skip_extra_rows(Parser& p, const MotionHeader& header, ReadResult& result) {
  std::string_view line;
  int extra = 0;
  const int first_extra = p.lines.line_no() + 1;
  while (p.lines.next(line)) {
    if (!trim(line).empty()) ++extra;
  }
  if (extra > 0) {
    result.warnings.push_back(fmt::format("{}:{}: {} motion row(s) beyond the {} frames declared on line {} "
                                          "were ignored",
                                          p.name, first_extra, extra, header.frames, header.frames_line));
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
  for (Vec3& v : m.translations) v *= scale;
}

}  // namespace

ReadResult parse_bvh(std::string_view text, std::string_view name, const BvhReadOptions& options) {
  Parser p{name, LineReader(text)};
  if (text.empty()) p.fail("the file is empty; expected a BVH file starting with HIERARCHY");
  if (std::any_of(text.begin(), text.begin() + std::min<size_t>(text.size(), 4096), [](char c) { return c == '\0'; })) {
    throw Error(ErrorCode::bad_file, fmt::format("{}:1", name),
                "the file is binary (contains NUL bytes); expected BVH text starting with HIERARCHY");
  }
  ReadResult result;
  parse_hierarchy(p, result.motion.skeleton);
  const MotionHeader header = parse_motion_header(p, result.motion.skeleton.channel_count());
  parse_motion_rows(p, header, result.motion);
  skip_extra_rows(p, header, result);
  convert_unit(options, name, result);
  // Every value was checked finite as it was read and rotations are products of unit
  // quaternions, so only the skeleton's invariants remain to check.
  result.motion.skeleton.validate();
  return result;
}

ReadResult read_bvh(const std::filesystem::path& path, const BvhReadOptions& options) {
  const std::string text = read_file(path);
  return parse_bvh(text, path.string(), options);
}

}  // namespace koma::io
