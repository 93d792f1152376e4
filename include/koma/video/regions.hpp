// Regions of near-uniform colour in a frame, and their identity across frames.
//
// A cel-shaded render is made of flat colour patches; each is a region. A frame is segmented by
// quantising colours (or by nearest user-given colour), then splitting each colour class into
// 4-connected components and dropping those smaller than a minimum area:
//
//   pixels ──quantise──▶ colour class ──connected components──▶ components ──join near-equal
//   neighbours across class edges──▶ regions ──area >= min──▶ regions
//
// The background (the largest region touching the frame border, when it covers more than
// `background_fraction` of the border) is dropped by default: it is static, and its huge area
// would swamp the area weighting. Regions are matched to the previous frame's regions of the same
// colour class by pixel overlap, then (for fast motion without overlap) by nearest centroid.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "koma/video/decode.hpp"

namespace koma::video {

/// An RGB colour, 0..255 per channel.
using Rgb = std::array<std::uint8_t, 3>;

/// Settings of segment_regions() and match_regions().
struct RegionSettings {
  /// Quantisation levels per colour channel (auto mode), 2..64. Default 6: colours closer than
  /// 256/6 ~ 43 per channel tend to share a class; anti-aliased edges fall into small classes that
  /// the minimum area removes.
  int colour_levels = 6;
  /// User-given colours (--regions #ff0000,#00ff00). Empty (default) = automatic quantisation. With
  /// colours, a pixel belongs to the nearest colour within colour_tolerance, else to no region.
  std::vector<Rgb> colours;
  /// Largest Euclidean RGB distance of a pixel to its user-given colour, 0..442. Default 60.
  double colour_tolerance = 60;
  /// Touching components of different quantised classes whose mean colours are within this
  /// Euclidean RGB distance are one region (auto mode only), 0..442; 0 = never join. Default 20
  /// (just under half a quantisation step at 6 levels): one flat colour that sits on a bin edge is
  /// split by codec noise or GIF dithering into two classes with nearly equal means; anti-aliased
  /// rims, whose colours lie between two regions, stay apart.
  double merge_distance = 20;
  /// Smallest region, as a fraction of the frame's pixels, in (0, 1). Default 0.0002 (46 pixels
  /// at 640x360).
  double min_area = 0.0002;
  /// Drop the background (see the file comment). Default true. Ignored with user-given colours.
  bool drop_background = true;
  /// A border-touching region is the background when it covers at least this fraction of the
  /// border pixels, (0, 1]. Default 0.3.
  double background_fraction = 0.3;
  /// Most regions kept per frame (the largest), >= 1. Default 64.
  int max_regions = 64;
  /// Nearest-centroid matching radius when regions do not overlap, as a fraction of the frame
  /// diagonal, >= 0. Default 0.15.
  double max_jump = 0.15;

  /// Throws Error(invalid_settings) naming the bad field.
  void validate() const;
};

/// One region of one frame.
struct Region {
  int colour_class = 0;   ///< quantised colour index (auto) or index into RegionSettings::colours
  Rgb colour{};           ///< mean colour of its pixels
  int area = 0;           ///< pixels
  double cx = 0, cy = 0;  ///< centroid, pixels
};

/// A segmented frame: a label per pixel (-1 = no region) and the regions.
struct Segmentation {
  int width = 0;
  int height = 0;
  std::vector<std::int32_t> labels;  ///< width * height, index into regions or -1
  std::vector<Region> regions;
};

/// Splits a frame into regions of near-uniform colour. Pure. Throws Error(invalid_settings) for
/// invalid settings. A flat frame yields no regions (its one region is the background).
Segmentation segment_regions(const Image& frame, const RegionSettings& settings);
/// The same into `out`, reusing its label buffer and `scratch` (one int per pixel) across frames,
/// which avoids a megabyte of fresh allocation per frame. `out` is overwritten.
void segment_regions(const Image& frame, const RegionSettings& settings, Segmentation& out,
                     std::vector<std::int32_t>& scratch);

/// Track identity of each region of `current`, given the previous frame's segmentation and track
/// ids (-1 entries are ignored). Regions keep the id of the previous region of the same colour
/// class they overlap most (each previous id is used once, largest overlaps first); unmatched
/// regions take the nearest unused previous region of the same class within max_jump; the rest
/// get new ids starting at `next_id` (which is advanced). Pure apart from `next_id`.
std::vector<int> match_regions(const Segmentation& previous, const std::vector<int>& previous_ids,
                               const Segmentation& current, const RegionSettings& settings, int& next_id);

}  // namespace koma::video
