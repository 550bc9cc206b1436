// The Chrome JSON importer's columns (chrome_json_parser.h): room grown in
// the trace's columns before each batch, within the memory budget, and the
// rows a local parser made (two parse threads, chrome_json.cpp) merged into
// the whole parser's, with their string and track ids renumbered.
//
// [SECTION] Column growth
// [SECTION] Merging a local parser
#include <algorithm>

#include "import/chrome_json_parser.h"
#include "trace/budget.h"

namespace gpuscope::detail::chrome {

// [SECTION] Column growth ------------------------------------------------------------------------

// Before a batch: room in each table that grew in the last batch for twice
// the rows that batch added (or, before merging a local parser's batch, for
// the rows it made), grown in one step to the estimated final count: rows
// so far scaled by the estimated total of JSON text (for gzip: the
// compression ratio so far times the file size), plus 10%, and never more
// than one row per 32 bytes of text (no event is shorter), so that an
// unrepresentative start cannot reserve much. import_memory.h says why.
void EventParser::grow_columns(const JsonBatch& b, std::uint64_t file_bytes, const EventParser* incoming,
                               std::vector<MemoryRange>* untouched) {
  const std::uint64_t held = check_memory(b, incoming);
  const std::uint64_t json_done = b.stream_offset;  // the rows so far come from this much text
  double json_total = 0;
  if (json_done > 0 && b.file_done > 0 && file_bytes >= b.file_done)
    json_total = static_cast<double>(b.stream_offset + b.size - 1) *
                 (static_cast<double>(file_bytes) / static_cast<double>(b.file_done));
  const Mark incoming_rows = incoming ? incoming->mark() : Mark{};
  builder_.tables().for_each_table([&](TableId id, auto& table) {
    const std::size_t n = table.size();
    std::size_t& before = rows_before_batch_[static_cast<int>(id)];
    const std::size_t added = incoming ? incoming_rows.rows[static_cast<int>(id)] : n - before;
    before = n;
    if (added == 0) return;
    const std::size_t headroom = incoming ? added : std::max<std::size_t>(2 * added, 1024);
    const double estimate =
        json_done
            ? std::min(1.1 * json_total / static_cast<double>(json_done) * static_cast<double>(n), json_total / 32)
            : 0;
    // Never more room than the budget has left (the growth itself is checked before the next batch).
    const double room = static_cast<double>(n) + static_cast<double>(budget_ - std::min(held, budget_)) /
                                                     static_cast<double>(row_memory_bytes(id));
    grow_table(table, headroom, static_cast<std::size_t>(std::min(estimate, room)), untouched);
  });
}

// The memory budget (trace/budget.h), before each batch: what is built so
// far, and the rows of a local parser about to be merged. Returns those bytes.
std::uint64_t EventParser::check_memory(const JsonBatch& b, const EventParser* incoming) const {
  const std::uint64_t held = builder_.memory_bytes() + (incoming ? incoming->builder_.memory_bytes() : 0);
  check_memory_claim(source_.path,
                     "the events of the first " + std::to_string(b.stream_offset) + " bytes of JSON text" +
                         (source_.gzip ? " (decompressed)" : ""),
                     held, budget_, b.stream_offset);
  return held;
}

// [SECTION] Merging a local parser ---------------------------------------------------------------

EventParser::Mark EventParser::mark() const {
  Mark m;
  builder_.tables().for_each_table([&](TableId id, const auto& t) { m.rows[static_cast<int>(id)] = t.size(); });
  m.strings = builder_.strings().size();
  m.tracks = static_cast<std::uint32_t>(builder_.tracks().size());
  return m;
}

// Appends l's rows up to `upto` (per table), first interning its strings and
// tracks up to upto.strings / upto.tracks, in the order l made them.
void EventParser::merge_rows(EventParser& l, const Mark& upto) {
  while (l.global_string_.size() < upto.strings) {
    const StringId local = static_cast<StringId>(l.global_string_.size());
    l.global_string_.push_back(local == kEmptyString ? kEmptyString : cache_.get(l.builder_.strings().get(local)));
  }
  while (l.global_track_.size() < upto.tracks) {
    const Track& t = l.builder_.tracks()[l.global_track_.size()];
    l.global_track_.push_back(t.kind == TrackKind::gpu ? builder_.gpu_track(t.device, t.stream)
                                                       : builder_.cpu_track(t.pid, t.tid));
  }
  TraceTables& local_tables = l.builder_.tables();
  builder_.tables().for_each_table([&](TableId id, auto& table) {
    std::size_t& done = l.merged_rows_[static_cast<int>(id)];
    const std::size_t end = upto.rows[static_cast<int>(id)];
    if (end <= done) return;
    using Table = std::decay_t<decltype(table)>;
    Table* from = nullptr;
    local_tables.for_each_table([&](TableId lid, auto& lt) {
      if constexpr (std::is_same_v<std::decay_t<decltype(lt)>, Table>)
        if (lid == id) from = &lt;
    });
    append_rows(table, *from, done, end, l);
    done = end;
  });
}

// Rows [begin, end) of `from` appended to `to`, ids renumbered. Sparse
// columns stay empty while every row is 0, as TraceBuilder keeps them.
template <class Table>
void EventParser::append_rows(Table& to, Table& from, std::size_t begin, std::size_t end, const EventParser& l) {
  std::vector<void*> from_cols;
  from.for_each_column([&](ColumnInfo, auto& col) { from_cols.push_back(&col); });
  const std::size_t rows_before = to.size();
  std::size_t k = 0;
  to.for_each_column([&](ColumnInfo info, auto& col) {
    using Col = std::decay_t<decltype(col)>;
    const Col& src = *static_cast<const Col*>(from_cols[k++]);
    if (info.flags & kDerived) return;
    if ((info.flags & kSparse) && (src.empty() || col.empty())) {
      if (src.empty() && col.empty()) return;
      if (col.empty()) col.resize(rows_before);
      if (src.empty()) {
        col.resize(col.size() + (end - begin));
        return;
      }
    }
    const std::size_t at = col.size();
    col.insert(col.end(), src.begin() + static_cast<std::ptrdiff_t>(begin),
               src.begin() + static_cast<std::ptrdiff_t>(end));
    if constexpr (std::is_same_v<typename Col::value_type, std::uint32_t>) {
      if (info.name == "track") {
        for (std::size_t i = at; i < col.size(); ++i)
          if (col[i] != TraceBuilder::kResolveThroughCorrelation) col[i] = l.global_track_[col[i]];
      } else if (info.name == "name" || info.name == "domain" || info.name == "mangled" || info.name == "input_dims" ||
                 info.name == "input_types" || info.name == "concrete_inputs" || info.name == "collective") {
        for (std::size_t i = at; i < col.size(); ++i) col[i] = l.global_string_[col[i]];
      }
    }
  });
}

void EventParser::clear_merged_rows() {
  merged_rows_ = {};
  builder_.clear_rows();  // keeps its strings, tracks and column capacity
}

void EventParser::absorb(const EventParser& l, const EventReader& local_reader) {
  for (std::size_t i = 0; i < skips_.size(); ++i) skips_[i] += l.skips_[i];
  skips_[static_cast<int>(Skip::duplicate_key)] += local_reader.duplicate_keys;
  for (const auto& [reason, n] : l.dynamic_skips_) dynamic_skips_[reason] += n;
  sort_index_metadata_ += l.sort_index_metadata_;
  collective_args_ += l.collective_args_;
  sub_us_ |= l.sub_us_ || local_reader.sub_us;
  kineto_ |= l.kineto_;
  schema_2021_ |= l.schema_2021_;
  min_time_ = std::min(min_time_, l.min_time_);
  max_time_ = std::max(max_time_, l.max_time_);
  profiler_span_start_ = std::min(profiler_span_start_, l.profiler_span_start_);
  for (std::uint32_t d : l.sync_devices_)
    if (std::find(sync_devices_.begin(), sync_devices_.end(), d) == sync_devices_.end()) sync_devices_.push_back(d);
  call_copy_kinds_.insert(call_copy_kinds_.end(), l.call_copy_kinds_.begin(), l.call_copy_kinds_.end());
}

}  // namespace gpuscope::detail::chrome
