// gpuscope.report, gpuscope.diff and gpuscope.whatif: the analysis of opened
// traces or files, returned as the JSON documents the CLI writes
// (gpuscope.report/1, gpuscope.diff/1, gpuscope.whatif/1); the Python side
// parses them into dicts. A job given as paths only (a directory of rank
// traces) goes through the CLI's pipeline (job/job_files.h): one file per
// worker in memory at a time, files that cannot be analysed left out.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "analysis/graph/savings.h"
#include "analysis/graph/whatif.h"
#include "export/report_json.h"
#include "export/stats_tables.h"
#include "export/trace_inputs.h"
#include "export/whatif_report.h"
#include "import/open_trace.h"
#include "job/job_files.h"
#include "python/bindings.h"
#include "trace/error.h"

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

// The options of `device` (-1: every GPU). A GPU the job has no activity on
// raises ValueError with the CLI's message (job/job_files.cpp), where the CLI exits 2.
AnalysisOptions options_of(const Job& job, long long device) {
  AnalysisOptions o;
  if (device < 0) return o;
  std::set<std::uint32_t> seen;
  for (const JobInput& in : job.inputs)
    for (const Track& tr : in.trace->tracks())
      if (tr.kind == TrackKind::gpu) seen.insert(tr.device);
  if (device > std::numeric_limits<std::uint32_t>::max() || !seen.count(static_cast<std::uint32_t>(device))) {
    std::string have;
    for (std::uint32_t d : seen) have += (have.empty() ? "" : ", ") + std::to_string(d);
    throw py::value_error(job.inputs.front().file + (job.inputs.size() > 1 ? " …" : "") + ": no GPU " +
                          std::to_string(device) + " (GPUs with activity: " + (have.empty() ? "none" : have) + ")");
  }
  o.device = static_cast<std::uint32_t>(device);
  return o;
}

// [(file, problem)] from Python: what the listing of directories left out
// (_trace_inputs), first in the profile's left_out as the CLI puts them.
std::vector<LeftOut> left_out_of(const std::vector<std::pair<std::string, std::string>>& listed) {
  std::vector<LeftOut> out;
  for (const auto& [file, problem] : listed) out.push_back({file, problem});
  return out;
}

// The paths of `items` when it holds paths only (no _Trace); nullopt otherwise.
std::optional<std::vector<std::string>> paths_of(const py::list& items) {
  std::vector<std::string> paths;
  for (py::handle item : items) {
    if (!py::isinstance<py::str>(item)) return std::nullopt;
    paths.push_back(item.cast<std::string>());
  }
  if (paths.empty()) return std::nullopt;
  return paths;
}

// A job of paths, analysed as `gpuscope report` does (job::analyze_job): each
// file opened, digested and freed, the ones that cannot be analysed left out
// with why. A GPU no file has raises ValueError; nothing to analyse, or files
// of different runs, TraceError. Must run with the GIL held; it releases it.
Profile analyze_paths(const std::vector<std::string>& paths, long long device,
                      const std::vector<std::pair<std::string, std::string>>& listed) {
  job::JobOptions o;
  if (device > std::numeric_limits<std::uint32_t>::max())
    throw py::value_error(paths.front() + (paths.size() > 1 ? " …" : "") + ": no GPU " + std::to_string(device));
  if (device >= 0) o.analysis.device = static_cast<std::uint32_t>(device), o.device_given = true;
  o.left_out = left_out_of(listed);
  try {
    py::gil_scoped_release unlocked;
    return job::analyze_job(paths, o);
  } catch (const job::NoDevice& e) {
    throw py::value_error(e.what());
  } catch (const job::Error& e) {
    throw InputError(e.file(), e.problem());
  }
}

std::string report(const py::list& items, long long device, std::size_t top, std::size_t steps,
                   const std::vector<std::pair<std::string, std::string>>& listed) {
  Profile p;
  if (const auto paths = paths_of(items)) {
    p = analyze_paths(*paths, device, listed);
  } else {
    Job job = job_of(items);
    const AnalysisOptions options = options_of(job, device);
    py::gil_scoped_release unlocked;
    p = graph::analyze_and_simulate(job.inputs, options);
    const std::vector<LeftOut> left = left_out_of(listed);
    p.left_out.insert(p.left_out.begin(), left.begin(), left.end());
  }
  py::gil_scoped_release unlocked;
  ReportJsonOptions o;
  o.top = top;
  o.max_steps = steps;
  o.pretty = false;
  return report_json(p, o);
}

// A side of a diff: traces (items) or a saved report's text (labelled).
Profile profile_of(const py::list& items, const std::string& report_text, const std::string& label, long long device,
                   const std::vector<std::pair<std::string, std::string>>& listed) {
  if (const auto paths = paths_of(items)) {
    Profile p = analyze_paths(*paths, device, listed);
    if (paths->size() > 1 && !label.empty()) p.files = {label};
    return p;
  }
  if (!items.empty() || report_text.empty()) {
    Job job = job_of(items);
    const AnalysisOptions options = options_of(job, device);
    py::gil_scoped_release unlocked;
    Profile p = graph::analyze_and_simulate(job.inputs, options);
    const std::vector<LeftOut> left = left_out_of(listed);
    p.left_out.insert(p.left_out.begin(), left.begin(), left.end());
    if (job.inputs.size() > 1 && !label.empty()) p.files = {label};
    return p;
  }
  if (device >= 0) throw py::value_error(label + ": --device applies to traces; this is a saved report");
  Profile p = parse_report_json(report_text, label);
  if (p.files.empty()) p.files.push_back(label);
  return p;
}

