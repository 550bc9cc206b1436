// The gate's verdict as text, JSON and JUnit XML.
//
// [SECTION] Text
// [SECTION] JSON
// [SECTION] JUnit XML
#include "export/check_report.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "trace/json_writer.h"
#include "words/format.h"

namespace gpuscope {

namespace {

std::string_view outcome_word(CheckOutcome o) {
  static constexpr std::string_view kWords[] = {"pass", "FAIL", "skip", "NOT RUN"};  // by CheckOutcome's value
  const auto i = static_cast<std::size_t>(o);
  return i < std::size(kWords) ? kWords[i] : kWords[3];
}

// Red for what fails the gate, green for a pass, none for a skip.
std::string coloured(CheckOutcome o, const std::string& text, bool colour) {
  if (!colour || o == CheckOutcome::skipped) return text;
  const char* code = o == CheckOutcome::passed ? "\033[32m" : "\033[1;31m";
  return code + text + "\033[0m";
}

std::string verdict(const CheckReport& r) {
  const std::size_t failed = r.count(CheckOutcome::failed), skipped = r.count(CheckOutcome::skipped);
  const std::size_t not_run = r.count(CheckOutcome::not_run), n = r.checks.size();
  std::string s;
  if (not_run)
    s = "NOT CHECKED — " + std::to_string(not_run) + " of " + std::to_string(n) + " checks could not run" +
        (failed ? ", " + std::to_string(failed) + " failed" : "");
  else if (failed)
    s = "FAILED — " + std::to_string(failed) + " of " + std::to_string(n) + " checks failed";
  else
    s = "PASSED — every check within its limit";
  if (skipped) s += " (" + std::to_string(skipped) + " skipped: --allow-skip)";
  return s;
}

// How the step-time check decides, in one line.
std::string step_rule(const CheckReport& r) {
  const std::string limit = format::percent1(r.step_limit), spread = format::percent1(r.baseline_noise.spread);
  if (!r.noise)
    return "step time: a rise above the limit of " + limit + " fails (--noise off: the baseline's step-to-step " +
           "spread, " + spread + ", is not weighed)";
  if (r.step_threshold <= r.step_limit)
    return "step time: a rise above the limit of " + limit + " fails (the baseline's step-to-step spread, " + spread +
           ", is within it)";
  return "step time: a rise up to the limit of " + limit + " passes, above " + format::percent1(r.step_threshold) +
         " (the baseline's step-to-step spread) fails; in between it cannot be told from noise";
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
  if (!r.same_workload.empty()) out += "  workload   " + r.same_workload + "\n";
  if (r.find("step-time")) out += "  " + step_rule(r) + "\n";
  out += "\n";
  std::size_t width = 0, word_width = 0;
  for (const CheckResult& c : r.checks) {
    width = std::max(width, c.name.size());
    word_width = std::max(word_width, outcome_word(c.outcome).size());
  }
  for (const CheckResult& c : r.checks) {
    const std::string word(outcome_word(c.outcome));
    out += "  " + coloured(c.outcome, word, options.colour) + std::string(word_width - word.size(), ' ') + "  " +
           c.name + std::string(width - c.name.size(), ' ') + "  " + c.message + "\n";
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
  using json::kv;
  std::string text;
  json::Writer out(text, pretty);
  out.begin_object();
  out.member("schema", CheckReport::kSchema);
  out.member("passed", r.passed());
  out.member("exit_code", r.exit_code());
  out.member("baseline", r.diff.before_label);
  out.member("candidate", r.diff.after_label);
  out.member("same_workload", r.same_workload);
  out.key("counts");
  out.object(kv("passed", r.count(CheckOutcome::passed)), kv("failed", r.count(CheckOutcome::failed)),
             kv("skipped", r.count(CheckOutcome::skipped)), kv("not_run", r.count(CheckOutcome::not_run)));
  out.key("steps_per_gpu");
  out.object(kv("baseline", r.diff.before_steps), kv("candidate", r.diff.after_steps));
  out.key("step_time_ns");
  out.object(kv("baseline", r.diff.before_step_ns), kv("candidate", r.diff.after_step_ns));
  const StepNoise& noise = r.baseline_noise;
  out.key("baseline_step_noise");
  out.object(kv("steps", noise.steps), kv("mean_ns", noise.mean_ns), kv("stddev_ns", noise.stddev_ns),
             kv("spread", noise.spread));
  out.member("noise", r.noise);
  out.member("step_limit", r.step_limit);
  out.member("step_threshold", r.step_threshold);
  out.key("checks");
  out.array(r.checks, [&](const CheckResult& c) {
    out.begin_object();
    out.member("name", c.name);
    out.member("outcome", to_string(c.outcome));
    out.member("value", c.value);
    out.member("threshold", c.threshold);
    out.member("message", c.message);
    if (!c.findings.empty()) out.member("findings", c.findings);
    out.end_object();
  });
  out.member("changes", r.diff.summary);
  out.end_object();
  return text + "\n";
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
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      default: out.append(s.substr(i, n));
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

std::string seconds(double s) { return format::fixed(std::max(0.0, s), 6); }

std::string testcase(const std::string& name, CheckOutcome outcome, const std::string& message, double time) {
  std::string s =
      "    <testcase" + attr("name", name) + attr("classname", "gpuscope.check") + attr("time", seconds(time));
  switch (outcome) {
    case CheckOutcome::passed: return s + ">\n      <system-out>" + xml(message) + "</system-out>\n    </testcase>\n";
    case CheckOutcome::skipped: return s + ">\n      <skipped" + attr("message", message) + "/>\n    </testcase>\n";
    case CheckOutcome::not_run:
      return s + ">\n      <error" + attr("message", message) + attr("type", "not-run") + ">" + xml(message) +
             "</error>\n    </testcase>\n";
    case CheckOutcome::failed: break;
  }
  return s + ">\n      <failure" + attr("message", message) + attr("type", "regression") + ">" + xml(message) +
         "</failure>\n    </testcase>\n";
}

struct SuiteCounts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
};

// <testsuites> and its one <testsuite>'s start tag.
std::string suite_head(const std::string& label, const SuiteCounts& n, const JunitRun& run) {
  const std::string counts = attr("tests", std::to_string(n.tests)) + attr("failures", std::to_string(n.failures)) +
                             attr("errors", std::to_string(n.errors));
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<testsuites" + attr("name", "gpuscope check") + counts + attr("time", seconds(run.seconds)) + ">\n";
  s += "  <testsuite" + attr("name", label) + counts + attr("skipped", std::to_string(n.skipped)) +
       attr("time", seconds(run.seconds));
  if (!run.timestamp.empty()) s += attr("timestamp", run.timestamp);
  if (!run.hostname.empty()) s += attr("hostname", run.hostname);
  return s + ">\n";
}

std::string property(std::string_view name, const std::string& value) {
  return "      <property" + attr("name", name) + attr("value", value) + "/>\n";
}

constexpr std::string_view kSuiteEnd = "  </testsuite>\n</testsuites>\n";

}  // namespace

std::string check_junit_xml(const CheckReport& r, const JunitRun& run) {
  const SuiteCounts n{r.checks.size(), r.count(CheckOutcome::failed), r.count(CheckOutcome::not_run),
                      r.count(CheckOutcome::skipped)};
  std::string s = suite_head("gpuscope check " + r.diff.before_label + " -> " + r.diff.after_label, n, run);
  s += "    <properties>\n";
  s += property("baseline", r.diff.before_label);
  s += property("candidate", r.diff.after_label);
  s += property("same_workload", r.same_workload);
  s += property("noise", r.noise ? "on" : "off");
  s += property("step_limit", format::percent1(r.step_limit));
  s += property("baseline_step_spread", format::percent1(r.baseline_noise.spread));
  s += property("step_threshold", format::percent1(r.step_threshold));
  s += "    </properties>\n";
  for (const CheckResult& c : r.checks) s += testcase(c.name, c.outcome, c.message, c.seconds);
  std::string changes;
  for (const std::string& line : r.diff.summary) changes += line + "\n";
  s += "    <system-out>" + xml(changes) + "</system-out>\n";
  return s.append(kSuiteEnd);
}

std::string check_junit_error_xml(const std::string& baseline, const std::string& candidate, const std::string& reason,
                                  const JunitRun& run) {
  std::string s = suite_head("gpuscope check " + baseline + " -> " + candidate, SuiteCounts{1, 0, 1, 0}, run);
  s += "    <properties>\n" + property("baseline", baseline) + property("candidate", candidate) + "    </properties>\n";
  s += testcase("comparison", CheckOutcome::not_run, reason, run.seconds);
  return s.append(kSuiteEnd);
}

}  // namespace gpuscope
