#include "fbx_precheck.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "koma/core/checked.hpp"
#include "koma/core/error.hpp"
#include "koma/core/text.hpp"

namespace koma::io::fbx_detail {

namespace {

// An object link of the Connections section: child (source) -> parent (destination).
struct Link {
  std::int64_t child = 0, parent = 0;
  size_t where = 0;  // byte offset (binary) or line (ASCII)
};

// The links form no cycle and no chain longer than kMaxChain. Depth-first over the parents of
// every object, without recursion; `where` names a link in messages.
void check_links(const std::vector<Link>& links, const std::string& file, bool binary) {
  std::unordered_map<std::int64_t, std::vector<size_t>> parents;  // object -> its links
  for (size_t i = 0; i < links.size(); ++i) parents[links[i].child].push_back(i);
  const auto where = [&](size_t link) {
    return binary ? fmt::format("{}: byte {}", file, links[link].where) : fmt::format("{}:{}", file, links[link].where);
  };
  enum : std::uint8_t { unseen, open, done };
  std::unordered_map<std::int64_t, std::uint8_t> state;
  std::unordered_map<std::int64_t, int> depth;  // longest chain of links above an object
  for (const auto& [start, unused] : parents) {
    if (state[start] != unseen) continue;
    // Stack of (object, next link to follow).
    std::vector<std::pair<std::int64_t, size_t>> stack{{start, 0}};
    state[start] = open;
    while (!stack.empty()) {
      auto& [object, next] = stack.back();
      const auto it = parents.find(object);
      const size_t count = it == parents.end() ? 0 : it->second.size();
      if (next < count) {
        const size_t link = it->second[next++];
        const std::int64_t parent = links[link].parent;
        if (state[parent] == open)
          throw Error(ErrorCode::bad_file, where(link),
                      fmt::format("Connections: object {} is linked under {}, which already hangs below it: the "
                                  "objects form a cycle (a node that is its own ancestor)",
                                  links[link].child, parent));
        if (state[parent] == unseen) {
          state[parent] = open;
          stack.emplace_back(parent, 0);
        }
        continue;
      }
      int d = 0;
      if (it != parents.end())
        for (size_t link : it->second) d = std::max(d, depth[links[link].parent] + 1);
      if (d > kMaxChain)
        throw Error(ErrorCode::bad_file, where(it->second.front()),
                    fmt::format("Connections: object {} hangs {} links below the top; koma reads chains of at most "
                                "{} (a bone chain that long is not a character)",
                                object, d, kMaxChain));
      depth[object] = d;
      state[object] = done;
      stack.pop_back();
    }
  }
}

// assimp 5.2.5 copies a model's own properties into its node's metadata and aborts (ai_assert) on
// the two types it reads but cannot store: KTime and ColorAndAlpha.
[[noreturn]] void unconvertible_type(std::string_view type, const std::string& where) {
  throw Error(ErrorCode::bad_file, where,
              fmt::format("a model (Objects: Model) has a property of type {}, which assimp 5.2.5 reads but cannot "
                          "convert (it aborts); koma cannot read this file through it",
                          printable(type)));
}

bool unconvertible(std::string_view type) { return type == "KTime" || type == "ColorAndAlpha"; }

// --- binary ---------------------------------------------------------------------------------------

class Binary {
 public:
  Binary(std::string_view bytes, const std::string& file) : b_(bytes), file_(file) {}

