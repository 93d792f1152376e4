#include "test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

namespace koma::test {

namespace fs = std::filesystem;

fs::path shared_data() {
  if (const char* env = std::getenv("KOMA_SHARED_DATA"); env && *env) return env;
  return KOMA_SHARED_DATA;
}

bool have_shared_data() { return fs::is_directory(shared_data() / "bvh"); }

std::vector<fs::path> shared_bvh_files(const std::string& sub) {
  std::vector<fs::path> out;
  const fs::path root = shared_data() / sub;
  if (!fs::is_directory(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".bvh") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::path test_data(const std::string& name) { return fs::path(KOMA_TEST_DATA) / name; }

fs::path temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("koma-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

double rotation_angle(const Quat& a, const Quat& b) {
  // atan2 form: accurate for tiny angles, where acos(dot) loses half the digits.
  const Quat d = a.normalized().conjugate() * b.normalized();
  return 2.0 * std::atan2(d.vec().norm(), std::abs(d.w()));
}

}  // namespace koma::test
