#include "trace/trace.h"

#include <algorithm>
#include <limits>

#include "trace/search.h"
#include "trace/time_columns.h"

namespace gpuscope {

std::string_view to_string(TraceSource s) {
  switch (s) {
    case TraceSource::cupti: return "cupti";
    case TraceSource::chrome_json: return "chrome-json";
    case TraceSource::synthetic: return "synthetic";
    case TraceSource::nsys_sqlite: return "nsys-sqlite";
    case TraceSource::unknown: break;
  }
  return "unknown";
}

std::string_view to_string(CategoryRuleKind k) {
  switch (k) {
    case CategoryRuleKind::launching_op: return "launching op";
    case CategoryRuleKind::pad_op: return "pad op";
    case CategoryRuleKind::layout_op: return "layout op";
    case CategoryRuleKind::kernel_name: break;
  }
  return "kernel name";
}

std::string_view to_string(KernelCategory c) {
  switch (c) {
    case KernelCategory::padding: return "padding";
    case KernelCategory::broadcast: return "broadcast";
    case KernelCategory::transpose: return "transpose";
    case KernelCategory::convolution: return "convolution";
    case KernelCategory::gemm: return "gemm";
    case KernelCategory::normalization: return "normalization";
    case KernelCategory::elementwise: return "elementwise";
    case KernelCategory::reduction: return "reduction";
    case KernelCategory::pooling: return "pooling";
    case KernelCategory::softmax_loss: return "softmax_loss";
    case KernelCategory::optimizer: return "optimizer";
    case KernelCategory::communication: return "communication";
    case KernelCategory::memory: return "memory";
    case KernelCategory::attention: return "attention";
    case KernelCategory::other:
    case KernelCategory::count_: break;
  }
  return "other";
}

std::string_view to_string(CopyKind k) {
  switch (k) {
    case CopyKind::htod: return "HtoD";
    case CopyKind::dtoh: return "DtoH";
    case CopyKind::htoa: return "HtoA";
    case CopyKind::atoh: return "AtoH";
    case CopyKind::atoa: return "AtoA";
    case CopyKind::atod: return "AtoD";
    case CopyKind::dtoa: return "DtoA";
    case CopyKind::dtod: return "DtoD";
    case CopyKind::htoh: return "HtoH";
    case CopyKind::ptop: return "PtoP";
    case CopyKind::unknown: break;
  }
  return "unknown";
}

std::string_view to_string(MemoryKind k) {
  switch (k) {
    case MemoryKind::pageable: return "pageable";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::device: return "device";
    case MemoryKind::array: return "array";
    case MemoryKind::managed: return "managed";
    case MemoryKind::device_static: return "device_static";
    case MemoryKind::managed_static: return "managed_static";
    case MemoryKind::unknown: break;
  }
  return "unknown";
}

std::string_view to_string(ApiDomain d) {
  switch (d) {
    case ApiDomain::runtime: return "runtime";
    case ApiDomain::driver: return "driver";
    case ApiDomain::other: break;
  }
  return "other";
}

std::string_view to_string(SyncType t) {
  switch (t) {
    case SyncType::event: return "event";
    case SyncType::stream_wait_event: return "stream_wait_event";
    case SyncType::stream: return "stream";
    case SyncType::context: return "context";
    case SyncType::unknown: break;
  }
  return "unknown";
}

std::string_view to_string(RangeKind k) {
  switch (k) {
    case RangeKind::push_pop: return "push_pop";
    case RangeKind::start_end: return "start_end";
    case RangeKind::mark: return "mark";
    case RangeKind::annotation: return "annotation";
  }
  return "unknown";
}

std::string_view to_string(TableId t) {
  switch (t) {
    case TableId::kernels: return "kernels";
    case TableId::memcpys: return "memcpys";
    case TableId::memsets: return "memsets";
    case TableId::api_calls: return "api_calls";
    case TableId::ranges: return "ranges";
    case TableId::syncs: return "syncs";
    case TableId::counters: return "counters";
    case TableId::overheads: return "overheads";
    case TableId::memory_events: return "memory_events";
    case TableId::os_calls: return "os_calls";
    case TableId::count_: break;
  }
  return "unknown";
}

// ---- TraceMeta

std::uint64_t count_of(const NamedCounts& counts, std::string_view key) {
  for (const auto& [k, v] : counts)
    if (k == key) return v;
  return 0;
}

namespace {
std::uint64_t& count_slot(NamedCounts& counts, std::string_view key) {
  for (auto& [k, v] : counts)
    if (k == key) return v;
  return counts.emplace_back(std::string(key), 0).second;
}
}  // namespace

void add_count(NamedCounts& counts, std::string_view key, std::uint64_t delta) { count_slot(counts, key) += delta; }
void set_count(NamedCounts& counts, std::string_view key, std::uint64_t value) { count_slot(counts, key) = value; }

std::string_view TraceMeta::property(std::string_view key) const {
  for (const auto& [k, v] : properties)
    if (k == key) return v;
  return {};
}

void TraceMeta::set_property(std::string_view key, std::string_view value) {
  for (auto& [k, v] : properties)
    if (k == key) {
      v = value;
      return;
    }
  properties.emplace_back(std::string(key), std::string(value));
}

// ---- TraceTables

std::size_t TraceTables::rows(TableId t) const {
  switch (t) {
    case TableId::kernels: return kernels.size();
    case TableId::memcpys: return memcpys.size();
    case TableId::memsets: return memsets.size();
    case TableId::api_calls: return api_calls.size();
    case TableId::ranges: return ranges.size();
    case TableId::syncs: return syncs.size();
    case TableId::counters: return counters.size();
    case TableId::overheads: return overheads.size();
    case TableId::memory_events: return memory_events.size();
    case TableId::os_calls: return os_calls.size();
    case TableId::count_: break;
  }
  return 0;
}

// ---- Trace

const Device* Trace::device(std::uint32_t id) const {
  for (const Device& d : devices_)
    if (d.id == id) return &d;
  return nullptr;
}

const Process* Trace::process(std::uint32_t pid) const {
  for (const Process& p : processes_)
    if (p.pid == pid) return &p;
  return nullptr;
}

RowRange Trace::rows_of(TableId table, TrackId track) const {
  const TrackIndex& ix = index_[static_cast<int>(table)];
  if (track + 1 >= ix.begin.size()) return {};
  return {ix.begin[track], ix.begin[track + 1]};
}

// `first(v, lo, hi, x, near)`: the first index in [lo, hi) with v[i] >= x,
// `near` a guess of it (the plain search ignores it).
template <class First>
RowRange Trace::overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1, RowIndex near, First&& first) const {
  const RowRange all = rows_of(table, track);
  if (all.empty() || t1 < t0) return {all.begin, all.begin};
  const detail::TimeColumns tc = detail::time_columns(t_, table);
  const TimeNs* start = tc.start->data();
  const TimeNs* end = tc.end->data();
  // Last candidate: the first row starting after t1.
  const RowIndex hi =
      t1 == std::numeric_limits<TimeNs>::max() ? all.end : first(start, all.begin, all.end, t1 + 1, near);
  const TrackIndex& ix = index_[static_cast<int>(table)];
  RowIndex lo;
  if (ix.ends_sorted[track]) {
    lo = first(end, all.begin, hi, t0, near);
  } else {
    // Events on this track nest or overlap. The first row that ends at or
    // after t0, from the running maximum of ends by blocks: a few long rows
    // (a step's or a phase's range over thousands of ops) do not send the
    // search back to their start.
    const TimeNs* reach = ix.reach.data() + ix.reach_begin[track];
    const auto blocks = static_cast<RowIndex>(ix.reach_begin[track + 1] - ix.reach_begin[track]);
    if (blocks) {
      const RowIndex block =
          first(reach, 0, blocks, t0, near >= all.begin ? (near - all.begin) / kReachBlock : RowIndex{0});
      RowIndex row = all.end;  // no row ends at or after t0
      if (block != blocks) {
        row = all.begin + block * kReachBlock;
        while (row < all.end && end[row] < t0) ++row;
      }
      lo = std::min(row, hi);
    } else {
      // Any row ending at or after t0 starts at or after t0 - (the longest
      // event on the track).
      TimeNs from;
      if (__builtin_sub_overflow(t0, ix.max_duration[track], &from)) from = std::numeric_limits<TimeNs>::min();
      lo = first(start, all.begin, hi, from, near);
    }
  }
  return {lo, std::max(lo, hi)};
}

