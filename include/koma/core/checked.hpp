// Checked arithmetic for everything a file declares: offsets, counts, strides, frame counts and
// rates. Readers never add or multiply untrusted numbers directly; they ask these helpers, which
// work in 64-bit (or wider) arithmetic and report overflow instead of wrapping around.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace koma::checked {

/// a + b, or nothing when it does not fit in 64 unsigned bits.
inline std::optional<std::uint64_t> add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a * b, or nothing when it does not fit in 64 unsigned bits.
inline std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// Whether bytes [offset, offset + length) lie within a block of `size` bytes.
inline bool range_fits(std::uint64_t offset, std::uint64_t length, std::uint64_t size) noexcept {
  const auto end = add(offset, length);
  return end && *end <= size;
}

/// The end of `count` elements of `element` bytes, `stride` bytes apart, from `offset`:
/// offset + stride * (count - 1) + element (offset for count 0), or nothing on overflow.
inline std::optional<std::uint64_t> strided_end(std::uint64_t offset, std::uint64_t stride, std::uint64_t count,
                                                std::uint64_t element) noexcept {
  if (count == 0) return offset;
  const auto span = mul(stride, count - 1);
  if (!span) return std::nullopt;
  const auto last = add(offset, *span);
  if (!last) return std::nullopt;
  return add(*last, element);
}

/// Whether `count` elements of `element` bytes, `stride` apart from `offset`, lie within `size` bytes.
inline bool strided_fits(std::uint64_t offset, std::uint64_t stride, std::uint64_t count, std::uint64_t element,
                         std::uint64_t size) noexcept {
  const auto end = strided_end(offset, stride, count, element);
  return end && *end <= size;
}

/// `v` as an integer when it is finite, whole and within [lo, hi]; nothing otherwise. Never
/// converts an out-of-range double (undefined behaviour in C++).
inline std::optional<std::int64_t> whole(double v, std::int64_t lo, std::int64_t hi) noexcept {
  if (!std::isfinite(v) || v != std::floor(v)) return std::nullopt;
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

/// `v` rounded up to an integer when it is finite and within [lo, hi]; nothing otherwise.
inline std::optional<std::int64_t> ceil_within(double v, std::int64_t lo, std::int64_t hi) noexcept {
  if (!std::isfinite(v)) return std::nullopt;
  return whole(std::ceil(v), lo, hi);
}

}  // namespace koma::checked

namespace koma {

/// Largest frame count koma works with: ten hours at 120 fps.
inline constexpr std::int64_t kMaxFrames = 10LL * 3600 * 120;
/// Largest motion koma allocates: joints x frames samples (about 17 GB of rotations and translations).
inline constexpr std::int64_t kMaxSamples = std::int64_t{300'000'000};
/// Frame rates koma accepts from files and settings, in frames per second.
inline constexpr double kMinFrameRate = 1.0 / 60.0;  // one frame a minute
inline constexpr double kMaxFrameRate = 100'000.0;

/// Whether `rate` is a finite frame rate within kMinFrameRate..kMaxFrameRate (readers that report
/// their own file:line ask this; others call check_frame_rate).
inline bool valid_frame_rate(double rate) noexcept { return rate >= kMinFrameRate && rate <= kMaxFrameRate; }

/// Throws Error(bad_data, where) unless `frames` frames of `joints` joints fit koma's limits
/// (at least one frame, at most kMaxFrames, at most kMaxSamples samples), saying which limit.
void check_motion_size(std::int64_t frames, std::int64_t joints, const std::string& where);

/// Joint-frames (frames x joints) a file of `file_bytes` bytes may make a reader allocate:
/// 2^20 (1,048,576: ten minutes of a 58-joint take at 30 fps, from any file) plus 4 per byte. What
/// a file declares must be plausible for the bytes that hold it: a 3 KB file cannot make 5 million
/// frames, and a 2 MB file makes at most 9.4 million joint-frames (about 530 MB).
inline std::uint64_t sample_budget(std::uint64_t file_bytes) noexcept {
  const std::uint64_t per_byte = file_bytes > (UINT64_MAX >> 3) ? (UINT64_MAX >> 1) : 4 * file_bytes;
  return (std::uint64_t{1} << 20) + per_byte;
}

/// Throws Error(bad_file, where) unless `frames` frames of `joints` joints fit check_motion_size's
/// limits and sample_budget(file_bytes). `cause` names the field and value the length comes from
/// ("keys up to 216,000 s at 24 fps"); the message says so, with the file's size.
void check_sample_budget(std::int64_t frames, std::int64_t joints, std::uint64_t file_bytes, const std::string& where,
                         const std::string& cause);

/// Throws Error(bad_data, where) unless `rate` is a finite frame rate within kMinFrameRate..kMaxFrameRate.
void check_frame_rate(double rate, const std::string& where);

}  // namespace koma
