#include "koma/toon/renderer.hpp"

#include <epoxy/gl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <array>
#include <unordered_map>

#include "gl_context.hpp"
#include "koma/core/error.hpp"
#include "shaders.hpp"

namespace koma::toon {

void ToonStyle::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("toon.") + field, why);
  };
  if (tones != 2 && tones != 3) bad("tones", fmt::format("{} tones: expected 2 or 3", tones));
  if (!(threshold >= -1 && threshold <= 1)) bad("threshold", "must be in -1 .. 1");
  if (!(core_threshold >= -1 && core_threshold < threshold)) bad("core_threshold", "must be in -1 .. threshold");
  for (const auto& [name, c] : {std::pair{"shadow", shadow}, {"core", core}, {"ink", ink}, {"paper", paper}}) {
    for (double v : {c.r, c.g, c.b, c.a})
      if (!(v >= 0 && v <= 1)) bad(name, "colour components must be in [0, 1]");
  }
  if (!(line_width >= 0 && line_width <= 40)) bad("line_width", fmt::format("{} px: expected 0 .. 40", line_width));
  if (!(inner_width >= 0 && inner_width <= 20)) bad("inner_width", fmt::format("{} px: expected 0 .. 20", inner_width));
  if (!(crease_deg > 0 && crease_deg < 180)) bad("crease_deg", "must be in (0, 180) degrees");
  if (!(depth_break > 0 && depth_break <= 1)) bad("depth_break", "must be in (0, 1]");
  if (!(shadow_opacity >= 0 && shadow_opacity <= 1)) bad("shadow_opacity", "must be in [0, 1]");
  if (msaa != 1 && msaa != 2 && msaa != 4) bad("msaa", fmt::format("{} samples: expected 1, 2 or 4", msaa));
  if (smear != Smear::off && smear != Smear::smear && smear != Smear::multiples)
    bad("smear", fmt::format("expected {}", kSmearNames.names()));
  if (!(smear_threshold > 0 && smear_threshold <= 1000))
    bad("smear_threshold", fmt::format("{} px: expected more than 0, at most 1000", smear_threshold));
}

ContactShadow contact_shadow(std::span<const Vec3> joints, const render::Camera& camera, double opacity) {
  ContactShadow s;
  if (joints.empty() || !(opacity > 0)) return s;
  Vec3 lo = Vec3::Constant(INFINITY), hi = Vec3::Constant(-INFINITY), mean = Vec3::Zero();
  for (const Vec3& p : joints) lo = lo.cwiseMin(p), hi = hi.cwiseMax(p), mean += p;
  mean /= static_cast<double>(joints.size());
  const double fig = std::max(camera.figure_height, 1e-3);
  const double lift = lo.y() - camera.ground_y;
  const double fade = std::clamp(1.0 - lift / (0.5 * fig), 0.0, 1.0);
  if (!(fade > 0)) return s;
  // Footprint on the ground: the joints' horizontal spread, at least a third of the figure wide.
  const double r = std::max(0.5 * std::max(hi.x() - lo.x(), hi.z() - lo.z()) + 0.08 * fig, 0.18 * fig);
  const Vec3 centre(mean.x(), camera.ground_y, mean.z());
  const Vec3 c = camera.project(centre);
  // The ground's two horizontal directions seen on screen: the one across the screen and the one
  // into it (foreshortened to nothing in front and side views, where a thin ellipse remains).
  Vec3 across = camera.right - camera.right.dot(Vec3::UnitY()) * Vec3::UnitY();
  across = across.norm() > 1e-9 ? across.normalized() : Vec3::UnitX();
  const Vec3 into = Vec3::UnitY().cross(across).normalized();
  const Vec3 a = camera.project(centre + across * r), b = camera.project(centre + into * r);
  s.x = c.x();
  s.y = c.y();
  s.rx = std::hypot(a.x() - c.x(), a.y() - c.y());
  const double thin = 0.05 * fig * camera.pixels_per_metre(c.z());
  s.ry = std::max(std::hypot(b.x() - c.x(), b.y() - c.y()), thin);
  s.rx *= 0.85 + 0.15 * fade;
  s.ry *= 0.85 + 0.15 * fade;
  s.opacity = opacity * fade;
  return s;
}

namespace {

GLuint compile(GLenum type, const char* source, const std::string& prefix) {
  const GLuint s = glCreateShader(type);
  const char* parts[] = {prefix.c_str(), source};
  glShaderSource(s, 2, parts, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw Error(ErrorCode::io, "toon renderer", fmt::format("the GL driver rejects a shader: {}", log));
  }
  return s;
}

// `prefix` goes before the vertex shader (its #version line and #defines).
GLuint program(const char* vertex, const char* fragment, const std::string& prefix = "") {
  const GLuint v = compile(GL_VERTEX_SHADER, vertex, prefix), f = compile(GL_FRAGMENT_SHADER, fragment, "");
  const GLuint p = glCreateProgram();
  glAttachShader(p, v);
  glAttachShader(p, f);
  glLinkProgram(p);
  glDeleteShader(v);
  glDeleteShader(f);
  GLint ok = 0;
  glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(p, sizeof log, nullptr, log);
    glDeleteProgram(p);
    throw Error(ErrorCode::io, "toon renderer", fmt::format("the GL driver cannot link a program: {}", log));
  }
  return p;
}

