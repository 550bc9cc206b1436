// gpuscope.capture: the in-process CUPTI capture (gpuscope/capture.h) for
// Python programs. Only CUDA builds have it; elsewhere _capture_start answers
// with a summary that says why there is no capture, and the Python side
// raises gpuscope.CaptureError with that message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/bindings.h"

#ifdef GPUSCOPE_HAVE_CAPTURE
#include "gpuscope/capture.h"
#endif

namespace gpuscope::python {

namespace {

#ifdef GPUSCOPE_HAVE_CAPTURE

py::dict summary_dict(const capture::Summary& s) {
  py::dict d;
  d["ok"] = s.ok;
  d["message"] = text(s.message);
  d["output"] = text(s.output);
  d["kernels"] = s.kernels;
  d["memcpys"] = s.memcpys;
  d["memsets"] = s.memsets;
  d["api_calls"] = s.api_calls;
  d["ranges"] = s.ranges;
  d["syncs"] = s.syncs;
  d["overheads"] = s.overheads;
  d["dropped_records"] = s.dropped_records;
  d["invalid_timestamps"] = s.invalid_timestamps;
  d["overhead_ns"] = s.overhead_ns;
  d["bytes_written"] = s.bytes_written;
  d["pool_peak_bytes"] = s.pool_peak_bytes;
  return d;
}

unsigned trace_flags(const std::vector<std::string>& kinds) {
  if (kinds.empty()) return capture::kAllTraces;
  unsigned flags = 0;
  for (const std::string& k : kinds) {
    if (k == "kernel")
      flags |= capture::kKernel;
    else if (k == "memcpy")
      flags |= capture::kMemcpy;
    else if (k == "api")
      flags |= capture::kApi;
    else if (k == "nvtx")
      flags |= capture::kNvtx;
    else if (k == "sync")
      flags |= capture::kSync;
    else
      throw py::value_error("trace: unknown kind '" + k + "' (kernel, memcpy, api, nvtx, sync)");
  }
  return flags;
}

py::dict start(const std::string& output, const std::vector<std::string>& trace, const std::string& capture_range,
               double delay_s, double duration_s, std::size_t buffer_kb, std::size_t pool_mb, unsigned flush_ms) {
  capture::Options o;
  o.output = output;
  o.trace = trace_flags(trace);
  o.capture_range = capture_range;
  o.delay_s = delay_s;
  o.duration_s = duration_s;
  o.buffer_kb = buffer_kb;
  o.pool_mb = pool_mb;
  o.flush_ms = flush_ms;
  capture::Summary s;
  {
    py::gil_scoped_release unlocked;
    s = capture::start(o);
  }
  return summary_dict(s);
}

py::dict stop() {
  capture::Summary s;
  {
    py::gil_scoped_release unlocked;
    s = capture::stop();
  }
  return summary_dict(s);
}

#else

constexpr const char* kNoCapture =
    "this gpuscope was built without CUDA support: capture needs a build with the CUDA toolkit and CUPTI "
    "(CMake GPUSCOPE_CUDA=AUTO or ON); nothing was captured";

py::dict no_capture() {
  py::dict d;
  d["ok"] = false;
  d["message"] = kNoCapture;
  d["output"] = "";
  return d;
}

py::dict start(const std::string&, const std::vector<std::string>&, const std::string&, double, double, std::size_t,
               std::size_t, unsigned) {
  return no_capture();
}

py::dict stop() { return no_capture(); }

#endif

}  // namespace

void bind_capture(py::module_& m) {
#ifdef GPUSCOPE_HAVE_CAPTURE
  m.attr("_capture_built") = true;
#else
  m.attr("_capture_built") = false;
#endif
  m.def("_capture_start", &start, py::arg("output"), py::arg("trace"), py::arg("capture_range"), py::arg("delay_s"),
        py::arg("duration_s"), py::arg("buffer_kb"), py::arg("pool_mb"), py::arg("flush_ms"),
        "capture::start(); returns its Summary as a dict (ok False and a message when it cannot)");
  m.def("_capture_stop", &stop, "capture::stop(); returns its Summary as a dict");
}

}  // namespace gpuscope::python
