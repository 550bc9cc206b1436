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

std::string diff_json(const ProfileDiff& d, bool pretty) {
  auto pair = [](auto before, auto after) { return Json{{"before", before}, {"after", after}}; };
  Json j;
  j["schema"] = ProfileDiff::kSchema;
  j["before"] = d.before_label;
  j["after"] = d.after_label;
  j["per_step"] = d.per_step;
  j["steps_per_gpu"] = pair(d.before_steps, d.after_steps);
  j["step_time_ns"] = pair(d.before_step_ns, d.after_step_ns);
  j["kernel_time_ns"] = pair(d.before_kernel_ns, d.after_kernel_ns);
  j["utilization"] = pair(d.before_utilization, d.after_utilization);
  j["kernel_concurrency"] = pair(d.before_concurrency, d.after_concurrency);
  j["idle_share"] = pair(d.before_idle_share, d.after_idle_share);
  auto bytes = [](const std::optional<std::uint64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  j["peak_allocated_bytes"] = pair(bytes(d.before_peak_allocated), bytes(d.after_peak_allocated));
  j["peak_reserved_bytes"] = pair(bytes(d.before_peak_reserved), bytes(d.after_peak_reserved));
  Json cats = Json::array();
  for (const CategoryDelta& c : d.categories)
    cats.push_back(Json{{"name", to_string(c.category)},
                        {"before_ns", c.before_ns},
                        {"after_ns", c.after_ns},
                        {"before_share", c.before_share},
                        {"after_share", c.after_share}});
  j["categories"] = std::move(cats);
  Json kernels = Json::array();
  for (const KernelDelta& k : d.kernels)
    kernels.push_back(Json{{"name", k.name},
                           {"category", to_string(k.category)},
                           {"before_ns", k.before_ns},
                           {"after_ns", k.after_ns},
                           {"before_count", k.before_count},
                           {"after_count", k.after_count}});
  j["kernels"] = std::move(kernels);
  Json ops = Json::array();
  for (const OpDelta& o : d.ops)
    ops.push_back(Json{{"name", o.name},
                       {"shapes", o.shapes},
                       {"dtype", o.dtypes},
                       {"before_ns", o.before_ns},
                       {"after_ns", o.after_ns},
                       {"before_calls", o.before_calls},
                       {"after_calls", o.after_calls}});
  j["ops"] = std::move(ops);
  Json hardware = Json::array();
  for (const HwDelta& h : d.hardware) {
    auto mean = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    hardware.push_back(Json{{"name", h.name},
                            {"unit", h.unit},
                            {"before", mean(h.before)},
                            {"after", mean(h.after)},
                            {"before_samples", h.before_samples},
                            {"after_samples", h.after_samples}});
  }
  j["hardware"] = std::move(hardware);
  Json findings = Json::array();
  for (const FindingDelta& f : d.findings) {
    auto side = [](bool present, Severity s, double metric, TimeNs saving, const std::string& title) {
      if (!present) return Json(nullptr);
      return Json{{"severity", to_string(s)}, {"metric", metric}, {"saving_ns", saving}, {"title", title}};
    };
    findings.push_back(
        Json{{"id", f.id},
             {"change", to_string(f.change)},
             {"threshold", f.threshold},
             {"before", side(f.in_before, f.before_severity, f.before_metric, f.before_saving_ns, f.before_title)},
             {"after", side(f.in_after, f.after_severity, f.after_metric, f.after_saving_ns, f.after_title)}});
  }
  j["findings"] = std::move(findings);
  Json helps = Json::array();
  for (const HelpDelta& h : d.helps) {
    auto side = [](bool present, Verdict v, const std::string& reason) {
      if (!present) return Json(nullptr);
      return Json{{"verdict", to_string(v)}, {"reason", reason}};
    };
    helps.push_back(Json{{"id", h.id},
                         {"question", h.question},
                         {"before", side(h.in_before, h.before, h.before_reason)},
                         {"after", side(h.in_after, h.after, h.after_reason)}});
  }
  j["helps"] = std::move(helps);
  Json idle = Json::array();
  for (const IdleDelta& x : d.idle)
    idle.push_back(Json{{"cause", x.cause},
                        {"before_ns", x.before_ns},
                        {"after_ns", x.after_ns},
                        {"before_finding", x.before_finding},
                        {"after_finding", x.after_finding}});
  j["idle"] = std::move(idle);
  j["summary"] = d.summary;
  return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuscope
