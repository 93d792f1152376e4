// The binary and ASCII encodings of an FBX 7.4 document (see fbx_document.hpp).
//
// Binary layout (version 7400): the 23-byte magic "Kaydara FBX Binary  \0\x1a\0", the version as
// uint32, then records. A record is: end offset (uint32, absolute), property count (uint32),
// property bytes (uint32), name length (uint8), name, the properties, then its children followed by
// a 13-byte null record when it has children (or no properties, so it still reads as a scope). The
// top-level list ends with a null record; the footer that follows (an id, padding to 16 bytes, the
// version, 120 zero bytes and a fixed 16-byte tail) is what the FBX SDK and three.js expect.
#include "fbx_document.hpp"

#include <fmt/format.h>

#include <cstring>
#include <type_traits>

#include "koma/core/error.hpp"

namespace koma::io::fbx_detail {

Record& Record::add(std::string child_name, std::vector<Property> props) {
  children.push_back(Record{std::move(child_name), std::move(props), {}, false});
  return children.back();
}

Record p70(const std::string& name, const std::string& type, const std::string& label, const std::string& flags,
           std::vector<Property> values) {
  Record r{"P", {name, type, label, flags}, {}, false};
  r.properties.insert(r.properties.end(), values.begin(), values.end());
  return r;
}

namespace {

constexpr std::uint32_t kVersion = 7400;
// Fixed values of the format: the FileId and footer id that go with the CreationTime
// "1970-01-01 10:00:00:000" (files then need no real time stamp, so the same input gives the same
// bytes), and the footer's closing 16 bytes.
constexpr unsigned char kFileId[16] = {0x28, 0xb3, 0x2a, 0xeb, 0xb6, 0x24, 0xcc, 0xc2,
                                       0xbf, 0xc8, 0xb0, 0x2a, 0xa9, 0x2b, 0xfc, 0xf1};
constexpr unsigned char kFooterId[16] = {0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66,
                                         0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26, 0x7e};
constexpr unsigned char kFooterTail[16] = {0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e,
                                           0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b};

template <typename T>
void put(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_length(std::string& out, size_t n, const std::string& what) {
  if (n > 0xFFFFFFFFu) throw Error(ErrorCode::bad_data, what, "too large for an FBX 7.4 file (4 GB records)");
  put<std::uint32_t>(out, static_cast<std::uint32_t>(n));
}

template <typename T>
void put_array(std::string& out, char code, const std::vector<T>& a) {
  out += code;
  put_length(out, a.size(), "array");
  put<std::uint32_t>(out, 0);  // encoding 0: not compressed
  put_length(out, a.size() * sizeof(T), "array");
  const size_t at = out.size();
  out.resize(at + a.size() * sizeof(T));
  if (!a.empty()) std::memcpy(&out[at], a.data(), a.size() * sizeof(T));
}

void put_property(std::string& out, const Property& p) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int32_t>) {
          out += 'I';
          put(out, v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out += 'L';
          put(out, v);
        } else if constexpr (std::is_same_v<T, double>) {
          out += 'D';
          put(out, v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += 'S';
          put_length(out, v.size(), "string");
          out += v;
        } else if constexpr (std::is_same_v<T, ObjectName>) {
          const std::string s = v.name + std::string("\x00\x01", 2) + v.cls;
          out += 'S';
          put_length(out, s.size(), "name");
          out += s;
        } else if constexpr (std::is_same_v<T, RawBytes>) {
          out += 'R';
          put_length(out, v.bytes.size(), "raw bytes");
          out += v.bytes;
        } else if constexpr (std::is_same_v<T, std::vector<std::int32_t>>) {
          put_array(out, 'i', v);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          put_array(out, 'l', v);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          put_array(out, 'f', v);
        } else {
          put_array(out, 'd', v);
        }
      },
      p);
}

void put_record(std::string& out, const Record& r) {
  const size_t start = out.size();
  put<std::uint32_t>(out, 0);  // end offset, patched below
  put_length(out, r.properties.size(), r.name);
  put<std::uint32_t>(out, 0);  // property bytes, patched below
  if (r.name.size() > 255) throw Error(ErrorCode::bad_data, r.name, "FBX record name longer than 255 bytes");
  out += static_cast<char>(r.name.size());
  out += r.name;
  const size_t props = out.size();
  for (const Property& p : r.properties) put_property(out, p);
  const std::uint32_t prop_bytes = static_cast<std::uint32_t>(out.size() - props);
  std::memcpy(&out[start + 8], &prop_bytes, 4);
  if (!r.children.empty() || r.properties.empty() || r.scope) {
    for (const Record& c : r.children) put_record(out, c);
    out.append(13, '\0');  // end of the nested list
  }
  if (out.size() > 0xFFFFFFFFu) throw Error(ErrorCode::bad_data, r.name, "the FBX 7.4 file would exceed 4 GB");
  const auto end = static_cast<std::uint32_t>(out.size());
  std::memcpy(&out[start], &end, 4);
}

// ASCII strings: FBX writes a double quote inside a string as &quot;.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "&quot;";
    else out += c;
  }
  return out + "\"";
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

