// Writes the fixture the Blender import test checks: the built-in sample motion as a GLB whose
// channels are STEP samplers (kept frames on irregular 2s/3s), plus a JSON sidecar with the kept
// frames and koma's world joint positions (glTF Y-up metres) at each kept frame.
//   make_gltf_fixture <out.glb> <out.json>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "koma/core/fk.hpp"
#include "koma/core/resample.hpp"
#include "koma/core/sample.hpp"
#include "koma/io/motion_file.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_gltf_fixture out.glb out.json\n";
    return 2;
  }
  const koma::Motion m = koma::cut(koma::resample(koma::make_sample_motion(), 24.0), 0, 48);
  std::vector<int> kept;
  for (int f = 0, step = 2; f < m.frame_count; f += step, step = 5 - step)
    kept.push_back(f);  // 2s and 3s
  koma::io::WriteOptions wo;
  wo.step_keys = kept;
  koma::io::write_motion(argv[1], m, wo);
  const koma::WorldPoses poses = koma::forward_kinematics(m);
  nlohmann::json doc;
  doc["fps"] = m.frame_rate;
  doc["kept"] = kept;
  doc["joints"] = m.skeleton.names;
  for (int k : kept) {
    nlohmann::json frame = nlohmann::json::array();
    for (int j = 0; j < m.joint_count(); ++j) {
      const koma::Vec3& p = poses.position(k, j);
      frame.push_back({p.x(), p.y(), p.z()});
    }
    doc["positions"].push_back(frame);
  }
  std::ofstream(argv[2]) << doc.dump();
  return 0;
}
