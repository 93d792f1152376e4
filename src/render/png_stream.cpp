// The streaming PNG writer (libpng, private to this file). libpng reports errors by longjmp, so
// every call into it happens in a small function without C++ objects to unwind; the error text is
// kept and turned into a koma::Error by the caller.
#include <png.h>

#include <fmt/format.h>

#include <csetjmp>
#include <cstdio>
#include <string>

#include "koma/core/error.hpp"
#include "koma/render/encode.hpp"

namespace koma::render {

namespace fs = std::filesystem;

struct PngStreamWriter::Impl {
  AtomicFile file;
  std::FILE* out = nullptr;
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[256] = {};

  explicit Impl(fs::path path) : file(std::move(path)) {}
  ~Impl() {
    if (png) png_destroy_write_struct(&png, info ? &info : nullptr);
    if (out) std::fclose(out);
  }
};

namespace {

void on_error(png_structp png, png_const_charp text) {
  auto* m = static_cast<char*>(png_get_error_ptr(png));
  std::snprintf(m, 256, "%s", text ? text : "libpng error");
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

// Each of these returns false when libpng failed (the message is in the error buffer).
bool png_begin(png_structp png, png_infop info, std::FILE* out, int width, int height) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, out);
  png_set_compression_level(png, 3);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  return true;
}
bool png_rows(png_structp png, const std::uint8_t* rgb, int rows, int width) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int r = 0; r < rows; ++r) png_write_row(png, rgb + static_cast<size_t>(r) * width * 3);
  return true;
}
bool png_end(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_write_end(png, info);
  return true;
}

}  // namespace

PngStreamWriter::PngStreamWriter(fs::path path, int width, int height) : width_(width), height_(height) {
  if (width < 1 || height < 1 || width > 1000000 || height > 1000000) {
    throw Error(ErrorCode::invalid_settings, path.string(), fmt::format("a {}x{} PNG is not a picture koma writes", width, height));
  }
  impl_ = std::make_unique<Impl>(path);
  impl_->out = std::fopen(impl_->file.temp_path().c_str(), "wb");
  if (!impl_->out) throw Error(ErrorCode::io, path.string(), "cannot create the file");
  impl_->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, impl_->message, on_error, on_warning);
  if (impl_->png) impl_->info = png_create_info_struct(impl_->png);
  if (!impl_->png || !impl_->info) throw Error(ErrorCode::io, path.string(), "libpng could not start");
  if (!png_begin(impl_->png, impl_->info, impl_->out, width, height)) throw Error(ErrorCode::io, path.string(), impl_->message);
}

PngStreamWriter::~PngStreamWriter() = default;

void PngStreamWriter::add_rows(std::span<const std::uint8_t> rgb) {
  KOMA_ASSERT(impl_->png);
  const size_t row = static_cast<size_t>(width_) * 3;
  const fs::path& dest = impl_->file.destination();
  if (rgb.size() % row != 0) {
    throw Error(ErrorCode::mismatch, dest.string(), fmt::format("{} bytes are not whole rows of {} pixels", rgb.size(), width_));
  }
  const int rows = static_cast<int>(rgb.size() / row);
  if (rows > height_ - rows_) {
    throw Error(ErrorCode::mismatch, dest.string(), fmt::format("{} rows more than the {} declared", rows_ + rows - height_, height_));
  }
  if (!png_rows(impl_->png, rgb.data(), rows, width_)) throw Error(ErrorCode::io, dest.string(), impl_->message);
  rows_ += rows;
}

void PngStreamWriter::finish() {
  KOMA_ASSERT(impl_->png);
  const fs::path& dest = impl_->file.destination();
  if (rows_ != height_) throw Error(ErrorCode::mismatch, dest.string(), fmt::format("{} of {} rows written", rows_, height_));
  if (!png_end(impl_->png, impl_->info)) throw Error(ErrorCode::io, dest.string(), impl_->message);
  png_destroy_write_struct(&impl_->png, &impl_->info);
  impl_->png = nullptr;
  impl_->info = nullptr;
  const bool ok = std::fflush(impl_->out) == 0;
  const bool closed = std::fclose(impl_->out) == 0;
  impl_->out = nullptr;
  if (!ok || !closed) throw Error(ErrorCode::io, dest.string(), "write failed (disk full?)");
  impl_->file.commit();
}

}  // namespace koma::render
