// The gate's verdict as text, JSON and JUnit XML.
//
// [SECTION] Text
// [SECTION] JSON
// [SECTION] JUnit XML
#include "export/check_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>

#include "analysis/format.h"

namespace gpuscope {

namespace {

std::string_view outcome_word(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::passed:
      return "pass";
    case CheckOutcome::failed:
      return "FAIL";
    case CheckOutcome::skipped:
      break;
  }
  return "skip";
}

std::string verdict(const CheckReport& r) {
  const std::size_t failed = r.count(CheckOutcome::failed), skipped = r.count(CheckOutcome::skipped);
  std::string s = r.passed() ? "PASSED" : "FAILED";
  s += r.passed() ? " — every check within its limit"
                  : " — " + std::to_string(failed) + " of " + std::to_string(r.checks.size()) + " checks failed";
  if (skipped) s += " (" + std::to_string(skipped) + " skipped)";
  return s;
}

std::string side_line(const std::string& label, std::uint64_t steps, TimeNs step_ns) {
  std::string s = label.empty() ? "(unnamed)" : label;
  if (steps && step_ns)
    s += ": " + std::to_string(steps) + " steps per GPU, mean step " + format::duration(step_ns);
  else
    s += ": no steps";
  return s;
}

}  // namespace

// [SECTION] Text -------------------------------------------------------------------------------------

std::string check_text(const CheckReport& r, const CheckTextOptions& options) {
  const ProfileDiff& d = r.diff;
  std::string out = "gpuscope check: " + verdict(r) + "\n";
  out += "  baseline   " + side_line(d.before_label, d.before_steps, d.before_step_ns);
  if (r.baseline_noise.steps >= 2) out += ", step-to-step spread " + format::percent1(r.baseline_noise.spread);
  out += "\n  candidate  " + side_line(d.after_label, d.after_steps, d.after_step_ns) + "\n";
  if (r.find("step-time"))
    out += "  step-time threshold " + format::percent1(r.step_threshold) + ": the larger of the limit (" +
           format::percent1(r.step_limit) + ") and the baseline's step-to-step spread (" +
           format::percent1(r.baseline_noise.spread) + ")\n";
  out += "\n";
  std::size_t width = 0;
  for (const CheckResult& c : r.checks) width = std::max(width, c.name.size());
  for (const CheckResult& c : r.checks) {
    out += "  " + std::string(outcome_word(c.outcome)) + "  " + c.name + std::string(width - c.name.size(), ' ') +
           "  " + c.message + "\n";
  }
  if (r.checks.empty()) out += "  (no checks were asked for)\n";
  const std::size_t shown = std::min(options.changes, d.summary.size());
  if (shown) {
    out += "\nWhat changed (`gpuscope diff` shows all of it):\n";
    for (std::size_t i = 0; i < shown; ++i) out += "  - " + d.summary[i] + "\n";
  }
  return out;
}

// [SECTION] JSON -------------------------------------------------------------------------------------

std::string check_json(const CheckReport& r, bool pretty) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = CheckReport::kSchema;
  j["passed"] = r.passed();
  j["baseline"] = r.diff.before_label;
  j["candidate"] = r.diff.after_label;
  j["counts"] = {{"passed", r.count(CheckOutcome::passed)},
                 {"failed", r.count(CheckOutcome::failed)},
                 {"skipped", r.count(CheckOutcome::skipped)}};
  j["steps_per_gpu"] = {{"baseline", r.diff.before_steps}, {"candidate", r.diff.after_steps}};
  j["step_time_ns"] = {{"baseline", r.diff.before_step_ns}, {"candidate", r.diff.after_step_ns}};
  j["baseline_step_noise"] = {{"steps", r.baseline_noise.steps},
                              {"mean_ns", r.baseline_noise.mean_ns},
                              {"stddev_ns", r.baseline_noise.stddev_ns},
                              {"spread", r.baseline_noise.spread}};
  j["step_limit"] = r.step_limit;
  j["step_threshold"] = r.step_threshold;
  Json checks = Json::array();
  for (const CheckResult& c : r.checks) {
    Json x{{"name", c.name},
           {"outcome", to_string(c.outcome)},
           {"value", c.value},
           {"threshold", c.threshold},
           {"message", c.message}};
    if (!c.findings.empty()) x["findings"] = c.findings;
    checks.push_back(std::move(x));
  }
  j["checks"] = std::move(checks);
  j["changes"] = r.diff.summary;
  return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// [SECTION] JUnit XML ----------------------------------------------------------------------------------

