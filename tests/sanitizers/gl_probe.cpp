// sanitizers.mesa_llvmpipe_clean (asan preset): Mesa's llvmpipe through headless EGL, driven by a
// program built with ASan + UBSan: a GL 3.3 core context, a framebuffer, a shader, one triangle
// read back. It must run without a sanitizer report, so that the toon renderer's tests under ASan
// test koma's code and not Mesa's (tests/sanitizers/asan.supp would hold what Mesa needs; nothing
// so far). Exits 77 (skipped) when no EGL display or context can be had.
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int kSize = 64;

GLuint shader(GLenum kind, const char* source) {
  const GLuint s = glCreateShader(kind);
  glShaderSource(s, 1, &source, nullptr);
  glCompileShader(s);
  return s;
}

void draw_triangle() {
  GLuint framebuffer = 0, colour = 0;
  glGenFramebuffers(1, &framebuffer);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glGenRenderbuffers(1, &colour);
  glBindRenderbuffer(GL_RENDERBUFFER, colour);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, kSize, kSize);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colour);
  const GLuint program = glCreateProgram();
  glAttachShader(program, shader(GL_VERTEX_SHADER, "#version 330 core\nlayout(location = 0) in vec2 p;\n"
                                                   "void main() { gl_Position = vec4(p, 0, 1); }\n"));
  glAttachShader(program, shader(GL_FRAGMENT_SHADER, "#version 330 core\nout vec4 colour;\n"
                                                     "void main() { colour = vec4(1, 0.5, 0, 1); }\n"));
  glLinkProgram(program);
  glUseProgram(program);
  const float corners[] = {-1, -1, 1, -1, 0, 1};
  GLuint vertex_array = 0, buffer = 0;
  glGenVertexArrays(1, &vertex_array);
  glBindVertexArray(vertex_array);
  glGenBuffers(1, &buffer);
  glBindBuffer(GL_ARRAY_BUFFER, buffer);
  glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glEnableVertexAttribArray(0);
  glViewport(0, 0, kSize, kSize);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  glDrawArrays(GL_TRIANGLES, 0, 3);
}

}  // namespace

int main() {
  EGLDisplay display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  EGLint major = 0, minor = 0;
  if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor)) {
    std::puts("no EGL display: skipped");
    return 77;
  }
  eglBindAPI(EGL_OPENGL_API);
  const EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
  if (context == EGL_NO_CONTEXT || !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    std::puts("no OpenGL 3.3 core context: skipped");
    return 77;
  }
  std::printf("renderer: %s\n", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  draw_triangle();
  std::vector<unsigned char> pixels(kSize * kSize * 4);
  glReadPixels(0, 0, kSize, kSize, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  const unsigned char* centre = &pixels[(kSize / 2 * kSize + kSize / 2) * 4];
  std::printf("centre pixel %d %d %d, GL error 0x%x\n", centre[0], centre[1], centre[2], glGetError());
  eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display, context);
  return centre[0] == 255 && centre[1] == 128 && centre[2] == 0 ? 0 : 1;  // else the triangle is missing
}
