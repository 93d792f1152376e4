#include "gl_context.hpp"

#include <dlfcn.h>
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include <fmt/format.h>

#include <cstring>

#include "koma/core/error.hpp"

namespace koma::toon::detail {

namespace {

constexpr const char* kWhere = "toon renderer";

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorCode::io, kWhere, message); }

bool has_word(const char* list, const char* word) {
  if (!list) return false;
  const size_t n = std::strlen(word);
  for (const char* p = std::strstr(list, word); p; p = std::strstr(p + 1, word)) {
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  }
  return false;
}

}  // namespace

GlContext::GlContext() {
  // libepoxy aborts the process when it cannot load libEGL: look for it first, so a machine
  // without it gets an error (and the caller its fall-back) instead.
  void* egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_GLOBAL);
  if (!egl) fail("cannot load libEGL.so.1: install the Debian packages libegl1 and libegl-mesa0");
  const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!has_word(client, "EGL_MESA_platform_surfaceless") || !has_word(client, "EGL_EXT_platform_base"))
    fail("EGL offers no headless (surfaceless) platform: install the Debian package libegl-mesa0 (Mesa's EGL)");
  EGLDisplay display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  EGLint major = 0, minor = 0;
  if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor))
    fail(fmt::format("cannot open an EGL display (EGL error 0x{:x}): install the Debian packages libegl-mesa0 and "
                     "libgl1-mesa-dri (Mesa's drivers, llvmpipe on the CPU)",
                     eglGetError()));
  if (!eglBindAPI(EGL_OPENGL_API)) fail("EGL cannot bind OpenGL: install the Debian package libgl1-mesa-dri");
  const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                          EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
  if (context == EGL_NO_CONTEXT)
    fail(fmt::format("no OpenGL 3.3 core context (EGL error 0x{:x}): install the Debian package libgl1-mesa-dri",
                     eglGetError()));
  if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    eglDestroyContext(display, context);
    fail(fmt::format("cannot make the OpenGL context current (EGL error 0x{:x})", eglGetError()));
  }
  display_ = display;
  context_ = context;
}

GlContext::~GlContext() {
  // The display stays initialised: EGL displays are shared by the whole process, and terminating
  // one would pull the context from under any other renderer.
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display_, context_);
  // And the thread's EGL state goes with it. A batch renders on pool threads that outlive the
  // context; without this, such a thread's state was freed at exit by both the thread and libEGL's
  // destructor, racing ('double free or corruption' in 4 of 6 `koma batch render --jobs 2` runs).
  eglReleaseThread();
}

void GlContext::make_current() const {
  if (eglGetCurrentContext() == context_) return;
  if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_))
    fail(fmt::format("cannot make the OpenGL context current (EGL error 0x{:x})", eglGetError()));
}

std::string GlContext::renderer() const {
  make_current();
  const auto* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const auto* v = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  return fmt::format("{}; {}", r ? r : "?", v ? v : "?");
}

}  // namespace koma::toon::detail
