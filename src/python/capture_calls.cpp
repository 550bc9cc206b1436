// gpuscope._capture: the in-process CUPTI capture (gpuscope/capture.h) for
// Python programs, an extension of its own. Only CUDA builds have it, and it
// links CUPTI: the package imports it when a capture starts, never on
// `import gpuscope`, so analysis runs where CUDA is not installed. Without it
// (or without CUPTI) gpuscope.capture raises CaptureError saying why.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "gpuscope/capture.h"
#include "python/bindings.h"

namespace gpuscope::python {

namespace {

py::dict summary_dict(const capture::Summary& s) {
  py::dict d;
  d["ok"] = s.ok;
  d["message"] = text(s.message);
  d["output"] = text(s.output);
  for (const auto& [key, count] : capture::kSummaryCounts) d[key] = s.*count;
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

}  // namespace

}  // namespace gpuscope::python

PYBIND11_MODULE(_capture, m) {
  namespace gp = gpuscope::python;
  namespace py = pybind11;
  m.doc() = "gpuscope's in-process CUPTI capture; use gpuscope.capture, which wraps it.";
  m.def("start", &gp::start, py::arg("output"), py::arg("trace"), py::arg("capture_range"), py::arg("delay_s"),
        py::arg("duration_s"), py::arg("buffer_kb"), py::arg("pool_mb"), py::arg("flush_ms"),
        "capture::start(); returns its Summary as a dict (ok False and a message when it cannot)");
  m.def("stop", &gp::stop, "capture::stop(); returns its Summary as a dict");
}