// Uniform locations looked up once per program.
struct Uniforms {
  GLuint program = 0;
  std::unordered_map<std::string, GLint> at;
  GLint operator[](const char* name) {
    const auto it = at.find(name);
    if (it != at.end()) return it->second;
    return at[name] = glGetUniformLocation(program, name);
  }
};

struct Range {
  GLsizei first = 0;  // first index
  GLsizei count = 0;  // index count
  int material = 0;
};

struct GpuCharacter {
  GLuint vao = 0, vbo = 0, ibo = 0;
  std::vector<Range> ranges;
  std::vector<io::CharacterMaterial> materials;
  std::vector<GLuint> textures;
  int bones = 0;
  /// Per bone, the sphere (bind-pose centre, radius; radius < 0 = weights nothing) around the
  /// vertices it moves: posed by the bone's matrix, the spheres bound the character on screen.
  std::vector<Eigen::Vector4f> spheres;
};

// The bone spheres of a mesh (see GpuCharacter::spheres).
std::vector<Eigen::Vector4f> bone_spheres(const io::CharacterMesh& mesh) {
  const size_t n = mesh.bones.size();
  std::vector<Vec3> sum(n, Vec3::Zero());
  std::vector<int> count(n, 0);
  std::vector<Eigen::Vector4f> out(n, Eigen::Vector4f(0, 0, 0, -1));
  auto each = [&](auto&& f) {
    for (const auto& part : mesh.parts)
      for (size_t v = 0; v < static_cast<size_t>(part.vertex_count()); ++v)
        for (size_t k = 0; k < 4; ++k)
          if (part.weights[v * 4 + k] > 0)
            f(part.bones[v * 4 + k], Vec3(part.positions[v * 3], part.positions[v * 3 + 1], part.positions[v * 3 + 2]));
  };
  each([&](size_t b, const Vec3& p) { sum[b] += p, ++count[b]; });
  for (size_t b = 0; b < n; ++b)
    if (count[b] > 0) out[b].head<3>() = (sum[b] / count[b]).cast<float>(), out[b].w() = 0;
  each([&](size_t b, const Vec3& p) {
    out[b].w() = std::max(out[b].w(), static_cast<float>((p - out[b].head<3>().cast<double>()).norm()));
  });
  return out;
}

// Per vertex: position 3, normal 3, uv 2, weights 4, hull normal 3 floats.
constexpr int kFloats = 15;

// Normals averaged over vertices that share a position, so the inverted hull has no cracks where
// the mesh splits its normals (hard edges, UV seams).
std::vector<float> hull_normals(const io::CharacterMesh& mesh) {
  struct Key {
    std::int64_t x, y, z;
    bool operator==(const Key& o) const { return x == o.x && y == o.y && z == o.z; }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      return std::hash<std::int64_t>()(k.x * 73856093 ^ k.y * 19349663 ^ k.z * 83492791);
    }
  };
  std::unordered_map<Key, Vec3, Hash> sum;
  auto key = [](const float* p) {
    return Key{std::llround(p[0] * 1e5), std::llround(p[1] * 1e5), std::llround(p[2] * 1e5)};
  };
  for (const auto& part : mesh.parts)
    for (int v = 0; v < part.vertex_count(); ++v) {
      const float* n = &part.normals[static_cast<size_t>(v) * 3];
      sum.try_emplace(key(&part.positions[static_cast<size_t>(v) * 3]), Vec3::Zero()).first->second +=
          Vec3(n[0], n[1], n[2]);
    }
  std::vector<float> out;
  for (const auto& part : mesh.parts)
    for (int v = 0; v < part.vertex_count(); ++v) {
      Vec3 n = sum.at(key(&part.positions[static_cast<size_t>(v) * 3]));
      n = n.norm() > 1e-12 ? n.normalized() : Vec3::UnitY();
      out.insert(out.end(), {static_cast<float>(n.x()), static_cast<float>(n.y()), static_cast<float>(n.z())});
    }
  return out;
}

GLuint upload_texture(const io::CharacterTexture& t) {
  GLuint tex = 0;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, t.width, t.height, 0, GL_RGBA, GL_UNSIGNED_BYTE, t.rgba.data());
  glGenerateMipmap(GL_TEXTURE_2D);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  const GLint wrap = t.repeat ? GL_REPEAT : GL_CLAMP_TO_EDGE;
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, wrap);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, wrap);
  return tex;
}

// One interleaved vertex: position, normal, uv, weights, hull normal (floats), then 4 bone indices.
struct Vertex {
  float f[kFloats];
  std::uint16_t bones[4];
};
static_assert(sizeof(Vertex) == kFloats * sizeof(float) + 4 * sizeof(std::uint16_t));

