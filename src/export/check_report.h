// The CI gate's verdict (analysis/check.h) three ways: a one-screen text
// summary for the job log, JSON (schema gpuscope.check/1) for scripts, and
// JUnit XML, which GitHub Actions, GitLab and Jenkins show as test results
// (one testcase per check, the numbers in its message; a check that could
// not run is an errored testcase). The XML keeps to the JUnit schema those
// tools read (tests/data/junit/junit.xsd describes it).
#pragma once

#include <cstddef>
#include <string>

#include "analysis/check.h"

namespace gpuscope {

struct CheckTextOptions {
  std::size_t changes = 6;  // lines of the diff's summary shown under the checks
  bool colour = false;      // ANSI colour for the outcome words (a terminal)
};

// The run the JUnit file describes (measured by the caller).
struct JunitRun {
  double seconds = 0;     // wall time of the whole check, loading included
  std::string timestamp;  // start, UTC, "2024-05-01T12:00:00" (empty: left out)
  std::string hostname;   // (empty: left out)
};

std::string check_text(const CheckReport& r, const CheckTextOptions& options = {});
std::string check_json(const CheckReport& r, bool pretty = true);
std::string check_junit_xml(const CheckReport& r, const JunitRun& run = {});
// A check that stopped before any check ran (bad input, runs of different
// workloads): one errored testcase, "comparison", with `reason`.
std::string check_junit_error_xml(const std::string& baseline, const std::string& candidate, const std::string& reason,
                                  const JunitRun& run = {});

}  // namespace gpuscope
