// Process reports: how an injected process tells `gpuscope capture` what it
// captured. Each process writes "<dir>/<pid>.report" (key=value lines,
// replaced atomically) when it starts, after every chunk and at the end, so a
// process that is killed still leaves its last counts behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuscope/capture.h"

namespace gpuscope::capture {

struct ProcessReport {
  std::uint32_t pid = 0;
  std::string command;  // the process's command line
  // "recording", "waiting" (for its capture range or delay), "finished",
  // "failed" (nothing captured: see summary.message), "inert" (a forked child)
  std::string state;
  Summary summary;
};

// Writes the report (temp file + rename). False if it could not.
bool write_process_report(const std::string& dir, const ProcessReport& report) noexcept;
// Every report in `dir`, by pid. Unreadable lines are skipped.
std::vector<ProcessReport> read_process_reports(const std::string& dir);

// The command line of this process ("/usr/bin/python3 train.py --epochs 1").
std::string own_command_line();

}  // namespace gpuscope::capture
