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
#include "trace/json_text.h"

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
  JsonStringScan strings;
  for (char c : text) {
    if (strings.in_string(c)) continue;
    if (c == '[' || c == '{') {
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

using json::kv;

void diff_lists(Out& out, const ProfileDiff& d) {
  out.key("categories");
  out.array(d.categories, [&](const CategoryDelta& c) {
    out.object(kv("name", to_string(c.category)), kv("before_ns", c.before_ns), kv("after_ns", c.after_ns),
               kv("before_share", c.before_share), kv("after_share", c.after_share));
  });
  out.key("kernels");
  out.array(d.kernels, [&](const KernelDelta& k) {
    out.object(kv("name", k.name), kv("category", to_string(k.category)), kv("before_ns", k.before_ns),
               kv("after_ns", k.after_ns), kv("before_count", k.before_count), kv("after_count", k.after_count));
  });
  out.key("ops");
  out.array(d.ops, [&](const OpDelta& o) {
    out.object(kv("name", o.name), kv("shapes", o.shapes), kv("dtype", o.dtypes), kv("before_ns", o.before_ns),
               kv("after_ns", o.after_ns), kv("before_calls", o.before_calls), kv("after_calls", o.after_calls));
  });
  out.key("hardware");
  out.array(d.hardware, [&](const HwDelta& h) {
    out.object(kv("name", h.name), kv("unit", h.unit), kv("before", h.before), kv("after", h.after),
               kv("before_samples", h.before_samples), kv("after_samples", h.after_samples));
  });
}

// One side of a finding's change; null where the run lacks it.
auto finding_side(bool present, Severity s, double metric, TimeNs saving, const std::string& title) {
  return [=, &title](Out& out) {
    if (!present) return out.null();
    out.object(kv("severity", to_string(s)), kv("metric", metric), kv("saving_ns", saving), kv("title", title));
  };
}

auto help_side(bool present, Verdict v, const std::string& reason) {
  return [=, &reason](Out& out) {
    if (!present) return out.null();
    out.object(kv("verdict", to_string(v)), kv("reason", reason));
  };
}

void diff_answers(Out& out, const ProfileDiff& d) {
  out.key("findings");
  out.array(d.findings, [&](const FindingDelta& f) {
    out.object(
        kv("id", f.id), kv("change", to_string(f.change)), kv("threshold", f.threshold),
        kv("before", finding_side(f.in_before, f.before_severity, f.before_metric, f.before_saving_ns, f.before_title)),
        kv("after", finding_side(f.in_after, f.after_severity, f.after_metric, f.after_saving_ns, f.after_title)));
  });
  out.key("helps");
  out.array(d.helps, [&](const HelpDelta& h) {
    out.object(kv("id", h.id), kv("question", h.question),
               kv("before", help_side(h.in_before, h.before, h.before_reason)),
               kv("after", help_side(h.in_after, h.after, h.after_reason)));
  });
  out.key("idle");
  out.array(d.idle, [&](const IdleDelta& x) {
    out.object(kv("cause", x.cause), kv("before_ns", x.before_ns), kv("after_ns", x.after_ns),
               kv("before_finding", x.before_finding), kv("after_finding", x.after_finding));
  });
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
  auto both = [&](const char* key, const auto& before, const auto& after) {
    out.key(key);
    out.object(kv("before", before), kv("after", after));
  };
  both("steps_per_gpu", d.before_steps, d.after_steps);
  both("step_time_ns", d.before_step_ns, d.after_step_ns);
  both("kernel_time_ns", d.before_kernel_ns, d.after_kernel_ns);
  both("utilization", d.before_utilization, d.after_utilization);
  both("kernel_concurrency", d.before_concurrency, d.after_concurrency);
  both("idle_share", d.before_idle_share, d.after_idle_share);
  both("peak_allocated_bytes", d.before_peak_allocated, d.after_peak_allocated);
  both("peak_reserved_bytes", d.before_peak_reserved, d.after_peak_reserved);
  diff_lists(out, d);
  diff_answers(out, d);
  out.member("summary", d.summary);
  out.end_object();
  return text + "\n";
}

}  // namespace gpuscope
