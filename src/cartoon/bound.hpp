// Private to the cartoon module: the bound on the rotation the filter adds to a joint (a smooth
// gain envelope on the added part), see docs/cartoon.md "Within a body's reach".
#pragma once

#include <span>
#include <vector>

#include "koma/cartoon/filter.hpp"

namespace koma::cartoon::detail {

// What the bound did to one joint over all segments.
struct JointBound {
  std::vector<Segment> frames;  // frame ranges where the added rotation was reduced, in order
  double range = 0;             // of the segment with the largest requested / bound
  double bound = 0;
  double requested = 0;
  int requested_frame = 0;
};

// Bounds the rotation the filter adds to one joint over one segment. `logmap` is [frames x 3],
// the joint's rotation as log maps about its mean rotation over the segment (frame 0 of the spans
// is frame `offset` of the motion); `added` the added rotations, q* = q exp(added), in the joint's
// own frame. The joint's range is its own ellipsoid of motion: the principal axes of the log-map
// cloud, with half-extents the largest distance of the cloud from its centre along each axis;
// the range in a direction u is sqrt(sum_i (u . a_i)^2 e_i^2). Where |added| exceeds share times
// the range in its own direction (seen from the mean frame), the added rotation is scaled by a
// gain envelope: the pointwise gain, min-filtered and then box-averaged over +-round(sigma)
// frames, so it is continuous and never above the pointwise gain (the bound holds at every
// frame). Records what it did in `report`.
// With `rotation` false the same bounds a translation: `logmap` holds the joint's positions and
// `added` the added displacements, both in the parent's frame.
void bound_added(std::span<const double> logmap, std::span<Vec3> added, double share, double sigma, int offset,
                 JointBound& report, bool rotation);

// The public report of joint `joint`.
BoundReport bound_report(const JointBound& bound, int joint, bool translation);

}  // namespace koma::cartoon::detail
