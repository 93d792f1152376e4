#include "gltf_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace koma::test {

namespace {

std::vector<unsigned char> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<unsigned char> base64(const std::string& text) {
  std::vector<unsigned char> out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    int d;
    if (c >= 'A' && c <= 'Z')
      d = c - 'A';
    else if (c >= 'a' && c <= 'z')
      d = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      d = c - '0' + 52;
    else if (c == '+')
      d = 62;
    else if (c == '/')
      d = 63;
    else
      continue;
    value = (value << 6) | static_cast<unsigned>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((value >> bits) & 0xFF));
    }
  }
  return out;
}

std::uint32_t u32(const std::vector<unsigned char>& b, size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

int components(const std::string& type) {
  if (type == "SCALAR") return 1;
  if (type == "VEC2") return 2;
  if (type == "VEC3") return 3;
  if (type == "VEC4") return 4;
  if (type == "MAT4") return 16;
  if (type == "MAT3") return 9;
  return 0;
}

int csize(int type) {
  switch (type) {
    case 5120:
    case 5121:
      return 1;
    case 5122:
    case 5123:
      return 2;
    default:
      return 4;
  }
}

}  // namespace

GltfDoc load_gltf(const std::filesystem::path& path) {
  GltfDoc doc;
  std::vector<unsigned char> bytes = read_bytes(path);
  std::vector<unsigned char> glb_bin;
  if (bytes.size() >= 12 && std::memcmp(bytes.data(), "glTF", 4) == 0) {
    if (u32(bytes, 4) != 2) throw std::runtime_error("GLB version is not 2");
    if (u32(bytes, 8) != bytes.size())
      throw std::runtime_error("GLB header length is not the file size");
    const std::uint32_t jlen = u32(bytes, 12);
    if (u32(bytes, 16) != 0x4E4F534A) throw std::runtime_error("first GLB chunk is not JSON");
    if (jlen % 4 != 0) throw std::runtime_error("GLB JSON chunk not 4-byte aligned");
    doc.json = nlohmann::json::parse(bytes.begin() + 20, bytes.begin() + 20 + jlen);
    const size_t at = 20 + jlen;
    if (at < bytes.size()) {
      const std::uint32_t blen = u32(bytes, at);
      if (u32(bytes, at + 4) != 0x004E4942) throw std::runtime_error("second GLB chunk is not BIN");
      if (at + 8 + blen != bytes.size())
        throw std::runtime_error("GLB BIN chunk length is not the rest of the file");
      glb_bin.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at + 8), bytes.end());
    }
  } else {
    doc.json = nlohmann::json::parse(bytes.begin(), bytes.end());
  }
  for (const auto& b : doc.json.value("buffers", nlohmann::json::array())) {
    if (!b.contains("uri")) {
      doc.buffers.push_back(glb_bin);
    } else {
      const std::string uri = b["uri"];
      if (uri.rfind("data:", 0) == 0)
        doc.buffers.push_back(base64(uri.substr(uri.find(',') + 1)));
      else
        doc.buffers.push_back(read_bytes(path.parent_path() / uri));
    }
  }
  return doc;
}

std::vector<double> GltfDoc::accessor(int i) const {
  const auto& a = json["accessors"][i];
  const int n = a["count"];
  const int k = components(a["type"]);
  const int ct = a["componentType"];
  const bool norm = a.value("normalized", false);
  std::vector<double> out(static_cast<size_t>(n * k), 0.0);
  if (!a.contains("bufferView")) return out;
  const auto& v = json["bufferViews"][a["bufferView"].get<int>()];
  const auto& buf = buffers[v["buffer"].get<size_t>()];
  const size_t elem = static_cast<size_t>(csize(ct) * k);
  const size_t stride = v.value("byteStride", 0) ? v["byteStride"].get<size_t>() : elem;
  const size_t base = v.value("byteOffset", size_t{0}) + a.value("byteOffset", size_t{0});
  for (int e = 0; e < n; ++e)
    for (int c = 0; c < k; ++c) {
      const unsigned char* p =
          buf.data() + base + static_cast<size_t>(e) * stride + static_cast<size_t>(c * csize(ct));
      double x = 0;
      if (ct == 5126) {
        float f;
        std::memcpy(&f, p, 4);
        x = f;
      } else if (ct == 5121) {
        x = norm ? p[0] / 255.0 : p[0];
      } else if (ct == 5123) {
        std::uint16_t s;
        std::memcpy(&s, p, 2);
        x = norm ? s / 65535.0 : s;
      } else if (ct == 5122) {
        std::int16_t s;
        std::memcpy(&s, p, 2);
        x = norm ? std::max(s / 32767.0, -1.0) : s;
      } else if (ct == 5120) {
        std::int8_t s;
        std::memcpy(&s, p, 1);
        x = norm ? std::max(s / 127.0, -1.0) : s;
      } else {
        std::uint32_t s;
        std::memcpy(&s, p, 4);
        x = s;
      }
      out[static_cast<size_t>(e * k + c)] = x;
    }
  return out;
}