GpuCharacter upload(const io::CharacterMesh& mesh) {
  GpuCharacter g;
  std::vector<Vertex> vertices;
  std::vector<std::uint32_t> indices;
  const std::vector<float> hull = hull_normals(mesh);
  size_t base = 0;
  for (const auto& part : mesh.parts) {
    const int n = part.vertex_count();
    for (int v = 0; v < n; ++v) {
      const size_t i = static_cast<size_t>(v);
      const float* p = &part.positions[i * 3];
      const float* nn = &part.normals[i * 3];
      const float* uv = &part.uvs[i * 2];
      const float* w = &part.weights[i * 4];
      const float* h = &hull[(base + i) * 3];
      const std::uint16_t* b = &part.bones[i * 4];
      vertices.push_back(Vertex{{p[0], p[1], p[2], nn[0], nn[1], nn[2], uv[0], uv[1], w[0], w[1], w[2], w[3], h[0],
                                 h[1], h[2]},
                                {b[0], b[1], b[2], b[3]}});
    }
    Range r{static_cast<GLsizei>(indices.size()), static_cast<GLsizei>(part.indices.size()), part.material};
    for (std::uint32_t k : part.indices) indices.push_back(static_cast<std::uint32_t>(base + k));
    g.ranges.push_back(r);
    base += static_cast<size_t>(n);
  }
  glGenVertexArrays(1, &g.vao);
  glBindVertexArray(g.vao);
  glGenBuffers(1, &g.vbo);
  glBindBuffer(GL_ARRAY_BUFFER, g.vbo);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(vertices.size() * sizeof(Vertex)), vertices.data(),
               GL_STATIC_DRAW);
  const GLsizei stride = sizeof(Vertex);
  auto at = [](size_t offset) { return reinterpret_cast<const void*>(offset); };
  auto attrib = [&](GLuint loc, GLint size, int offset) {
    glEnableVertexAttribArray(loc);
    glVertexAttribPointer(loc, size, GL_FLOAT, GL_FALSE, stride, at(static_cast<size_t>(offset) * sizeof(float)));
  };
  attrib(0, 3, 0);
  attrib(1, 3, 3);
  attrib(2, 2, 6);
  attrib(4, 4, 8);
  attrib(5, 3, 12);
  glEnableVertexAttribArray(3);
  glVertexAttribIPointer(3, 4, GL_UNSIGNED_SHORT, stride, at(offsetof(Vertex, bones)));
  glGenBuffers(1, &g.ibo);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, g.ibo);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(indices.size() * sizeof(std::uint32_t)),
               indices.data(), GL_STATIC_DRAW);
  glBindVertexArray(0);
  for (const auto& t : mesh.textures) g.textures.push_back(upload_texture(t));
  g.materials = mesh.materials;
  g.bones = static_cast<int>(mesh.bones.size());
  g.spheres = bone_spheres(mesh);
  return g;
}

// Column-major 4x4 float matrices for GL.
using Mat4f = Eigen::Matrix4f;

// World -> view and view -> clip for a fitted render::Camera, so that GL's pixels are the
// camera's: x = offset_x + scale * right.q (/ depth in perspective), y down from offset_y. View
// depth runs from `near_depth` (0 in view space) to `far_depth`.
void camera_matrices(const render::Camera& cam, Mat4f& view, Mat4f& proj, double* far_out) {
  // The box of the framed points, padded by the figure's size (a mesh reaches past its joints).
  const double pad = std::max(cam.figure_height, 0.1);
  double near_d = INFINITY, far_d = -INFINITY;
  for (int i = 0; i < 8; ++i) {
    const Vec3 p((i & 1) ? cam.box_max.x() : cam.box_min.x(), (i & 2) ? cam.box_max.y() : cam.box_min.y(),
                 (i & 4) ? cam.box_max.z() : cam.box_min.z());
    const double d = cam.perspective ? cam.forward.dot(p - cam.eye) : cam.forward.dot(p);
    near_d = std::min(near_d, d), far_d = std::max(far_d, d);
  }
  near_d -= pad, far_d += pad;
  Eigen::Matrix4d v = Eigen::Matrix4d::Identity();
  v.block<1, 3>(0, 0) = cam.right.transpose();
  v.block<1, 3>(1, 0) = cam.up.transpose();
  v.block<1, 3>(2, 0) = -cam.forward.transpose();
  const double W = cam.width, H = cam.height;
  Eigen::Matrix4d p = Eigen::Matrix4d::Zero();
  if (!cam.perspective) {
    // Ortho: the eye sits `near_d` along forward from the origin, so view depth starts at 0.
    v.block<3, 1>(0, 3) = Vec3(0, 0, near_d);
    const double depth = far_d - near_d;
    p(0, 0) = 2 * cam.scale / W;
    p(0, 3) = 2 * cam.offset_x / W - 1;
    p(1, 1) = 2 * cam.scale / H;
    p(1, 3) = 1 - 2 * cam.offset_y / H;
    p(2, 2) = -2 / depth;
    p(2, 3) = -1;
    p(3, 3) = 1;
    *far_out = depth;
  } else {
    v.block<3, 1>(0, 3) = -(v.block<3, 3>(0, 0) * cam.eye);
    const double n = std::max(near_d, 0.05), f = std::max(far_d, n + 1.0);
    p(0, 0) = 2 * cam.scale / W;
    p(0, 2) = -(2 * cam.offset_x / W - 1);
    p(1, 1) = 2 * cam.scale / H;
    p(1, 2) = -(1 - 2 * cam.offset_y / H);
    p(2, 2) = -(f + n) / (f - n);
    p(2, 3) = -2 * f * n / (f - n);
    p(3, 2) = -1;
    *far_out = f;
  }
  view = v.cast<float>();
  proj = p.cast<float>();
}

}  // namespace

