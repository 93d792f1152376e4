// Writing pictures: single PNGs, PNG sequences, and videos encoded by the ffmpeg program.
//
// Video frames are streamed to an `ffmpeg` child process through a pipe (a Unix socket pair, so a
// dying ffmpeg is reported as an error instead of killing the caller with SIGPIPE): MP4 frames are
// converted to Y'CbCr 4:2:0 here (rgba_to_yuv420p: 2.7x fewer bytes than RGBA and no conversion left
// for ffmpeg), GIF frames go as RGBA for the palette generator.
// ffmpeg writes to an AtomicFile (a temporary file beside the destination), which is renamed over
// it only when every frame was accepted and ffmpeg exited cleanly: nothing partial is ever left
// behind. A PNG sequence is a temporary folder swapped into place the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "koma/core/atomic_file.hpp"
#include "koma/core/child_process.hpp"
#include "koma/core/enum_names.hpp"
#include "koma/render/figure.hpp"

namespace koma::render {

/// What a video path is written as.
enum class VideoFormat : std::uint8_t {
  mp4,           ///< H.264 (libx264), yuv420p (BT.601, TV range, tagged), +faststart: plays in browsers and editors.
  gif,           ///< Animated GIF with a palette generated from the whole clip (palettegen/paletteuse).
  png_sequence,  ///< A folder of frame_00000.png, frame_00001.png, ...
};

/// The formats' names.
inline constexpr EnumNames<VideoFormat, 3> kVideoFormatNames{
    {{{VideoFormat::mp4, "mp4"}, {VideoFormat::gif, "gif"}, {VideoFormat::png_sequence, "png"}}}, NameCase::exact, "mp4"};

/// "mp4", "gif", "png".
std::string_view to_string(VideoFormat format) noexcept;

/// The format a path asks for: ".mp4" -> mp4, ".gif" -> gif, a path ending in '/' or naming an
/// existing directory or without an extension -> png_sequence. Throws Error(invalid_settings)
/// naming the path for any other extension.
VideoFormat video_format_for(const std::filesystem::path& path);

/// Encoder settings.
struct EncodeSettings {
  double frame_rate = 24.0;          ///< Frames per second of the video; (0, 1000]; default 24.
  int crf = 18;                      ///< x264 quality (0 best .. 51 worst); 18 is visually lossless.
  std::string preset = "ultrafast";  ///< x264 speed preset ("ultrafast" .. "veryslow"); the fastest by default.
  /// x264 threads, 1 .. 64; default 2. Fixed, so an MP4 has the same bytes on every machine: x264
  /// is deterministic for a given thread count, and ffmpeg's default follows the cores (3 on 2
  /// cores, 1 under `taskset -c 0`: other bytes).
  int threads = 2;
  int gif_colours = 128;             ///< GIF palette size, 2 .. 256; default 128.
  std::string ffmpeg = "ffmpeg";     ///< The ffmpeg program (looked up on PATH when it has no '/').

  /// Throws Error(invalid_settings) naming the field.
  void validate() const;
};

/// True when `program` (default "ffmpeg") can be started: found on PATH (or at the given path)
/// and executable.
bool ffmpeg_available(const std::string& program = "ffmpeg");

/// Writes frames one by one to a video or PNG folder; commits atomically in finish().
///
/// Usage: `VideoWriter w(path, 1280, 720, settings); for (...) w.add_frame(img); w.finish();`.
/// Destroying an unfinished writer stops ffmpeg and removes every temporary file.
class VideoWriter {
 public:
  /// Starts the encoder for `path` (format from video_format_for). Throws Error(invalid_settings)
  /// for a zero or odd-unfriendly size (width/height 0 or > 8192) or bad settings, Error(io) when
  /// the destination's folder does not exist or is not writable, and Error(io) with an install
  /// hint when ffmpeg is needed (mp4, gif) but cannot be found.
  VideoWriter(std::filesystem::path path, int width, int height, const EncodeSettings& settings = {});
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Appends one frame. Throws Error(mismatch) when its size differs from the writer's and
  /// Error(io) when ffmpeg stopped accepting data (its last message is included).
  void add_frame(const Image& frame);
  /// Appends `count` (>= 1) copies of one frame, converted and encoded for the pipe once (a held
  /// drawing). Throws as add_frame().
  void add_frames(const Image& frame, int count);
  /// Ends the stream, waits for ffmpeg, and renames the result into place. Throws Error(bad_data)
  /// when no frame was added and Error(io) when ffmpeg failed. Calling it twice is a bug.
  void finish();

