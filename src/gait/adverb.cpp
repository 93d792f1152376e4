#include "koma/gait/adverb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "koma/body/roles.hpp"
#include "koma/core/error.hpp"

namespace koma::gait {

void Adverb::validate() const {
  skeleton.validate();
  auto bad = [](std::string what, std::string msg) { throw Error(ErrorCode::bad_data, std::move(what), std::move(msg)); };
  if (harmonics < 1) bad("harmonics", fmt::format("{} must be >= 1", harmonics));
  if (static_cast<int>(posture.size()) != skeleton.joint_count())
    bad("posture", fmt::format("{} entries for {} joints", posture.size(), skeleton.joint_count()));
  for (int j = 0; j < skeleton.joint_count(); ++j)
    if (!posture[j].allFinite()) bad("joint " + skeleton.names[j], "posture delta is not finite");
  if (delta.rows() != channel_count() || delta.cols() != harmonics + 1)
    bad("delta", fmt::format("{} x {} must be {} channels x {}", delta.rows(), delta.cols(), channel_count(), harmonics + 1));
  if (!delta.allFinite()) bad("delta", "must be finite");
  if (!channel_harmonics.empty()) {
    if (static_cast<int>(channel_harmonics.size()) != channel_count())
      bad("channel_harmonics", fmt::format("{} entries for {} channels", channel_harmonics.size(), channel_count()));
    for (size_t r = 0; r < channel_harmonics.size(); ++r) {
      const int k = channel_harmonics[r];
      if (k < 0 || k > harmonics) bad("channel_harmonics", fmt::format("row {}: {} is not in 0..{}", r, k, harmonics));
      if (k < harmonics && delta.row(static_cast<Eigen::Index>(r)).tail(harmonics - k).cwiseAbs().maxCoeff() != 0.0)
        bad("delta", fmt::format("row {} keeps {} harmonics but has a coefficient above them", r, k));
    }
  }
  if (reference_channel < kRootChannels || reference_channel >= channel_count())
    bad("reference_channel", fmt::format("{} is not a joint channel", reference_channel));
  if (!std::isfinite(log_period_ratio)) bad("log_period_ratio", "must be finite");
  const size_t nj = static_cast<size_t>(skeleton.joint_count());
  if (!roles.empty() && roles.size() != nj) bad("roles", fmt::format("{} entries for {} joints", roles.size(), nj));
  if (!frames.empty() && frames.size() != nj) bad("frames", fmt::format("{} entries for {} joints", frames.size(), nj));
  for (size_t j = 0; j < frames.size(); ++j)
    if (!frames[j].coeffs().allFinite() || std::abs(frames[j].norm() - 1) > 1e-6)
      bad("joint " + skeleton.names[j], "frame is not a unit quaternion");
}

std::vector<Quat> pose_frames(const Skeleton& skeleton, std::span<const Quat> local) {
  std::vector<Quat> w(local.size());
  for (size_t j = 0; j < local.size(); ++j) {
    const int p = skeleton.parents[j];
    w[j] = p < 0 ? local[j] : (w[static_cast<size_t>(p)] * local[j]).normalized();
  }
  return w;
}

Adverb make_adverb(const Gait& neutral, const Gait& styled) {
  neutral.validate();
  styled.validate();
  require_compatible(neutral, styled);
  Adverb a;
  a.skeleton = neutral.basis.skeleton;
  a.angles = neutral.basis.angles;
  a.harmonics = std::max(neutral.harmonics, styled.harmonics);
  a.reference_channel = neutral.reference_channel;
  a.delta = padded(styled, a.harmonics).coefficients - padded(neutral, a.harmonics).coefficients;
  if (!neutral.channel_harmonics.empty() || !styled.channel_harmonics.empty()) {
    a.channel_harmonics.resize(static_cast<size_t>(a.delta.rows()));
    for (int r = 0; r < a.delta.rows(); ++r)
      a.channel_harmonics[static_cast<size_t>(r)] = std::max(channel_harmonic_count(neutral, r), channel_harmonic_count(styled, r));
  }
  a.log_period_ratio = std::log(styled.basis.period / neutral.basis.period);
  const int nj = a.skeleton.joint_count();
  a.posture.assign(nj, Vec3::Zero());
  if (a.angles == AngleMode::log_map)
    for (int j = 0; j < nj; ++j)
      a.posture[j] = quat_log(neutral.basis.mean_rotations[j].conjugate() * styled.basis.mean_rotations[j]);
  a.roles.assign(nj, "");
  const body::JointRoles roles = body::find_joint_roles(a.skeleton);
  for (int r = 0; r < body::kRoleCount; ++r) {
    const int j = roles.points[r];
    if (j >= 0 && j < nj && a.roles[j].empty()) a.roles[j] = std::string(body::role_name(static_cast<body::Role>(r)));
  }
  if (a.angles == AngleMode::log_map) a.frames = pose_frames(a.skeleton, neutral.basis.mean_rotations);
  return a;
}

Gait apply_adverbs(const Gait& in, std::span<const WeightedAdverb> adverbs) {
  in.validate();
  Gait out = in;
  for (const WeightedAdverb& w : adverbs) {
    const std::string ctx = w.name.empty() ? std::string("adverb") : "adverb " + w.name;
    if (!std::isfinite(w.weight))
      throw Error(ErrorCode::invalid_settings, ctx, fmt::format("alpha must be finite, got {}", w.weight));
    const Adverb& a = w.adverb;
    a.validate();
    try {
      require_same_topology(in.basis.skeleton, a.skeleton);
    } catch (const Error& e) {
      throw Error(ErrorCode::mismatch, ctx + ": " + e.context(), e.message());
    }
    if (a.angles != in.basis.angles)
      throw Error(ErrorCode::mismatch, ctx,
                  fmt::format("learned on {} channels, the gait has {}", to_string(a.angles), to_string(in.basis.angles)));
    if (a.reference_channel != in.reference_channel)
      throw Error(ErrorCode::mismatch, ctx, "phases are relative to another reference channel than the gait's");
    if (w.weight == 0.0) continue;
    // Different K: pad both with zeros (a harmonic one does not keep is zero there).
    if (a.harmonics > out.harmonics) out = padded(out, a.harmonics);
    out.coefficients.leftCols(a.harmonics + 1) += w.weight * a.delta;
    if (!a.channel_harmonics.empty() || !out.channel_harmonics.empty()) {
      std::vector<int> k(static_cast<size_t>(out.coefficients.rows()));
      for (int r = 0; r < out.coefficients.rows(); ++r)
        k[static_cast<size_t>(r)] = std::max(channel_harmonic_count(out, r),
                                             a.channel_harmonics.empty() ? a.harmonics : a.channel_harmonics[static_cast<size_t>(r)]);
      out.channel_harmonics = std::move(k);
    }
    out.basis.period *= std::exp(w.weight * a.log_period_ratio);
    if (out.basis.angles == AngleMode::log_map)
      for (int j = 0; j < in.basis.skeleton.joint_count(); ++j)
        out.basis.mean_rotations[j] = (out.basis.mean_rotations[j] * quat_exp(w.weight * a.posture[j])).normalized();
  }
  return out;
}

Gait blend_gaits(const Gait& a, const Gait& b, double w) {
  if (!std::isfinite(w)) throw Error(ErrorCode::invalid_settings, "blend", fmt::format("weight must be finite, got {}", w));
  require_compatible(a, b);
  if (w == 0.0) return a;
  const int k = std::max(a.harmonics, b.harmonics);
  Gait out = padded(a, k);
  const Gait pb = padded(b, k);
  out.coefficients = (1 - w) * out.coefficients + w * pb.coefficients;
  if (!out.channel_harmonics.empty() || !pb.channel_harmonics.empty()) {
    std::vector<int> kc(static_cast<size_t>(out.coefficients.rows()));
    for (int r = 0; r < out.coefficients.rows(); ++r)
      kc[static_cast<size_t>(r)] = std::max(channel_harmonic_count(out, r), channel_harmonic_count(pb, r));
    out.channel_harmonics = std::move(kc);
  }
  out.basis.period = std::exp((1 - w) * std::log(a.basis.period) + w * std::log(b.basis.period));
  for (int j = 0; j < a.basis.skeleton.joint_count(); ++j) {
    out.basis.mean_rotations[j] = slerp(a.basis.mean_rotations[j], b.basis.mean_rotations[j], w);
    out.basis.bones[j] = (1 - w) * a.basis.bones[j] + w * b.basis.bones[j];
  }
  return out;
}

}  // namespace koma::gait
