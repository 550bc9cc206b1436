// A set of events to highlight on the timeline and step through in time
// order: the results of a search, or the instances of a hotspot.
//
// Matches are kept per (table, track) as sorted row lists — the tables are
// sorted by (track, start), so one pass over a table yields them already in
// order — which makes "the next match after this one" a binary search per
// list and "the matches inside the visible window" two binary searches.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "trace/name_pattern.h"
#include "trace/trace.h"

namespace gpuscope::viewer {

struct MatchRef {
  TableId table = TableId::kernels;
  RowIndex row = kNoRow;
  friend bool operator==(const MatchRef&, const MatchRef&) = default;
};

class MatchSet {
 public:
  // Tables searched by name: kernels, API calls, ranges (NVTX and annotations).
  static constexpr TableId kTables[] = {TableId::kernels, TableId::api_calls, TableId::ranges};

  MatchSet() = default;
  // Events whose name id has name_matches[id] != 0 (a vector indexed by StringId).
  static MatchSet by_names(const Trace& trace, const std::vector<std::uint8_t>& name_matches,
                           bool kernels_only = false);
  static MatchSet by_category(const Trace& trace, KernelCategory category);
  // These rows (ascending) of `table` (kernels, API calls or ranges): an
  // op's kernels, the instances in a bin of a duration histogram.
  static MatchSet of_rows(const Trace& trace, TableId table, std::vector<RowIndex> rows);

  bool empty() const { return total_ == 0; }
  std::uint64_t size() const { return total_; }
  std::uint64_t count(TableId table) const;

  // Matching rows of `table` on `track`, sorted by start.
  std::span<const RowIndex> on_track(TableId table, TrackId track) const;

  // The first match after / before `current` in (start, table, row) order;
  // with no current match, the first / last of all.
  std::optional<MatchRef> next(const Trace& trace, std::optional<MatchRef> current) const;
  std::optional<MatchRef> prev(const Trace& trace, std::optional<MatchRef> current) const;
  // The first match starting at or after `t`.
  std::optional<MatchRef> first_from(const Trace& trace, TimeNs t) const;
  // Number of matches ordered before `m` (so "k of N" can be shown as ordinal + 1).
  std::uint64_t ordinal(const Trace& trace, MatchRef m) const;

 private:
  struct List {
    std::vector<RowIndex> rows;        // sorted by row (= by track, then start)
    std::vector<std::uint32_t> begin;  // per track: first index in rows; tracks + 1 entries
  };
  static int slot(TableId t);
  struct Key {
    TimeNs start;
    int table;
    RowIndex row;
    auto operator<=>(const Key&) const = default;
  };
  using Rows = std::vector<RowIndex>::const_iterator;
  template <class Fn>
  void each_track(const Trace& trace, Fn&& fn) const;
  std::optional<MatchRef> after(const Trace& trace, std::optional<Key> cur) const;
  std::optional<Key> key_of(const Trace& trace, std::optional<MatchRef> m) const;
  List lists_[3];
  std::uint64_t total_ = 0;
};

// Matches `text` against every string of the trace: case-insensitive
// substring, or RE2 regex when `regex` (trace/name_pattern.h). Returns a
// vector indexed by StringId. Throws PatternError for a bad pattern.
std::vector<std::uint8_t> match_names(const StringTable& strings, std::string_view text, bool regex);

}  // namespace gpuscope::viewer