int GltfDoc::parent(int n) const {
  const auto& nodes = json["nodes"];
  for (size_t p = 0; p < nodes.size(); ++p)
    for (const auto& c : nodes[p].value("children", nlohmann::json::array()))
      if (c.get<int>() == n) return static_cast<int>(p);
  return -1;
}

Eigen::Matrix4d GltfDoc::local(int n, int anim, double t) const {
  const auto& node = json["nodes"][n];
  Eigen::Vector3d tr = Eigen::Vector3d::Zero(), sc = Eigen::Vector3d::Ones();
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  if (node.contains("matrix")) {
    Eigen::Matrix4d m;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) m(r, c) = node["matrix"][c * 4 + r].get<double>();
    return m;
  }
  auto vec3 = [](const nlohmann::json& a) {
    return Eigen::Vector3d(a[0].get<double>(), a[1].get<double>(), a[2].get<double>());
  };
  if (node.contains("translation")) tr = vec3(node["translation"]);
  if (node.contains("rotation"))
    q = Eigen::Quaterniond(node["rotation"][3].get<double>(), node["rotation"][0].get<double>(),
                           node["rotation"][1].get<double>(), node["rotation"][2].get<double>());
  if (node.contains("scale")) sc = vec3(node["scale"]);
  if (anim >= 0) {
    const auto& a = json["animations"][anim];
    for (const auto& ch : a["channels"]) {
      if (ch["target"]["node"].get<int>() != n) continue;
      const auto& s = a["samplers"][ch["sampler"].get<int>()];
      const std::vector<double> in = accessor(s["input"]);
      const std::vector<double> out = accessor(s["output"]);
      const std::string interp = s.value("interpolation", "LINEAR");
      const std::string path = ch["target"]["path"];
      const int w = path == "rotation" ? 4 : 3;
      const int per = interp == "CUBICSPLINE" ? 3 : 1;
      const int off = interp == "CUBICSPLINE" ? 1 : 0;
      auto val = [&](int key) { return out.data() + static_cast<size_t>((key * per + off) * w); };
      const int keys = static_cast<int>(in.size());
      int k = static_cast<int>(std::upper_bound(in.begin(), in.end(), t + 1e-7) - in.begin()) - 1;
      std::vector<double> v(static_cast<size_t>(w));
      if (k < 0) {
        std::copy(val(0), val(0) + w, v.begin());
      } else if (k >= keys - 1 || interp == "STEP") {
        std::copy(val(k), val(k) + w, v.begin());
      } else {
        const double u =
            std::clamp((t - in[static_cast<size_t>(k)]) /
                           (in[static_cast<size_t>(k + 1)] - in[static_cast<size_t>(k)]),
                       0.0, 1.0);
        if (w == 4) {
          Eigen::Quaterniond qa(val(k)[3], val(k)[0], val(k)[1], val(k)[2]);
          Eigen::Quaterniond qb(val(k + 1)[3], val(k + 1)[0], val(k + 1)[1], val(k + 1)[2]);
          const Eigen::Quaterniond r = qa.normalized().slerp(u, qb.normalized());
          v = {r.x(), r.y(), r.z(), r.w()};
        } else {
          for (int c = 0; c < w; ++c)
            v[static_cast<size_t>(c)] = (1 - u) * val(k)[c] + u * val(k + 1)[c];
        }
      }
      if (path == "translation")
        tr = Eigen::Vector3d(v[0], v[1], v[2]);
      else if (path == "scale")
        sc = Eigen::Vector3d(v[0], v[1], v[2]);
      else if (path == "rotation")
        q = Eigen::Quaterniond(v[3], v[0], v[1], v[2]);
    }
  }
  Eigen::Affine3d m = Eigen::Translation3d(tr) * q.normalized() * Eigen::Scaling(sc);
  return m.matrix();
}

Eigen::Matrix4d GltfDoc::world(int n, int anim, double t) const {
  Eigen::Matrix4d m = local(n, anim, t);
  for (int p = parent(n); p >= 0; p = parent(p)) m = local(p, anim, t) * m;
  return m;
}

