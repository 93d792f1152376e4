// FBX input through assimp. assimp stays private to this file: it parses the FBX document (binary
// or ASCII 7.x) into an aiScene; everything koma-specific (which nodes are the skeleton, units and
// axes, the sampling grid) is decided here. See include/koma/io/fbx.hpp for the rules.
#include "koma/io/fbx.hpp"

#include <assimp/DefaultLogger.hpp>
#include <assimp/Importer.hpp>
#include <assimp/LogStream.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "fbx_character.hpp"
#include "fbx_precheck.hpp"
#include "isolated_read.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/checked.hpp"
#include "koma/core/error.hpp"
#include "koma/io/clip_name.hpp"
#include "koma/core/text.hpp"

namespace koma::io {

namespace {

/// A node's local transform split into parts.
struct Trs {
  Vec3 translation = Vec3::Zero();
  Quat rotation = Quat::Identity();
  Vec3 scale = Vec3::Ones();
};

struct Loaded {
  std::unique_ptr<Assimp::Importer> importer;  // owns the scene
  const aiScene* scene = nullptr;
  std::uint64_t bytes = 0;  // the file's size: what it declares must fit it (check_sample_budget)
};

// assimp's log while one file loads, for the messages koma words itself (a thread's own list: the
// logger is assimp's one global, attached once).
thread_local std::vector<std::string>* t_assimp_log = nullptr;

class CollectLog : public Assimp::LogStream {
 public:
  void write(const char* message) override {
    if (t_assimp_log != nullptr && t_assimp_log->size() < 100) t_assimp_log->emplace_back(message);
  }
};

void attach_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    Assimp::DefaultLogger::create("", Assimp::Logger::NORMAL, 0);
    Assimp::DefaultLogger::get()->attachStream(new CollectLog, Assimp::Logger::Err | Assimp::Logger::Warn);
  });
}

// assimp's text as a detail of koma's message, with its place ("line 59", "offset 0x7e6") moved
// into the context: {context, detail}.
std::pair<std::string, std::string> assimp_detail(std::string text, const std::string& file) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (const char* prefix : {"Error, T0: ", "Warn,  T0: "})
    if (text.rfind(prefix, 0) == 0) text.erase(0, std::strlen(prefix));
  std::string context = file;
  const size_t open = text.find('(');
  const size_t close = open == std::string::npos ? open : text.find(')', open);
  if (close != std::string::npos) {
    const std::string place = text.substr(open + 1, close - open - 1);
    if (const size_t at = place.find("offset 0x"); at != std::string::npos)
      context = fmt::format("{}: byte {}", file, std::strtoull(place.c_str() + at + 9, nullptr, 16));
    else if (const size_t line = place.find("line "); line != std::string::npos)
      context = fmt::format("{}:{}", file, std::strtoull(place.c_str() + line + 5, nullptr, 10));
    if (context != file) text.erase(open, close - open + 1);
  }
  std::string detail;
  for (size_t i = 0; i < text.size(); ++i)  // squeeze the spaces left by the cut
    if (!(text[i] == ' ' && (detail.empty() || detail.back() == ' '))) detail += text[i];
  return {context, printable(detail)};
}

