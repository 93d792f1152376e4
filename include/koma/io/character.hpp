// The skinned character a glTF or FBX file carries (io::GltfScene), as plain arrays a renderer
// draws: triangles with positions, normals, texture coordinates and up to four joint weights per
// vertex, materials with their base colour and decoded base-colour texture, and per joint of the
// Motion the matrix that takes a vertex from the bind pose into that joint's frame.
//
// Skinning with a Motion read from the same file: a vertex v of the bind pose is at
//   v(t) = sum_k weight_k * W_{b.joint}(t) * b.inverse_bind * v,   b = bones[bone_k],
// where W_j(t) is joint j's world transform (translation, rotation and scale down the chain, as
// glTF composes T * R * S) built from the Motion's local transforms. A bone names a Motion joint
// (not the file's skin order), so any frame of the Motion, resampled or held, drives the mesh
// directly; several bones may name one joint (two skins, or a mesh that moves rigidly with it).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>


namespace koma::io {

struct GltfScene;

/// A decoded picture: straight RGBA8, rows from the top (glTF's texture coordinate v = 0).
struct CharacterTexture {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgba;  ///< width * height * 4 bytes.
  bool repeat = true;              ///< Texture coordinates outside 0..1 wrap (else clamp).
};

/// How a material is drawn.
struct CharacterMaterial {
  std::string name;
  std::array<float, 4> base_colour{0.8f, 0.8f, 0.8f, 1.0f};  ///< Linear factor applied to the texture (sRGB values as stored).
  int texture = -1;          ///< Index into CharacterMesh::textures, or -1 (base colour only).
  bool double_sided = false; ///< Back faces are drawn (and lit as front faces).
  float alpha_cutoff = -1;   ///< glTF alphaMode MASK: texels with alpha below it are cut; -1 = opaque.
};

/// One triangle list of one material.
struct CharacterPart {
  std::vector<float> positions;        ///< 3 per vertex, bind pose, metres (koma's Y-up frame).
  std::vector<float> normals;          ///< 3 per vertex, unit.
  std::vector<float> uvs;              ///< 2 per vertex (0 when the file has none).
  std::vector<std::uint16_t> bones;    ///< 4 per vertex: indices into CharacterMesh::bones.
  std::vector<float> weights;          ///< 4 per vertex, summing to 1.
  std::vector<std::uint32_t> indices;  ///< 3 per triangle.
  int material = 0;                    ///< Index into CharacterMesh::materials.

  int vertex_count() const noexcept { return static_cast<int>(positions.size() / 3); }
};

/// What a vertex is bound to: a Motion joint and the matrix from the bind pose into its frame.
struct CharacterBone {
  int joint = 0;  ///< Motion joint index.
  Eigen::Matrix4d inverse_bind = Eigen::Matrix4d::Identity();
};

/// A character ready to draw.
///
/// Invariants: every part's arrays have matching vertex counts; indices < vertex_count; vertex
/// bones < bones.size(); bone joints, materials and textures in range.
struct CharacterMesh {
  std::vector<CharacterPart> parts;
  std::vector<CharacterMaterial> materials;
  std::vector<CharacterTexture> textures;
  std::vector<CharacterBone> bones;

  /// Number of triangles of all parts.
  std::size_t triangle_count() const noexcept;
  /// Throws Error(bad_data) naming the part and the broken invariant; `joint_count` is the
  /// Motion's number of joints.
  void validate(int joint_count) const;
};

/// What character_mesh() found.
struct CharacterMeshResult {
  CharacterMesh mesh;
  std::vector<std::string> warnings;  ///< Tolerated problems: an undecodable texture, an unskinned mesh.
  bool weighted = false;              ///< True when at least one vertex is weighted to a joint.
};

/// The meshes of `scene` that are skinned to its skeleton (joint_count = the Motion's joints),
/// with their materials and decoded textures (PNG or JPEG through stb_image). `file` names the
/// source in warnings. Meshes whose skin names nodes outside the skeleton have those weights moved
/// to the nearest joint above; a mesh without skin that hangs below a joint node moves rigidly
/// with it; any other mesh is left out with a warning. A texture that cannot be decoded is a
/// warning and its material keeps its base colour. Never throws for file content (an empty result
/// has no parts); throws Error(mismatch) when joint_count differs from the scene's skeleton.
CharacterMeshResult character_mesh(const GltfScene& scene, int joint_count, const std::string& file);

/// Decodes PNG or JPEG bytes into straight RGBA8. Throws Error(bad_file) with `context` and the
/// decoder's reason when the bytes are not a picture it can read (or larger than 16384 on a side).
CharacterTexture decode_texture(const std::vector<std::uint8_t>& bytes, const std::string& context);

}  // namespace koma::io