  void check() {
    if (b_.size() < 27) fail(0, "the binary header is cut short");
    std::uint32_t version = 0;
    std::memcpy(&version, b_.data() + 23, 4);
    wide_ = version >= 7500;
    const size_t head = wide_ ? 25 : 13;
    // Scopes: the end of each open record; the file's top level ends at the null record.
    std::vector<size_t> ends{b_.size()};
    std::vector<std::string_view> scopes{""};  // the names of the open records
    size_t pos = 27;
    while (!ends.empty()) {
      const size_t scope_end = ends.back();
      if (pos == scope_end && ends.size() > 1) {  // a record's list ended without a null record
        ends.pop_back();
        scopes.pop_back();
        continue;
      }
      if (pos + head > scope_end) {
        if (ends.size() == 1) return;  // no null record at the top level: assimp reports it
        fail(pos, fmt::format("a record header ({} bytes) runs past the end of its parent record (byte {})", head,
                              scope_end));
      }
      const std::uint64_t end = word(pos), props = word(pos + (wide_ ? 8 : 4)), plen = word(pos + (wide_ ? 16 : 8));
      const unsigned name_len = static_cast<unsigned char>(b_[pos + head - 1]);
      if (end == 0 && props == 0 && plen == 0 && name_len == 0) {  // the null record ends a scope
        pos += head;
        if (ends.size() == 1) return;  // the top level's end: the footer follows
        if (pos != ends.back())
          fail(pos, fmt::format("a record list ends at byte {} but its parent record says byte {}", pos, ends.back()));
        ends.pop_back();
        scopes.pop_back();
        continue;
      }
      const size_t body = pos + head + name_len;
      if (end <= pos || end > scope_end)
        fail(pos, fmt::format("record ends at byte {} (EndOffset), outside its parent's bytes {}..{}", end, pos,
                              scope_end));
      if (body > end || plen > end - body)
        fail(pos, fmt::format("record's property list of {} bytes (PropertyListLen) runs past its end at byte {}",
                              plen, end));
      const std::string_view name = b_.substr(pos + head, name_len);
      const bool link = scopes.size() == 2 && scopes[1] == "Connections" && name == "C";
      const bool model_property = scopes.size() == 4 && scopes[1] == "Objects" && scopes[2] == "Model" &&
                                  scopes[3] == "Properties70" && name == "P";
      properties(body, static_cast<size_t>(plen), props, link, name == "KeyValueFloat", model_property);
      const size_t after = body + static_cast<size_t>(plen);
      if (after < end) {  // nested records follow
        if (static_cast<int>(ends.size()) > kMaxNesting)
          fail(pos, fmt::format("records nest more than {} deep; real files nest fewer than 10", kMaxNesting));
        ends.push_back(static_cast<size_t>(end));
        scopes.push_back(name);
        pos = after;
      } else {
        pos = static_cast<size_t>(end);
      }
    }
  }

  const std::vector<Link>& links() const { return links_; }

 private:
  std::uint64_t word(size_t at) const {
    if (wide_) {
      std::uint64_t v = 0;
      std::memcpy(&v, b_.data() + at, 8);
      return v;
    }
    std::uint32_t v = 0;
    std::memcpy(&v, b_.data() + at, 4);
    return v;
  }
  std::uint32_t u32(size_t at) const {
    std::uint32_t v = 0;
    std::memcpy(&v, b_.data() + at, 4);
    return v;
  }
  [[noreturn]] void fail(size_t at, const std::string& message) const {
    throw Error(ErrorCode::bad_file, fmt::format("{}: byte {}", file_, at), message);
  }

  // The properties of one record, in [at, at + length); a Connections link is remembered.
  void properties(size_t at, size_t length, std::uint64_t count, bool link, bool key_values, bool model_property) {
    const size_t end = at + length;
    std::string_view kind;
    std::int64_t ids[2] = {0, 0};
    int id_count = 0;
    for (std::uint64_t k = 0; k < count; ++k) {
      if (at >= end) fail(at, fmt::format("record claims {} properties (NumProperties) but its {} bytes hold {}",
                                          count, length, k));
      const char type = b_[at++];
      size_t size = 0;
      switch (type) {
        case 'C': case 'B': size = 1; break;
        case 'Y': size = 2; break;
        case 'I': case 'F': size = 4; break;
        case 'D': case 'L': size = 8; break;
        case 'S': case 'R':
          if (at + 4 > end) fail(at, "a string property's length runs past the record");
          size = 4 + u32(at);
          if (type == 'S' && link && k == 0 && at + size <= end) kind = b_.substr(at + 4, size - 4);
          if (type == 'S' && model_property && k == 1 && at + size <= end)
            check_model_property_type(b_.substr(at + 4, size - 4), at);
          break;
        case 'f': case 'd': case 'l': case 'i': case 'b': case 'c':
          size = array(at, end, type);
          if (key_values && (type == 'f' || type == 'd')) key_value_splits(at, type);
          break;
        default:
          fail(at - 1, fmt::format("unknown property type '{}' (byte 0x{:02x})", printable(std::string(1, type)),
                                   static_cast<unsigned char>(type)));
      }
      if (size > end - at) fail(at, fmt::format("a '{}' property of {} bytes runs past the record", type, size));
      if (link && type == 'L' && id_count < 2) std::memcpy(&ids[id_count++], b_.data() + at, 8);
      at += size;
    }
    if (link && kind == "OO" && id_count == 2) links_.push_back({ids[0], ids[1], at});
  }

