// Private to src/toon: the GLSL 3.30 core shaders of the toon renderer.
#pragma once

namespace koma::toon::detail {

// Skinning from a uniform block of bone matrices: entries [0, KOMA_MAX_BONES) hold the drawing's
// pose, [KOMA_MAX_BONES, 2 KOMA_MAX_BONES) the previous drawing's pose. With u_smear on, each
// vertex is skinned in both and projected: where it moved more than u_smear_px pixels on screen it
// is fast (fully from 1.5 x) and moves back along its motion: its trailing side by u_smear_length
// (a smear), or all of it by u_back (one copy of the multiples). A vertex that is not fast keeps
// its position exactly (it moves by 0 x its motion). The renderer prepends `#define KOMA_MAX_BONES n` (from the
// driver's largest uniform block). Zero weights are skipped: a rigid part costs one matrix.
inline constexpr const char* kCharacterVertex = R"(
layout(location = 0) in vec3 a_position;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in uvec4 a_bones;
layout(location = 4) in vec4 a_weights;
layout(location = 5) in vec3 a_hull_normal;
layout(std140) uniform Bones {
  mat4 u_bones[2 * KOMA_MAX_BONES];
};
uniform mat4 u_view;
uniform mat4 u_proj;
uniform float u_outline;  // outline pass: line width in pixels; 0 in the colour pass
uniform float u_hull_push;  // outline pass: depth (NDC) the hull is pushed back, so it never ties with the surface
uniform vec2 u_viewport;
uniform int u_smear;            // 0 off, 1 smear, 2 one copy of the multiples
uniform float u_smear_px;       // fast from this many pixels of motion on screen
uniform float u_smear_length;   // smear: share of the motion the trailing side is pulled back
uniform float u_back;           // multiples: share of the motion this copy sits back
out vec3 v_normal;
out vec2 v_uv;
out float v_depth;
out float v_fast;   // 0 .. 1: how fast (copies show where it is above 0)
out float v_pulled; // smear: 0 .. 1, the share of the full pull this vertex got (its trailing side)

mat4 bone(int row, uint b) { return u_bones[row * KOMA_MAX_BONES + int(b)]; }

mat4 skin(int row) {
  mat4 s = a_weights.x * bone(row, a_bones.x);
  if (a_weights.y > 0.0) s += a_weights.y * bone(row, a_bones.y);
  if (a_weights.z > 0.0) s += a_weights.z * bone(row, a_bones.z);
  if (a_weights.w > 0.0) s += a_weights.w * bone(row, a_bones.w);
  return s;
}

// Pixels of a world point on screen (from the centre).
vec2 on_screen(vec4 world) {
  vec4 c = u_proj * (u_view * world);
  return c.xy / c.w * 0.5 * u_viewport;
}

void main() {
  mat4 s = skin(0);
  vec4 world = s * vec4(a_position, 1.0);
  v_fast = 0.0;
  v_pulled = 0.0;
  if (u_smear != 0) {
    vec4 before = skin(1) * vec4(a_position, 1.0);
    float fast = smoothstep(u_smear_px, 1.5 * u_smear_px, length(on_screen(world) - on_screen(before)));
    vec3 motion = world.xyz - before.xyz;
    float back = u_back;
    if (u_smear == 1) {
      // The trailing side: the smoothed normal faces away from the motion (fully from 60 degrees).
      vec3 n = normalize(mat3(s) * a_hull_normal);
      float len = length(motion);
      back = len > 0.0 ? u_smear_length * clamp(-2.0 * dot(n, motion / len), 0.0, 1.0) : 0.0;
    }
    world.xyz -= motion * (fast * back);
    v_fast = fast;
    if (u_smear == 1) v_pulled = fast * back / u_smear_length;
  }
  // Normals by the skinning matrix itself: exact for rotations and uniform scale, close enough for
  // squash and stretch, and far cheaper per vertex on a CPU rasteriser than its inverse transpose.
  mat3 nm = mat3(u_view) * mat3(s);
  vec4 view = u_view * world;
  v_normal = normalize(nm * a_normal);
  v_uv = a_uv;
  v_depth = -view.z;
  vec4 clip = u_proj * view;
  if (u_outline > 0.0) {
    vec2 dir = (u_proj * vec4(normalize(nm * a_hull_normal), 0.0)).xy;
    dir = length(dir) > 1e-6 ? normalize(dir) : vec2(0.0);
    clip.xy += dir * (2.0 * u_outline / u_viewport) * clip.w;
    clip.z += u_hull_push * clip.w;
  }
  gl_Position = clip;
}
)";

inline constexpr const char* kCharacterFragment = R"(#version 330 core
in vec3 v_normal;
in vec2 v_uv;
in float v_depth;
in float v_fast;
in float v_pulled;
uniform vec4 u_base;
uniform sampler2D u_texture;
uniform int u_has_texture;
uniform float u_cutoff;
uniform int u_shading;  // 0 cel, 1 smooth, 2 flat
uniform int u_tones;
uniform vec3 u_light;
uniform float u_threshold;
uniform float u_core_threshold;
uniform vec3 u_shadow;
uniform vec3 u_core;
uniform int u_ink_pass;
uniform vec4 u_ink;
uniform float u_copy;  // multiples: this copy's opacity (premultiplied out); 0 = the character itself
layout(location = 0) out vec4 o_colour;
layout(location = 1) out vec4 o_normal_depth;

