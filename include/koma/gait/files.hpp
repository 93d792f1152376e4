// Gait and adverb files (JSON), gait's own file formats: what `koma gait analyze` and
// `koma gait adverb` write and `koma gait synth` reads.
//
// A gait file ("format": "koma.gait", "version": 3) holds the skeleton (joints with parent, offset
// in metres, channels; end sites), the source unit, the channel kind (log_map or euler), the root
// joint, the travel direction, the period (s), the confidence and cycle counts, per joint the mean
// rotation (w, x, y, z) and bone vector (metres), and per channel its name, unit, DC, its harmonic
// count K_c ("harmonics") and, per harmonic k = 1..K_c, amplitude and phase (radians, relative to the reference channel's first
// harmonic): x(phi) = dc + sum_k amplitude_k cos(k phi + phase_k).
//
// An adverb file ("format": "koma.adverb", "version": 3) holds the skeleton it was learned on, the
// channel kind, K, the reference channel, per joint the posture delta (rotation vector, radians),
// the log period ratio, and per channel the coefficient deltas as "dc", "harmonics" (K_c) and per
// harmonic "re"/"im"
// (differences of complex coefficients are not differences of amplitudes and phases).
// Version 2 files (no per-channel "harmonics": every channel has K) are read as before.
// Numbers are written with round-trip precision: an adverb reads back exactly, a gait within
// 1e-14 (its coefficients pass through the amplitude/phase form).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "koma/gait/adverb.hpp"
#include "koma/gait/synth.hpp"

namespace koma::gait {

/// JSON text of a gait (pretty-printed).
std::string format_gait_json(const Gait& gait);
/// Parses a gait file. Throws Error(bad_file, name, ...) naming the missing or malformed field,
/// or when the result breaks a Gait invariant.
Gait parse_gait_json(std::string_view text, std::string_view name);
/// Writes format_gait_json() atomically. Throws Error(io) when it cannot.
void write_gait(const std::filesystem::path& path, const Gait& gait);
/// Reads a gait file. Throws Error(io) when unreadable, Error(bad_file) when malformed.
Gait read_gait(const std::filesystem::path& path);

/// JSON text of an adverb (pretty-printed).
std::string format_adverb_json(const Adverb& adverb);
/// Parses an adverb file; failures as parse_gait_json().
Adverb parse_adverb_json(std::string_view text, std::string_view name);
/// Writes format_adverb_json() atomically.
void write_adverb(const std::filesystem::path& path, const Adverb& adverb);
/// Reads an adverb file.
Adverb read_adverb(const std::filesystem::path& path);

/// An adverb named the way users write it, "FILE[:ALPHA]": the file read (read_adverb()), its weight
/// ALPHA (1 when there is no number after the last ':'), its name the file's path. Throws as
/// read_adverb().
WeightedAdverb read_weighted_adverb(std::string_view arg);

/// A later gait named the way users write it, "GAIT.json@SECONDS": the gait file read (read_gait())
/// and the time it starts. Throws Error(invalid_settings, "then") when there is no '@' or SECONDS is
/// not a finite number, else as read_gait().
GaitSegment read_gait_segment(std::string_view arg);

}  // namespace koma::gait