  // An array property at `at` (after its type): its size in the file, its count checked.
  size_t array(size_t at, size_t end, char type) const {
    if (at + 12 > end) fail(at, "an array property's header runs past the record");
    const std::uint64_t count = u32(at), encoding = u32(at + 4), stored = u32(at + 8);
    const std::uint64_t element = type == 'd' || type == 'l' ? 8 : type == 'f' || type == 'i' ? 4 : 1;
    const std::uint64_t bytes = count * element;  // at most 2^32 * 8: no overflow in 64 bits
    if (stored > end - at - 12)
      fail(at, fmt::format("an array's {} stored bytes run past the record", stored));
    if (bytes > UINT32_MAX)
      fail(at, fmt::format("an array claims {} elements of {} bytes: more than 4 GiB", count, element));
    if (encoding == 0 && bytes != stored)
      fail(at, fmt::format("an array claims {} elements ({} bytes) but stores {} bytes", count, bytes, stored));
    // zlib inflates at most 1032:1 (deflate's longest match per bit); a claim beyond is a lie.
    if (encoding == 1 && bytes > 1032 * stored + 64)
      fail(at, fmt::format("an array claims {} elements ({} bytes) from {} zlib bytes: zlib cannot inflate them "
                           "to more than {}",
                           count, bytes, stored, 1032 * stored + 64));
    if (encoding > 1) fail(at, fmt::format("an array's encoding is {}; FBX knows 0 (raw) and 1 (zlib)", encoding));
    return 12 + static_cast<size_t>(stored);
  }

  void check_model_property_type(std::string_view type, size_t at) const {
    if (unconvertible(type)) unconvertible_type(type, fmt::format("{}: byte {}", file_, at));
  }

  // A curve's values (an array checked by array()): the keys assimp would insert, one per 179
  // units of change between two keys (FBXConverter::GetKeyframeList splits every jump of 180 or
  // more: a value of 1e35 made it loop without end, growing until memory ran out).
  void key_value_splits(size_t at, char type) {
    const std::uint32_t count = u32(at), encoding = u32(at + 4), stored = u32(at + 8);
    const size_t element = type == 'd' ? 8 : 4;
    if (count > sample_budget(b_.size()))
      fail(at, fmt::format("a curve claims {} key values (KeyValueFloat), more than a file of {} bytes can make "
                           "plausible ({})",
                           count, b_.size(), sample_budget(b_.size())));
    std::string raw;
    if (encoding == 0) {
      raw.assign(b_.substr(at + 12, stored));
    } else {
      raw.resize(static_cast<size_t>(count) * element);
      uLongf got = static_cast<uLongf>(raw.size());
      if (::uncompress(reinterpret_cast<Bytef*>(raw.data()), &got,
                       reinterpret_cast<const Bytef*>(b_.data() + at + 12), stored) != Z_OK)
        fail(at, fmt::format("a zlib array of {} stored bytes does not inflate", stored));
      raw.resize(got);
    }
    double previous = 0.0;
    for (size_t i = 0; i + element <= raw.size(); i += element) {
      double v = 0.0;
      if (element == 8) {
        std::memcpy(&v, raw.data() + i, 8);
      } else {
        float f = 0.0f;
        std::memcpy(&f, raw.data() + i, 4);
        v = f;
      }
      if (i > 0) splits_ += std::floor(std::abs(v - previous) / 179.0);
      previous = v;
    }
  }