Loaded load_scene(const std::filesystem::path& path) {
  require_input_file(path);
  const std::string file = path.string();
  // One read: the checks and assimp see the same bytes.
  const std::string bytes = read_file(path);
  fbx_detail::precheck_fbx(bytes, file);
  Loaded out;
  out.bytes = bytes.size();
  out.importer = std::make_unique<Assimp::Importer>();
  // One node per FBX model: assimp folds pre/post rotations and pivots into it (and into the keys)
  // instead of inserting "$AssimpFbx$" helper nodes.
  out.importer->SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
  attach_log();
  std::vector<std::string> log;
  t_assimp_log = &log;
  // Polygons become triangles (glTF meshes are triangles); the skeleton and animation are untouched.
  try {
    out.scene = out.importer->ReadFileFromMemory(bytes.data(), bytes.size(), aiProcess_Triangulate, "fbx");
  } catch (const std::bad_alloc&) {
    t_assimp_log = nullptr;
    throw;
  } catch (const std::exception& e) {
    t_assimp_log = nullptr;
    throw Error(ErrorCode::bad_file, file,
                fmt::format("not a readable FBX 7.x file; assimp failed on it: {}", printable(e.what())));
  }
  t_assimp_log = nullptr;
  if (out.scene == nullptr) {
    const auto [where, why] = assimp_detail(out.importer->GetErrorString(), file);
    throw Error(ErrorCode::bad_file, where,
                fmt::format("not a readable FBX 7.x file (koma reads binary and ASCII FBX 2011 and newer); assimp "
                            "says: {}",
                            why.empty() ? "no reason given" : why));
  }
  for (const std::string& line : log)
    if (line.find("not in ascending order") != std::string::npos) {
      const auto [where, why] = assimp_detail(line, file);
      throw Error(ErrorCode::bad_file, where,
                  fmt::format("an animation curve's key times (KeyTime) do not increase; assimp drops such a curve, "
                              "so the clip would lose that motion. assimp says: {}",
                              why));
    }
  aiString format;
  if (out.scene->mMetaData == nullptr || !out.scene->mMetaData->Get("SourceAsset_Format", format) ||
      std::string(format.C_Str()).find("FBX") == std::string::npos)
    throw Error(ErrorCode::bad_file, file,
                fmt::format("not an FBX file: assimp read it as '{}'", printable(format.C_Str())));
  return out;
}

int meta_int(const aiScene& scene, const char* key, int fallback) {
  int32_t v = 0;
  return scene.mMetaData != nullptr && scene.mMetaData->Get(key, v) ? v : fallback;
}

double meta_real(const aiScene& scene, const char* key, double fallback) {
  if (scene.mMetaData == nullptr) return fallback;
  float f = 0;
  if (scene.mMetaData->Get(key, f)) return f;
  double d = 0;
  if (scene.mMetaData->Get(key, d)) return d;
  return fallback;
}

using fbx_detail::to_eigen;

Trs node_trs(const aiNode& node) {
  aiVector3D s, p;
  aiQuaternion r;
  node.mTransformation.Decompose(s, r, p);
  return {Vec3(p.x, p.y, p.z), Quat(r.w, r.x, r.y, r.z).normalized(), Vec3(s.x, s.y, s.z)};
}

/// The file's axis system and unit as one matrix from file coordinates to koma's Y-up metres:
/// rows are the file's right (CoordAxis), up (UpAxis) and front (FrontAxis) vectors.
Eigen::Matrix4d file_to_koma(const aiScene& scene, double metres_per_unit, std::vector<std::string>& warnings,
                             const std::string& file) {
  const int axes[3] = {meta_int(scene, "CoordAxis", 0), meta_int(scene, "UpAxis", 1), meta_int(scene, "FrontAxis", 2)};
  const int signs[3] = {meta_int(scene, "CoordAxisSign", 1), meta_int(scene, "UpAxisSign", 1),
                        meta_int(scene, "FrontAxisSign", 1)};
  Eigen::Matrix3d axis = Eigen::Matrix3d::Zero();
  bool valid = true;
  for (int r = 0; r < 3; ++r) {
    if (axes[r] < 0 || axes[r] > 2) valid = false;
    else axis(r, axes[r]) = signs[r] < 0 ? -1.0 : 1.0;
  }
  if (!valid || std::abs(axis.determinant() - 1.0) > 1e-9) {
    warnings.push_back(fmt::format("{}: axis system (coord {}{}, up {}{}, front {}{}) is not a right-handed "
                                   "rotation; read as Y up",
                                   file, signs[0] < 0 ? "-" : "+", axes[0], signs[1] < 0 ? "-" : "+", axes[1],
                                   signs[2] < 0 ? "-" : "+", axes[2]));
    axis.setIdentity();
  }
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = axis * metres_per_unit;
  return m;
}