struct Renderer::Impl {
  detail::GlContext gl;
  ToonStyle style;
  int width = 0, height = 0;
  GLuint character_program = 0, shadow_program = 0, edge_program = 0;
  Uniforms cu, su, eu;
  GLuint msaa_fbo = 0, msaa_colour = 0, msaa_nd = 0, msaa_depth = 0;
  GLuint resolve_fbo = 0, resolve_colour = 0, resolve_nd = 0;
  GLuint out_fbo = 0, out_colour = 0;
  GLuint bone_buffer = 0, empty_vao = 0;
  int max_bones = 0;  // per pose row of the Bones uniform block
  std::vector<GpuCharacter> characters;
  std::vector<std::uint8_t> readback;

  void build_targets();
  /// The pixels the frame can touch (x0, y0, x1, y1; GL rows from the bottom): the draws' bone
  /// spheres and the shadow on screen, grown by the lines' widths. Outside it is plain paper.
  std::array<int, 4> region(std::span<const Draw> draws, const render::Camera& camera,
                            const ContactShadow& shadow) const;
  void clear_and_shadow(const ContactShadow& shadow, float clear_far);
  void read_back(render::Image& out);
  void draw_character(const Draw& d, const Mat4f& view, const Mat4f& proj, float hull_push);
  void draw_ranges(const GpuCharacter& c, bool materials);
  void draw_multiples(const GpuCharacter& c);
  void upload_bones(const Draw& d, int bones);
  void edge_pass(double figure_size, double far);
  ~Impl();
};

Renderer::Impl::~Impl() {
  gl.make_current();
  for (auto& c : characters) {
    glDeleteVertexArrays(1, &c.vao);
    glDeleteBuffers(1, &c.vbo);
    glDeleteBuffers(1, &c.ibo);
    if (!c.textures.empty()) glDeleteTextures(static_cast<GLsizei>(c.textures.size()), c.textures.data());
  }
  const GLuint fbos[] = {msaa_fbo, resolve_fbo, out_fbo};
  glDeleteFramebuffers(3, fbos);
  const GLuint rbs[] = {msaa_colour, msaa_nd, msaa_depth};
  glDeleteRenderbuffers(3, rbs);
  const GLuint texs[] = {resolve_colour, resolve_nd, out_colour};
  glDeleteTextures(3, texs);
  glDeleteBuffers(1, &bone_buffer);
  glDeleteVertexArrays(1, &empty_vao);
  glDeleteProgram(character_program);
  glDeleteProgram(shadow_program);
  glDeleteProgram(edge_program);
}

namespace {

GLuint texture_target(GLint internal, GLenum format, GLenum type, int w, int h) {
  GLuint t = 0;
  glGenTextures(1, &t);
  glBindTexture(GL_TEXTURE_2D, t);
  glTexImage2D(GL_TEXTURE_2D, 0, internal, w, h, 0, format, type, nullptr);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return t;
}

void check_complete(const char* what) {
  const GLenum s = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (s != GL_FRAMEBUFFER_COMPLETE)
    throw Error(ErrorCode::io, "toon renderer", fmt::format("the GL driver cannot make the {} framebuffer (0x{:x})", what, s));
}

}  // namespace

void Renderer::Impl::build_targets() {
  const int samples = style.msaa;
  glGenRenderbuffers(1, &msaa_colour);
  glBindRenderbuffer(GL_RENDERBUFFER, msaa_colour);
  glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_RGBA8, width, height);
  glGenRenderbuffers(1, &msaa_nd);
  glBindRenderbuffer(GL_RENDERBUFFER, msaa_nd);
  glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_RGBA16F, width, height);
  glGenRenderbuffers(1, &msaa_depth);
  glBindRenderbuffer(GL_RENDERBUFFER, msaa_depth);
  glRenderbufferStorageMultisample(GL_RENDERBUFFER, samples, GL_DEPTH_COMPONENT24, width, height);
  glGenFramebuffers(1, &msaa_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, msaa_fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, msaa_colour);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT1, GL_RENDERBUFFER, msaa_nd);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, msaa_depth);
  check_complete("multisampled");

  resolve_colour = texture_target(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, width, height);
  resolve_nd = texture_target(GL_RGBA16F, GL_RGBA, GL_FLOAT, width, height);
  glGenFramebuffers(1, &resolve_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, resolve_fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, resolve_colour, 0);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT1, GL_TEXTURE_2D, resolve_nd, 0);
  check_complete("resolve");

  out_colour = texture_target(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, width, height);
  glGenFramebuffers(1, &out_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, out_fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, out_colour, 0);
  check_complete("output");

  glGenBuffers(1, &bone_buffer);
  glBindBuffer(GL_UNIFORM_BUFFER, bone_buffer);
  glBufferData(GL_UNIFORM_BUFFER, static_cast<GLsizeiptr>(max_bones) * 2 * 64, nullptr, GL_DYNAMIC_DRAW);
  glBindBufferBase(GL_UNIFORM_BUFFER, 0, bone_buffer);
  glGenVertexArrays(1, &empty_vao);
}

