// Video frames in through the ffmpeg executable (raw RGB frames over a pipe).
//
//   file ──ffmpeg (decode, downscale)──▶ rgb24 frames ──▶ koma ──▶ render::VideoWriter (encode) ──▶ file
//
// Anything ffmpeg reads is accepted: MP4, WebM, MOV, MKV, GIF, and PNG sequences (a directory of
// *.png files, read in name order at DecodeSettings::sequence_rate). ffmpeg is run as a child process
// (no shell); its error output becomes the message of the koma::Error thrown on failure.
// Encoding is not here: held videos go through the render module's encoder (koma/render/encode.hpp,
// see write_held_video in select.hpp), which writes atomically.
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
  double frame_rate = 0;   ///< frames per second of the decoded frames (average rate; PNG
                           ///< sequences: the sequence rate; variable rate: the rate resampled to)
  int frame_count = 0;     ///< frames reported by the container (variable rate: after resampling); 0 when unknown
  double duration = 0;     ///< seconds; 0 when unknown
  /// The frames' timestamps stray from a constant rate by more than half a frame (phone
  /// recordings, screen captures, GIFs with uneven delays): VideoReader resamples them to a
  /// constant `frame_rate` (the median frame interval's), repeating or dropping frames to keep
  /// time, and `warnings` says so.
  bool variable_rate = false;
  /// What is wrong with the file but still readable, one sentence each, naming the file: a GIF
  /// cut before its trailer byte (0x3B) is truncated, and only the frames it holds decode; a
  /// variable frame rate is resampled to a constant one.
  std::vector<std::string> warnings;
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
  /// Error(bad_file) naming the first frame that could not be decoded, with ffmpeg's message, when
  /// the stream is corrupt (ffmpeg stops at the first decoding error instead of concealing it), or a
  /// frame is truncated, and when more than max_frames frames arrive.
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

/// True when `path` looks like a video koma can read: a video/GIF extension (.mp4 .m4v .mov .mkv
/// .webm .avi .gif .mpg .mpeg .ogv) or a directory holding *.png files.
bool is_video_path(const std::filesystem::path& path);

}  // namespace koma::video
