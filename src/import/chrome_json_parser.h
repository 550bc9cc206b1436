// EventParser: maps one Chrome trace event, as EventReader read it
// (chrome_json_reader.h), to the trace's tables through a TraceBuilder.
// Internal to src/import/; what maps to what: chrome_json.h, docs/import.md.
//
// Its definitions are in five files, by responsibility:
//   chrome_json_parser.cpp    events: complete (X), begin/end (B/E), instants, metadata (M); categories
//                             (kCategories), tracks, ids, strings
//   chrome_json_counters.cpp  counter (C) events and Kineto's [memory] events: counter series
//   chrome_json_devices.cpp   deviceProperties and the devices the events use
//   chrome_json_meta.cpp      the root object's other values, and finishing (names, processes, time origin, meta)
//   chrome_json_columns.cpp   column growth before each batch, and a local parser's rows merged in
//
// With two parse threads (chrome_json.cpp), local parsers (Role::local) map
// the events whose mapping does not depend on other batches into rows of
// their own, and leave the rest (must_defer) to the whole parser, which
// merges their rows and maps the deferred events in file order.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/chrome_json_event.h"
#include "import/chrome_json_reader.h"
#include "import/chrome_json_stream.h"
#include "import/import_memory.h"
#include "trace/builder.h"

namespace gpuscope::detail::chrome {

// Interns strings through a cache keyed by XXH3: most names repeat thousands
// of times, and hashing them with XXH3 once per event is far cheaper than the
// StringTable's byte-at-a-time hash (slow on 300-byte kernel names).
class InternCache {
 public:
  explicit InternCache(TraceBuilder& b) : b_(b), slots_(1024) {}
  StringId get(std::string_view s);

 private:
  struct Slot {
    std::uint64_t hash = 0;
    StringId id = 0;
    bool used = false;
  };
  void rehash();
  TraceBuilder& b_;
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

class EventParser {
 public:
  enum class Role : std::uint8_t { whole, local };
  enum class Cat : std::uint8_t;  // an event's category (chrome_json_parser.cpp)

  EventParser(const Source& source, Role role);

  // One event, fully read: its rows, or its skip counted.
  void add_event(Event& ev, const JsonBatch& b);
  // Whether a local parser must leave this (fully read) event to the whole parser.
  bool must_defer(const Event& ev) const;
  // A value of the root object other than "traceEvents" (its text is seg).
  void add_top_value(EventReader& reader, JsonBatch& b, const JsonSegment& seg);
  // After the last batch: what the reader saw, the stream's facts, and the
  // trace's names, processes, devices, time origin and meta.
  void finish(const JsonStreamInfo& info, const EventReader& reader);
  Trace freeze();

  // ---- columns and merging (chrome_json_columns.cpp) ----

  // How far rows, strings and tracks had got (where a deferred event goes).
  struct Mark {
    std::array<std::size_t, kTableCount> rows{};
    std::uint32_t strings = 0, tracks = 0;
  };
  Mark mark() const;
  // Before a batch (or before merging `incoming`'s rows): room in the columns.
  void grow_columns(const JsonBatch& b, std::uint64_t file_bytes, const EventParser* incoming,
                    std::vector<MemoryRange>* untouched);
  // Appends local's rows up to `upto`, its strings and tracks renumbered.
  void merge_rows(EventParser& local, const Mark& upto);
  // After its batch is merged: a local parser's rows go (strings, tracks and capacity stay).
  void clear_merged_rows();
  // A local parser's counts and flags (and its reader's), added to this parser's.
  void absorb(const EventParser& local, const EventReader& local_reader);

 private:
  struct OpenBegin {
    TimeNs start;
    StringId name, domain;
    std::uint32_t correlation;
  };
  enum class MemorySeries : std::uint8_t { allocated, since_start, reserved };