LengthUnit unit_of(double cm_per_unit) {
  const auto near = [&](double v) { return std::abs(cm_per_unit - v) < 1e-6 * v; };
  if (near(1.0)) return LengthUnit::centimetre;
  if (near(0.1)) return LengthUnit::millimetre;
  if (near(2.54)) return LengthUnit::inch;
  if (near(30.48)) return LengthUnit::foot;
  return LengthUnit::metre;
}

/// Seconds per tick and frames per second of one stack. assimp stores key times in ticks of the
/// file's frame rate (TimeMode, or CustomFrameRate for a custom mode); TimeMode 0 (default) gives
/// one tick per second and no rate, so the rate comes from the keys.
struct ClipClock {
  double seconds_per_tick = 1.0;
  double rate = 30.0;
  bool guessed = false;
};

double smallest_key_gap(const aiAnimation& anim) {
  double gap = 0.0;
  const auto scan = [&](const auto* keys, unsigned n) {
    for (unsigned k = 1; k < n; ++k) {
      const double d = keys[k].mTime - keys[k - 1].mTime;
      if (d > 1e-9 && (gap == 0.0 || d < gap)) gap = d;
    }
  };
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim& ch = *anim.mChannels[c];
    scan(ch.mPositionKeys, ch.mNumPositionKeys);
    scan(ch.mRotationKeys, ch.mNumRotationKeys);
    scan(ch.mScalingKeys, ch.mNumScalingKeys);
  }
  return gap;
}

/// assimp keeps the frame rate as a float: 14.985 arrives as 14.9849997. The decimal the file most
/// likely wrote (at most 4 decimals, within float rounding) is restored; other values are kept.
double unfloat_rate(double rate) {
  double scale = 1.0;
  for (int decimals = 0; decimals <= 4; ++decimals, scale *= 10.0) {
    const double candidate = std::round(rate * scale) / scale;
    if (std::abs(candidate - rate) <= 1.2e-7 * rate) return candidate;
  }
  return rate;
}

ClipClock clip_clock(const aiScene& scene, const aiAnimation& anim) {
  ClipClock c;
  const double tps = anim.mTicksPerSecond;
  const bool has_rate = meta_int(scene, "FrameRate", 0) != 0 && std::isfinite(tps) && tps > 0.0;
  if (has_rate) {
    c.seconds_per_tick = 1.0 / tps;
    c.rate = unfloat_rate(tps);
    return c;
  }
  c.seconds_per_tick = std::isfinite(tps) && tps > 0.0 ? 1.0 / tps : 1.0;
  const double gap = smallest_key_gap(anim) * c.seconds_per_tick;
  c.rate = gap > 1e-3 ? 1.0 / gap : 30.0;
  c.guessed = true;
  return c;
}

/// Whole frames from 0 to `duration` seconds at `rate`: a clip ending between frames is not padded.
/// Saturates at kMaxFrames + 1 (absurd or non-finite durations: the reader refuses those).
std::int64_t frames_in(double duration, double rate) {
  const double frames = std::floor(std::max(0.0, duration) * rate + 1e-6) + 1.0;
  return std::isfinite(frames) && frames <= static_cast<double>(kMaxFrames) ? static_cast<std::int64_t>(frames)
                                                                             : kMaxFrames + 1;
}

/// A name from the file as koma keeps it: its bytes (a NUL included, which C_Str() would cut),
/// invalid UTF-8 replaced by U+FFFD, control characters by '_' (no output format holds them).
std::string name_of(const aiString& s) {
  std::string name = valid_utf8(std::string_view(s.data, std::min<size_t>(s.length, sizeof s.data)));
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '_';
  return name;
}

FbxAnimationInfo clip_info(const aiScene& scene, int index) {
  const aiAnimation& a = *scene.mAnimations[index];
  const ClipClock clock = clip_clock(scene, a);
  FbxAnimationInfo info;
  info.index = index;
  info.name = name_of(a.mName);
  info.frame_rate = clock.rate;
  info.duration = a.mDuration * clock.seconds_per_tick;
  info.frame_count = static_cast<int>(frames_in(info.duration, clock.rate));
  info.channel_count = static_cast<int>(a.mNumChannels);
  for (unsigned c = 0; c < a.mNumChannels; ++c) {
    const aiNodeAnim& ch = *a.mChannels[c];
    info.max_keys = std::max<int>(info.max_keys, std::max({ch.mNumPositionKeys, ch.mNumRotationKeys,
                                                           ch.mNumScalingKeys}));
  }
  info.junk = info.duration * clock.rate <= 1.0 + 1e-6;
  return info;
}