  VideoFormat format() const noexcept { return format_; }
  int frames_written() const noexcept { return frames_; }

 private:
  void abort() noexcept;
  [[noreturn]] void fail_stream(const std::error_code& error);

  std::filesystem::path path_;
  std::unique_ptr<AtomicFile> file_;  // mp4 / gif: what ffmpeg writes, renamed into place by finish()
  std::filesystem::path temp_;        // PNG sequence: the folder of frames, swapped into place
  std::unique_ptr<ChildProcess> child_;  // mp4 / gif: ffmpeg, reading frames on its stdin
  int frames_slot_ = -1;  // a PNG sequence's temporary folder in the table of temporary files removed on a hard exit
  VideoFormat format_ = VideoFormat::mp4;
  int width_ = 0;
  int height_ = 0;
  int frames_ = 0;
  bool done_ = false;
  std::vector<std::uint8_t> yuv_;  // the frame converted for MP4, reused (no page faults per frame)
};

/// Bytes of a planar Y'CbCr 4:2:0 picture of `width` x `height` pixels, each side rounded up to even:
/// a full-size Y plane, then quarter-size Cb and Cr planes (ffmpeg's "yuv420p" raw layout).
std::size_t yuv420p_size(int width, int height) noexcept;

/// Converts straight RGBA (sRGB values; alpha ignored, as for an opaque frame) to yuv420p, the layout
/// of yuv420p_size(), with the BT.601 matrix in limited ("TV") range (R, G, B in 0 .. 1): Y' = 0.299 R + 0.587 G + 0.114 B,
/// Y = 16 + 219 Y', Cb = 128 + 224 (B - Y') / 1.772, Cr = 128 + 224 (R - Y') / 1.402, rounded to the
/// nearest code. Each Cb/Cr sample is the mean of a 2x2 block (sited at its centre, the convention
/// of ffmpeg's own converter; the MP4 is tagged "center" so that every decoder agrees). An odd width or height
/// repeats the last column or row. Throws Error(invalid_settings) when the image is empty or its
/// byte count is not width * height * 4, and Error(mismatch) when `out` is not yuv420p_size() bytes.
void rgba_to_yuv420p(const Image& image, std::span<std::uint8_t> out);
/// The value-returning form of rgba_to_yuv420p().
std::vector<std::uint8_t> rgba_to_yuv420p(const Image& image);

/// PNG bytes of an image (lossless, RGBA).
std::string encode_png(const Image& image);
/// Writes an image as PNG atomically. Throws Error(io) naming the path.
void write_png(const std::filesystem::path& path, const Image& image);
/// Reads a PNG into an Image. Throws Error(bad_file) when it is not a readable PNG.
Image read_png(const std::filesystem::path& path);

/// Writes an RGB PNG band by band (libpng), so a picture never has to exist whole: a contact
/// sheet of thousands of key frames costs one row of cells. The height is declared up front.
/// Atomic: the file appears at `path` in finish(); destroying an unfinished writer removes the
/// temporary file. Lossless; zlib level 3 (a sheet of photos compresses little more at 9 and
/// takes several times longer).
class PngStreamWriter {
 public:
  /// Throws Error(invalid_settings) for a width or height outside 1 .. 1,000,000 (PNG allows
  /// 2^31 - 1; beyond a million rows no viewer opens it), Error(io) naming the path when its folder
  /// does not exist or the file cannot be created.
  PngStreamWriter(std::filesystem::path path, int width, int height);
  ~PngStreamWriter();
  PngStreamWriter(const PngStreamWriter&) = delete;
  PngStreamWriter& operator=(const PngStreamWriter&) = delete;

  /// Appends whole rows, top to bottom: `rgb` holds width * 3 bytes per row (R, G, B). Throws
  /// Error(mismatch) when the bytes are not whole rows or exceed the declared height, Error(io)
  /// when the file cannot be written (disk full).
  void add_rows(std::span<const std::uint8_t> rgb);
  /// Ends the PNG and renames it into place. Throws Error(mismatch) when rows are missing,
  /// Error(io) when the file cannot be written. Calling it twice is a bug.
  void finish();
  int rows_written() const noexcept { return rows_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int width_ = 0, height_ = 0, rows_ = 0;
};

}  // namespace koma::render
