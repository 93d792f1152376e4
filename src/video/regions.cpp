#include "koma/video/regions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "koma/core/error.hpp"

namespace koma::video {

void RegionSettings::validate() const {
  if (colour_levels < 2 || colour_levels > 64) throw Error(ErrorCode::invalid_settings, "colour_levels", fmt::format("{} must be in 2..64", colour_levels));
  if (!(colour_tolerance >= 0 && colour_tolerance <= 442)) throw Error(ErrorCode::invalid_settings, "colour_tolerance", "must be in 0..442");
  if (!(merge_distance >= 0 && merge_distance <= 442)) throw Error(ErrorCode::invalid_settings, "merge_distance", "must be in 0..442");
  if (!(min_area > 0 && min_area < 1)) throw Error(ErrorCode::invalid_settings, "min_area", fmt::format("{} must be in (0, 1)", min_area));
  if (!(background_fraction > 0 && background_fraction <= 1)) throw Error(ErrorCode::invalid_settings, "background_fraction", "must be in (0, 1]");
  if (max_regions < 1) throw Error(ErrorCode::invalid_settings, "max_regions", "must be >= 1");
  if (!(max_jump >= 0) || !std::isfinite(max_jump)) throw Error(ErrorCode::invalid_settings, "max_jump", "must be >= 0");
}

Segmentation segment_regions(const Image& frame, const RegionSettings& s) {
  Segmentation out;
  std::vector<std::int32_t> scratch;
  segment_regions(frame, s, out, scratch);
  return out;
}

namespace {

// The steps of segment_regions(), in order: colour class per pixel, connected components, joining
// one colour split by quantisation, keeping the largest regions.

// A component's sums over its pixels.
struct Acc {
  int cls = 0;
  long area = 0;
  double sx = 0, sy = 0, r = 0, g = 0, b = 0;
  long border = 0;
};

// 1. Colour class per pixel (-1 = none): the quantised colour, or the nearest of s.colours within
//    the tolerance.
void classify_pixels(const Image& frame, const RegionSettings& s, std::vector<std::int32_t>& cls) {
  const size_t P = static_cast<size_t>(frame.width) * frame.height;
  cls.resize(P);
  if (s.colours.empty()) {
    const int L = s.colour_levels;
    for (size_t p = 0; p < P; ++p) {
      const std::uint8_t* c = frame.rgb.data() + 3 * p;
      cls[p] = ((c[0] * L) >> 8) * L * L + ((c[1] * L) >> 8) * L + ((c[2] * L) >> 8);
    }
  } else {
    const double tol2 = s.colour_tolerance * s.colour_tolerance;
    for (size_t p = 0; p < P; ++p) {
      const std::uint8_t* c = frame.rgb.data() + 3 * p;
      int best = -1;
      double bd = tol2;
      for (size_t k = 0; k < s.colours.size(); ++k) {
        const double dr = c[0] - s.colours[k][0], dg = c[1] - s.colours[k][1], db = c[2] - s.colours[k][2];
        const double d = dr * dr + dg * dg + db * db;
        if (d <= bd) {
          bd = d;
          best = static_cast<int>(k);
        }
      }
      cls[p] = best;
    }
  }
}

// 2. 4-connected components of equal class: two-pass scanline labelling with union-find
//    (a few ns per pixel; a flood fill with a stack was 3x slower). Labels comp (-1: no class)
//    with compact component indices and returns each component's sums.
std::vector<Acc> label_components(const Image& frame, const std::vector<std::int32_t>& cls,
                                  std::vector<std::int32_t>& comp) {
  const int W = frame.width, H = frame.height;
  comp.resize(static_cast<size_t>(W) * H);
  std::vector<std::int32_t> parent;
  auto find = [&](std::int32_t a) {
    while (parent[a] != a) {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
    return a;
  };
  for (int y = 0; y < H; ++y) {
    const size_t row = static_cast<size_t>(y) * W;
    for (int x = 0; x < W; ++x) {
      const size_t p = row + x;
      const std::int32_t c = cls[p];
      comp[p] = -1;
      if (c < 0) continue;
      const std::int32_t left = x > 0 && cls[p - 1] == c ? comp[p - 1] : -1;
      const std::int32_t up = y > 0 && cls[p - W] == c ? comp[p - W] : -1;
      if (left < 0 && up < 0) {
        comp[p] = static_cast<std::int32_t>(parent.size());
        parent.push_back(comp[p]);
      } else if (left >= 0 && up >= 0) {
        comp[p] = left;
        const std::int32_t a = find(left), b = find(up);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      } else {
        comp[p] = left >= 0 ? left : up;
      }
    }
  }
  std::vector<std::int32_t> compact(parent.size(), -1);
  std::vector<Acc> acc;
  for (size_t i = 0; i < parent.size(); ++i) {
    const std::int32_t r = find(static_cast<std::int32_t>(i));
    if (compact[r] < 0) {
      compact[r] = static_cast<std::int32_t>(acc.size());
      acc.emplace_back();
    }
    compact[i] = compact[r];
  }
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) {
      const size_t p = static_cast<size_t>(y) * W + x;
      if (comp[p] < 0) continue;
      comp[p] = compact[comp[p]];
      Acc& a = acc[comp[p]];
      a.cls = cls[p];
      ++a.area;
      a.sx += x;
      a.sy += y;
      const std::uint8_t* c = frame.rgb.data() + 3 * p;
      a.r += c[0];
      a.g += c[1];
      a.b += c[2];
      if (x == 0 || y == 0 || x == W - 1 || y == H - 1) ++a.border;
    }
  }
  return acc;
}

// 2b. One colour split by a quantisation boundary (codec noise, GIF dithering, a colour sitting
//     on a bin edge) gives touching components of neighbouring classes with nearly equal means:
//     join them. Anti-aliased rims have in-between colours, far from both sides, and stay apart.
void join_split_colours(const RegionSettings& s, int W, int H, std::vector<std::int32_t>& comp,
                        std::vector<Acc>& acc) {
  const size_t P = static_cast<size_t>(W) * H;
  const size_t n = acc.size();
  std::vector<std::int32_t> up(n);
  std::iota(up.begin(), up.end(), 0);
  auto root = [&](std::int32_t a) {
    while (up[a] != a) {
      up[a] = up[up[a]];
      a = up[a];
    }
    return a;
  };
  std::vector<std::array<double, 3>> mean(n);
  for (size_t i = 0; i < n; ++i) {
    const double k = static_cast<double>(acc[i].area);
    mean[i] = {acc[i].r / k, acc[i].g / k, acc[i].b / k};
  }
  const double tol2 = s.merge_distance * s.merge_distance;
  bool merged = false;
  auto consider = [&](std::int32_t a, std::int32_t b) {
    if (a < 0 || b < 0 || a == b || acc[a].cls == acc[b].cls) return;
    const double dr = mean[a][0] - mean[b][0], dg = mean[a][1] - mean[b][1], db = mean[a][2] - mean[b][2];
    if (dr * dr + dg * dg + db * db > tol2) return;
    const std::int32_t ra = root(a), rb = root(b);
    if (ra != rb) up[std::max(ra, rb)] = std::min(ra, rb), merged = true;
  };
  for (int y = 0; y < H; ++y) {
    const std::int32_t* row = comp.data() + static_cast<size_t>(y) * W;
    for (int x = 0; x + 1 < W; ++x) {
      if (row[x] != row[x + 1]) consider(row[x], row[x + 1]);
    }
    if (y + 1 < H) {
      for (int x = 0; x < W; ++x) {
        if (row[x] != row[x + W]) consider(row[x], row[x + W]);
      }
    }
  }
  if (merged) {
    std::vector<std::int32_t> index(n, -1);
    std::vector<Acc> joined;
    std::vector<long> largest;  // the class of a joined region is that of its largest part
    for (size_t i = 0; i < n; ++i) {
      const std::int32_t r = root(static_cast<std::int32_t>(i));
      if (index[r] < 0) {
        index[r] = static_cast<std::int32_t>(joined.size());
        joined.emplace_back();
        largest.push_back(0);
      }
      Acc& j = joined[index[r]];
      const Acc& a = acc[i];
      if (a.area > largest[index[r]]) largest[index[r]] = a.area, j.cls = a.cls;
      j.area += a.area, j.sx += a.sx, j.sy += a.sy, j.r += a.r, j.g += a.g, j.b += a.b, j.border += a.border;
      index[i] = index[r];
    }
    for (size_t p = 0; p < P; ++p) {
      if (comp[p] >= 0) comp[p] = index[comp[p]];
    }
    acc = std::move(joined);
  }
}

// 3. Keep components above the minimum area, minus the background, the largest max_regions;
//    numbered in scan order, comp relabelled to them (-1 elsewhere).
void keep_regions(const RegionSettings& s, int W, int H, const std::vector<Acc>& acc,
                  std::vector<std::int32_t>& comp, Segmentation& out) {
  const size_t P = static_cast<size_t>(W) * H;
  const double min_px = s.min_area * static_cast<double>(P);
  const long border_px = 2L * (W + H) - 4;
  int background = -1;
  if (s.drop_background && s.colours.empty()) {
    long best = 0;
    for (size_t i = 0; i < acc.size(); ++i) {
      if (static_cast<double>(acc[i].border) >= s.background_fraction * static_cast<double>(border_px) && acc[i].area > best) {
        best = acc[i].area;
        background = static_cast<int>(i);
      }
    }
  }
  std::vector<int> keep;
  for (size_t i = 0; i < acc.size(); ++i) {
    if (static_cast<int>(i) != background && static_cast<double>(acc[i].area) >= min_px) keep.push_back(static_cast<int>(i));
  }
  std::stable_sort(keep.begin(), keep.end(), [&](int a, int b) { return acc[a].area > acc[b].area; });
  if (static_cast<int>(keep.size()) > s.max_regions) keep.resize(static_cast<size_t>(s.max_regions));
  std::sort(keep.begin(), keep.end());  // scan order: deterministic region numbering
  std::vector<std::int32_t> remap(acc.size(), -1);
  out.regions.clear();
  out.width = W;
  out.height = H;
  for (size_t k = 0; k < keep.size(); ++k) {
    const Acc& a = acc[keep[k]];
    remap[keep[k]] = static_cast<std::int32_t>(k);
    Region r;
    r.colour_class = a.cls;
    const double n = static_cast<double>(a.area);
    r.colour = {static_cast<std::uint8_t>(std::lround(a.r / n)), static_cast<std::uint8_t>(std::lround(a.g / n)),
                static_cast<std::uint8_t>(std::lround(a.b / n))};
    r.area = static_cast<int>(a.area);
    r.cx = a.sx / n;
    r.cy = a.sy / n;
    out.regions.push_back(r);
  }
  for (size_t p = 0; p < P; ++p) comp[p] = comp[p] >= 0 ? remap[comp[p]] : -1;
}

}  // namespace