  // chrome_json_parser.cpp: strings, ids, tracks
  void skip(Skip reason) { ++skips_[static_cast<int>(reason)]; }
  StringId intern(const RawString& s, const JsonBatch& b);
  std::string_view unescape(const RawString& s, const JsonBatch& b);
  std::string to_string(const RawString& s, const JsonBatch& b) { return std::string(unescape(s, b)); }
  StringId intern_json(std::string_view text);
  StringId collective_json(const Args& a);
  std::uint32_t resolve_id(const IdValue& v, const JsonBatch& b, bool* is_pseudo = nullptr);
  TrackId cpu_track(const Event& ev, const JsonBatch& b);
  bool gpu_track(const Event& ev, const JsonBatch& b, TrackId* out);
  StringId domain_of(Cat c, const RawString& cat, const JsonBatch& b);
  static Cat classify(std::string_view cat);
  Cat category(const Event& ev, const JsonBatch& b);
  void note_time(std::int64_t t) {
    min_time_ = std::min(min_time_, t);
    max_time_ = std::max(max_time_, t);
  }
  // chrome_json_parser.cpp: events
  void add_complete(Event& ev, const JsonBatch& b);
  template <class Row>
  bool gpu_op(Row& r, const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end);
  void kernel_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end);
  void memcpy_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end);
  void memset_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end);
  void api_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat);
  void sync_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end);
  void fill_range(RangeRow& r, const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat);
  void gpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat);
  void cpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat);
  void autograd_link(const Args& a, RangeRow& r);
  void add_begin(Event& ev, const JsonBatch& b);
  void add_end(Event& ev, const JsonBatch& b);
  void add_instant(Event& ev, const JsonBatch& b);
  void add_metadata(Event& ev, const JsonBatch& b);
  // chrome_json_counters.cpp
  void add_counter(Event& ev, const JsonBatch& b);
  std::uint32_t named_series(std::string name, std::uint32_t device, std::string_view unit);
  void add_memory_event(const Event& ev);
  std::uint32_t memory_series(std::uint32_t device, MemorySeries which);
  void add_since_start_samples();
  // chrome_json_devices.cpp
  void read_device_properties(EventReader& reader, Walker& w, const JsonBatch& b);
  void add_devices();
  void renumber_memory_device();
  // chrome_json_meta.cpp
  void read_distributed_info(EventReader& reader, Walker& w, const JsonBatch& b);
  void top_scalar(const std::string& key, const std::string& value, const JsonBatch& b, const char* at);
  void name_tracks();
  void add_processes();
  void set_meta();
  void note_cut();
  void note_rows_after_cut();
  void shift_times(std::int64_t delta);
  void grids_in_blocks();
  void copy_kinds_from_calls();
  // chrome_json_columns.cpp
  std::uint64_t check_memory(const JsonBatch& b, const EventParser* incoming) const;
  template <class Table>
  void append_rows(Table& to, Table& from, std::size_t begin, std::size_t end, const EventParser& l);

  static constexpr std::uint32_t kPseudoIdBase = 0xF0000000u;

  const Source& source_;
  Role role_;
  TraceBuilder builder_;
  InternCache cache_;
  std::string scratch_, json_scratch_, collective_scratch_;
  std::uint64_t budget_;  // memory the import may take (trace/budget.h)
  JsonStreamInfo info_;   // at finish()

  // What was skipped or counted.
  SkipCounts skips_{};
  std::map<std::string, std::uint64_t> dynamic_skips_;  // phases not mapped ("phase_<c>")
  std::uint64_t sort_index_metadata_ = 0;
  std::uint64_t collective_args_ = 0;  // ops whose collective's arguments were kept (RangeRow::collective)

  // Mapping state.
  std::uint64_t last_cpu_key_ = ~std::uint64_t{0}, last_gpu_key_ = ~std::uint64_t{0};
  TrackId last_cpu_track_ = kNoRow, last_gpu_track_ = kNoRow;
  std::unordered_map<std::string, std::uint32_t> pseudo_ids_;
  std::unordered_map<std::uint32_t, std::string> pseudo_names_;
  std::unordered_map<std::uint32_t, std::string> process_names_, process_labels_;
  std::unordered_map<std::uint64_t, std::string> thread_names_;
  std::unordered_map<TrackId, std::vector<OpenBegin>> open_;
  std::unordered_map<std::string, std::uint32_t> series_;
  std::unordered_map<std::uint64_t, std::uint32_t> memory_series_;  // (device, MemorySeries) -> series id
  std::vector<std::uint32_t> since_start_series_, memory_devices_;
  std::array<StringId, 4> domain_ids_{};
  std::vector<std::uint32_t> sync_devices_;
  // (correlation, direction) of copy calls that say their direction
  // (ROCm's hipMemcpy* "kind"): CopyKind::htod or dtoh.
  std::vector<std::pair<std::uint32_t, CopyKind>> call_copy_kinds_;
  std::vector<Device> listed_devices_;
  std::set<std::string> top_keys_;  // keys of the root object read (a repeated one is skipped)

  // What the trace says about itself.
  std::int64_t origin_ns_ = 0;
  bool sub_us_ = false, kineto_ = false, schema_2021_ = false;
  std::int64_t min_time_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_time_ = std::numeric_limits<std::int64_t>::min();
  TimeNs profiler_span_start_ = std::numeric_limits<TimeNs>::max();

  // Columns and merging.
  std::array<std::size_t, kTableCount> rows_before_batch_{};
  std::array<std::size_t, kTableCount> merged_rows_{};  // Role::local: rows of this batch merged so far
  std::vector<StringId> global_string_;                 // Role::local: local string id -> the whole parser's
  std::vector<TrackId> global_track_;                   // Role::local: local track id -> the whole parser's
};

}  // namespace gpuscope::detail::chrome