std::string diff(const py::list& a_items, const std::string& a_report, const std::string& a_label,
                 const std::vector<std::pair<std::string, std::string>>& a_listed, const py::list& b_items,
                 const std::string& b_report, const std::string& b_label,
                 const std::vector<std::pair<std::string, std::string>>& b_listed, std::size_t top, long long device) {
  const Profile before = profile_of(a_items, a_report, a_label, device, a_listed);
  const Profile after = profile_of(b_items, b_report, b_label, device, b_listed);
  py::gil_scoped_release unlocked;
  return diff_json(diff_profiles(before, after, top), false);
}

// `gpuscope whatif FILE --remove R… --scale S… FLAGS… --json` of one trace
// (a _Trace or a path). A change that cannot be (unknown category, bad
// factor) or matches nothing raises ValueError with the CLI's message.
std::string whatif(const py::object& item, const std::vector<std::string>& remove,
                   const std::vector<std::string>& scale, const std::vector<std::string>& flags, std::size_t top) {
  py::list items;
  items.append(item);
  Job job = job_of(items);
  const std::string& file = job.inputs.front().file;
  py::gil_scoped_release unlocked;
  std::vector<graph::Change> changes;
  try {
    for (const std::string& r : remove) changes.push_back(graph::parse_remove(r));
    for (const std::string& sc : scale) changes.push_back(graph::parse_scale(sc));
    for (const std::string& f : flags) {
      const std::vector<graph::Change> one = graph::parse_changes(f);
      changes.insert(changes.end(), one.begin(), one.end());
    }
    graph::order_changes(changes);
    graph::WhatIfOptions o;
    o.top_ops = top;
    const Trace& trace = *job.inputs.front().trace;
    const graph::WhatIf w = graph::what_if(trace, changes, o);
    return whatif_json(w, whatif_header(trace, file));
  } catch (const graph::ChangeError& e) {
    throw py::value_error(file + ": " + e.what());  // raised once the call holds the GIL again
  }
}

// gpuscope.stats/1 JSON of one trace: the nsys-stats-style tables `names`
// (report names, "all"; empty: the default set), as `gpuscope stats --json`.
std::string stats(const py::list& items, const std::vector<std::string>& names, long long device) {
  Job job = job_of(items);
  if (job.inputs.size() != 1) throw py::value_error("stats takes one trace, not " + std::to_string(job.inputs.size()));
  StatsOptions o;
  for (const std::string& name : names) {
    if (name == "all") {
      const auto all = all_stats_reports();
      o.reports.insert(o.reports.end(), all.begin(), all.end());
      continue;
    }
    StatsReport r{};
    if (!parse_stats_report(name, &r)) {
      std::string known;
      for (StatsReport k : all_stats_reports()) known += (known.empty() ? "" : ", ") + std::string(to_string(k));
      throw py::value_error("unknown stats report '" + name + "' (one of " + known + ", all)");
    }
    o.reports.push_back(r);
  }
  if (o.reports.empty()) {
    const auto d = default_stats_reports();
    o.reports.assign(d.begin(), d.end());
  }
  const AnalysisOptions options = options_of(job, device);
  o.device = options.device;
  const Trace& trace = *job.inputs.front().trace;
  py::gil_scoped_release unlocked;
  // Steps come from the analysis: run it only when they are asked for.
  const bool steps = std::find(o.reports.begin(), o.reports.end(), StatsReport::steps) != o.reports.end();
  Profile profile;
  if (steps) profile = analyze(trace, options);
  return stats_json(stats_tables(trace, steps ? &profile : nullptr, o), job.inputs.front().file);
}

}  // namespace

void bind_analysis(py::module_& m) {
  m.def("_stats", &stats, py::arg("items"), py::arg("reports"), py::arg("device") = -1,
        "gpuscope.stats/1 JSON of one trace (a _Trace or a path)");
  m.def("_report", &report, py::arg("items"), py::arg("device") = -1, py::arg("top") = 0, py::arg("steps") = 0,
        py::arg("listed") = std::vector<std::pair<std::string, std::string>>{},
        "gpuscope.report/1 JSON of the traces (_Trace objects or paths) analysed as one job");
  m.def("_diff", &diff, py::arg("a_items"), py::arg("a_report"), py::arg("a_label"), py::arg("a_listed"),
        py::arg("b_items"), py::arg("b_report"), py::arg("b_label"), py::arg("b_listed"), py::arg("top") = 15,
        py::arg("device") = -1, "gpuscope.diff/1 JSON of two sides, each traces or a saved report's text");
  m.def(
      "_trace_inputs",
      [](const std::string& path) {
        const TraceInputs in = list_trace_inputs({path});
        std::vector<std::pair<std::string, std::string>> left;
        for (const LeftOut& l : in.left_out) left.emplace_back(l.file, l.problem);
        return std::make_pair(in.files, left);
      },
      py::arg("path"),
      "(files, [(file, why left out)]) of a trace path or a directory of traces, as the CLI lists them");
  m.def("_whatif", &whatif, py::arg("item"), py::arg("remove"), py::arg("scale"), py::arg("flags"), py::arg("top") = 10,
        "gpuscope.whatif/1 JSON of one trace (a _Trace or a path) with the changes applied");
  m.def(
      "_looks_like_report", [](const py::bytes& head) { return looks_like_report_json(std::string(head)); },
      py::arg("head"), "Whether the first bytes of a file start a gpuscope.report/1 document");
}

}  // namespace gpuscope::python
