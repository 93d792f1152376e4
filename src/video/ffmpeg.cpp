// ffmpeg / ffprobe as child processes: raw RGB frames over a pipe (decoding only; encoding is the
// render module's VideoWriter).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"
#include "koma/video/decode.hpp"

namespace koma::video {

namespace fs = std::filesystem;

namespace {

// ffmpeg's final word, the last line of its messages: the most specific.
std::string error_text(const ChildProcess& child) {
  std::string s = child.log_text();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  const auto nl = s.rfind('\n');
  if (nl != std::string::npos && s.size() - nl > 8) s = s.substr(nl + 1);
  return s.empty() ? "ffmpeg failed without a message" : s;
}

// Starts `args` (args[0] looked up on PATH); we read the child's stdout.
std::unique_ptr<ChildProcess> spawn(std::vector<std::string> args) {
  ChildSpec spec;
  spec.args = std::move(args);
  spec.read_stdout = true;
  spec.install_hint = "install ffmpeg (scripts/install-deps.sh)";
  return std::make_unique<ChildProcess>(std::move(spec));
}

double parse_rate(const std::string& s) {
  const auto slash = s.find('/');
  try {
    if (slash == std::string::npos) return std::stod(s);
    const double num = std::stod(s.substr(0, slash)), den = std::stod(s.substr(slash + 1));
    return den > 0 ? num / den : 0;
  } catch (const std::logic_error&) {
    return 0;
  }
}

bool is_png_dir(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return false;
  for (const auto& e : fs::directory_iterator(p, ec)) {
    if (e.path().extension() == ".png" || e.path().extension() == ".PNG") return true;
  }
  return false;
}

// ffmpeg input arguments for a file or a PNG directory.
std::vector<std::string> input_args(const fs::path& path, const DecodeSettings& s) {
  if (is_png_dir(path)) {
    return {"-framerate", fmt::format("{}", s.sequence_rate), "-pattern_type", "glob", "-i", (path / "*.png").string()};
  }
  return {"-i", path.string()};
}

std::string lower_ext(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return e;
}

}  // namespace

Image Image::black(int width, int height) {
  Image im;
  im.width = width;
  im.height = height;
  im.rgb.assign(static_cast<size_t>(width) * height * 3, 0);
  return im;
}

void DecodeSettings::validate() const {
  if (max_side != 0 && max_side < 16) throw Error(ErrorCode::invalid_settings, "max_side", fmt::format("{} must be 0 or >= 16 pixels", max_side));
  if (!(sequence_rate > 0) || !std::isfinite(sequence_rate)) throw Error(ErrorCode::invalid_settings, "sequence_rate", "must be > 0");
  if (max_frames < 0) throw Error(ErrorCode::invalid_settings, "max_frames", "must be >= 0");
}

std::pair<int, int> decoded_size(int width, int height, int max_side) {
  const int longest = std::max(width, height);
  if (max_side <= 0 || longest <= max_side) return {width, height};
  const double s = static_cast<double>(max_side) / longest;
  auto even = [](double v) { return std::max(2, 2 * static_cast<int>(std::lround(v / 2))); };
  return {even(width * s), even(height * s)};
}

namespace {

// Reads every video packet's timestamp (ffprobe; no decoding) and marks `info` as variable-rate
// when the sorted timestamps stray from a constant grid by more than half a frame. The constant
// rate is then the median frame interval's, and the frame count follows the duration.
void check_frame_times(const fs::path& path, VideoInfo& info) {
  auto c = spawn({"ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0",
                  path.string()});
  std::string out;
  std::byte buf[65536];
  for (;;) {
    const size_t n = c->read_full(std::span(buf));
    out.append(reinterpret_cast<const char*>(buf), n);
    if (n < sizeof buf) break;
  }
  if (c->wait() != 0) return;  // the decoder reports what is wrong
  std::vector<double> t;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    char* end = nullptr;
    const double v = std::strtod(line.c_str(), &end);
    if (end != line.c_str() && std::isfinite(v)) t.push_back(v);
  }
  if (t.size() < 3) return;
  std::sort(t.begin(), t.end());
  std::vector<double> gaps(t.size() - 1);
  for (size_t k = 0; k + 1 < t.size(); ++k) gaps[k] = t[k + 1] - t[k];
  const double span = t.back() - t.front();
  const double step = span / static_cast<double>(t.size() - 1);  // the average rate's interval
  if (!(step > 0)) return;
  double worst = 0;
  for (size_t k = 0; k < t.size(); ++k) worst = std::max(worst, std::abs(t[k] - (t.front() + static_cast<double>(k) * step)));
  if (worst <= 0.5 * step) return;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  const double median = gaps[gaps.size() / 2];
  const auto [lo, hi] = std::minmax_element(gaps.begin(), gaps.end());
  if (!(median > 0)) return;
  info.variable_rate = true;
  // Timestamps are rounded to the container's time base: snap to a whole or NTSC (k * 1000 / 1001) rate.
  double rate = 1.0 / median;
  if (std::abs(rate - std::round(rate)) < 0.01) rate = std::round(rate);
  else if (const double ntsc = std::round(rate * 1.001) / 1.001; std::abs(rate - ntsc) < 0.01) rate = ntsc;
  info.frame_rate = std::min(240.0, rate);
  const double duration = info.duration > 0 ? info.duration : span + median;
  info.frame_count = std::max(1, static_cast<int>(std::lround(duration * info.frame_rate)));
  info.warnings.push_back(fmt::format("{}: variable frame rate (frame intervals {:.1f} to {:.1f} ms, frames up to {:.0f} ms off "
                                      "a constant rate): resampled to a constant {:.4g} fps, frames repeated or dropped to keep time",
                                      path.string(), 1000 * *lo, 1000 * *hi, 1000 * worst, info.frame_rate));
}

}  // namespace