namespace {

// Length of the valid UTF-8 sequence at s[i], 0 if there is none.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 2 && c < 0xc2) return 0;                                      // overlong
  if (n == 3 && c == 0xe0 && b(i + 1) < 0xa0) return 0;                  // overlong
  if (n == 3 && c == 0xed && b(i + 1) >= 0xa0) return 0;                 // surrogate
  if (n == 4 && (c > 0xf4 || (c == 0xf0 && b(i + 1) < 0x90))) return 0;  // overlong or > U+10FFFF
  if (n == 4 && c == 0xf4 && b(i + 1) >= 0x90) return 0;
  return n;
}

// Text for an XML attribute or element: markup escaped, characters XML 1.0
// forbids (control characters) and invalid UTF-8 (kernel names come from
// untrusted traces) replaced by U+FFFD, so every CI system parses the file.
std::string xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xef\xbf\xbd";
      i += n ? n : 1;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\n':
        out += "&#10;";
        break;
      default:
        out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string attr(std::string_view name, std::string_view value) {
  std::string s(1, ' ');
  s.append(name).append("=\"").append(xml(value)).push_back('"');
  return s;
}

std::string testcase(const CheckResult& c) {
  std::string s = "    <testcase" + attr("classname", "gpuscope.check") + attr("name", c.name) + attr("time", "0");
  switch (c.outcome) {
    case CheckOutcome::passed:
      return s + ">\n      <system-out>" + xml(c.message) + "</system-out>\n    </testcase>\n";
    case CheckOutcome::skipped:
      return s + ">\n      <skipped" + attr("message", c.message) + "/>\n    </testcase>\n";
    case CheckOutcome::failed:
      break;
  }
  return s + ">\n      <failure" + attr("message", c.message) + attr("type", "regression") + ">" + xml(c.message) +
         "</failure>\n    </testcase>\n";
}

}  // namespace

std::string check_junit_xml(const CheckReport& r) {
  const std::string tests = std::to_string(r.checks.size());
  const std::string failures = std::to_string(r.count(CheckOutcome::failed));
  const std::string skipped = std::to_string(r.count(CheckOutcome::skipped));
  const std::string counts =
      attr("tests", tests) + attr("failures", failures) + attr("errors", "0") + attr("skipped", skipped);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<testsuites" + attr("name", "gpuscope check") + counts + ">\n";
  s += "  <testsuite" + attr("name", "gpuscope check " + r.diff.before_label + " -> " + r.diff.after_label) + counts +
       attr("time", "0") + ">\n";
  s += "    <properties>\n";
  auto property = [&](std::string_view name, const std::string& value) {
    s += "      <property" + attr("name", name) + attr("value", value) + "/>\n";
  };
  property("baseline", r.diff.before_label);
  property("candidate", r.diff.after_label);
  property("step_limit", format::percent1(r.step_limit));
  property("baseline_step_spread", format::percent1(r.baseline_noise.spread));
  property("step_threshold", format::percent1(r.step_threshold));
  s += "    </properties>\n";
  for (const CheckResult& c : r.checks) s += testcase(c);
  std::string changes;
  for (const std::string& line : r.diff.summary) changes += line + "\n";
  s += "    <system-out>" + xml(changes) + "</system-out>\n";
  s += "  </testsuite>\n</testsuites>\n";
  return s;
}

}  // namespace gpuscope