int choose_clip(const aiScene& scene, const std::string& wanted, const std::string& file,
                std::vector<std::string>& warnings) {
  const int n = static_cast<int>(scene.mNumAnimations);
  if (n == 0)
    throw Error(ErrorCode::bad_file, file,
                fmt::format("no animation: the file holds no animation stack ({} meshes, {} nodes with "
                            "children under the root); koma needs an animated skeleton",
                            scene.mNumMeshes, scene.mRootNode ? scene.mRootNode->mNumChildren : 0));
  if (wanted.empty()) {
    std::string skipped;
    for (int i = 0; i < n; ++i) {
      if (!clip_info(scene, i).junk) {
        if (!skipped.empty())
          warnings.push_back(fmt::format("{}: read animation {} '{}'; skipped {} (at most one frame long; "
                                         "name it to read it)",
                                         file, i, scene.mAnimations[i]->mName.C_Str(), skipped));
        return i;
      }
      skipped += fmt::format("{}{} '{}'", skipped.empty() ? "" : ", ", i, scene.mAnimations[i]->mName.C_Str());
    }
    return 0;
  }
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.emplace_back(scene.mAnimations[i]->mName.C_Str());
  return choose_animation(names, wanted, file);
}

bool is_helper_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.find("pole") != std::string::npos || name.find("target") != std::string::npos ||
         name.rfind("ik", 0) == 0;
}

int depth(const aiNode* n) {
  int d = 0;
  for (; n->mParent != nullptr; n = n->mParent) ++d;
  return d;
}

const aiNode* common_ancestor(const aiNode* a, const aiNode* b) {
  int da = depth(a), db = depth(b);
  for (; da > db; --da) a = a->mParent;
  for (; db > da; --db) b = b->mParent;
  while (a != b) a = a->mParent, b = b->mParent;
  return a;
}

/// The top node under the scene root that holds `n`.
const aiNode* top_node(const aiNode* n, const aiNode* root) {
  while (n->mParent != nullptr && n->mParent != root) n = n->mParent;
  return n;
}

/// The nodes that deform a mesh (bones with at least one weight), in mesh order; with no skinned
/// mesh, the nodes the stacks animate.
std::vector<const aiNode*> skeleton_seeds(const aiScene& scene, const std::string& file) {
  std::vector<const aiNode*> seeds;
  std::set<const aiNode*> seen;
  const auto add = [&](const aiString& name) {
    const aiNode* node = scene.mRootNode->FindNode(name);
    if (node != nullptr && node != scene.mRootNode && seen.insert(node).second) seeds.push_back(node);
  };
  for (unsigned m = 0; m < scene.mNumMeshes; ++m)
    for (unsigned b = 0; b < scene.mMeshes[m]->mNumBones; ++b)
      if (scene.mMeshes[m]->mBones[b]->mNumWeights > 0) add(scene.mMeshes[m]->mBones[b]->mName);
  if (!seeds.empty()) return seeds;
  // No skin: the hierarchies holding the animated nodes, every node of them that has children.
  std::vector<const aiNode*> animated;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a)
    for (unsigned c = 0; c < scene.mAnimations[a]->mNumChannels; ++c) {
      const aiNode* node = scene.mRootNode->FindNode(scene.mAnimations[a]->mChannels[c]->mNodeName);
      if (node != nullptr && node != scene.mRootNode) animated.push_back(node);
    }
  std::vector<const aiNode*> stack;
  for (const aiNode* n : animated) {
    const aiNode* top = top_node(n, scene.mRootNode);
    if (seen.count(top) == 0) stack.push_back(top);
    add(top->mName);
  }
  while (!stack.empty()) {
    const aiNode* n = stack.back();
    stack.pop_back();
    for (unsigned c = 0; c < n->mNumChildren; ++c) {
      const aiNode* child = n->mChildren[c];
      if (child->mNumChildren == 0 || child->mNumMeshes != 0 || is_helper_name(child->mName.C_Str())) continue;
      add(child->mName);
      stack.push_back(child);
    }
  }
  if (seeds.empty())
    throw Error(ErrorCode::bad_file, file,
                fmt::format("no skeleton: no mesh is skinned to bones and no node is animated ({} meshes)",
                            scene.mNumMeshes));
  return seeds;
}

