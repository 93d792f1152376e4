// Joint angles as CSV, for robots and spreadsheets: one column per degree of freedom.
//
// Columns: frame, time (s), then per joint in skeleton order and per channel in the joint's file
// order: position channels as "<joint>.Xposition" in metres, rotation channels as
// "<joint>.Zrotation" in radians (the joint's Euler angles in its own order, unwrapped so they
// change continuously from frame to frame).
#pragma once

#include <filesystem>
#include <string>

#include "koma/core/motion.hpp"

namespace koma::io {

/// CSV text of a motion's joint angles (9 significant digits).
std::string format_angles_csv(const Motion& motion);
/// Writes format_angles_csv() atomically. Throws Error(io) when it cannot.
void write_angles_csv(const std::filesystem::path& path, const Motion& motion);

}  // namespace koma::io
