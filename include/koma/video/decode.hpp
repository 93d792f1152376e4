// Video frames in and out through the ffmpeg executable (raw RGB frames over a pipe).
//
//   file ──ffmpeg (decode, downscale)──▶ rgb24 frames ──▶ koma ──▶ rgb24 frames ──ffmpeg (encode)──▶ file
//
// Anything ffmpeg reads is accepted: MP4, WebM, MOV, MKV, GIF, and PNG sequences (a directory of
// *.png files, read in name order at DecodeSettings::sequence_rate). ffmpeg is run as a child process
// (no shell); its error output becomes the message of the koma::Error thrown on failure.
// Encoding writes to a temporary file beside the destination and renames it only when ffmpeg
// succeeded, so a failure never leaves a partial video behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace koma::video {

/// One RGB image, 8 bits per channel, rows top to bottom, pixels interleaved R, G, B.
/// Invariant: rgb.size() == width * height * 3.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;

  /// Pointer to pixel (x, y) (3 bytes). No bounds check.
  const std::uint8_t* at(int x, int y) const noexcept { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
  std::uint8_t* at(int x, int y) noexcept { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
  /// A black image of the given size.
  static Image black(int width, int height);
};

/// What ffprobe reports about a video's first video stream.
struct VideoInfo {
  int width = 0;           ///< source width in pixels
  int height = 0;          ///< source height in pixels
  double frame_rate = 0;   ///< frames per second (average rate; PNG sequences: the sequence rate)
  int frame_count = 0;     ///< frames reported by the container; 0 when unknown
  double duration = 0;     ///< seconds; 0 when unknown
};

/// How frames are decoded.
struct DecodeSettings {
  /// Longest side, in pixels, of the decoded frames. A larger video is downscaled by ffmpeg (area
  /// averaging, aspect ratio kept, even dimensions) while decoding, so memory and time stay bounded
  /// on enormous inputs; smaller videos are never upscaled. 0 = keep the source size.
  /// Default 640 (the analysis resolution: 640x360 for 16:9).
  int max_side = 640;
  /// Frame rate of a PNG sequence (a directory of *.png), frames per second, > 0. Default 24.
  double sequence_rate = 24;
  /// Largest number of frames decoded; 0 = all (default). A longer video is an error, not a cut.
  int max_frames = 0;

  /// Throws Error(invalid_settings) naming the bad field.
  void validate() const;
};

/// Size of decoded frames for a source of `width` x `height` under `max_side` (see DecodeSettings).
std::pair<int, int> decoded_size(int width, int height, int max_side);

/// Probes a video with ffprobe. Throws Error(io) when the file does not exist or ffprobe is
/// missing, Error(bad_file) when ffprobe cannot read it or it has no video stream or a zero size.
VideoInfo probe_video(const std::filesystem::path& path, const DecodeSettings& settings = {});

/// Streams decoded frames one by one (constant memory). Construct, then call next() until it
/// returns false. The child ffmpeg is ended when the reader is destroyed.
class VideoReader {
 public:
  /// Probes and starts decoding. Throws like probe_video().
  explicit VideoReader(const std::filesystem::path& path, const DecodeSettings& settings = {});
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  /// The source's properties (width and height of the source, not of the decoded frames).
  const VideoInfo& info() const noexcept;
  /// Decoded frame size.
  int width() const noexcept;
  int height() const noexcept;
  /// Decodes the next frame into `frame` (resized as needed). Returns false at the end. Throws
  /// Error(bad_file) with ffmpeg's message when decoding fails or a frame is truncated, and when
  /// more than max_frames frames arrive.
  bool next(Image& frame);
  /// Frames returned so far.
  int frames_read() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Decodes a whole video into memory. Throws like VideoReader, and Error(bad_file) when the
/// video holds no frames.
struct DecodedVideo {
  VideoInfo info;              ///< the source
  double frame_rate = 0;       ///< frames per second of `frames`
  std::vector<Image> frames;   ///< decoded (possibly downscaled) frames
};
DecodedVideo read_video(const std::filesystem::path& path, const DecodeSettings& settings = {});

/// How frames are encoded. The container and codec follow the destination's extension:
///   .mp4/.mov/.mkv  H.264 (libx264), yuv420p, CRF `quality`; odd sizes are padded by one pixel
///   .webm           VP9 (libvpx-vp9), CRF `quality`
///   .gif            GIF with a palette generated from the whole clip
///   .png            one PNG image (exactly one frame must be written)
///   no extension    a directory of PNG images 000001.png, 000002.png, ... (lossless; must not exist
///                   or be empty)
struct EncodeSettings {
  double frame_rate = 24;  ///< frames per second of the output, > 0 (default 24)
  int quality = 18;        ///< CRF for H.264 / VP9, 0 (lossless) .. 51 (default 18)
  void validate() const;
};

/// Streams frames into ffmpeg. Frames must all have the size given at construction. commit()
/// finishes the file and renames it into place; destroying an uncommitted writer kills ffmpeg
/// and removes the temporary output, so nothing partial is written.
class VideoWriter {
 public:
  /// Starts ffmpeg. Throws Error(invalid_settings) for an unsupported extension or a zero size,
  /// Error(io) when the destination's directory does not exist or ffmpeg cannot be started.
  VideoWriter(const std::filesystem::path& destination, int width, int height, const EncodeSettings& settings = {});
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Sends one frame. Throws Error(mismatch) for a frame of another size, Error(io) with
  /// ffmpeg's message when ffmpeg has failed.
  void write(const Image& frame);
  /// Frames written so far.
  int frames_written() const noexcept;
  /// Ends the stream, waits for ffmpeg and moves the result into place. Throws Error(io) with
  /// ffmpeg's message when encoding failed (the destination is then untouched).
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes one image as PNG (through ffmpeg, atomically). Throws like VideoWriter.
void write_png(const std::filesystem::path& path, const Image& image);

/// True when `path` looks like a video koma can read: a video/GIF extension (.mp4 .m4v .mov .mkv
/// .webm .avi .gif .mpg .mpeg .ogv) or a directory holding *.png files.
bool is_video_path(const std::filesystem::path& path);

}  // namespace koma::video
