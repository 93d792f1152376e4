// koma._koma: the compiled module. Thin: binds the C++ API 1:1 under the same names; the `koma`
// package (python/koma/) re-exports it and adds the Python sugar.
#include "common.hpp"

PYBIND11_MODULE(_koma, m) {
  m.doc() = "koma C++ bindings (use the `koma` package)";
  koma::python::register_errors(m);
  koma::python::bind_core(m);
  koma::python::bind_io(m);
#ifdef KOMA_PY_HAVE_BODY
  koma::python::bind_body(m);  // before keys, cartoon, timing: their settings hold ContactSettings
#endif
#ifdef KOMA_PY_HAVE_TIMING
  koma::python::bind_timing(m);
#endif
#ifdef KOMA_PY_HAVE_KEYS
  koma::python::bind_keys(m);
  koma::python::bind_spacing(m);  // koma.keys: spacing charts
#endif
#ifdef KOMA_PY_HAVE_CARTOON
  koma::python::bind_cartoon(m);
#endif
#ifdef KOMA_PY_HAVE_GAIT
  koma::python::bind_gait(m);
#endif
#ifdef KOMA_PY_HAVE_RENDER
  koma::python::bind_render(m);
#endif
#ifdef KOMA_PY_HAVE_TOON
  koma::python::bind_toon(m);
#endif
#ifdef KOMA_PY_HAVE_BATCH
  koma::python::bind_batch(m);        // after keys and cartoon: its jobs hold their settings
  koma::python::bind_render_file(m);  // after render and toon: its job holds their settings
#endif
}
