// The C++ half of `import gpuscope` (the Python half is gpuscope/__init__.py,
// which turns what this returns into pandas DataFrames and dicts).
//
// A PyTrace owns one opened trace. Column arrays handed to numpy point into
// its tables, with the Python object that holds the PyTrace as their base, so
// the trace lives as long as any array of it. The arrays are read-only: a
// Trace is immutable.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "import/trace_info.h"

namespace gpuscope::python {

namespace py = pybind11;

// Text from a trace (names, messages) as a Python str: invalid UTF-8, which
// untrusted files may hold, becomes U+FFFD instead of an exception.
inline py::str text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

struct PyTrace {
  std::string path;
  TraceFile file;
  const Trace& trace() const { return file.trace; }
};

// Each registers its part of the module `gpuscope._gpuscope`.
void bind_errors(py::module_& m);    // gpuscope.TraceError
void bind_trace(py::module_& m);     // _open, the _Trace class, its columns
void bind_analysis(py::module_& m);  // _report, _diff

}  // namespace gpuscope::python