Renderer::Renderer(int width, int height, const ToonStyle& style) {
  style.validate();
  if (width < 1 || height < 1 || width > 8192 || height > 8192)
    throw Error(ErrorCode::invalid_settings, "size", fmt::format("{}x{}: expected 1 .. 8192 on a side", width, height));
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.style = style;
  m.width = width;
  m.height = height;
  // Bones per pose: two poses (the drawing's, the previous drawing's) fill the largest uniform block.
  GLint block = 0;
  glGetIntegerv(GL_MAX_UNIFORM_BLOCK_SIZE, &block);
  m.max_bones = std::clamp(block / (2 * 64), 1, 1024);
  m.character_program = program(detail::kCharacterVertex, detail::kCharacterFragment,
                                 fmt::format("#version 330 core\n#define KOMA_MAX_BONES {}\n", m.max_bones));
  const GLuint bones_block = glGetUniformBlockIndex(m.character_program, "Bones");
  if (bones_block != GL_INVALID_INDEX) glUniformBlockBinding(m.character_program, bones_block, 0);
  m.shadow_program = program(detail::kShadowVertex, detail::kShadowFragment);
  m.edge_program = program(detail::kEdgeVertex, detail::kEdgeFragment);
  m.cu.program = m.character_program;
  m.su.program = m.shadow_program;
  m.eu.program = m.edge_program;
  m.build_targets();
}

Renderer::~Renderer() = default;

int Renderer::width() const noexcept { return impl_->width; }
int Renderer::height() const noexcept { return impl_->height; }
std::string Renderer::gl_renderer() const { return impl_->gl.renderer(); }

int Renderer::bone_count(int character) const {
  if (character < 0 || character >= static_cast<int>(impl_->characters.size()))
    throw Error(ErrorCode::invalid_settings, "character", fmt::format("no character {}", character));
  return impl_->characters[static_cast<size_t>(character)].bones;
}

int Renderer::add_character(const io::CharacterMesh& mesh) {
  int max_joint = 0;
  for (const auto& b : mesh.bones) max_joint = std::max(max_joint, b.joint + 1);
  mesh.validate(max_joint);
  if (static_cast<int>(mesh.bones.size()) > impl_->max_bones)
    throw Error(ErrorCode::bad_data, "toon renderer",
                fmt::format("the character has {} bones; this GL driver draws at most {}", mesh.bones.size(),
                            impl_->max_bones));
  impl_->gl.make_current();
  impl_->characters.push_back(upload(mesh));
  return static_cast<int>(impl_->characters.size()) - 1;
}

void Renderer::Impl::upload_bones(const Draw& d, int bones) {
  const auto bytes = static_cast<GLsizeiptr>(bones) * 64;
  glBindBuffer(GL_UNIFORM_BUFFER, bone_buffer);
  glBufferSubData(GL_UNIFORM_BUFFER, 0, bytes, d.bones.data());
  if (style.smear != Smear::off && !d.previous_bones.empty())
    glBufferSubData(GL_UNIFORM_BUFFER, static_cast<GLintptr>(max_bones) * 64, bytes, d.previous_bones.data());
  glBindBufferBase(GL_UNIFORM_BUFFER, 0, bone_buffer);
}

// Draws every range of `c` (its VAO bound); with `materials`, each with its material's colour,
// texture, cut-off and sides, else as they are (the ink hull).
void Renderer::Impl::draw_ranges(const GpuCharacter& c, bool materials) {
  for (const Range& r : c.ranges) {
    if (materials) {
      const io::CharacterMaterial& mat = c.materials[static_cast<size_t>(r.material)];
      if (mat.double_sided) glDisable(GL_CULL_FACE);
      else glEnable(GL_CULL_FACE), glCullFace(GL_BACK);
      glUniform4f(cu["u_base"], mat.base_colour[0], mat.base_colour[1], mat.base_colour[2], mat.base_colour[3]);
      glUniform1f(cu["u_cutoff"], mat.alpha_cutoff);
      const bool textured = mat.texture >= 0;
      glUniform1i(cu["u_has_texture"], textured ? 1 : 0);
      glActiveTexture(GL_TEXTURE0);
      glBindTexture(GL_TEXTURE_2D, textured ? c.textures[static_cast<size_t>(mat.texture)] : 0);
    }
    glDrawElements(GL_TRIANGLES, r.count, GL_UNSIGNED_INT,
                   reinterpret_cast<const void*>(static_cast<std::uintptr_t>(r.first) * sizeof(std::uint32_t)));
  }
}