/// The skeleton's nodes in depth-first file order, with their parent indices, and its end sites.
struct NodeSkeleton {
  std::vector<const aiNode*> joints;
  std::vector<int> parents;
  std::vector<std::pair<int, const aiNode*>> end_sites;  // (joint, leaf node)
};

void check_one_hierarchy(const aiScene& scene, const std::vector<const aiNode*>& seeds, const std::string& file) {
  std::vector<const aiNode*> tops;
  for (const aiNode* s : seeds) {
    const aiNode* t = top_node(s, scene.mRootNode);
    if (std::find(tops.begin(), tops.end(), t) == tops.end()) tops.push_back(t);
  }
  if (tops.size() < 2) return;
  std::string names;
  for (size_t i = 0; i < tops.size(); ++i) names += fmt::format("{}'{}'", i ? ", " : "", tops[i]->mName.C_Str());
  throw Error(ErrorCode::bad_file, file,
              fmt::format("several unconnected skeletons: the deforming bones hang from {} separate "
                          "hierarchies ({}); koma reads one character per file",
                          tops.size(), names));
}

void add_subtree(const aiNode* node, int parent, const std::set<const aiNode*>& in_skeleton, NodeSkeleton& out) {
  const int self = static_cast<int>(out.joints.size());
  out.joints.push_back(node);
  out.parents.push_back(parent);
  for (unsigned c = 0; c < node->mNumChildren; ++c) {
    const aiNode* child = node->mChildren[c];
    if (in_skeleton.count(child) != 0) {
      add_subtree(child, self, in_skeleton, out);
    } else if (child->mNumMeshes == 0 && !is_helper_name(child->mName.C_Str())) {
      bool chain = true;  // a tail: no branching and no mesh below
      for (const aiNode* n = child; n->mNumChildren > 0 && chain; n = n->mChildren[0])
        chain = n->mNumChildren == 1 && n->mChildren[0]->mNumMeshes == 0;
      if (chain) out.end_sites.emplace_back(self, child);
    }
  }
}

NodeSkeleton find_skeleton(const aiScene& scene, const std::string& file) {
  const std::vector<const aiNode*> seeds = skeleton_seeds(scene, file);
  check_one_hierarchy(scene, seeds, file);
  const aiNode* root = seeds.front();
  for (const aiNode* s : seeds) root = common_ancestor(root, s);
  std::set<std::string> animated;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a)
    for (unsigned c = 0; c < scene.mAnimations[a]->mNumChannels; ++c)
      animated.insert(scene.mAnimations[a]->mChannels[c]->mNodeName.C_Str());
  while (root->mParent != nullptr && root->mParent != scene.mRootNode && animated.count(root->mParent->mName.C_Str()))
    root = root->mParent;
  std::set<const aiNode*> in_skeleton;
  for (const aiNode* s : seeds)
    for (const aiNode* n = s; n != nullptr && in_skeleton.insert(n).second && n != root; n = n->mParent) {
    }
  NodeSkeleton out;
  add_subtree(root, -1, in_skeleton, out);
  return out;
}

/// Interpolated value of a key track at `tick`, clamped to its first and last key.
template <typename Key, typename Lerp>
auto sample_keys(const Key* keys, unsigned n, double tick, Lerp lerp) {
  if (n == 1 || tick <= keys[0].mTime) return lerp(keys[0].mValue, keys[0].mValue, 0.0);
  if (tick >= keys[n - 1].mTime) return lerp(keys[n - 1].mValue, keys[n - 1].mValue, 0.0);
  const Key* hi = std::upper_bound(keys, keys + n, tick, [](double t, const Key& k) { return t < k.mTime; });
  const Key* lo = hi - 1;
  const double span = hi->mTime - lo->mTime;
  return lerp(lo->mValue, hi->mValue, span > 0 ? (tick - lo->mTime) / span : 0.0);
}

