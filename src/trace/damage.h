// Storage damage: what a trace file lost on disk or on the way (cut short,
// bytes damaged), as its reader found it. Kept apart from what the recorder
// dropped while recording (TraceMeta::stats, "capture.dropped_records"):
// those records never reached the file; these reached it and were lost there.
//
// The .gscope reader and the Chrome JSON importer fill TraceMeta::damage, a
// .gscope file keeps it (a trace saved from a damaged file still says so),
// analysis copies it into the Profile (the report's `trace_quality`), and
// report, info and the viewer state it first, in words/damage_text.h's words:
// trace/ hands out what was lost and how many, never the sentences.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/types.h"

namespace gpuscope {

class Trace;

// How well the lost rows of a table are known.
enum class LossCount : std::uint8_t {
  exact = 0,     // from the file's footer index or the totals it declared up front
  at_least = 1,  // from the headers of the sections lost; more may have followed (the file did not say)
  estimate = 2,  // includes the row count of a damaged section header, which could not be checked
};
std::string_view to_string(LossCount c);

struct TableLoss {
  std::uint64_t loaded = 0;  // rows read
  std::uint64_t lost = 0;    // rows lost, as `count` says
  LossCount count = LossCount::exact;
  friend bool operator==(const TableLoss&, const TableLoss&) = default;
};

struct FileDamage {
  bool truncated = false;              // the file ends before its data did (cut short, or its writer stopped)
  std::uint64_t file_bytes = 0;        // size of the file as read (compressed size for gzip)
  std::uint64_t intact_bytes = 0;      // the file's first bytes read without a problem (its intact prefix)
  std::uint64_t bytes_lost = 0;        // bytes of the file that were not loaded
  std::uint64_t damaged_sections = 0;  // damaged parts (sections of a .gscope, the index) skipped or stopped at
  std::array<TableLoss, kTableCount> tables{};
  std::vector<std::string> problems;  // one line each, in file order

  bool any() const { return truncated || bytes_lost != 0 || damaged_sections != 0 || !problems.empty(); }
  std::uint64_t rows_lost() const;
  // Adds what an earlier file lost: this trace was saved from a damaged file
  // (and kept what that file had lost) and is read from a damaged file again.
  void add_earlier(const FileDamage& earlier);

  friend bool operator==(const FileDamage&, const FileDamage&) = default;
};

// Which GPUs a trace knows of and which of them have any GPU op.
struct DeviceCoverage {
  std::vector<std::uint32_t> declared;   // described (devices) or holding a GPU track, ascending
  std::vector<std::uint32_t> with_data;  // those with at least one kernel, memcpy or memset
  std::vector<std::uint32_t> without_data() const;
};
DeviceCoverage device_coverage(const Trace& trace);

}  // namespace gpuscope
