// gpuscope.report and gpuscope.diff: the analysis of opened traces or files,
// returned as the JSON documents the CLI writes (gpuscope.report/1,
// gpuscope.diff/1); the Python side parses them into dicts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <deque>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/graph/savings.h"
#include "export/report_json.h"
#include "import/open_trace.h"
#include "python/bindings.h"

namespace gpuscope::python {

namespace {

// One side of an analysis: opened traces and file names, as the caller gave them.
struct Job {
  std::deque<Trace> opened;  // traces this call opened (stable addresses)
  std::vector<JobInput> inputs;
};

// `items`: _Trace objects or paths (str). Must run with the GIL held; opening
// files releases it.
Job job_of(const py::list& items) {
  Job job;
  for (py::handle item : items) {
    if (py::isinstance<PyTrace>(item)) {
      const PyTrace& pt = item.cast<const PyTrace&>();
      job.inputs.push_back({&pt.trace(), pt.path});
      continue;
    }
    const std::string path = item.cast<std::string>();
    {
      py::gil_scoped_release unlocked;
      job.opened.push_back(open_trace(path));
    }
    job.inputs.push_back({&job.opened.back(), path});
  }
  if (job.inputs.empty()) throw py::value_error("no trace given");
  return job;
}

AnalysisOptions options_of(long long device) {
  AnalysisOptions o;
  if (device >= 0) o.device = static_cast<std::uint32_t>(device);
  return o;
}

std::string report(const py::list& items, long long device, std::size_t top, std::size_t steps) {
  Job job = job_of(items);
  py::gil_scoped_release unlocked;
  const Profile p = graph::analyze_and_simulate(job.inputs, options_of(device));
  ReportJsonOptions o;
  o.top = top;
  o.max_steps = steps;
  o.pretty = false;
  return report_json(p, o);
}

// A side of a diff: traces (items) or a saved report's text (labelled).
Profile profile_of(const py::list& items, const std::string& report_text, const std::string& label, long long device) {
  if (!items.empty() || report_text.empty()) {
    Job job = job_of(items);
    py::gil_scoped_release unlocked;
    Profile p = graph::analyze_and_simulate(job.inputs, options_of(device));
    if (job.inputs.size() > 1 && !label.empty()) p.files = {label};
    return p;
  }
  Profile p = parse_report_json(report_text, label);
  if (p.files.empty()) p.files.push_back(label);
  return p;
}

std::string diff(const py::list& a_items, const std::string& a_report, const std::string& a_label,
                 const py::list& b_items, const std::string& b_report, const std::string& b_label, std::size_t top,
                 long long device) {
  const Profile before = profile_of(a_items, a_report, a_label, device);
  const Profile after = profile_of(b_items, b_report, b_label, device);
  py::gil_scoped_release unlocked;
  return diff_json(diff_profiles(before, after, top), false);
}

}  // namespace

void bind_analysis(py::module_& m) {
  m.def("_report", &report, py::arg("items"), py::arg("device") = -1, py::arg("top") = 0, py::arg("steps") = 0,
        "gpuscope.report/1 JSON of the traces (_Trace objects or paths) analysed as one job");
  m.def("_diff", &diff, py::arg("a_items"), py::arg("a_report"), py::arg("a_label"), py::arg("b_items"),
        py::arg("b_report"), py::arg("b_label"), py::arg("top") = 15, py::arg("device") = -1,
        "gpuscope.diff/1 JSON of two sides, each traces or a saved report's text");
  m.def(
      "_looks_like_report", [](const py::bytes& head) { return looks_like_report_json(std::string(head)); },
      py::arg("head"), "Whether the first bytes of a file start a gpuscope.report/1 document");
}

}  // namespace gpuscope::python