VideoInfo probe_video(const fs::path& path, const DecodeSettings& settings) {
  settings.validate();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorCode::io, path.string(), "cannot open: no such file or directory");
  const bool seq = is_png_dir(path);
  if (fs::is_directory(path, ec) && !seq) throw Error(ErrorCode::bad_file, path.string(), "a directory without *.png frames");
  std::vector<std::string> args = {"ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                   "stream=width,height,avg_frame_rate,r_frame_rate,nb_frames,duration", "-of", "json"};
  for (const auto& a : input_args(path, settings)) {
    if (a != "-i") args.push_back(a);
  }
  auto c = spawn(std::move(args));
  std::string out;
  std::byte buf[4096];
  for (;;) {
    const size_t n = c->read_full(buf);
    out.append(reinterpret_cast<const char*>(buf), n);
    if (n < sizeof buf) break;
  }
  const int rc = c->wait();
  if (rc != 0) throw Error(ErrorCode::bad_file, path.string(), fmt::format("not a readable video: {}", error_text(*c)));
  VideoInfo info;
  try {
    const auto j = nlohmann::json::parse(out);
    if (!j.contains("streams") || j["streams"].empty()) throw Error(ErrorCode::bad_file, path.string(), "no video stream");
    const auto& st = j["streams"][0];
    info.width = st.value("width", 0);
    info.height = st.value("height", 0);
    info.frame_rate = parse_rate(st.value("avg_frame_rate", "0/0"));
    if (!(info.frame_rate > 0)) info.frame_rate = parse_rate(st.value("r_frame_rate", "0/0"));
    if (st.contains("nb_frames")) info.frame_count = std::atoi(st["nb_frames"].get<std::string>().c_str());
    if (st.contains("duration")) info.duration = std::atof(st["duration"].get<std::string>().c_str());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::bad_file, path.string(), fmt::format("ffprobe gave no usable answer ({})", e.what()));
  }
  if (!seq) check_frame_times(path, info);
  if (seq) {
    info.frame_rate = settings.sequence_rate;
    info.frame_count = 0;
    for (const auto& e : fs::directory_iterator(path, ec)) info.frame_count += lower_ext(e.path()) == ".png";
  }
  if (info.width <= 0 || info.height <= 0) throw Error(ErrorCode::bad_file, path.string(), "the video has a zero frame size");
  if (!(info.frame_rate > 0) || !std::isfinite(info.frame_rate)) info.frame_rate = 24;  // stills: documented default
  if (info.frame_count == 0 && info.duration > 0) info.frame_count = static_cast<int>(std::lround(info.duration * info.frame_rate));
  if (!seq && lower_ext(path) == ".gif") {
    // A GIF ends with the trailer byte ';' (0x3B). ffmpeg decodes a cut file's whole frames and
    // exits 0, and ffprobe reports the cut file's frames, so the trailer is the only sign of it.
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    const std::streamoff size = f ? static_cast<std::streamoff>(f.tellg()) : 0;
    char last = 0;
    if (size > 0) {
      f.seekg(size - 1);
      f.get(last);
    }
    if (last != ';') {
      info.warnings.push_back(fmt::format("{}: the GIF ends without its trailer byte (0x3B): the file is truncated, "
                                          "and only the frames before the cut ({} reported) are used",
                                          path.string(), info.frame_count));
    }
  }
  return info;
}