RowRange Trace::rows_overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1) const {
  return overlapping(table, track, t0, t1, 0, [](const TimeNs* v, RowIndex lo, RowIndex hi, TimeNs x, RowIndex) {
    return static_cast<RowIndex>(std::lower_bound(v + lo, v + hi, x) - v);
  });
}

RowRange Trace::rows_overlapping(TableId table, TrackId track, TimeNs t0, TimeNs t1, RowIndex* hint) const {
  const RowRange r =
      overlapping(table, track, t0, t1, *hint, [](const TimeNs* v, RowIndex lo, RowIndex hi, TimeNs x, RowIndex near) {
        return first_at_or_after(v, lo, hi, near, x);
      });
  *hint = r.begin;
  return r;
}

bool Trace::is_op_range(RowIndex r) const {
  const RangeTable& g = t_.ranges;
  if (tracks_[g.track_at(r)].kind != TrackKind::cpu) return false;
  switch (g.kind_at(r)) {
    case RangeKind::push_pop:
    case RangeKind::start_end: return true;
    case RangeKind::annotation: return g.domain[r] == cpu_op_domain_ || g.domain[r] == user_annotation_domain_;
    case RangeKind::mark: break;
  }
  return false;
}

std::uint32_t Trace::find_counter_series(std::string_view name, std::uint32_t device) const {
  for (std::size_t i = 0; i < counter_series_.size(); ++i)
    if (counter_series_[i].device == device && counter_series_[i].name == name) return static_cast<std::uint32_t>(i);
  return kNoSeries;
}