Trs sample_channel(const aiNodeAnim* ch, double tick, const Trs& rest) {
  if (ch == nullptr) return rest;
  Trs out = rest;
  const auto lerp3 = [](const aiVector3D& a, const aiVector3D& b, double t) {
    return Vec3(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z));
  };
  if (ch->mNumPositionKeys > 0) out.translation = sample_keys(ch->mPositionKeys, ch->mNumPositionKeys, tick, lerp3);
  if (ch->mNumScalingKeys > 0) out.scale = sample_keys(ch->mScalingKeys, ch->mNumScalingKeys, tick, lerp3);
  if (ch->mNumRotationKeys > 0)
    out.rotation = sample_keys(ch->mRotationKeys, ch->mNumRotationKeys, tick,
                               [](const aiQuaternion& a, const aiQuaternion& b, double t) {
                                 return slerp(Quat(a.w, a.x, a.y, a.z).normalized(),
                                              Quat(b.w, b.x, b.y, b.z).normalized(), t);
                               });
  return out;
}

/// The static transform above the skeleton's root (axis system, unit, parent nodes) as
/// translation + uniform scale * rotation.
struct Ancestor {
  Vec3 translation = Vec3::Zero();
  Quat rotation = Quat::Identity();
  double scale = 1.0;
};

Ancestor ancestor_of(const aiNode& root, const Eigen::Matrix4d& file_to_koma, std::vector<std::string>& warnings,
                     const std::string& file) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  for (const aiNode* n = root.mParent; n != nullptr; n = n->mParent) m = to_eigen(n->mTransformation) * m;
  m = file_to_koma * m;
  const Eigen::Matrix3d l = m.topLeftCorner<3, 3>();
  const Vec3 axes(l.col(0).norm(), l.col(1).norm(), l.col(2).norm());
  Ancestor a;
  a.scale = std::cbrt(std::abs(l.determinant()));
  if (!(a.scale > 0) || (axes.maxCoeff() - axes.minCoeff()) > 1e-4 * a.scale) {
    warnings.push_back(fmt::format("{}: the nodes above '{}' scale non-uniformly ({:g} {:g} {:g}); koma keeps "
                                   "their mean",
                                   file, root.mName.C_Str(), axes.x(), axes.y(), axes.z()));
    a.scale = axes.mean();
  }
  Eigen::Matrix3d r = l / a.scale;
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(r, Eigen::ComputeFullU | Eigen::ComputeFullV);
  r = svd.matrixU() * svd.matrixV().transpose();  // nearest rotation
  a.rotation = Quat(r).normalized();
  a.translation = m.topRightCorner<3, 1>();
  return a;
}

/// Puts one frame's local transforms into koma's frame: the root carries the ancestor transform,
/// every translation is scaled by its parent's accumulated uniform scale (koma's FK has no scale).
void bake_frame(const std::vector<Trs>& local, const std::vector<int>& parents, const Ancestor& anc,
                std::span<Quat> rotations, std::span<Vec3> translations, std::vector<double>& scale_of,
                int& nonuniform_joint) {
  for (size_t j = 0; j < local.size(); ++j) {
    const Trs& l = local[j];
    const Vec3& s = l.scale;
    if (nonuniform_joint < 0 && s.maxCoeff() - s.minCoeff() > 1e-3 * std::abs(s.mean()))
      nonuniform_joint = static_cast<int>(j);
    const int p = parents[j];
    const double k = p < 0 ? anc.scale : scale_of[p];
    if (p < 0) {
      translations[j] = anc.translation + anc.scale * (anc.rotation * l.translation);
      rotations[j] = (anc.rotation * l.rotation).normalized();
    } else {
      translations[j] = k * l.translation;
      rotations[j] = l.rotation;
    }
    scale_of[j] = k * s.mean();
  }
}