// The multiples: copies of the fast parts back along the motion, farthest (faintest) first, blended
// over what is drawn and under the character (no depth written, so the character covers them), with
// no lines (the normal and depth attachment is left alone).
void Renderer::Impl::draw_multiples(const GpuCharacter& c) {
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDepthMask(GL_FALSE);
  glColorMaski(1, GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
  glUniform1i(cu["u_smear"], 2);
  for (double back : kMultiples) {
    glUniform1f(cu["u_back"], static_cast<float>(back));
    glUniform1f(cu["u_copy"], static_cast<float>(0.95 - 0.85 * back));
    draw_ranges(c, true);
  }
  glUniform1f(cu["u_copy"], 0.0f);
  glColorMaski(1, GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  glDepthMask(GL_TRUE);
  glDisable(GL_BLEND);
}

void Renderer::Impl::draw_character(const Draw& d, const Mat4f& view, const Mat4f& proj, float hull_push) {
  const GpuCharacter& c = characters[static_cast<size_t>(d.character)];
  upload_bones(d, c.bones);
  glUseProgram(character_program);
  glUniform1i(cu["u_texture"], 0);
  glUniformMatrix4fv(cu["u_view"], 1, GL_FALSE, view.data());
  glUniformMatrix4fv(cu["u_proj"], 1, GL_FALSE, proj.data());
  glUniform2f(cu["u_viewport"], static_cast<float>(width), static_cast<float>(height));
  // The key light: from the upper left, in front (view space), as a drawing's light usually is.
  const Eigen::Vector3f light = Eigen::Vector3f(-0.45f, 0.65f, 0.62f).normalized();
  glUniform3fv(cu["u_light"], 1, light.data());
  glUniform1i(cu["u_shading"], static_cast<int>(style.shading));
  glUniform1i(cu["u_tones"], style.tones);
  glUniform1f(cu["u_threshold"], static_cast<float>(style.threshold));
  glUniform1f(cu["u_core_threshold"], static_cast<float>(style.core_threshold));
  glUniform3f(cu["u_shadow"], static_cast<float>(style.shadow.r), static_cast<float>(style.shadow.g),
              static_cast<float>(style.shadow.b));
  glUniform3f(cu["u_core"], static_cast<float>(style.core.r), static_cast<float>(style.core.g),
              static_cast<float>(style.core.b));
  glUniform4f(cu["u_ink"], static_cast<float>(style.ink.r), static_cast<float>(style.ink.g),
              static_cast<float>(style.ink.b), 1.0f);
  const double k = height / 720.0;
  const bool smears = style.smear != Smear::off && !d.previous_bones.empty();
  glUniform1f(cu["u_smear_px"], static_cast<float>(style.smear_threshold * k));
  glUniform1f(cu["u_smear_length"], static_cast<float>(kSmearLength));
  glUniform1f(cu["u_copy"], 0.0f);
  glBindVertexArray(c.vao);
  glEnable(GL_CULL_FACE);
  glUniform1i(cu["u_ink_pass"], 0);
  glUniform1f(cu["u_outline"], 0.0f);
  if (smears && style.smear == Smear::multiples) draw_multiples(c);
  // The character: smeared (its colour pass and its hull alike) or as posed.
  glUniform1i(cu["u_smear"], smears && style.smear == Smear::smear ? 1 : 0);
  // Colour pass.
  draw_ranges(c, true);
  // Inverted hull: back faces pushed out by the line width, in ink.
  if (style.line_width > 0) {
    glEnable(GL_CULL_FACE);
    glCullFace(GL_FRONT);
    glUniform1i(cu["u_ink_pass"], 1);
    glUniform1f(cu["u_outline"], static_cast<float>(style.line_width * k));
    glUniform1f(cu["u_hull_push"], hull_push);
    draw_ranges(c, false);
    glCullFace(GL_BACK);
  }
  glBindVertexArray(0);
}

void Renderer::Impl::edge_pass(double figure_size, double far) {
  glBindFramebuffer(GL_FRAMEBUFFER, out_fbo);
  glViewport(0, 0, width, height);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_BLEND);
  glDisable(GL_CULL_FACE);
  glUseProgram(edge_program);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, resolve_colour);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, resolve_nd);
  glUniform1i(eu["u_colour"], 0);
  glUniform1i(eu["u_normal_depth"], 1);
  glUniform2i(eu["u_size"], width, height);
  const double k = height / 720.0;
  // The line is drawn on the near side of a break only, so its width is the search radius.
  glUniform1i(eu["u_radius"], std::max(1, static_cast<int>(std::lround(style.inner_width * k))));
  glUniform1f(eu["u_depth_break"], static_cast<float>(style.depth_break * std::max(figure_size, 1e-3)));
  glUniform1f(eu["u_crease"], static_cast<float>(std::cos(style.crease_deg * M_PI / 180.0)));
  glUniform1f(eu["u_far"], static_cast<float>(far * 0.999));
  glUniform4f(eu["u_ink"], static_cast<float>(style.ink.r), static_cast<float>(style.ink.g),
              static_cast<float>(style.ink.b), 1.0f);
  glUniform1i(eu["u_inner"], style.inner_width > 0 && style.shading != Shading::flat ? 1 : 0);
  glBindVertexArray(empty_vao);
  glDrawArrays(GL_TRIANGLES, 0, 3);
}