RowIndex Trace::launching_api(OpRef op) const {
  switch (op.table) {
    case OpTable::kernel: return t_.kernels.api[op.row];
    case OpTable::memcpy: return t_.memcpys.api[op.row];
    case OpTable::memset: return t_.memsets.api[op.row];
    case OpTable::none: break;
  }
  return kNoRow;
}

namespace {
template <class Table>
std::size_t table_bytes(const Table& t) {
  std::size_t n = 0;
  t.for_each_column([&](ColumnInfo, auto& col) {
    using C = std::remove_cvref_t<decltype(col)>;
    n += col.capacity() * sizeof(typename C::value_type);
    if constexpr (detail::is_compact_column<C>) n += col.compact_bytes();
  });
  return n;
}
}  // namespace

std::size_t Trace::memory_bytes() const {
  std::size_t n = sizeof(*this) + strings_.memory_bytes();
  t_.for_each_table([&](TableId, const auto& table) { n += table_bytes(table); });
  for (const TrackIndex& ix : index_)
    n += ix.begin.capacity() * sizeof(RowIndex) + ix.max_duration.capacity() * sizeof(TimeNs) +
         ix.ends_sorted.capacity() + ix.reach.capacity() * sizeof(TimeNs) +
         ix.reach_begin.capacity() * sizeof(RowIndex);
  n += extra_ops_.capacity() * sizeof(ExtraOp);
  n += tracks_.capacity() * sizeof(Track) + devices_.capacity() * sizeof(Device) +
       processes_.capacity() * sizeof(Process) + counter_series_.capacity() * sizeof(CounterSeries);
  return n;
}

}  // namespace gpuscope
