// The one translator from koma::Error to Python exceptions (docs/errors.md):
//   invalid_settings -> koma.InvalidSettingsError (a ValueError)
//   bad_file -> koma.BadFileError, bad_data -> koma.BadDataError, mismatch -> koma.MismatchError
//   io -> koma.FileSystemError (an OSError)
// All derive from koma.Error and carry the same text as the C++ what() ("<context>: <message>"),
// plus .code, .context and .message.
#include <Python.h>

#include "common.hpp"
#include "koma/core/error.hpp"

namespace koma::python {

namespace {

struct ErrorTypes {
  py::handle base, bad_file, bad_data, mismatch, invalid_settings, io;
};

ErrorTypes& types() {
  static ErrorTypes t;  // owned references, kept for the interpreter's lifetime
  return t;
}

py::handle new_type(py::module_& m, const char* name, py::handle bases, const char* doc) {
  const std::string qualified = std::string("koma.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // add_object steals nothing: increments
  return type;
}

}  // namespace

void register_errors(py::module_& m) {
  auto& t = types();
  t.base = new_type(m, "Error", PyExc_Exception, "Base of every koma error; has .code, .context, .message.");
  const auto one = [&](py::handle extra) {
    return extra ? py::tuple(py::make_tuple(t.base, extra)) : py::tuple(py::make_tuple(t.base));
  };
  t.bad_file = new_type(m, "BadFileError", one({}), "A file is malformed: syntax, truncation, unsupported content.");
  t.bad_data = new_type(m, "BadDataError", one({}), "Well-formed input holding unusable values.");
  t.mismatch = new_type(m, "MismatchError", one({}), "Inputs that must agree do not (skeletons, frame counts).");
  t.invalid_settings = new_type(m, "InvalidSettingsError", one(PyExc_ValueError),
                                "A setting is out of range or contradicts another (a ValueError).");
  t.io = new_type(m, "FileSystemError", one(PyExc_OSError),
                  "The file system refused: cannot open, read, write or rename (an OSError).");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const koma::Error& e) {
      const auto& tt = types();
      py::handle type = tt.base;
      switch (e.code()) {
        case ErrorCode::bad_file: type = tt.bad_file; break;
        case ErrorCode::bad_data: type = tt.bad_data; break;
        case ErrorCode::mismatch: type = tt.mismatch; break;
        case ErrorCode::invalid_settings: type = tt.invalid_settings; break;
        case ErrorCode::io: type = tt.io; break;
      }
      py::object exc = type(py::str(e.what()));
      exc.attr("code") = py::str(std::string(to_string(e.code())));
      exc.attr("context") = py::str(e.context());
      exc.attr("message") = py::str(e.message());
      PyErr_SetObject(type.ptr(), exc.ptr());
    }
  });
}

}  // namespace koma::python
