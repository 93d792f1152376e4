// The convert pipeline of one file (moved here from apps/koma/cmd_convert.cpp so `koma convert`,
// `koma batch convert` and Python run the same code).
#include "koma/batch/convert_file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "koma/core/error.hpp"
#include "koma/core/resample.hpp"
#include "outputs.hpp"

namespace koma::batch {

FrameRange parse_frame_range(std::string_view text) {
  const auto colon = text.find(':');
  auto bad = [&] {
    throw Error(ErrorCode::invalid_settings, "range",
                fmt::format("'{}' is not a frame range; expected A:B (frames A up to B, B excluded), e.g. 0:120", text));
  };
  if (colon == std::string_view::npos) bad();
  auto number = [&](std::string_view s) -> std::optional<int> {
    if (s.empty()) return std::nullopt;
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(std::string(s), &used);
    } catch (const std::exception&) {
      bad();
    }
    if (used != s.size()) bad();
    return v;
  };
  FrameRange r;
  r.first = number(text.substr(0, colon)).value_or(0);
  r.end = number(text.substr(colon + 1));
  return r;
}

void ConvertJob::validate() const {
  if (!std::isfinite(output_rate) || output_rate < 0 || output_rate > 1000) {
    throw Error(ErrorCode::invalid_settings, "output_rate",
                fmt::format("{} is not a frame rate; expected frames per second in (0, 1000], or 0 for the input's",
                            output_rate));
  }
}

ConvertFileResult run_convert_file(const std::filesystem::path& input, const std::filesystem::path& output,
                                   const ConvertJob& job, const FileProgress& progress) {
  job.validate();
  if (progress) progress(0.0);
  io::ReadResult r = io::read_motion(input, job.read);
  ConvertFileResult out;
  out.warnings = std::move(r.warnings);
  if (job.on_warning)
    for (const std::string& w : out.warnings) job.on_warning(w);
  Motion m = std::move(r.motion);
  if (job.range) {
    const int frames = m.frame_count;
    auto resolve = [&](int v) { return v < 0 ? frames + v : v; };
    m = cut(m, resolve(job.range->first), resolve(job.range->end.value_or(frames)));
  }
  if (job.output_rate > 0) m = resample(m, job.output_rate);
  io::WriteOptions wo = job.write;
  wo.gltf_scene = r.gltf_scene;  // glTF -> glTF keeps the character's mesh and skin
  detail::write_motion_outputs(output, m, wo);
  out.frames = m.frame_count;
  out.frame_rate = m.frame_rate;
  if (progress) progress(1.0);
  return out;
}

nlohmann::json convert_figures(const ConvertFileResult& result) {
  return {{"frames", result.frames}, {"fps", result.frame_rate}};
}

}  // namespace koma::batch