void main() {
  // A copy shows only where the motion was fast (a slow part's copy would sit inside the body).
  if (u_copy > 0.0 && v_fast <= 0.0) discard;
  vec3 n = normalize(v_normal);
  if (!gl_FrontFacing) n = -n;
  if (u_ink_pass == 1) {
    o_colour = u_ink;
    o_normal_depth = vec4(n * 0.5 + 0.5, v_depth);
    return;
  }
  vec4 c = u_base;
  if (u_has_texture == 1) c *= texture(u_texture, v_uv);
  if (u_cutoff >= 0.0 && c.a < u_cutoff) discard;
  float d = dot(n, u_light);
  vec3 f = vec3(1.0);
  // The stretched part of a smear is one flat lit tone, as a smear is painted: its back faces
  // would otherwise shade it as a dark fin beside the limb.
  if (u_shading == 0 && v_pulled <= 0.25) {
    if (d < u_threshold) f = u_shadow;
    if (u_tones == 3 && d < u_core_threshold) f = u_core;
  } else if (u_shading == 1) {
    f = mix(u_core, vec3(1.0), clamp(0.5 + 0.5 * d, 0.0, 1.0));
  }
  o_colour = u_copy > 0.0 ? vec4(c.rgb * f * u_copy, u_copy) : vec4(c.rgb * f, 1.0);
  o_normal_depth = vec4(n * 0.5 + 0.5, v_depth);
}
)";

// A screen-space quad (two triangles from gl_VertexID) covering the shadow ellipse.
inline constexpr const char* kShadowVertex = R"(#version 330 core
uniform vec4 u_ellipse;  // centre x, y and radii x, y in pixels (y down)
uniform vec2 u_viewport;
out vec2 v_local;
void main() {
  vec2 corners[6] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(1, 1), vec2(-1, -1), vec2(1, 1), vec2(-1, 1));
  vec2 c = corners[gl_VertexID];
  v_local = c * 1.1;
  vec2 px = u_ellipse.xy + v_local * u_ellipse.zw;
  gl_Position = vec4(px.x / u_viewport.x * 2.0 - 1.0, 1.0 - px.y / u_viewport.y * 2.0, 0.0, 1.0);
}
)";

inline constexpr const char* kShadowFragment = R"(#version 330 core
in vec2 v_local;
uniform vec4 u_colour;  // premultiplied
uniform float u_soft;   // edge width as a fraction of the radius
layout(location = 0) out vec4 o_colour;
void main() {
  float r = length(v_local);
  float a = 1.0 - smoothstep(1.0 - u_soft, 1.0, r);
  o_colour = u_colour * a;
}
)";

// The full-screen pass: the resolved colour with ink where depth or normals break.
inline constexpr const char* kEdgeVertex = R"(#version 330 core
void main() {
  vec2 p = vec2((gl_VertexID == 1) ? 3.0 : -1.0, (gl_VertexID == 2) ? 3.0 : -1.0);
  gl_Position = vec4(p, 0.0, 1.0);
}
)";

inline constexpr const char* kEdgeFragment = R"(#version 330 core
uniform sampler2D u_colour;
uniform sampler2D u_normal_depth;
uniform ivec2 u_size;
uniform int u_radius;         // pixels
uniform float u_depth_break;  // metres
uniform float u_crease;       // cosine
uniform float u_far;
uniform vec4 u_ink;
uniform int u_inner;
layout(location = 0) out vec4 o_colour;

// 0..1: how much of a line this pixel carries toward the neighbour at `offset`. Depth breaks mark
// the nearer side (an arm over the body, the body's rim); creases mark one side only (`crease`
// true for the +x and +y neighbours), so a line is as wide as the search radius, not twice.
float edge_to(vec4 me, ivec2 offset, bool crease) {
  vec4 q = texelFetch(u_normal_depth, clamp(ivec2(gl_FragCoord.xy) + offset, ivec2(0), u_size - 1), 0);
  if (me.w >= u_far) return 0.0;
  float e = smoothstep(0.8, 1.2, (q.w - me.w) / u_depth_break);
  if (crease && q.w < u_far) {
    float c = dot(normalize(me.xyz * 2.0 - 1.0), normalize(q.xyz * 2.0 - 1.0));
    e = max(e, 1.0 - smoothstep(u_crease - 0.05, u_crease + 0.05, c));
  }
  return e;
}

void main() {
  vec4 c = texelFetch(u_colour, ivec2(gl_FragCoord.xy), 0);
  if (u_inner == 0) {
    o_colour = c;
    return;
  }
  vec4 me = texelFetch(u_normal_depth, ivec2(gl_FragCoord.xy), 0);
  float e = 0.0;
  for (int r = 1; r <= u_radius; ++r) {
    e = max(e, max(max(edge_to(me, ivec2(r, 0), true), edge_to(me, ivec2(-r, 0), false)),
                   max(edge_to(me, ivec2(0, r), true), edge_to(me, ivec2(0, -r), false))));
  }
  o_colour = mix(c, u_ink, e * u_ink.a);
}
)";

}  // namespace koma::toon::detail