Skeleton make_skeleton(const NodeSkeleton& nodes, const std::vector<Trs>& rest, const Ancestor& anc) {
  Skeleton sk;
  const int n = static_cast<int>(nodes.joints.size());
  std::vector<Quat> rotations(n);
  std::vector<Vec3> translations(n);
  std::vector<double> scale_of(n, 1.0);
  int nonuniform = -1;
  bake_frame(rest, nodes.parents, anc, rotations, translations, scale_of, nonuniform);
  std::set<std::string> used;
  for (int j = 0; j < n; ++j) {
    std::string name = name_of(nodes.joints[j]->mName);
    if (name.empty()) name = fmt::format("joint{}", j);
    if (used.count(name) != 0) name = fmt::format("{}_{}", name, j);
    used.insert(name);
    sk.names.push_back(std::move(name));
    sk.parents.push_back(nodes.parents[j]);
    sk.offsets.push_back(translations[j]);
    sk.channels.emplace_back();
  }
  for (const auto& [joint, leaf] : nodes.end_sites)
    sk.end_sites.push_back({joint, scale_of[joint] * node_trs(*leaf).translation});
  return sk;
}

/// BVH channel layout: 6 on the root, ZXY rotations elsewhere plus positions where animated.
void assign_channels(Motion& m) {
  using C = Channel;
  const int n = m.joint_count();
  for (int j = 0; j < n; ++j) {
    bool moves = j == 0;
    for (int f = 0; f < m.frame_count && !moves; ++f)
      moves = (m.translation(f, j) - m.skeleton.offsets[j]).norm() > 1e-6;
    auto& ch = m.skeleton.channels[j];
    ch.clear();
    if (moves) ch = {C::Xposition, C::Yposition, C::Zposition};
    ch.insert(ch.end(), {C::Zrotation, C::Xrotation, C::Yrotation});
  }
}

bool has_extension(const std::filesystem::path& path, const char* ext) {
  std::string e = path.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ext;
}

}  // namespace

bool is_fbx_file(const std::filesystem::path& path) { return has_extension(path, ".fbx"); }

