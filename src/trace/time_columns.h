// The start and end columns of any table, so that generic code (search,
// sorting, spans) can treat every table alike. Counters and memory events are
// points: both columns are the `time` column.
#pragma once

#include <vector>

#include "trace/trace.h"

namespace gpuscope::detail {

struct TimeColumns {
  const std::vector<TimeNs>* start;
  const std::vector<TimeNs>* end;
  // The track of each row as a builder holds it (counters, memory events: the
  // series column); a frozen table's grouped track column keeps no rows.
  const std::vector<TrackId>* track_rows;
  const GroupedColumn<TrackId>* grouped;  // the track column; nullptr for counters and memory events

  TrackId track_at(std::size_t row) const { return grouped ? grouped->value(row) : (*track_rows)[row]; }
};

inline TimeColumns time_columns(const TraceTables& t, TableId table) {
  switch (table) {
    case TableId::kernels: return {&t.kernels.start, &t.kernels.end, &t.kernels.track, &t.kernels.track};
    case TableId::memcpys: return {&t.memcpys.start, &t.memcpys.end, &t.memcpys.track, &t.memcpys.track};
    case TableId::memsets: return {&t.memsets.start, &t.memsets.end, &t.memsets.track, &t.memsets.track};
    case TableId::api_calls: return {&t.api_calls.start, &t.api_calls.end, &t.api_calls.track, &t.api_calls.track};
    case TableId::ranges: return {&t.ranges.start, &t.ranges.end, &t.ranges.track, &t.ranges.track};
    case TableId::syncs: return {&t.syncs.start, &t.syncs.end, &t.syncs.track, &t.syncs.track};
    case TableId::counters: return {&t.counters.time, &t.counters.time, &t.counters.series, nullptr};
    case TableId::memory_events:
      return {&t.memory_events.time, &t.memory_events.time, &t.memory_events.series, nullptr};
    case TableId::os_calls: return {&t.os_calls.start, &t.os_calls.end, &t.os_calls.track, &t.os_calls.track};
    case TableId::overheads:
    case TableId::count_: break;
  }
  return {&t.overheads.start, &t.overheads.end, &t.overheads.track, &t.overheads.track};
}

}  // namespace gpuscope::detail
