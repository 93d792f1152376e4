// Private to src/io: what koma checks in an FBX file's bytes before assimp parses them.
//
// assimp trusts the file: it recurses once per nested record and once per parent-child link, and
// allocates what a record or an array says it holds. The reader runs it in a child process
// (isolated_read.hpp), so no file can take koma down; these checks come first so that the known
// ways to crash it get an error that says what is wrong and where, not just "assimp crashed":
//  - binary FBX: every record's end offset, property list and array lies inside its parent and
//    the file; an array's element count fits the bytes that hold it (for a zlib block, what
//    zlib can inflate those bytes to); records nest at most kMaxNesting deep;
//  - ASCII FBX: braces balance and nest at most kMaxNesting deep; a `*N` array count fits the
//    bytes that follow; strings end;
//  - both: the object links (Connections, "OO") hold no cycle (an object that is its own
//    ancestor) and no chain longer than kMaxChain; curve values (KeyValueFloat) do not jump so far
//    that assimp would insert more keys (one per 179 units of change) than sample_budget() allows;
//    no model property has a type assimp 5.2.5 aborts on (KTime, ColorAndAlpha).
#pragma once

#include <string>
#include <string_view>

namespace koma::io::fbx_detail {

/// Deepest nesting of records (or braces) koma lets assimp parse. Real files nest 4 to 8 deep.
inline constexpr int kMaxNesting = 64;
/// Longest chain of object links (a bone chain, a node path) koma lets assimp convert.
inline constexpr int kMaxChain = 1000;

/// Throws Error(bad_file, "<file>: byte N" or "<file>:LINE") naming what is wrong, for the cases in
/// the file comment. A file that passes may still be refused by assimp.
void precheck_fbx(std::string_view bytes, const std::string& file);

}  // namespace koma::io::fbx_detail