void segment_regions(const Image& frame, const RegionSettings& s, Segmentation& out, std::vector<std::int32_t>& scratch) {
  s.validate();
  const int W = frame.width, H = frame.height;
  const size_t P = static_cast<size_t>(W) * H;
  if (W <= 0 || H <= 0 || frame.rgb.size() != P * 3) {
    throw Error(ErrorCode::bad_data, "frame", fmt::format("invalid image {}x{} with {} bytes", W, H, frame.rgb.size()));
  }
  // Buffers are reused: fresh megabyte-sized vectors per frame cost more in page faults than the
  // labelling itself.
  std::vector<std::int32_t>& cls = scratch;
  classify_pixels(frame, s, cls);
  std::vector<std::int32_t>& comp = out.labels;
  std::vector<Acc> acc = label_components(frame, cls, comp);
  if (s.colours.empty() && s.merge_distance > 0 && acc.size() > 1) join_split_colours(s, W, H, comp, acc);
  keep_regions(s, W, H, acc, comp, out);
}

std::vector<int> match_regions(const Segmentation& prev, const std::vector<int>& prev_ids, const Segmentation& cur,
                               const RegionSettings& s, int& next_id) {
  const size_t np = prev.regions.size(), nc = cur.regions.size();
  std::vector<int> ids(nc, -1);
  if (nc == 0) return ids;
  std::vector<char> used(np, 0);
  if (np > 0 && prev.labels.size() == cur.labels.size()) {
    // Overlap counts of (previous, current) pairs of the same colour class.
    std::vector<long> overlap(np * nc, 0);
    for (size_t p = 0; p < cur.labels.size(); ++p) {
      const int a = prev.labels[p], b = cur.labels[p];
      if (a >= 0 && b >= 0) ++overlap[static_cast<size_t>(a) * nc + b];
    }
    struct Pair {
      long n;
      int a, b;
    };
    std::vector<Pair> pairs;
    for (size_t a = 0; a < np; ++a) {
      for (size_t b = 0; b < nc; ++b) {
        const long n = overlap[a * nc + b];
        if (n > 0 && prev.regions[a].colour_class == cur.regions[b].colour_class && prev_ids[a] >= 0) {
          pairs.push_back({n, static_cast<int>(a), static_cast<int>(b)});
        }
      }
    }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) { return x.n > y.n; });
    for (const Pair& q : pairs) {
      if (used[q.a] || ids[q.b] >= 0) continue;
      used[q.a] = 1;
      ids[q.b] = prev_ids[q.a];
    }
  }
  // Fast motion: nearest unused region of the same class within max_jump.
  const double radius = s.max_jump * std::hypot(cur.width, cur.height);
  for (size_t b = 0; b < nc; ++b) {
    if (ids[b] >= 0) continue;
    int best = -1;
    double bd = radius;
    for (size_t a = 0; a < np; ++a) {
      if (used[a] || prev_ids[a] < 0 || prev.regions[a].colour_class != cur.regions[b].colour_class) continue;
      const double d = std::hypot(prev.regions[a].cx - cur.regions[b].cx, prev.regions[a].cy - cur.regions[b].cy);
      if (d <= bd) {
        bd = d;
        best = static_cast<int>(a);
      }
    }
    if (best >= 0) {
      used[best] = 1;
      ids[b] = prev_ids[best];
    } else {
      ids[b] = next_id++;
    }
  }
  return ids;
}

}  // namespace koma::video
