// The CI gate's verdict (analysis/check.h) three ways: a one-screen text
// summary for the job log, JSON (schema gpuscope.check/1) for scripts, and
// JUnit XML, which GitHub Actions, GitLab and Jenkins show as test results
// (one testcase per check, the numbers in its message).
#pragma once

#include <cstddef>
#include <string>

#include "analysis/check.h"

namespace gpuscope {

struct CheckTextOptions {
  std::size_t changes = 6;  // lines of the diff's summary shown under the checks
};

std::string check_text(const CheckReport& r, const CheckTextOptions& options = {});
std::string check_json(const CheckReport& r, bool pretty = true);
std::string check_junit_xml(const CheckReport& r);

}  // namespace gpuscope
