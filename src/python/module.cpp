// gpuscope._gpuscope: the extension module behind `import gpuscope`.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>

#include "python/bindings.h"
#include "trace/error.h"

namespace gpuscope::python {

// TraceError carries the message `gpuscope` prints after "gpuscope: error: "
// (file, byte offset when known, problem; on one line), and the parts.
void bind_errors(py::module_& m) {
  static py::exception<InputError> trace_error(m, "TraceError", PyExc_Exception);
  trace_error.doc() =
      "A trace (or report) that cannot be read. str() is the message the gpuscope CLI prints: "
      "'<file>: <problem>'; .file, .reason and .offset (None when unknown) are its parts.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      std::string message = e.what();
      std::replace(message.begin(), message.end(), '\n', ' ');
      py::object error = py::handle(trace_error.ptr())(text(message));  // an instance, to carry the parts
      error.attr("file") = text(e.file());
      error.attr("reason") = text(e.reason());
      error.attr("offset") = e.offset() == InputError::kNoOffset ? py::object(py::none()) : py::int_(e.offset());
      PyErr_SetObject(trace_error.ptr(), error.ptr());
    }
  });
}

}  // namespace gpuscope::python

PYBIND11_MODULE(_gpuscope, m) {
  namespace gp = gpuscope::python;
  m.doc() = "gpuscope's C++ core; use the `gpuscope` package, which wraps it.";
  m.attr("__version__") = GPUSCOPE_VERSION_STRING;
  gp::bind_errors(m);
  gp::bind_trace(m);
  gp::bind_analysis(m);
}
