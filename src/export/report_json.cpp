// gpuscope.report/1 and gpuscope.diff/1 JSON, written and read.
//
// [SECTION] The report: writing, reading (untrusted input)
// [SECTION] Diff
//
// The report's keys, their order, types and meaning are the tables of
// report_fields.cpp; this file turns text into a document and back. Readers
// ignore keys they do not know, so adding a key never breaks an older
// reader; renaming one would.
#include "export/report_json.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "export/detail/report_fields.h"
#include "trace/error.h"

namespace gpuscope {

namespace {

using detail::Json;
using detail::Out;
using detail::Reader;

// [SECTION] The report: writing, reading ---------------------------------------------------------

// Nesting deeper than any report has is refused before parsing (the parser
// recurses on nothing, but a document of a million '[' is not a report).
void check_depth(std::string_view text, const Reader& r) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > 32) r.fail("", "nested more than 32 levels deep: not a gpuscope report");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

Json parse_document(std::string_view text, const std::string& file) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError(file, std::string("not valid JSON: ") + e.what(), e.byte ? e.byte - 1 : 0);
  } catch (const Json::exception& e) {  // e.g. a number too large for any C++ type
    throw InputError(file, std::string("not a usable JSON document: ") + e.what());
  }
}

}  // namespace

std::string report_json(const Profile& p, const ReportJsonOptions& o) { return detail::write_report_text(p, o) + "\n"; }

std::vector<std::string> report_json_parts(const Profile& p, const ReportJsonOptions& o) {
  std::vector<std::string> parts = detail::write_report_parts(p, o);
  parts.back() += '\n';
  return parts;
}

bool looks_like_report_json(std::string_view head) {
  const std::size_t brace = head.find_first_not_of(" \t\r\n");
  if (brace == std::string_view::npos || head[brace] != '{') return false;
  const std::size_t key = head.find("\"schema\"", brace);
  return key != std::string_view::npos && key < brace + 64 &&
         head.find("\"gpuscope.report/", key) != std::string_view::npos;
}

// Three phases: refuse absurd nesting, parse the text, read the document
// (the schema key first, then every key of report_fields.cpp's tables).
Profile parse_report_json(std::string_view text, const std::string& file) {
  const Reader r(file);
  check_depth(text, r);
  const Json document = parse_document(text, file);
  return detail::read_report(document, r);
}

// [SECTION] Diff -------------------------------------------------------------------------------------

namespace {

// {"before": b, "after": a}
template <class V>
void before_after(Out& out, const char* key, const V& before, const V& after) {
  out.key(key);
  out.begin_object();
  out.member("before", before);
  out.member("after", after);
  out.end_object();
}

void diff_lists(Out& out, const ProfileDiff& d) {
  out.key("categories");
  out.begin_array();
  for (const CategoryDelta& c : d.categories) {
    out.begin_object();
    out.member("name", to_string(c.category));
    out.member("before_ns", c.before_ns);
    out.member("after_ns", c.after_ns);
    out.member("before_share", c.before_share);
    out.member("after_share", c.after_share);
    out.end_object();
  }
  out.end_array();
  out.key("kernels");
  out.begin_array();
  for (const KernelDelta& k : d.kernels) {
    out.begin_object();
    out.member("name", k.name);
    out.member("category", to_string(k.category));
    out.member("before_ns", k.before_ns);
    out.member("after_ns", k.after_ns);
    out.member("before_count", k.before_count);
    out.member("after_count", k.after_count);
    out.end_object();
  }
  out.end_array();
  out.key("ops");
  out.begin_array();
  for (const OpDelta& o : d.ops) {
    out.begin_object();
    out.member("name", o.name);
    out.member("shapes", o.shapes);
    out.member("dtype", o.dtypes);
    out.member("before_ns", o.before_ns);
    out.member("after_ns", o.after_ns);
    out.member("before_calls", o.before_calls);
    out.member("after_calls", o.after_calls);
    out.end_object();
  }
  out.end_array();
  out.key("hardware");
  out.begin_array();
  for (const HwDelta& h : d.hardware) {
    out.begin_object();
    out.member("name", h.name);
    out.member("unit", h.unit);
    out.member("before", h.before);
    out.member("after", h.after);
    out.member("before_samples", h.before_samples);
    out.member("after_samples", h.after_samples);
    out.end_object();
  }
  out.end_array();
}

// One side of a finding's change; null where the run lacks it.
void finding_side(Out& out, const char* key, bool present, Severity s, double metric, TimeNs saving,
                  const std::string& title) {
  out.key(key);
  if (!present) return out.null();
  out.begin_object();
  out.member("severity", to_string(s));
  out.member("metric", metric);
  out.member("saving_ns", saving);
  out.member("title", title);
  out.end_object();
}

void help_side(Out& out, const char* key, bool present, Verdict v, const std::string& reason) {
  out.key(key);
  if (!present) return out.null();
  out.begin_object();
  out.member("verdict", to_string(v));
  out.member("reason", reason);
  out.end_object();
}

void diff_answers(Out& out, const ProfileDiff& d) {
  out.key("findings");
  out.begin_array();
  for (const FindingDelta& f : d.findings) {
    out.begin_object();
    out.member("id", f.id);
    out.member("change", to_string(f.change));
    out.member("threshold", f.threshold);
    finding_side(out, "before", f.in_before, f.before_severity, f.before_metric, f.before_saving_ns, f.before_title);
    finding_side(out, "after", f.in_after, f.after_severity, f.after_metric, f.after_saving_ns, f.after_title);
    out.end_object();
  }
  out.end_array();
  out.key("helps");
  out.begin_array();
  for (const HelpDelta& h : d.helps) {
    out.begin_object();
    out.member("id", h.id);
    out.member("question", h.question);
    help_side(out, "before", h.in_before, h.before, h.before_reason);
    help_side(out, "after", h.in_after, h.after, h.after_reason);
    out.end_object();
  }
  out.end_array();
  out.key("idle");
  out.begin_array();
  for (const IdleDelta& x : d.idle) {
    out.begin_object();
    out.member("cause", x.cause);
    out.member("before_ns", x.before_ns);
    out.member("after_ns", x.after_ns);
    out.member("before_finding", x.before_finding);
    out.member("after_finding", x.after_finding);
    out.end_object();
  }
  out.end_array();
}

}  // namespace

std::string diff_json(const ProfileDiff& d, bool pretty) {
  std::string text;
  Out out(text, pretty);
  out.begin_object();
  out.member("schema", ProfileDiff::kSchema);
  out.member("before", d.before_label);
  out.member("after", d.after_label);
  out.member("per_step", d.per_step);
  before_after(out, "steps_per_gpu", d.before_steps, d.after_steps);
  before_after(out, "step_time_ns", d.before_step_ns, d.after_step_ns);
  before_after(out, "kernel_time_ns", d.before_kernel_ns, d.after_kernel_ns);
  before_after(out, "utilization", d.before_utilization, d.after_utilization);
  before_after(out, "kernel_concurrency", d.before_concurrency, d.after_concurrency);
  before_after(out, "idle_share", d.before_idle_share, d.after_idle_share);
  before_after(out, "peak_allocated_bytes", d.before_peak_allocated, d.after_peak_allocated);
  before_after(out, "peak_reserved_bytes", d.before_peak_reserved, d.after_peak_reserved);
  diff_lists(out, d);
  diff_answers(out, d);
  out.member("summary", d.summary);
  out.end_object();
  return text + "\n";
}

}  // namespace gpuscope