namespace {

std::vector<FbxAnimationInfo> list_in_process(const std::filesystem::path& path) {
  const Loaded loaded = load_scene(path);
  std::vector<FbxAnimationInfo> out;
  for (unsigned i = 0; i < loaded.scene->mNumAnimations; ++i) out.push_back(clip_info(*loaded.scene, static_cast<int>(i)));
  return out;
}

ReadResult read_in_process(const std::filesystem::path& path, const FbxReadOptions& options) {
  const std::string file = path.string();
  const Loaded loaded = load_scene(path);
  const aiScene& scene = *loaded.scene;
  ReadResult result;
  const int clip = choose_clip(scene, options.animation, file, result.warnings);
  const NodeSkeleton nodes = find_skeleton(scene, file);
  const double cm_per_unit = meta_real(scene, "UnitScaleFactor", 1.0);
  const double unit_scale = std::isfinite(cm_per_unit) && cm_per_unit > 0 ? cm_per_unit / 100.0 : 0.01;
  const Eigen::Matrix4d to_koma = file_to_koma(scene, unit_scale, result.warnings, file);
  const Ancestor anc = ancestor_of(*nodes.joints.front(), to_koma, result.warnings, file);

  const aiAnimation& anim = *scene.mAnimations[clip];
  const ClipClock clock = clip_clock(scene, anim);
  const double rate = options.frame_rate > 0 ? options.frame_rate : clock.rate;
  const std::string clip_name = name_of(anim.mName);
  if (!valid_frame_rate(rate))
    throw Error(ErrorCode::bad_file, file,
                fmt::format("animation '{}': frame rate {:g} fps (GlobalSettings TimeMode, CustomFrameRate) is outside "
                            "{:g} to {:g} fps",
                            clip_name, rate, kMinFrameRate, kMaxFrameRate));
  if (clock.guessed && options.frame_rate <= 0)
    result.warnings.push_back(fmt::format("{}: the file sets no frame rate; sampled at {:g} fps from the key spacing",
                                          file, rate));
  std::unordered_map<std::string, const aiNodeAnim*> channels;
  for (unsigned c = 0; c < anim.mNumChannels; ++c) channels[anim.mChannels[c]->mNodeName.C_Str()] = anim.mChannels[c];

  const int n = static_cast<int>(nodes.joints.size());
  std::vector<Trs> rest(n);
  std::vector<const aiNodeAnim*> tracks(n, nullptr);
  for (int j = 0; j < n; ++j) {
    rest[j] = node_trs(*nodes.joints[j]);
    const auto it = channels.find(nodes.joints[j]->mName.C_Str());
    if (it != channels.end()) tracks[j] = it->second;
  }
  Motion& m = result.motion;
  m.skeleton = make_skeleton(nodes, rest, anc);
  m.frame_rate = rate;
  const double duration = anim.mDuration * clock.seconds_per_tick;
  const std::int64_t frames = frames_in(duration, rate);
  check_sample_budget(frames, n, loaded.bytes, file,
                      fmt::format("animation '{}' lasts {:g} s (its last key, or LocalStop) at {:g} fps", clip_name,
                                  duration, rate));
  m.frame_count = static_cast<int>(frames);
  m.source_unit = unit_of(cm_per_unit);
  m.name = anim.mName.length > 0 ? name_of(anim.mName) : clip_name_from_path(path);
  m.rotations.resize(static_cast<size_t>(m.frame_count) * n);
  m.translations.resize(static_cast<size_t>(m.frame_count) * n);
  std::vector<Trs> local(n);
  std::vector<double> scale_of(n, 1.0);
  int nonuniform = -1;
  for (int f = 0; f < m.frame_count; ++f) {
    const double tick = m.time(f) / clock.seconds_per_tick;  // time of frame f, never accumulated
    for (int j = 0; j < n; ++j) local[j] = sample_channel(tracks[j], tick, rest[j]);
    bake_frame(local, nodes.parents, anc, m.frame_rotations(f), m.frame_translations(f), scale_of, nonuniform);
  }
  if (nonuniform >= 0)
    result.warnings.push_back(fmt::format("{}: joint '{}' scales non-uniformly; koma keeps the mean scale", file,
                                          m.skeleton.names[nonuniform]));
  assign_channels(m);
  m.validate();
  // The skinned meshes, for glTF outputs (koma keys/cartoon/convert x.fbx -o y.glb keep the character).
  result.gltf_scene = fbx_detail::fbx_character(scene, nodes.joints, m.skeleton, to_koma, result.warnings, file);
  return result;
}

// What messages call the parser the child process runs.
constexpr std::string_view kParser = "assimp (the FBX parser)";

}  // namespace

std::vector<FbxAnimationInfo> list_fbx_animations(const std::filesystem::path& path) {
  if (isolation_detail::in_process()) return list_in_process(path);
  const std::string bytes =
      isolation_detail::run_reader(path, kParser, [&] { return isolation_detail::pack(list_in_process(path)); });
  return isolation_detail::unpack_fbx_infos(bytes, path.string());
}

ReadResult read_fbx(const std::filesystem::path& path, const FbxReadOptions& options) {
  const std::string file = path.string();
  if (!std::isfinite(options.frame_rate) || options.frame_rate < 0)
    throw Error(ErrorCode::invalid_settings, file,
                fmt::format("frame rate {} fps: expected a positive number, or 0 for the clip's own rate",
                            options.frame_rate));
  if (options.frame_rate > kMaxFrameRate)
    throw Error(ErrorCode::invalid_settings, "frame_rate",
                fmt::format("{:g} fps is more than koma's {:g}", options.frame_rate, kMaxFrameRate));
  if (isolation_detail::in_process()) return read_in_process(path, options);
  const std::string bytes = isolation_detail::run_reader(
      path, kParser, [&] { return isolation_detail::pack(read_in_process(path, options)); });
  return isolation_detail::unpack(bytes, file);
}

}  // namespace koma::io