std::vector<std::string> validate_gltf(const GltfDoc& doc) {
  std::vector<std::string> bad;
  const auto& j = doc.json;
  auto size_of = [&](const char* key) { return j.contains(key) ? j[key].size() : size_t{0}; };
  for (size_t b = 0; b < size_of("buffers"); ++b) {
    const size_t len = j["buffers"][b]["byteLength"];
    const size_t have = doc.buffers[b].size();
    const bool glb_padding = !j["buffers"][b].contains("uri") && have >= len && have - len < 4;
    if (len != have && !glb_padding)
      bad.push_back("buffer " + std::to_string(b) + " byteLength " + std::to_string(len) + " but " +
                    std::to_string(have) + " bytes");
  }
  for (size_t v = 0; v < size_of("bufferViews"); ++v) {
    const auto& view = j["bufferViews"][v];
    const size_t b = view["buffer"];
    if (b >= size_of("buffers")) {
      bad.push_back("bufferView " + std::to_string(v) + " buffer index");
      continue;
    }
    if (view.value("byteOffset", size_t{0}) + view["byteLength"].get<size_t>() >
        j["buffers"][b]["byteLength"].get<size_t>())
      bad.push_back("bufferView " + std::to_string(v) + " runs past its buffer");
  }
  for (size_t a = 0; a < size_of("accessors"); ++a) {
    const auto& acc = j["accessors"][a];
    if (!acc.contains("bufferView")) continue;
    const auto& view = j["bufferViews"][acc["bufferView"].get<size_t>()];
    const size_t elem = static_cast<size_t>(csize(acc["componentType"]) * components(acc["type"]));
    const size_t stride =
        view.value("byteStride", size_t{0}) ? view["byteStride"].get<size_t>() : elem;
    const size_t n = acc["count"];
    if (n == 0 || acc.value("byteOffset", size_t{0}) + stride * (n - 1) + elem >
                      view["byteLength"].get<size_t>())
      bad.push_back("accessor " + std::to_string(a) + " runs past its bufferView");
    if (acc.value("byteOffset", size_t{0}) % static_cast<size_t>(csize(acc["componentType"])) != 0)
      bad.push_back("accessor " + std::to_string(a) + " misaligned");
  }
  const size_t nodes = size_of("nodes");
  for (size_t s = 0; s < size_of("skins"); ++s) {
    const auto& skin = j["skins"][s];
    for (const auto& n : skin["joints"])
      if (n.get<size_t>() >= nodes) bad.push_back("skin joint index");
    if (skin.contains("inverseBindMatrices") &&
        doc.count(skin["inverseBindMatrices"]) < static_cast<int>(skin["joints"].size()))
      bad.push_back("skin " + std::to_string(s) + " has too few inverse bind matrices");
  }
  for (size_t an = 0; an < size_of("animations"); ++an) {
    const auto& anim = j["animations"][an];
    for (const auto& ch : anim["channels"]) {
      if (ch["sampler"].get<size_t>() >= anim["samplers"].size())
        bad.push_back("channel sampler index");
      if (ch["target"]["node"].get<size_t>() >= nodes)
        bad.push_back("channel node index");
      else if (j["nodes"][ch["target"]["node"].get<size_t>()].contains("matrix"))
        bad.push_back("animated node has a matrix");
    }
    for (size_t s = 0; s < anim["samplers"].size(); ++s) {
      const auto& smp = anim["samplers"][s];
      const int in = smp["input"];
      const auto& acc = j["accessors"][in];
      const std::string where = "animation " + std::to_string(an) + " sampler " + std::to_string(s);
      if (!acc.contains("min") || !acc.contains("max")) {
        bad.push_back(where + ": input accessor without min/max");
      } else {
        const std::vector<double> t = doc.accessor(in);
        if (acc["min"][0].get<double>() != *std::min_element(t.begin(), t.end()) ||
            acc["max"][0].get<double>() != *std::max_element(t.begin(), t.end()))
          bad.push_back(where + ": input min/max differ from the data");
        for (size_t k = 1; k < t.size(); ++k)
          if (!(t[k] > t[k - 1])) bad.push_back(where + ": key times do not increase");
        if (!t.empty() && t.front() < 0) bad.push_back(where + ": negative time");
      }
      const int per = smp.value("interpolation", "LINEAR") == std::string("CUBICSPLINE") ? 3 : 1;
      if (doc.count(smp["output"]) != per * doc.count(in))
        bad.push_back(where + ": output count differs from input");
    }
  }
  return bad;
}

}  // namespace koma::test
