#include "outputs.hpp"

#include "koma/core/atomic_file.hpp"
#include "koma/io/gltf.hpp"

namespace koma::batch::detail {

void write_motion_outputs(const std::filesystem::path& output, const Motion& motion, const io::WriteOptions& options,
                          const std::vector<TextOutput>& texts) {
  OutputBatch outputs;
  const bool gltf = io::is_gltf_file(output);
  if (gltf) io::write_motion(output, motion, options);
  outputs.write([&] {
    if (!gltf) io::write_motion(outputs.stage(output), motion, options);
    for (const auto& [path, text] : texts) {
      if (!path.empty()) write_file_atomic(outputs.stage(path), text);
    }
  });
  outputs.commit();
}

}  // namespace koma::batch::detail