template <typename T>
std::string ascii_array(const std::vector<T>& a, const std::string& indent) {
  std::string out = fmt::format("*{} {{\n{}\ta: ", a.size(), indent);
  for (size_t i = 0; i < a.size(); ++i) {
    if (i) out += (i % 16 == 0) ? ",\n" + indent + "\t" : ",";
    out += fmt::format("{}", a[i]);
  }
  return out + "\n" + indent + "}";
}

std::string ascii_property(const Property& p, const std::string& indent) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return quoted(v);
        else if constexpr (std::is_same_v<T, ObjectName>) return quoted(v.cls + "::" + v.name);
        else if constexpr (std::is_same_v<T, RawBytes>) return quoted(base64(v.bytes));
        else if constexpr (std::is_arithmetic_v<T>) return fmt::format("{}", v);
        else return ascii_array(v, indent);
      },
      p);
}

void put_ascii(std::string& out, const Record& r, int depth) {
  const std::string indent(static_cast<size_t>(depth), '\t');
  out += indent + r.name + ": ";
  for (size_t i = 0; i < r.properties.size(); ++i) out += (i ? ", " : "") + ascii_property(r.properties[i], indent);
  if (r.children.empty() && !r.properties.empty() && !r.scope) {
    out += "\n";
    return;
  }
  out += " {\n";
  for (const Record& c : r.children) put_ascii(out, c, depth + 1);
  out += indent + "}\n";
}

// The creation time and creator records (a fixed time: see kFileId).
std::vector<Record> stamp() {
  return {Record{"CreationTime", {std::string("1970-01-01 10:00:00:000")}, {}},
          Record{"Creator", {std::string("koma")}, {}}};
}

}  // namespace

std::string encode_binary(const std::vector<Record>& top) {
  std::string out("Kaydara FBX Binary  \x00\x1a\x00", 23);
  put<std::uint32_t>(out, kVersion);
  for (size_t i = 0; i < top.size(); ++i) {
    put_record(out, top[i]);
    if (i == 0) {  // after the header extension, as the FBX SDK writes them
      put_record(out, Record{"FileId", {RawBytes{std::string(reinterpret_cast<const char*>(kFileId), 16)}}, {}});
      for (const Record& r : stamp()) put_record(out, r);
    }
  }
  out.append(13, '\0');  // end of the top-level list
  out.append(reinterpret_cast<const char*>(kFooterId), 16);
  size_t pad = ((out.size() + 15) & ~size_t{15}) - out.size();
  out.append(pad == 0 ? 16 : pad, '\0');
  put<std::uint32_t>(out, kVersion);
  out.append(120, '\0');
  out.append(reinterpret_cast<const char*>(kFooterTail), 16);
  return out;
}

std::string encode_ascii(const std::vector<Record>& top) {
  std::string out = "; FBX 7.4.0 project file\n; Created by koma\n; ----------------------------------------------------\n\n";
  for (size_t i = 0; i < top.size(); ++i) {
    put_ascii(out, top[i], 0);
    if (i == 0)
      for (const Record& r : stamp()) put_ascii(out, r, 0);
  }
  return out;
}

}  // namespace koma::io::fbx_detail