 public:
  /// Keys assimp would insert into the curves (key_value_splits); infinite for an infinite jump.
  double splits() const { return splits_; }

 private:
  std::string_view b_;
  const std::string& file_;
  bool wide_ = false;
  std::vector<Link> links_;
  double splits_ = 0.0;
};

// --- ASCII ----------------------------------------------------------------------------------------

class Ascii {
 public:
  Ascii(std::string_view text, const std::string& file) : t_(text), file_(file) {}

  void check() {
    int depth = 0;
    size_t line = 1;
    std::string_view key, top;  // the last key (`Name:`) and the open top-level scope's key
    std::vector<std::string_view> scopes;  // keys of the open braces
    bool line_start = true;
    for (size_t i = 0; i < t_.size(); ++i) {
      const char c = t_[i];
      if (c == '\n') {
        ++line;
        line_start = true;
        continue;
      }
      if (c == ';') {
        i = std::min(t_.find('\n', i), t_.size()) - 1;
        continue;
      }
      if (c == '"') {
        const size_t close = t_.find('"', i + 1);
        if (close == std::string_view::npos) fail(line, "a string (\") is not closed before the end of the file");
        line += static_cast<size_t>(std::count(t_.begin() + static_cast<std::ptrdiff_t>(i),
                                               t_.begin() + static_cast<std::ptrdiff_t>(close), '\n'));
        i = close;
        line_start = false;
        continue;
      }
      if (c == '{') {
        if (++depth > kMaxNesting)
          fail(line, fmt::format("braces nest more than {} deep; real files nest fewer than 10", kMaxNesting));
        if (depth == 1) top = key;
        scopes.push_back(key);
      } else if (c == '}') {
        if (--depth < 0) fail(line, "a closing brace '}' has no opening brace");
        scopes.pop_back();
      } else if (c == '*') {
        array_count(i, line);
        if (key == "KeyValueFloat") ascii_splits(i);
      } else if (line_start && (std::isalpha(static_cast<unsigned char>(c)) || c == '_')) {
        size_t e = i;
        while (e < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[e])) || t_[e] == '_' || t_[e] == '|'))
          ++e;
        if (e < t_.size() && t_[e] == ':') {
          key = t_.substr(i, e - i);
          if (depth == 1 && top == "Connections" && key == "C") link(e + 1, line);
          if (key == "P" && scopes.size() == 3 && scopes[0] == "Objects" && scopes[1] == "Model" &&
              scopes[2] == "Properties70")
            model_property(e + 1, line);
        }
        i = e - 1;
      }
      if (c != ' ' && c != '\t' && c != '\r') line_start = false;
    }
    if (depth != 0) fail(line, fmt::format("{} brace(s) '{{' are not closed at the end of the file", depth));
  }

  const std::vector<Link>& links() const { return links_; }

 private:
  [[noreturn]] void fail(size_t line, const std::string& message) const {
    throw Error(ErrorCode::bad_file, fmt::format("{}:{}", file_, line), message);
  }

  // "*N {": N elements need at least N bytes after it.
  void array_count(size_t at, size_t line) const {
    std::uint64_t n = 0;
    size_t i = at + 1;
    for (; i < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i])); ++i)
      n = std::min<std::uint64_t>(n * 10 + static_cast<std::uint64_t>(t_[i] - '0'), UINT64_MAX / 20);
    if (i > at + 1 && n > t_.size() - i)
      fail(line, fmt::format("an array claims *{} elements but the file has {} bytes after it",
                             printable(t_.substr(at + 1, std::min<size_t>(i - at - 1, 24))), t_.size() - i));
  }

  // "*N { a: v,v,... }" of a curve: the keys assimp would insert (Binary::key_value_splits).
  void ascii_splits(size_t at) {
    const size_t open = t_.find('{', at), close = t_.find('}', at);
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
    const std::string_view block = t_.substr(open + 1, close - open - 1);
    const size_t colon = block.find(':');
    if (colon == std::string_view::npos) return;
    bool first = true;
    double previous = 0.0;
    for (size_t p = colon + 1; p < block.size();) {
      const size_t comma = std::min(block.find(',', p), block.size());
      const std::string number(block.substr(p, comma - p));
      const double v = std::strtod(number.c_str(), nullptr);
      if (!first) splits_ += std::floor(std::abs(v - previous) / 179.0);
      previous = v;
      first = false;
      p = comma + 1;
    }
  }

 public:
  double splits() const { return splits_; }

 private:
  // `P: "name", "type", ...` of a model: its type (the second string).
  void model_property(size_t at, size_t line) const {
    const size_t eol = std::min(t_.find('\n', at), t_.size());
    size_t q = at;
    for (int k = 0; k < 3; ++k) {  // the opening quote of the second string
      q = t_.find('"', q);
      if (q == std::string_view::npos || q >= eol) return;
      ++q;
    }
    const size_t close = t_.find('"', q);
    if (close == std::string_view::npos || close >= eol) return;
    const std::string_view type = t_.substr(q, close - q);
    if (unconvertible(type)) unconvertible_type(type, fmt::format("{}:{}", file_, line));
  }

  // `C: "OO",child,parent`: an object link.
  void link(size_t at, size_t line) {
    const size_t eol = std::min(t_.find('\n', at), t_.size());
    std::string_view rest = t_.substr(at, eol - at);
    std::vector<std::string_view> parts;
    for (size_t p = 0; p <= rest.size();) {
      const size_t comma = std::min(rest.find(',', p), rest.size());
      std::string_view part = rest.substr(p, comma - p);
      while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
      while (!part.empty() && (part.back() == ' ' || part.back() == '\r' || part.back() == '\t')) part.remove_suffix(1);
      parts.push_back(part);
      p = comma + 1;
    }
    if (parts.size() < 3 || parts[0] != "\"OO\"") return;
    // An id is its leading digits, as assimp reads it ("100001\xf3" is 100001).
    std::int64_t ids[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const std::string_view s = parts[static_cast<size_t>(k) + 1];
      const bool negative = !s.empty() && s.front() == '-';
      std::uint64_t v = 0;
      size_t i = negative ? 1 : 0;
      for (; i < s.size() && i < 20 && std::isdigit(static_cast<unsigned char>(s[i])); ++i)
        v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
      if (i == (negative ? 1u : 0u)) return;
      ids[k] = static_cast<std::int64_t>(negative ? 0 - v : v);
    }
    links_.push_back({ids[0], ids[1], line});
  }

  std::string_view t_;
  const std::string& file_;
  std::vector<Link> links_;
  double splits_ = 0.0;
};

// The keys assimp would insert into the file's curves, against what its size makes plausible.
void check_splits(double splits, std::uint64_t bytes, const std::string& file) {
  const auto budget = static_cast<double>(sample_budget(bytes));
  if (!(splits <= budget))
    throw Error(ErrorCode::bad_file, file,
                fmt::format("animation curves (KeyValueFloat) jump so far between keys that assimp would insert {:g} "
                            "keys (one per 179 units of change), more than a file of {} bytes can make plausible "
                            "({:g}); a key value is wrong",
                            splits, bytes, budget));
}

}  // namespace

void precheck_fbx(std::string_view bytes, const std::string& file) {
  static constexpr char kMagic[] = "Kaydara FBX Binary  ";
  if (bytes.size() >= 20 && std::memcmp(bytes.data(), kMagic, 20) == 0) {
    Binary b(bytes, file);
    b.check();
    check_links(b.links(), file, true);
    check_splits(b.splits(), bytes.size(), file);
  } else {
    Ascii a(bytes, file);
    a.check();
    check_links(a.links(), file, false);
    check_splits(a.splits(), bytes.size(), file);
  }
}

}  // namespace koma::io::fbx_detail
