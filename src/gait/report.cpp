#include "koma/gait/report.hpp"

#include "koma/core/units.hpp"

namespace koma::gait {

using nlohmann::json;

json gait_summary(const Gait& g) {
  const auto names = channel_names(g.basis);
  return {{"period_s", g.basis.period},
          {"confidence", g.basis.confidence},
          {"period_method", to_string(g.basis.period_method)},
          {"cycles_found", g.basis.cycles_found},
          {"cycles_used", g.basis.cycles_used},
          {"harmonics", g.harmonics},
          {"angles", to_string(g.basis.angles)},
          {"root_joint", g.basis.skeleton.names[static_cast<size_t>(g.basis.root_joint)]},
          {"reference_channel", names[static_cast<size_t>(g.reference_channel)]},
          {"forward_speed_mps", g.coefficients(1, 0).real()}};
}

json analysis_report(const GaitAnalysis& a) {
  const Skeleton& sk = a.gait.basis.skeleton;
  json j = gait_summary(a.gait);
  json rms = json::object();
  for (int k = 0; k < sk.joint_count(); ++k) rms[sk.names[static_cast<size_t>(k)]] = a.error.joint_rms[static_cast<size_t>(k)] * kRadToDeg;
  j["reconstruction_rms_deg"] = rms;
  j["worst_joint"] = sk.names[static_cast<size_t>(a.error.worst_joint)];
  j["worst_rms_deg"] = a.error.worst_rms * kRadToDeg;
  j["height_rms_m"] = a.error.height_rms;
  j["max_seam_correction_deg"] = a.cycle.max_seam_correction * kRadToDeg;
  j["max_cycle_drift_deg"] = a.cycle.max_cycle_drift * kRadToDeg;
  // Per joint: what the spectrum keeps and loses, and what the motion has above that (noise or
  // motion: an error at or below raw_above_k_deg is the motion's own detail above K).
  const std::vector<int> kj = joint_harmonics(a.gait);
  json joints = json::array();
  for (int k = 0; k < sk.joint_count(); ++k) {
    const auto u = static_cast<size_t>(k);
    json kc = json::array();
    for (int ax = 0; ax < 3; ++ax) kc.push_back(channel_harmonic_count(a.gait, joint_channel(k, ax)));
    joints.push_back({{"name", sk.names[u]},
                      {"harmonics", kj[u]},
                      {"channel_harmonics", kc},
                      {"rms_deg", a.error.joint_rms[u] * kRadToDeg},
                      {"raw_above_k_deg", u < a.raw_above.size() ? a.raw_above[u] * kRadToDeg : 0.0},
                      {"seam_correction_deg", u < a.cycle.seam_correction.size() ? a.cycle.seam_correction[u] * kRadToDeg : 0.0}});
  }
  j["joints"] = joints;
  json jumps = json::array();
  for (const RotationJump& r : a.cycle.jumps) {
    jumps.push_back({{"joint", sk.names[static_cast<size_t>(r.joint)]}, {"frame", r.frame}, {"angle_deg", r.angle * kRadToDeg}});
  }
  j["rotation_jumps"] = jumps;
  return j;
}

json style_summary(const StyleResult& r) {
  return {{"frames", r.motion.frame_count},
          {"fps", r.motion.frame_rate},
          {"seconds", r.motion.frame_count / r.motion.frame_rate},
          {"loop", r.loop},
          {"styled_period_s", r.styled.basis.period}};
}

nlohmann::json apply_report(const ApplyResult& r) {
  const TakePhase& p = r.phase;
  int full = 0;
  for (double w : p.weight) full += w >= 1.0 ? 1 : 0;
  nlohmann::json adverbs = nlohmann::json::array();
  for (const AppliedAdverb& a : r.adverbs)
    adverbs.push_back({{"name", a.name}, {"alpha", a.weight}, {"phase_offset_deg", a.phase_offset * kRadToDeg},
                       {"cadence_ratio_not_applied", a.period_ratio_ignored}, {"same_rig", a.same_rig},
                       {"mapped", a.mapped}, {"left_alone", a.left_alone}});
  return {{"frames", r.motion.frame_count},
          {"fps", r.motion.frame_rate},
          {"phase",
           {{"source", std::string(to_string(p.source))}, {"foot", p.foot}, {"period_s", p.period},
            {"confidence", p.confidence}, {"steady_cycles", p.cycles}, {"full_style_frames", full}}},
          {"adverbs", adverbs},
          {"planted_leg_frames", r.planted_frames},
          {"unreachable_leg_frames", r.unreachable_frames},
          {"warnings", r.warnings}};
}

}  // namespace koma::gait
