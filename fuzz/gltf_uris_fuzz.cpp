// libFuzzer harness: koma::fuzz::gltf_uris (fuzz/harnesses.hpp), the parse in this process.
// KOMA_FUZZ_SEEDS=DIR writes the URI seeds (koma::fuzz::uri_seeds) into DIR first.
#include <cstdlib>

#include "harnesses.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("KOMA_READ_IN_PROCESS", "1", 1);  // tinygltf's coverage and faults in this process
  if (const char* dir = std::getenv("KOMA_FUZZ_SEEDS")) {
    int k = 0;
    for (const std::string& seed : koma::fuzz::uri_seeds())
      std::ofstream(std::filesystem::path(dir) / ("uri_seed_" + std::to_string(k++) + ".gltf")) << seed;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  koma::fuzz::gltf_uris(data, size);
  return 0;
}