std::array<int, 4> Renderer::Impl::region(std::span<const Draw> draws, const render::Camera& camera,
                                          const ContactShadow& shadow) const {
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  auto grow = [&](double x, double y, double r) {
    x0 = std::min(x0, x - r), x1 = std::max(x1, x + r), y0 = std::min(y0, y - r), y1 = std::max(y1, y + r);
  };
  for (const Draw& d : draws) {
    const GpuCharacter& c = characters[static_cast<size_t>(d.character)];
    // A smear reaches back toward the previous drawing's pose: its spheres count too.
    const bool smears = style.smear != Smear::off && !d.previous_bones.empty();
    for (size_t i = 0; i < c.spheres.size() * (smears ? 2 : 1); ++i) {
      const size_t b = i % c.spheres.size();
      if (c.spheres[b].w() < 0) continue;
      const Eigen::Map<const Eigen::Matrix4f> m((i < c.spheres.size() ? d.bones : d.previous_bones).data() + b * 16);
      const Eigen::Vector4f centre = m * Eigen::Vector4f(c.spheres[b].x(), c.spheres[b].y(), c.spheres[b].z(), 1.0f);
      const float stretch = std::max({m.col(0).head<3>().norm(), m.col(1).head<3>().norm(), m.col(2).head<3>().norm()});
      const double r = static_cast<double>(c.spheres[b].w() * stretch);
      const Vec3 p = camera.project(centre.head<3>().cast<double>());
      // In perspective the sphere's near side is the biggest on screen.
      const double ppm = camera.perspective ? camera.scale / std::max(p.z() - r, 1e-3) : camera.scale;
      grow(p.x(), p.y(), r * ppm);
    }
  }
  if (shadow.opacity > 0 && !style.transparent) {
    x0 = std::min(x0, shadow.x - 1.1 * shadow.rx), x1 = std::max(x1, shadow.x + 1.1 * shadow.rx);
    y0 = std::min(y0, shadow.y - 1.1 * shadow.ry), y1 = std::max(y1, shadow.y + 1.1 * shadow.ry);
  }
  if (!(x1 >= x0)) return {0, 0, 0, 0};
  const double k = height / 720.0, pad = 4 + (style.line_width + style.inner_width) * k;
  const int ix0 = std::clamp(static_cast<int>(std::floor(x0 - pad)), 0, width);
  const int ix1 = std::clamp(static_cast<int>(std::ceil(x1 + pad)), 0, width);
  const int iy0 = std::clamp(static_cast<int>(std::floor(y0 - pad)), 0, height);
  const int iy1 = std::clamp(static_cast<int>(std::ceil(y1 + pad)), 0, height);
  return {ix0, height - iy1, ix1, height - iy0};
}

