// Private to src/io: the FBX and glTF readers run their third-party parsers (assimp, tinygltf,
// stb_image) in a child process (koma::run_isolated), so a file that crashes a parser, makes it
// recurse without end or allocate what the file claims ends with a clear Error(bad_file) naming
// the file, and never takes koma (or the Python interpreter) down. The child does the whole read
// and sends its result back as bytes (pack / unpack below); koma's process never runs a
// third-party parser on the file's bytes. docs/reliability.md says why and what it costs.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "koma/io/bvh.hpp"
#include "koma/io/fbx.hpp"
#include "koma/io/gltf.hpp"

namespace koma::io::isolation_detail {

/// True when KOMA_READ_IN_PROCESS=1 is in the environment: the readers then parse in koma's own
/// process and return their result directly (for debuggers, profilers and the fuzz harnesses,
/// which need the parser's coverage and faults in their process). It gives up the protection.
bool in_process();

/// Runs `read` (which reads `file` with `parser`, e.g. "assimp") in a child process under
/// limits scaled to the file's size, and returns what it returned. An Error it throws passes
/// through unchanged; a crash, an abort, running out of memory or time, or another exception
/// becomes Error(bad_file, file) saying what happened in koma's words.
std::string run_reader(const std::filesystem::path& file, std::string_view parser,
                       const std::function<std::string()>& read);

/// A read result as bytes and back. unpack() checks every count against the bytes that hold it
/// and validates the motion; the scene comes back through the glTF reader as a GLB koma wrote.
std::string pack(const ReadResult& result);
ReadResult unpack(std::string_view bytes, const std::string& file);

std::string pack(const std::vector<FbxAnimationInfo>& infos);
std::vector<FbxAnimationInfo> unpack_fbx_infos(std::string_view bytes, const std::string& file);
std::string pack(const std::vector<GltfAnimationInfo>& infos);
std::vector<GltfAnimationInfo> unpack_gltf_infos(std::string_view bytes, const std::string& file);

}  // namespace koma::io::isolation_detail
