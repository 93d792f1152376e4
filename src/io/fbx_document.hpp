// Private to src/io: an FBX 7.4 document as a tree of records, and its two encodings (binary and
// ASCII). The FBX writer (fbx_write.cpp) builds the tree; these functions only encode it.
//
// A record is `Name: property, property, ... { children }`. Properties are typed: 32/64-bit
// integers, doubles, strings, raw bytes, and arrays of ints, longs, floats and doubles. Object names
// are written "Class::Name" in ASCII and "Name\x00\x01Class" in binary (ObjectName).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace koma::io::fbx_detail {

/// An object's "Class::Name" property (Model::Hips).
struct ObjectName {
  std::string cls;
  std::string name;
};
/// Raw bytes (the binary FileId, an embedded image): type 'R' in binary, base64 in ASCII.
struct RawBytes {
  std::string bytes;
};

using Property = std::variant<std::int32_t, std::int64_t, double, std::string, ObjectName, RawBytes,
                              std::vector<std::int32_t>, std::vector<std::int64_t>, std::vector<float>,
                              std::vector<double>>;

/// One record of the document.
struct Record {
  std::string name;
  std::vector<Property> properties;
  std::vector<Record> children;
  /// Written with a (possibly empty) scope `{ }` even without children: every object needs one.
  bool scope = false;

  /// Appends a child record and returns it.
  Record& add(std::string child_name, std::vector<Property> props = {});
};

/// A Properties70 "P" entry: P: "name", "type", "label", "flags", values...
Record p70(const std::string& name, const std::string& type, const std::string& label,
           const std::string& flags, std::vector<Property> values);

/// The binary FBX file (version 7400: 32-bit record offsets) of the top-level records: header,
/// records, the end of the top-level list and the footer. Arrays are stored uncompressed.
std::string encode_binary(const std::vector<Record>& top);

/// The ASCII FBX file ("; FBX 7.4.0 project file") of the same records.
std::string encode_ascii(const std::vector<Record>& top);

}  // namespace koma::io::fbx_detail
