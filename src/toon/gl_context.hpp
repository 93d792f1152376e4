// Private to src/toon: a headless OpenGL 3.3 core context through EGL (Mesa's surfaceless
// platform). libepoxy resolves every GL and EGL entry point.
#pragma once

#include <string>

namespace koma::toon::detail {

/// An EGL display and an OpenGL 3.3 core context, current on the creating thread.
class GlContext {
 public:
  /// Throws Error(io) naming the Debian package that is missing (libegl1, libegl-mesa0,
  /// libgl1-mesa-dri) when no context can be made.
  GlContext();
  ~GlContext();
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  /// Makes the context current on this thread (cheap when it already is).
  void make_current() const;
  /// "GL_RENDERER; GL_VERSION".
  std::string renderer() const;

 private:
  void* display_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace koma::toon::detail