struct VideoReader::Impl {
  fs::path path;
  DecodeSettings settings;
  VideoInfo info;
  int w = 0, h = 0, read = 0;
  bool done = false;
  std::unique_ptr<ChildProcess> child;
};

VideoReader::VideoReader(const fs::path& path, const DecodeSettings& settings) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->settings = settings;
  impl_->info = probe_video(path, settings);
  std::tie(impl_->w, impl_->h) = decoded_size(impl_->info.width, impl_->info.height, settings.max_side);
  std::vector<std::string> args = {"ffmpeg", "-nostdin", "-v", "error"};
  for (const auto& a : input_args(path, settings)) args.push_back(a);
  // -xerror: stop at the first frame that cannot be decoded (ffmpeg would otherwise conceal it and
  // hand over damaged pictures); a variable rate is resampled to the constant one probe_video chose.
  args.insert(args.begin() + 4, "-xerror");
  args.insert(args.end(), {"-map", "0:v:0"});
  if (impl_->info.variable_rate) {
    args.insert(args.end(), {"-fps_mode", "cfr", "-r", fmt::format("{}", impl_->info.frame_rate)});
  } else {
    args.insert(args.end(), {"-fps_mode", "passthrough"});
  }
  args.insert(args.end(), {"-vf", fmt::format("scale={}:{}:flags=area", impl_->w, impl_->h), "-f", "rawvideo", "-pix_fmt",
                           "rgb24", "-"});
  impl_->child = spawn(std::move(args));
}

VideoReader::~VideoReader() = default;
const VideoInfo& VideoReader::info() const noexcept { return impl_->info; }
int VideoReader::width() const noexcept { return impl_->w; }
int VideoReader::height() const noexcept { return impl_->h; }
int VideoReader::frames_read() const noexcept { return impl_->read; }

bool VideoReader::next(Image& frame) {
  if (impl_->done) return false;
  frame.width = impl_->w;
  frame.height = impl_->h;
  const size_t bytes = static_cast<size_t>(impl_->w) * impl_->h * 3;
  frame.rgb.resize(bytes);
  const size_t got = impl_->child->read_full(std::as_writable_bytes(std::span(frame.rgb)));
  if (got == bytes) {
    ++impl_->read;
    if (impl_->settings.max_frames > 0 && impl_->read > impl_->settings.max_frames) {
      throw Error(ErrorCode::bad_file, impl_->path.string(),
                  fmt::format("more than {} frames (raise the frame limit)", impl_->settings.max_frames));
    }
    return true;
  }
  impl_->done = true;
  const int rc = impl_->child->wait();
  if (rc != 0) {
    std::string why = error_text(*impl_->child);
    if (why.size() > 2 && why[0] == '[') {  // "[h264 @ 0x55...] message": the decoder's address is noise
      const auto close = why.find("] ");
      if (close != std::string::npos) why = why.substr(close + 2);
    }
    throw Error(ErrorCode::bad_file, impl_->path.string(),
                fmt::format("frame {} cannot be decoded ({}): {}", impl_->read,
                            impl_->read > 0 ? fmt::format("frames 0 to {} were", impl_->read - 1) : std::string("no frame was"), why));
  }
  if (got != 0) throw Error(ErrorCode::bad_file, impl_->path.string(), fmt::format("frame {} is truncated", impl_->read));
  return false;
}

DecodedVideo read_video(const fs::path& path, const DecodeSettings& settings) {
  VideoReader r(path, settings);
  DecodedVideo v;
  v.info = r.info();
  v.frame_rate = r.info().frame_rate;
  Image f;
  while (r.next(f)) v.frames.push_back(f);
  if (v.frames.empty()) throw Error(ErrorCode::bad_file, path.string(), "the video holds no frames");
  return v;
}

bool is_video_path(const fs::path& path) {
  static const char* const kExt[] = {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".gif", ".mpg", ".mpeg", ".ogv"};
  const std::string e = lower_ext(path);
  for (const char* k : kExt) {
    if (e == k) return true;
  }
  return is_png_dir(path);
}

}  // namespace koma::video
