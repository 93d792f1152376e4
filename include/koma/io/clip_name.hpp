// Animation (clip) names: choosing one of a file's animations by what a user typed, and the name
// a written clip gets. Every reader and writer of io uses these, so `--animation` and the names in
// outputs behave the same for glTF and FBX.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace koma::io {

/// The index of the animation `wanted` names among a file's animations `names` (in file order):
///  1. an exact name ("Zombie|ZombieWalk");
///  2. else a decimal index below names.size() ("3");
///  3. else the part after the last '|' of exactly one name ("ZombieWalk" for "Zombie|ZombieWalk",
///     as Blender and three.js name FBX stacks).
/// `wanted` must not be empty (each reader has its own default). Throws Error(bad_file, file)
/// listing every animation ("0 'Idle', 1 'Walk'") when nothing matches, and listing the candidates
/// when the part after '|' matches several names.
int choose_animation(const std::vector<std::string>& names, std::string_view wanted,
                     std::string_view file);

/// The name a clip read from `path` gets when the file does not name its animation (BVH, an
/// unnamed glTF animation or FBX stack): the file's stem ("walk.bvh" -> "walk"). A staged output
/// path (`.walk.glb.koma-PID-N.tmp.glb`, core/atomic_file.hpp) gives its destination's stem.
std::string clip_name_from_path(const std::filesystem::path& path);

}  // namespace koma::io
