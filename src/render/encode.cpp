#include "koma/render/encode.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <vector>

#include "canvas.hpp"
#include "koma/core/atomic_file.hpp"
#include "koma/core/child_process.hpp"
#include "koma/core/error.hpp"

namespace koma::render {

namespace fs = std::filesystem;

std::string_view to_string(VideoFormat format) noexcept { return kVideoFormatNames.name(format); }


namespace {

// "out/frames/" -> "out/frames".
fs::path strip_trailing_slash(const fs::path& p) {
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string lower_ext(const fs::path& p) {
  std::string e = p.extension().string();
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

}  // namespace

VideoFormat video_format_for(const fs::path& path) {
  const std::string s = path.string();
  std::error_code ec;
  if (!s.empty() && s.back() == '/') return VideoFormat::png_sequence;
  if (fs::is_directory(path, ec)) return VideoFormat::png_sequence;
  const std::string e = lower_ext(path);
  if (e == ".mp4") return VideoFormat::mp4;
  if (e == ".gif") return VideoFormat::gif;
  if (e.empty()) return VideoFormat::png_sequence;
  if (e == ".fbx" || e == ".bvh" || e == ".glb" || e == ".gltf")
    throw Error(ErrorCode::invalid_settings, s,
                fmt::format("a video has no skeleton, so it cannot become a '{}' motion file; write held video "
                            "(.mp4, .gif or a folder ending in '/' for PNG frames)", e));
  throw Error(ErrorCode::invalid_settings, s,
              fmt::format("cannot write '{}' videos; use .mp4, .gif or a folder (ending in '/') for PNG frames", e));
}

void EncodeSettings::validate() const {
  auto bad = [](const char* field, const std::string& why) {
    throw Error(ErrorCode::invalid_settings, std::string("encode.") + field, why);
  };
  if (!(frame_rate > 0 && frame_rate <= 1000)) bad("frame_rate", fmt::format("{} is not in (0, 1000] fps", frame_rate));
  if (crf < 0 || crf > 51) bad("crf", fmt::format("{} is not in 0 .. 51", crf));
  if (preset.empty() || preset.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
    bad("preset", fmt::format("'{}' is not an x264 preset name", preset));
  }
  if (threads < 1 || threads > 64) bad("threads", fmt::format("{} is not in 1 .. 64", threads));
  if (gif_colours < 2 || gif_colours > 256) bad("gif_colours", fmt::format("{} is not in 2 .. 256", gif_colours));
  if (ffmpeg.empty()) bad("ffmpeg", "the program name is empty");
}

std::size_t yuv420p_size(int width, int height) noexcept {
  if (width <= 0 || height <= 0) return 0;
  const auto w = static_cast<std::size_t>(width + (width & 1));
  const auto h = static_cast<std::size_t>(height + (height & 1));
  return w * h + 2 * (w / 2) * (h / 2);
}

namespace {

// BT.601 Y'CbCr in limited range as fixed-point integers. Luma: Y = 16 + 219/255 (Kr R + Kg G + Kb B),
// scaled by 2^16; chroma: Cb = 128 + 224/255 (B - Y') / (2 (1 - Kb)), Cr likewise with R and Kr,
// scaled by 2^16 and applied to sums of 4 samples (hence the shift by 18). Each row of
// coefficients is rounded so that it sums exactly to the scaled total: white -> 235, grey -> Cb = Cr = 128.
constexpr double kKr = 0.299, kKb = 0.114;
constexpr int kShift = 16;
constexpr double kScale = 65536.0;
constexpr std::int32_t fixed(double v) { return static_cast<std::int32_t>(v < 0 ? v * kScale - 0.5 : v * kScale + 0.5); }
constexpr double kYs = 219.0 / 255.0, kCs = 224.0 / 255.0;
constexpr std::int32_t kYR = fixed(kYs * kKr), kYB = fixed(kYs * kKb), kYG = fixed(kYs) - kYR - kYB;
constexpr std::int32_t kCbR = fixed(-kCs * kKr / (2 * (1 - kKb))), kCbB = fixed(kCs / 2), kCbG = -kCbR - kCbB;
constexpr std::int32_t kCrR = fixed(kCs / 2), kCrB = fixed(-kCs * kKb / (2 * (1 - kKr))), kCrG = -kCrR - kCrB;

constexpr int kChromaShift = kShift + 2;  // chroma sums the 4 samples of a 2x2 block
constexpr std::int32_t kChromaOffset = (128 << kChromaShift) + (1 << (kChromaShift - 1));

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KOMA_AVX2_CLONE [[gnu::target_clones("avx2", "default")]]
#else
#define KOMA_AVX2_CLONE
#endif

namespace detail {

// The two hot loops, written so that the compiler vectorises them (SSE2, and AVX2 through
// target_clones where the CPU has it): about 0.2 ms per 640x360 frame, half of a straightforward
// per-pixel loop.

// Y of one row of w RGBA pixels.
KOMA_AVX2_CLONE void luma_row(const std::uint8_t* __restrict rgba, std::uint8_t* __restrict y, int w) {
  for (int x = 0; x < w; ++x) {
    const std::uint8_t* p = rgba + 4 * x;
    y[x] = static_cast<std::uint8_t>(
        (kYR * p[0] + kYG * p[1] + kYB * p[2] + (16 << kShift) + (1 << (kShift - 1))) >> kShift);
  }
}

// Cb and Cr samples 0 .. n - 1 of a row pair (a, b): each the mean of the 2x2 block at columns 2i, 2i + 1.
KOMA_AVX2_CLONE void chroma_row(const std::uint8_t* __restrict a, const std::uint8_t* __restrict b,
                                std::uint8_t* __restrict cb, std::uint8_t* __restrict cr, int n) {
  for (int i = 0; i < n; ++i) {
    const std::uint8_t* p = a + 8 * i;
    const std::uint8_t* q = b + 8 * i;
    const std::int32_t R = p[0] + p[4] + q[0] + q[4];
    const std::int32_t G = p[1] + p[5] + q[1] + q[5];
    const std::int32_t B = p[2] + p[6] + q[2] + q[6];
    cb[i] = static_cast<std::uint8_t>((kCbR * R + kCbG * G + kCbB * B + kChromaOffset) >> kChromaShift);
    cr[i] = static_cast<std::uint8_t>((kCrR * R + kCrG * G + kCrB * B + kChromaOffset) >> kChromaShift);
  }
}

}  // namespace detail

void rgba_to_yuv420p(const Image& image, std::span<std::uint8_t> out) {
  const int w = image.width, h = image.height;
  if (w <= 0 || h <= 0 || image.rgba.size() != static_cast<size_t>(w) * static_cast<size_t>(h) * 4) {
    throw Error(ErrorCode::invalid_settings, "yuv420p",
                fmt::format("{}x{} image with {} bytes is not a picture", w, h, image.rgba.size()));
  }
  if (out.size() != yuv420p_size(w, h)) {
    throw Error(ErrorCode::mismatch, "yuv420p",
                fmt::format("output buffer has {} bytes, a {}x{} picture needs {}", out.size(), w, h, yuv420p_size(w, h)));
  }
  const int w2 = w + (w & 1), h2 = h + (h & 1), cw = w2 / 2;
  const auto row_bytes = static_cast<size_t>(w) * 4;
  std::uint8_t* y_plane = out.data();
  std::uint8_t* cb_plane = y_plane + static_cast<size_t>(w2) * static_cast<size_t>(h2);
  std::uint8_t* cr_plane = cb_plane + static_cast<size_t>(cw) * static_cast<size_t>(h2 / 2);
  const int pairs = w / 2;  // chroma samples whose two columns are both inside the image
  for (int j = 0; j < h2 / 2; ++j) {
    const std::uint8_t* r0 = image.rgba.data() + static_cast<size_t>(2 * j) * row_bytes;
    const std::uint8_t* r1 = image.rgba.data() + static_cast<size_t>(std::min(2 * j + 1, h - 1)) * row_bytes;
    std::uint8_t* y0 = y_plane + static_cast<size_t>(2 * j) * static_cast<size_t>(w2);
    std::uint8_t* y1 = y0 + w2;
    detail::luma_row(r0, y0, w);
    detail::luma_row(r1, y1, w);
    std::uint8_t* cb = cb_plane + static_cast<size_t>(j) * static_cast<size_t>(cw);
    std::uint8_t* cr = cr_plane + static_cast<size_t>(j) * static_cast<size_t>(cw);
    detail::chroma_row(r0, r1, cb, cr, pairs);
    if (w2 != w) {  // odd width: the padding column repeats the last one
      y0[w] = y0[w - 1];
      y1[w] = y1[w - 1];
      const std::uint8_t* p = r0 + 4 * (w - 1);
      const std::uint8_t* q = r1 + 4 * (w - 1);
      const std::int32_t R = 2 * (p[0] + q[0]), G = 2 * (p[1] + q[1]), B = 2 * (p[2] + q[2]);
      cb[pairs] = static_cast<std::uint8_t>((kCbR * R + kCbG * G + kCbB * B + kChromaOffset) >> kChromaShift);
      cr[pairs] = static_cast<std::uint8_t>((kCrR * R + kCrG * G + kCrB * B + kChromaOffset) >> kChromaShift);
    }
  }
}

std::vector<std::uint8_t> rgba_to_yuv420p(const Image& image) {
  std::vector<std::uint8_t> out(yuv420p_size(image.width, image.height));
  rgba_to_yuv420p(image, out);
  return out;
}

bool ffmpeg_available(const std::string& program) { return program_available(program); }

namespace {

std::string temp_name(const fs::path& dest, std::string_view suffix) {
  std::random_device rd;
  fs::path dir = dest.parent_path();
  if (dir.empty()) dir = ".";
  return (dir / fmt::format(".{}.koma-{}-{:08x}{}", dest.filename().string(), ::getpid(), rd(), suffix)).string();
}

// Frame rate as an exact rational string ffmpeg understands: 24 -> "24/1", 23.976 -> "24000/1001".
std::string rate_string(double fps) {
  if (std::abs(fps - std::round(fps)) < 1e-9) return fmt::format("{}/1", std::lround(fps));
  const double ntsc = fps * 1001.0;
  if (std::abs(ntsc - std::round(ntsc)) < 1e-3) return fmt::format("{}/1001", std::lround(ntsc));
  return fmt::format("{}/1000000", std::llround(fps * 1e6));
}

// The end of ffmpeg's messages: its last 600 characters.
std::string tail_of(std::string all) {
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
  if (all.empty()) return "(no message)";
  if (all.size() <= 600) return all;
  std::string out("...");
  out.append(all, all.size() - 600, 600);
  return out;
}

}  // namespace

VideoWriter::VideoWriter(fs::path path, int width, int height, const EncodeSettings& settings)
    : path_(strip_trailing_slash(path)), format_(video_format_for(path)), width_(width), height_(height) {
  settings.validate();
  if (width <= 0 || height <= 0 || width > 8192 || height > 8192) {
    throw Error(ErrorCode::invalid_settings, path_.string(),
                fmt::format("{}x{} is not a frame size; expected 1 .. 8192 pixels on each side", width, height));
  }
  fs::path dir = path_.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(ErrorCode::io, path_.string(), fmt::format("cannot write: directory '{}' does not exist", dir.string()));
  }
  if (format_ == VideoFormat::png_sequence) {
    if (fs::exists(path_, ec) && !fs::is_directory(path_, ec)) {
      throw Error(ErrorCode::io, path_.string(), "cannot write PNG frames: a file of that name exists");
    }
    temp_ = temp_name(path_, ".tmp");
    if (!fs::create_directory(temp_, ec) || ec) {
      throw Error(ErrorCode::io, path_.string(), fmt::format("cannot write: {}", ec ? ec.message() : "mkdir failed"));
    }
    frames_slot_ = register_temp(temp_);
    return;
  }
  if (fs::is_directory(path_, ec)) throw Error(ErrorCode::io, path_.string(), "cannot write: it is a directory");
  if (!ffmpeg_available(settings.ffmpeg)) {
    throw Error(ErrorCode::io, settings.ffmpeg,
                fmt::format("the ffmpeg program was not found (needed for {} output); install it "
                            "(Debian: apt-get install ffmpeg) or write PNG frames to a folder instead",
                            to_string(format_)));
  }
  file_ = std::make_unique<AtomicFile>(path_);

  // MP4 frames arrive as yuv420p made by rgba_to_yuv420p (sizes rounded up to even), so ffmpeg only
  // encodes; the stream is tagged with that conversion's matrix and range so players decode it
  // exactly. GIF frames arrive as RGBA for the palette filters.
  const bool yuv = format_ == VideoFormat::mp4;
  std::vector<std::string> args = {settings.ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
                                   "-f", "rawvideo", "-pix_fmt", yuv ? "yuv420p" : "rgba",
                                   "-s", yuv ? fmt::format("{}x{}", width + (width & 1), height + (height & 1))
                                             : fmt::format("{}x{}", width, height),
                                   "-framerate", rate_string(settings.frame_rate), "-i", "pipe:0", "-an"};
  if (yuv) {
    args.insert(args.end(), {"-c:v", "libx264", "-preset", settings.preset, "-crf", std::to_string(settings.crf),
                             "-threads", std::to_string(settings.threads),
                             "-pix_fmt", "yuv420p", "-colorspace", "smpte170m", "-color_range", "tv",
                             "-chroma_sample_location", "center",
                             "-movflags", "+faststart", "-f", "mp4", file_->temp_path().string()});
  } else {
    args.insert(args.end(),
                {"-vf",
                 fmt::format("split[a][b];[a]palettegen=max_colors={}:stats_mode=full[p];[b][p]paletteuse=dither="
                             "sierra2_4a",
                             settings.gif_colours),
                 "-loop", "0", "-f", "gif", file_->temp_path().string()});
  }

  ChildSpec spec;
  spec.args = std::move(args);
  spec.write_stdin = true;
  spec.log = temp_name(path_, ".log");
  spec.install_hint = "install ffmpeg (Debian: apt-get install ffmpeg)";
  child_ = std::make_unique<ChildProcess>(std::move(spec));
}

VideoWriter::~VideoWriter() {
  if (!done_) abort();
}

void VideoWriter::abort() noexcept {
  child_.reset();  // kills a running ffmpeg, removes its log
  unregister_temp(frames_slot_);
  frames_slot_ = -1;
  file_.reset();  // removes ffmpeg's temporary output
  std::error_code ec;
  if (!temp_.empty()) fs::remove_all(temp_, ec);
  done_ = true;
}

void VideoWriter::add_frame(const Image& frame) { add_frames(frame, 1); }

void VideoWriter::add_frames(const Image& frame, int count) {
  KOMA_ASSERT(!done_ && count >= 1);
  if (frame.width != width_ || frame.height != height_ ||
      frame.rgba.size() != static_cast<size_t>(width_) * height_ * 4) {
    throw Error(ErrorCode::mismatch, fmt::format("{} frame {}", path_.string(), frames_),
                fmt::format("frame is {}x{}, the video is {}x{}", frame.width, frame.height, width_, height_));
  }
  if (format_ == VideoFormat::png_sequence) {
    const std::string bytes = encode_png(frame);
    for (int k = 0; k < count; ++k) {
      const fs::path p = temp_ / fmt::format("frame_{:05d}.png", frames_);
      std::ofstream out(p, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw Error(ErrorCode::io, p.string(), "write failed (disk full?)");
      ++frames_;
    }
    return;
  }
  // MP4: convert here (into a buffer reused across frames) and send 1.5 bytes per pixel instead of 4.
  const std::uint8_t* start = frame.rgba.data();
  size_t bytes = frame.rgba.size();
  if (format_ == VideoFormat::mp4) {
    yuv_.resize(yuv420p_size(width_, height_));
    rgba_to_yuv420p(frame, yuv_);
    start = yuv_.data();
    bytes = yuv_.size();
  }
  for (int k = 0; k < count; ++k) {
    if (const std::error_code ec = child_->write_all(std::as_bytes(std::span(start, bytes)))) fail_stream(ec);
    ++frames_;
  }
}

void VideoWriter::fail_stream(const std::error_code& error) {
  const std::string why = error.message();
  child_->wait();
  const std::string msg = tail_of(child_->log_text());
  abort();
  throw Error(ErrorCode::io, path_.string(), fmt::format("ffmpeg stopped reading frames ({}): {}", why, msg));
}

void VideoWriter::finish() {
  KOMA_ASSERT(!done_);
  if (frames_ == 0) {
    abort();
    throw Error(ErrorCode::bad_data, path_.string(), "no frames to write");
  }
  std::error_code ec;
  if (format_ == VideoFormat::png_sequence) {
    // Swap the finished folder into place; an old folder of that name is replaced as a whole.
    fs::path backup;
    if (fs::exists(path_, ec)) {
      backup = temp_name(path_, ".old");
      fs::rename(path_, backup, ec);
      if (ec) {
        abort();
        throw Error(ErrorCode::io, path_.string(), fmt::format("cannot replace: {}", ec.message()));
      }
    }
    unregister_temp(frames_slot_);
    frames_slot_ = -1;
    fs::rename(temp_, path_, ec);
    if (ec) {
      if (!backup.empty()) fs::rename(backup, path_, ec);
      abort();
      throw Error(ErrorCode::io, path_.string(), "cannot rename the finished frames into place");
    }
    if (!backup.empty()) fs::remove_all(backup, ec);
    done_ = true;
    return;
  }
  if (child_->wait() != 0) {
    const std::string msg = tail_of(child_->log_text());
    abort();
    throw Error(ErrorCode::io, path_.string(), fmt::format("ffmpeg failed: {}", msg));
  }
  try {
    file_->commit();
  } catch (const Error&) {
    abort();
    throw;
  }
  child_.reset();  // removes ffmpeg's log
  done_ = true;
}

std::string encode_png(const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4) {
    throw Error(ErrorCode::invalid_settings, "png",
                fmt::format("{}x{} image with {} bytes is not a picture", image.width, image.height, image.rgba.size()));
  }
  detail::SurfacePtr s = detail::surface_from_image(image);
  return detail::png_bytes(s.get(), "png");
}

void write_png(const fs::path& path, const Image& image) { write_file_atomic(path, encode_png(image)); }

Image read_png(const fs::path& path) {
  detail::SurfacePtr s(cairo_image_surface_create_from_png(path.c_str()));
  if (cairo_surface_status(s.get()) != CAIRO_STATUS_SUCCESS) {
    throw Error(ErrorCode::bad_file, path.string(),
                fmt::format("not a readable PNG: {}", cairo_status_to_string(cairo_surface_status(s.get()))));
  }
  detail::Canvas c;
  c.width = cairo_image_surface_get_width(s.get());
  c.height = cairo_image_surface_get_height(s.get());
  if (cairo_image_surface_get_format(s.get()) != CAIRO_FORMAT_ARGB32) {
    detail::Canvas conv = detail::make_canvas(c.width, c.height);
    cairo_set_source_surface(conv.cr.get(), s.get(), 0, 0);
    cairo_paint(conv.cr.get());
    return detail::to_image(conv);
  }
  c.surface = std::move(s);
  return detail::to_image(c);
}

}  // namespace koma::render
