// The library's JSON reports (nlohmann::json) as Python dicts and lists, through the json module.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace koma::python {

/// `doc` as plain Python objects (dict, list, str, float, int, bool, None).
inline pybind11::object to_python(const nlohmann::json& doc) {
  return pybind11::module_::import("json").attr("loads")(doc.dump());
}

}  // namespace koma::python
