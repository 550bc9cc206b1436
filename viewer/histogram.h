// The durations of every instance of one name — a kernel, or a framework op
// or NVTX range — as a histogram on a log-scaled duration axis (Tracy's Find
// Zone): the outliers and the bimodal cases that say which instance to look
// at. Each bin keeps its instances, so a click on a bin steps through them
// on the timeline (view_histogram.cpp draws it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace gpuscope::viewer {

struct DurationHistogram {
  TableId table = TableId::kernels;  // kernels, or ranges (ops, NVTX ranges, annotations)
  StringId name = 0;
  std::uint64_t count = 0;
  // As the report writes durations: the median is the lower of the two middle
  // values (always an observed duration); p99 the nearest rank, ⌈0.99 n⌉.
  TimeNs min = 0, median = 0, p99 = 0, max = 0, mean = 0, total = 0;
  std::vector<TimeNs> edges;          // bins + 1 bounds, geometric: bin i holds [edges[i], edges[i + 1])
  std::vector<std::uint64_t> counts;  // instances per bin
  std::vector<RowIndex> rows;         // the instances, bin after bin, each bin in row order
  std::vector<std::uint64_t> first;   // bins + 1: bin i's instances are rows[first[i] .. first[i + 1])

  std::size_t bins() const { return counts.size(); }
  std::size_t bin_of(TimeNs duration) const;
  std::vector<RowIndex> bin_rows(std::size_t bin) const;
};

// Every instance of `name` in `table` (kernels or ranges), in at most `bins`
// bins between the shortest and the longest (one bin when all are equal; a
// zero-length instance counts as 1 ns on the axis). One pass over the table.
DurationHistogram duration_histogram(const Trace& trace, TableId table, StringId name, std::size_t bins = 32);

}  // namespace gpuscope::viewer
