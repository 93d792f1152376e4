// Shared helpers of the koma._koma bindings: zero-copy numpy views and kwargs-constructible settings.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "koma/core/rotation.hpp"

namespace koma::python {

namespace py = pybind11;

static_assert(sizeof(Quat) == 4 * sizeof(double), "Quat must be 4 packed doubles (x, y, z, w)");
static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be 3 packed doubles");

/// Number of doubles per element of the element type: 4 for Quat, 3 for Vec3.
template <class T>
constexpr py::ssize_t kWidth = sizeof(T) / sizeof(double);

/// A numpy view [rows x cols x width] of a contiguous vector of Quat or Vec3. No copy: the array
/// points into the vector and keeps `owner` (the Python object holding the vector) alive.
template <class T>
py::array_t<double> view(std::vector<T>& values, py::ssize_t rows, py::ssize_t cols, py::handle owner) {
  constexpr auto d = static_cast<py::ssize_t>(sizeof(double));
  return py::array_t<double>({rows, cols, kWidth<T>}, {cols * kWidth<T> * d, kWidth<T> * d, d},
                             reinterpret_cast<double*>(values.data()), owner);
}

/// A numpy view [rows x width] (one row per element).
template <class T>
py::array_t<double> view(std::vector<T>& values, py::ssize_t rows, py::handle owner) {
  constexpr auto d = static_cast<py::ssize_t>(sizeof(double));
  return py::array_t<double>({rows, kWidth<T>}, {kWidth<T> * d, d}, reinterpret_cast<double*>(values.data()),
                             owner);
}

/// Copies `array` (any shape with values.size() * width numbers in C order) into `values` when the
/// sizes agree; throws ValueError naming `what` and the expected shape otherwise. Assigning never
/// reallocates, so existing views stay valid.
template <class T>
void assign(std::vector<T>& values, const py::array_t<double, py::array::c_style | py::array::forcecast>& array,
            const char* what, const std::string& shape) {
  const auto n = static_cast<py::ssize_t>(values.size()) * kWidth<T>;
  if (array.size() != n || array.ndim() == 0 || array.shape(array.ndim() - 1) != kWidth<T>) {
    throw py::value_error(std::string(what) + ": expected an array of shape " + shape);
  }
  std::memcpy(static_cast<void*>(values.data()), array.data(), static_cast<size_t>(n) * sizeof(double));
}

/// Fills a new vector of `count` elements from an array of `count * width` numbers (last axis = width).
template <class T>
std::vector<T> from_array(const py::array_t<double, py::array::c_style | py::array::forcecast>& array,
                          py::ssize_t count, const char* what, const std::string& shape) {
  std::vector<T> values(static_cast<size_t>(count));
  assign(values, array, what, shape);
  return values;
}

/// Throws IndexError naming `what`, the index and the valid range unless 0 <= index < count.
inline void check_index(long long index, long long count, const char* what) {
  if (index < 0 || index >= count) {
    throw py::index_error(std::string(what) + ": index " + std::to_string(index) + " out of range [0, " +
                          std::to_string(count) + ")");
  }
}

/// Throws ValueError naming `what` unless every element of `values` is finite (NaN / inf make
/// searches that loop on values never end).
template <class T>
void check_finite(const std::vector<T>& values, const char* what) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].allFinite()) {
      throw py::value_error(std::string(what) + ": expected finite values, row " + std::to_string(i) +
                            " holds NaN or inf");
    }
  }
}

/// Adds `__init__(**fields)` to a settings class: a default object with the named fields set, so
/// Python spells settings as in C++ (`KeySettings(keys=12, min_hold=2)`). Unknown names raise TypeError.
template <class T, class... Extra>
void def_kwargs_init(py::class_<T, Extra...>& cls) {
  cls.def(py::init([](const py::kwargs& fields) {
            T value{};
            py::object ref = py::cast(&value, py::return_value_policy::reference);
            for (const auto& [key, item] : fields) {
              const auto name = py::cast<std::string>(key);
              if (!py::hasattr(ref, name.c_str()) || name.starts_with("_")) {
                throw py::type_error(std::string(py::str(py::type::of(ref).attr("__name__"))) +
                                     ": unknown setting '" + name + "'");
              }
              py::setattr(ref, name.c_str(), item);
            }
            return value;
          }),
          "Default settings, with any field given by name overriding its default.");
}

/// Registers koma::Error translation (errors.cpp).
void register_errors(py::module_& m);
void bind_core(py::module_& m);
void bind_io(py::module_& m);
void bind_body(py::module_& m);     // bind_body.cpp, when koma::body is built
void bind_keys(py::module_& m);     // bind_keys.cpp, when koma::keys is built
void bind_spacing(py::module_& m);  // bind_spacing.cpp, with keys (into koma.keys)
void bind_timing(py::module_& m);   // bind_timing.cpp, when koma::timing is built
void bind_cartoon(py::module_& m);  // bind_cartoon.cpp, when koma::cartoon is built
void bind_gait(py::module_& m);     // bind_gait.cpp, when koma::gait is built
void bind_batch(py::module_& m);    // bind_batch.cpp, when koma::batch is built
void bind_render(py::module_& m);   // bind_render.cpp, when koma::render is built
void bind_toon(py::module_& m);     // bind_toon.cpp, when koma::toon is built
void bind_render_file(py::module_& m);  // bind_render_file.cpp, with batch (into koma._batch)

}  // namespace koma::python