void Renderer::Impl::clear_and_shadow(const ContactShadow& shadow, float clear_far) {
  glBindFramebuffer(GL_FRAMEBUFFER, msaa_fbo);
  glViewport(0, 0, width, height);
  const GLenum both[] = {GL_COLOR_ATTACHMENT0, GL_COLOR_ATTACHMENT1};
  glDrawBuffers(2, both);
  const float paper[4] = {static_cast<float>(style.paper.r), static_cast<float>(style.paper.g),
                          static_cast<float>(style.paper.b), 1.0f};
  const float clear_colour[4] = {0, 0, 0, 0};
  glClearBufferfv(GL_COLOR, 0, style.transparent ? clear_colour : paper);
  const float clear_nd[4] = {0.5f, 0.5f, 1.0f, clear_far};
  glClearBufferfv(GL_COLOR, 1, clear_nd);
  glClearDepth(1.0);
  glClear(GL_DEPTH_BUFFER_BIT);
  if (style.transparent || !(shadow.opacity > 0 && shadow.rx > 0 && shadow.ry > 0)) return;
  glDisable(GL_DEPTH_TEST);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glColorMaski(1, GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
  glUseProgram(shadow_program);
  glUniform4f(su["u_ellipse"], static_cast<float>(shadow.x), static_cast<float>(shadow.y),
              static_cast<float>(shadow.rx), static_cast<float>(shadow.ry));
  glUniform2f(su["u_viewport"], static_cast<float>(width), static_cast<float>(height));
  const float a = static_cast<float>(shadow.opacity);
  glUniform4f(su["u_colour"], static_cast<float>(style.ink.r) * a, static_cast<float>(style.ink.g) * a,
              static_cast<float>(style.ink.b) * a, a);
  glUniform1f(su["u_soft"], 0.25f);
  glBindVertexArray(empty_vao);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glColorMaski(1, GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  glDisable(GL_BLEND);
}

void Renderer::Impl::read_back(render::Image& out) {
  // GL rows run bottom-up; a transparent cel's premultiplied alpha is undone.
  glBindFramebuffer(GL_READ_FRAMEBUFFER, out_fbo);
  glReadBuffer(GL_COLOR_ATTACHMENT0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  const size_t row = static_cast<size_t>(width) * 4;
  readback.resize(row * static_cast<size_t>(height));
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, readback.data());
  out.width = width;
  out.height = height;
  out.rgba.resize(readback.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(readback.data() + row * static_cast<size_t>(height - 1 - y), row,
                out.rgba.data() + row * static_cast<size_t>(y));
  if (style.transparent) {
    for (size_t i = 0; i < out.rgba.size(); i += 4) {
      const unsigned a = out.rgba[i + 3];
      if (a == 0 || a == 255) continue;
      for (size_t c = 0; c < 3; ++c)
        out.rgba[i + c] = static_cast<std::uint8_t>(std::min(255u, (out.rgba[i + c] * 255u + a / 2) / a));
    }
  } else {
    for (size_t i = 3; i < out.rgba.size(); i += 4) out.rgba[i] = 255;
  }
}

void Renderer::render(std::span<const Draw> draws, const render::Camera& camera, const ContactShadow& shadow,
                      double figure_size, render::Image& out) {
  Impl& m = *impl_;
  if (camera.width != m.width || camera.height != m.height)
    throw Error(ErrorCode::mismatch, "toon renderer",
                fmt::format("the camera is {}x{}, the renderer {}x{}", camera.width, camera.height, m.width, m.height));
  for (const Draw& d : draws) {
    const int bones = bone_count(d.character);
    if (d.bones.size() != static_cast<size_t>(bones) * 16 ||
        (!d.previous_bones.empty() && d.previous_bones.size() != d.bones.size()))
      throw Error(ErrorCode::mismatch, "toon renderer",
                  fmt::format("character {} has {} bones; the draw gives {} matrices", d.character, bones,
                              d.bones.size() / 16));
  }
  m.gl.make_current();
  Mat4f view, proj;
  double far = 1.0;
  camera_matrices(camera, view, proj, &far);
  const float clear_far = static_cast<float>(far * 2.0 + 1.0);
  // Only the region the figure and its shadow can touch is cleared, drawn, resolved and searched
  // for lines; the rest of the output is cleared to paper once. On a CPU rasteriser most of a
  // frame is paper, and this is most of the time saved.
  const std::array<int, 4> r = m.region(draws, camera, shadow);
  glBindFramebuffer(GL_FRAMEBUFFER, m.out_fbo);
  glViewport(0, 0, m.width, m.height);
  glDisable(GL_SCISSOR_TEST);
  const float paper[4] = {static_cast<float>(m.style.paper.r), static_cast<float>(m.style.paper.g),
                          static_cast<float>(m.style.paper.b), 1.0f};
  const float none[4] = {0, 0, 0, 0};
  glClearBufferfv(GL_COLOR, 0, m.style.transparent ? none : paper);
  if (r[2] > r[0] && r[3] > r[1]) {
    glEnable(GL_SCISSOR_TEST);
    glScissor(r[0], r[1], r[2] - r[0], r[3] - r[1]);
    m.clear_and_shadow(shadow, clear_far);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    // The hull sits 2 % of the figure's size behind the surface it outlines: where parts
    // interpenetrate (a neck in a head) it stays hidden instead of speckling the surface with ink.
    const float hull_push = static_cast<float>(2.0 * 0.02 * std::max(figure_size, 1e-3) / std::max(far, 1e-3));
    for (const Draw& d : draws) m.draw_character(d, view, proj, hull_push);
    // Resolve both colour attachments (the region only), then the lines.
    glBindFramebuffer(GL_READ_FRAMEBUFFER, m.msaa_fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, m.resolve_fbo);
    for (int a = 0; a < 2; ++a) {
      glReadBuffer(GL_COLOR_ATTACHMENT0 + static_cast<GLenum>(a));
      const GLenum target = GL_COLOR_ATTACHMENT0 + static_cast<GLenum>(a);
      glDrawBuffers(1, &target);
      glBlitFramebuffer(r[0], r[1], r[2], r[3], r[0], r[1], r[2], r[3], GL_COLOR_BUFFER_BIT, GL_NEAREST);
    }
    m.edge_pass(figure_size, clear_far);
    glDisable(GL_SCISSOR_TEST);
  }
  m.read_back(out);
}

std::optional<std::string> unavailable_reason() {
  try {
    detail::GlContext gl;
    return std::nullopt;
  } catch (const Error& e) {
    return e.message();
  }
}

}  // namespace koma::toon
