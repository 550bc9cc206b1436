// The Chrome JSON importer's parser (chrome_json_parser.h): one event, as the
// reader read it, mapped to the trace's tables. What maps to what:
// chrome_json.h and docs/import.md.
//
// [SECTION] Strings (interning, unescaping, JSON values)
// [SECTION] Ids and tracks
// [SECTION] Categories
// [SECTION] Events by phase
// [SECTION] Complete events (GPU ops, API calls, syncs, ranges)
// [SECTION] Begin/end, instants, metadata
// [SECTION] Memcpy and memset names
#include "import/chrome_json_parser.h"

#include <xxhash.h>

#include <algorithm>
#include <tuple>

#include "import/chrome_json_keys.h"
#include "trace/budget.h"
#include "trace/json_text.h"

namespace gpuscope::detail::chrome {

// [SECTION] Strings ------------------------------------------------------------------------------

StringId InternCache::get(std::string_view s) {
  // A name the table cuts (trace/budget.h) never equals what it stores: not cached.
  if (s.size() > kMaxNameBytes) return b_.intern(s);
  const std::uint64_t h = XXH3_64bits(s.data(), s.size());
  std::size_t mask = slots_.size() - 1;
  std::size_t i = h & mask;
  while (slots_[i].used) {
    if (slots_[i].hash == h && b_.strings().get(slots_[i].id) == s) return slots_[i].id;
    i = (i + 1) & mask;
  }
  const StringId id = b_.intern(s);
  slots_[i] = Slot{h, id, true};
  if (++count_ * 2 > slots_.size()) rehash();
  return id;
}

void InternCache::rehash() {
  std::vector<Slot> fresh(slots_.size() * 2);
  const std::size_t mask = fresh.size() - 1;
  for (const Slot& s : slots_) {
    if (!s.used) continue;
    std::size_t i = s.hash & mask;
    while (fresh[i].used) i = (i + 1) & mask;
    fresh[i] = s;
  }
  slots_.swap(fresh);
}

EventParser::EventParser(const Source& source, Role role)
    : source_(source), role_(role), cache_(builder_), budget_(memory_budget()) {
  builder_.meta().source = TraceSource::chrome_json;
  // Local parsers keep whole names: the merge interns (and cuts) them, so
  // that one and two threads count the same names cut.
  if (role == Role::whole) builder_.limit_names(kMaxNameBytes);
}

// Interns a raw JSON string (unescaping it first if needed).
StringId EventParser::intern(const RawString& s, const JsonBatch& b) {
  if (!s.present || s.raw.empty()) return kEmptyString;
  if (!s.escaped) return cache_.get(s.raw);
  return cache_.get(unescape(s, b));
}

std::string_view EventParser::unescape(const RawString& s, const JsonBatch& b) {
  if (!s.escaped) return s.raw;
  scratch_.clear();
  if (!json_unescape(s.raw, &scratch_)) source_.fail_at(b, s.raw.data(), "invalid escape sequence in a string");
  return scratch_;
}

// JSON text without the whitespace outside strings, interned.
StringId EventParser::intern_json(std::string_view text) {
  if (text.empty()) return kEmptyString;
  json_scratch_.clear();
  JsonStringScan strings;
  for (char c : text)
    if (strings.in_string(c) || !(c == ' ' || c == '\n' || c == '\t' || c == '\r')) json_scratch_.push_back(c);
  return cache_.get(json_scratch_);
}

// The collective's arguments Kineto recorded on an op, as one compact JSON
// object (0 without a collective name or message size), counted.
StringId EventParser::collective_json(const Args& a) {
  if (a.collective[0].empty() && a.collective[1].empty()) return kEmptyString;
  collective_scratch_.assign(1, '{');
  for (std::size_t i = 0; i < kCollectiveKeys.size(); ++i) {
    if (a.collective[i].empty()) continue;
    if (collective_scratch_.size() > 1) collective_scratch_ += ',';
    collective_scratch_ += '"';
    collective_scratch_ += kCollectiveKeys[i];
    collective_scratch_ += "\":";
    collective_scratch_ += a.collective[i];
  }
  collective_scratch_ += '}';
  ++collective_args_;
  return intern_json(collective_scratch_);
}

// [SECTION] Ids and tracks -----------------------------------------------------------------------

// Numeric id for a pid/tid: numbers as they are; strings like "stream 7"
// give their number; other strings get a stable made-up id (named after the
// string) from the top of the range, where real pids and tids never are.
std::uint32_t EventParser::resolve_id(const IdValue& v, const JsonBatch& b, bool* is_pseudo) {
  if (is_pseudo) *is_pseudo = false;
  if (v.kind == IdValue::Kind::number) {
    if (v.number >= std::numeric_limits<std::int32_t>::min() && v.number <= 0xffffffffLL)
      return static_cast<std::uint32_t>(v.number);
  }
  if (v.kind == IdValue::Kind::none) return 0;
  std::string text = v.kind == IdValue::Kind::number ? std::to_string(v.number) : to_string(v.text, b);
  if (starts_with_ci(text, "stream ")) {
    std::int64_t n = 0;
    if (parse_json_int(trim_ws(std::string_view(text).substr(7)), &n) && n >= 0 && n <= 0xffffffffLL)
      return static_cast<std::uint32_t>(n);
  }
  if (is_pseudo) *is_pseudo = true;
  auto it = pseudo_ids_.find(text);
  if (it != pseudo_ids_.end()) return it->second;
  const std::uint32_t id = kPseudoIdBase + static_cast<std::uint32_t>(pseudo_ids_.size());
  pseudo_ids_.emplace(text, id);
  pseudo_names_.emplace(id, text);
  return id;
}

// resolve_id() without its side effect: true when it would not make up an id.
static bool resolves_without_pseudo_id(const IdValue& v) {
  if (v.kind == IdValue::Kind::none) return true;
  if (v.kind == IdValue::Kind::number)
    return v.number >= std::numeric_limits<std::int32_t>::min() && v.number <= 0xffffffffLL;
  if (v.text.escaped || !starts_with_ci(v.text.raw, "stream ")) return false;
  std::int64_t n = 0;
  return parse_json_int(trim_ws(v.text.raw.substr(7)), &n) && n >= 0 && n <= 0xffffffffLL;
}

bool EventParser::must_defer(const Event& ev) const {
  if (!ev.ph.present || ev.ph.raw.empty()) return false;  // skipped (counted) locally
  const char ph = ev.phase();
  if (ev.is_flow()) return false;
  if (ph == 'M' || ph == 'B' || ph == 'E' || ph == 'C') return true;  // state kept across events
  if ((ph == 'i' || ph == 'I') && ev.is_memory()) return true;        // series, as for counters
  // X, i / I and skipped phases: local unless an id must be made up.
  return !resolves_without_pseudo_id(ev.pid) || !resolves_without_pseudo_id(ev.tid);
}

TrackId EventParser::cpu_track(const Event& ev, const JsonBatch& b) {
  const std::uint32_t pid = resolve_id(ev.pid, b);
  const std::uint32_t tid = resolve_id(ev.tid, b);
  const std::uint64_t key = (std::uint64_t{pid} << 32) | tid;
  if (key == last_cpu_key_ && last_cpu_track_ != kNoRow) return last_cpu_track_;
  last_cpu_key_ = key;
  last_cpu_track_ = builder_.cpu_track(pid, tid);
  return last_cpu_track_;
}

// GPU (device, stream): args.device / args.stream, else Kineto's pid = device, tid = stream.
bool EventParser::gpu_track(const Event& ev, const JsonBatch& b, TrackId* out) {
  std::uint32_t device = 0, stream = 0;
  if (ev.args.present & kArgDevice) {
    device = static_cast<std::uint32_t>(ev.args.device);
  } else if (ev.pid.kind == IdValue::Kind::number && ev.pid.number >= 0 && ev.pid.number <= 0xffffffffLL) {
    device = static_cast<std::uint32_t>(ev.pid.number);
  } else {
    skip(Skip::gpu_op_without_device);
    return false;
  }
  if (ev.args.present & kArgStream) {
    stream = static_cast<std::uint32_t>(ev.args.stream);
  } else if (ev.tid.kind != IdValue::Kind::none) {
    bool pseudo = false;
    stream = resolve_id(ev.tid, b, &pseudo);
    if (pseudo) {
      skip(Skip::gpu_op_without_stream);
      return false;
    }
  } else {
    skip(Skip::gpu_op_without_stream);
    return false;
  }
  const std::uint64_t key = (std::uint64_t{device} << 32) | stream;
  if (key != last_gpu_key_ || last_gpu_track_ == kNoRow) {
    last_gpu_key_ = key;
    last_gpu_track_ = builder_.gpu_track(device, stream);
  }
  *out = last_gpu_track_;
  return true;
}

// [SECTION] Categories ---------------------------------------------------------------------------

enum class EventParser::Cat : std::uint8_t {
  kernel,
  memcpy,
  memset,
  runtime,
  driver,
  sync,
  gpu_annotation,
  cpu_op,
  user_annotation,
  python_function,
  other
};

namespace {

using Cat = EventParser::Cat;

// Kineto's categories, both schemas (2021: Kernel, Memcpy, Memset, Runtime,
// Operator, …), in lower case.
constexpr KeyTable<Cat, 16> kCategories({
    {"kernel", Cat::kernel},
    {"memcpy", Cat::memcpy},
    {"gpu_memcpy", Cat::memcpy},
    {"memset", Cat::memset},
    {"gpu_memset", Cat::memset},
    {"runtime", Cat::runtime},
    {"cuda_runtime", Cat::runtime},
    {"driver", Cat::driver},
    {"cuda_driver", Cat::driver},
    {"cuda_sync", Cat::sync},
    {"gpu_user_annotation", Cat::gpu_annotation},
    {"cpu_op", Cat::cpu_op},
    {"operator", Cat::cpu_op},
    {"user_annotation", Cat::user_annotation},
    {"python", Cat::python_function},
    {"python_function", Cat::python_function},
});

}  // namespace

// A category as written (what current Kineto writes: one lookup), else in
// lower case.
EventParser::Cat EventParser::classify(std::string_view cat) {
  if (const Cat* c = kCategories.find(cat)) return *c;
  char lower[24];
  if (cat.size() > sizeof lower) return Cat::other;
  for (std::size_t i = 0; i < cat.size(); ++i)
    lower[i] = cat[i] >= 'A' && cat[i] <= 'Z' ? static_cast<char>(cat[i] - 'A' + 'a') : cat[i];
  const Cat* c = kCategories.find(std::string_view(lower, cat.size()));
  return c ? *c : Cat::other;
}

EventParser::Cat EventParser::category(const Event& ev, const JsonBatch& b) {
  return ev.cat.present ? classify(unescape(ev.cat, b)) : Cat::other;
}

StringId EventParser::domain_of(Cat c, const RawString& cat, const JsonBatch& b) {
  switch (c) {
    case Cat::cpu_op: return domain_ids_[0] ? domain_ids_[0] : (domain_ids_[0] = cache_.get("cpu_op"));
    case Cat::user_annotation:
      return domain_ids_[1] ? domain_ids_[1] : (domain_ids_[1] = cache_.get("user_annotation"));
    case Cat::python_function:
      return domain_ids_[2] ? domain_ids_[2] : (domain_ids_[2] = cache_.get("python_function"));
    case Cat::gpu_annotation:
      return domain_ids_[3] ? domain_ids_[3] : (domain_ids_[3] = cache_.get("gpu_user_annotation"));
    default: return intern(cat, b);
  }
}

// [SECTION] Events by phase ----------------------------------------------------------------------

void EventParser::add_event(Event& ev, const JsonBatch& b) {
  if (!ev.ph.present || ev.ph.raw.empty()) {
    skip(Skip::missing_ph);
    return;
  }
  const char ph = ev.phase();
  if (ph == 'M') return add_metadata(ev, b);
  if (ev.is_flow()) return skip(Skip::flow);
  if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 'i' && ph != 'I' && ph != 'C') {
    std::string reason = "phase_";
    if (ph >= '!' && ph <= '~')
      reason += ph;
    else
      reason += "other";
    ++dynamic_skips_[reason];
    return;
  }
  if (!ev.has_ts) return skip(Skip::missing_ts);
  if (!ev.ts_ok) return skip(Skip::invalid_ts);
  note_time(ev.ts);
  switch (ph) {
    case 'X': return add_complete(ev, b);
    case 'B': return add_begin(ev, b);
    case 'E': return add_end(ev, b);
    case 'i':
    case 'I': return add_instant(ev, b);
    case 'C': return add_counter(ev, b);
    default: return;
  }
}

// [SECTION] Complete events ----------------------------------------------------------------------

void EventParser::add_complete(Event& ev, const JsonBatch& b) {
  if (!ev.has_dur) return skip(Skip::missing_dur);
  if (!ev.dur_ok) return skip(Skip::invalid_dur);
  if (ev.dur < 0) return skip(Skip::negative_dur);
  const TimeNs start = ev.ts;
  if (start > std::numeric_limits<TimeNs>::max() - ev.dur) return skip(Skip::invalid_dur);
  const TimeNs end = start + ev.dur;
  note_time(end);
  const Cat cat = category(ev, b);
  if (ev.cat.present && cat != Cat::other && ev.cat.raw.size() && ev.cat.raw[0] >= 'A' && ev.cat.raw[0] <= 'Z')
    schema_2021_ = true;
  if (cat != Cat::other && cat != Cat::python_function) kineto_ = true;
  switch (cat) {
    case Cat::kernel: return kernel_event(ev, b, start, end);
    case Cat::memcpy: return memcpy_event(ev, b, start, end);
    case Cat::memset: return memset_event(ev, b, start, end);
    case Cat::runtime:
    case Cat::driver: return api_event(ev, b, start, end, cat);
    case Cat::sync: return sync_event(ev, b, start, end);
    case Cat::gpu_annotation: return gpu_range_event(ev, b, start, end, cat);
    default: return cpu_range_event(ev, b, start, end, cat);
  }
}

namespace {
std::uint32_t correlation(const Args& a) { return (a.present & kArgCorrelation) ? as_u32(a.correlation) : 0; }
std::uint32_t external_id(const Args& a) { return (a.present & kArgExternal) ? as_u32(a.external) : 0; }
}  // namespace

// What every GPU op row takes from its event: the track (false when the
// event names none: counted and skipped), time and correlation; and the
// bytes of a copy or memset.
template <class Row>
bool EventParser::gpu_op(Row& r, const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
  if (!gpu_track(ev, b, &r.track)) return false;
  r.start = start;
  r.end = end;
  r.correlation = correlation(ev.args);
  if constexpr (requires { r.bytes; })
    if (ev.args.present & kArgBytes) r.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(ev.args.bytes, 0));
  return true;
}

void EventParser::kernel_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
  const Args& a = ev.args;
  KernelRow r;
  if (!gpu_op(r, ev, b, start, end)) return;
  r.name = intern(ev.name, b);
  if (a.present & kArgGrid) std::tie(r.grid_x, r.grid_y, r.grid_z) = std::tie(a.grid[0], a.grid[1], a.grid[2]);
  if (a.present & kArgBlock) std::tie(r.block_x, r.block_y, r.block_z) = std::tie(a.block[0], a.block[1], a.block[2]);
  if (a.present & kArgRegisters)
    r.registers = static_cast<std::uint16_t>(std::clamp<std::int64_t>(a.registers, 0, 0xffff));
  // Kineto's "shared memory" is static + dynamic per block; the split is not in the file.
  if (a.present & kArgSmem) r.static_smem = as_u32(a.smem);
  builder_.add_kernel(r);
}

namespace {
void parse_memcpy_name(std::string_view name, CopyKind* kind, MemoryKind* src, MemoryKind* dst);
MemoryKind memory_kind_in_parens(std::string_view name);
}  // namespace

void EventParser::memcpy_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
  MemcpyRow r;
  if (!gpu_op(r, ev, b, start, end)) return;
  parse_memcpy_name(unescape(ev.name, b), &r.kind, &r.src_kind, &r.dst_kind);
  builder_.add_memcpy(r);
}

void EventParser::memset_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
  MemsetRow r;
  if (!gpu_op(r, ev, b, start, end)) return;
  r.mem_kind = memory_kind_in_parens(unescape(ev.name, b));
  builder_.add_memset(r);
}

void EventParser::api_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
  const Args& a = ev.args;
  ApiCallRow r;
  r.track = cpu_track(ev, b);
  r.start = start;
  r.end = end;
  r.correlation = correlation(a);
  r.name = intern(ev.name, b);
  r.domain = cat == Cat::runtime ? ApiDomain::runtime : ApiDomain::driver;
  if (a.present & kArgCbid) r.cbid = as_u32(a.cbid);
  // hipMemcpyKind 1 and 2 (cudaMemcpyKind numbers them alike): the
  // direction the call asked for, which the copy's own record may not say.
  if (a.copy_kind.present && r.correlation != 0) {
    const std::string_view k = unescape(a.copy_kind, b);
    if (k == "1" || k == "2") call_copy_kinds_.emplace_back(r.correlation, k == "1" ? CopyKind::htod : CopyKind::dtoh);
  }
  builder_.add_api_call(r);
}

void EventParser::sync_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
  const Args& a = ev.args;
  // Kineto draws cuda_sync on the GPU track; the model keeps syncs on the
  // waiting thread, found through the correlation of the API call.
  SyncRow r;
  r.start = start;
  r.end = end;
  r.track = TraceBuilder::kResolveThroughCorrelation;
  r.correlation = correlation(a);
  if (a.present & kArgDevice)
    r.device = as_u32(a.device);
  else if (ev.pid.kind == IdValue::Kind::number && ev.pid.number >= 0)
    r.device = static_cast<std::uint32_t>(ev.pid.number);
  if (r.device != kNoDevice && std::find(sync_devices_.begin(), sync_devices_.end(), r.device) == sync_devices_.end())
    sync_devices_.push_back(r.device);
  if ((a.present & kArgStream) && a.stream >= 0) r.stream = static_cast<std::uint32_t>(a.stream);
  if ((a.present & kArgWaitEvent) && a.wait_event >= 0) r.event = static_cast<std::uint32_t>(a.wait_event);
  const std::string_view kind = a.sync_kind.present ? unescape(a.sync_kind, b) : unescape(ev.name, b);
  if (iequals(kind, "Stream Sync"))
    r.type = SyncType::stream;
  else if (iequals(kind, "Event Sync"))
    r.type = SyncType::event;
  else if (iequals(kind, "Context Sync"))
    r.type = SyncType::context;
  else if (iequals(kind, "Stream Wait Event"))
    r.type = SyncType::stream_wait_event;
  builder_.add_sync(r);
}

// What a range row takes from its complete event (once its track is set:
// strings are interned in the order the one-thread import met them).
void EventParser::fill_range(RangeRow& r, const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
  r.start = start;
  r.end = end;
  r.name = intern(ev.name, b);
  r.domain = domain_of(cat, ev.cat, b);
  r.kind = RangeKind::annotation;
  r.correlation = external_id(ev.args);
}

// PyTorch's autograd link: -1 (or no key) is its "none"; a value out of
// range is counted and the op kept without the link.
void EventParser::autograd_link(const Args& a, RangeRow& r) {
  if (!(a.present & kArgSequence) || a.sequence == -1) return;
  const bool thread_ok =
      !(a.present & kArgFwdThread) || (a.fwd_thread >= 0 && a.fwd_thread <= std::numeric_limits<std::uint32_t>::max());
  if (a.sequence < 0 || a.sequence == std::numeric_limits<std::int64_t>::max() || !thread_ok) {
    skip(Skip::invalid_sequence);
    return;
  }
  r.sequence = stored_sequence(a.sequence);
  if (a.present & kArgFwdThread) r.fwd_thread = static_cast<std::uint32_t>(a.fwd_thread);
}

void EventParser::gpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
  RangeRow r;
  if (!gpu_track(ev, b, &r.track)) return;
  fill_range(r, ev, b, start, end, cat);
  builder_.add_range(r);
}

void EventParser::cpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
  const Args& a = ev.args;
  RangeRow r;
  r.track = cpu_track(ev, b);
  fill_range(r, ev, b, start, end, cat);
  r.input_dims = intern_json(a.input_dims);
  r.input_types = intern_json(a.input_types);
  r.concrete_inputs = intern_json(a.concrete_inputs);
  r.collective = collective_json(a);
  autograd_link(a, r);
  if (cat == Cat::other && ev.cat.present && iequals(unescape(ev.cat, b), "Trace") &&
      starts_with_ci(unescape(ev.name, b), "PyTorch Profiler"))
    profiler_span_start_ = std::min(profiler_span_start_, start);
  builder_.add_range(r);
}

// [SECTION] Begin/end, instants, metadata --------------------------------------------------------

void EventParser::add_begin(Event& ev, const JsonBatch& b) {
  const TrackId track = cpu_track(ev, b);
  const Cat cat = category(ev, b);
  open_[track].push_back(OpenBegin{ev.ts, intern(ev.name, b), domain_of(cat, ev.cat, b), external_id(ev.args)});
}

void EventParser::add_end(Event& ev, const JsonBatch& b) {
  const TrackId track = cpu_track(ev, b);
  auto it = open_.find(track);
  if (it == open_.end() || it->second.empty()) return skip(Skip::unmatched_end);
  const OpenBegin o = it->second.back();
  it->second.pop_back();
  if (ev.ts < o.start) return skip(Skip::negative_dur);
  RangeRow r;
  r.track = track;
  r.start = o.start;
  r.end = ev.ts;
  r.name = o.name;
  r.domain = o.domain;
  r.kind = RangeKind::annotation;
  r.correlation = o.correlation;
  builder_.add_range(r);
}

void EventParser::add_instant(Event& ev, const JsonBatch& b) {
  if (ev.is_memory()) return add_memory_event(ev);
  RangeRow r;
  r.track = cpu_track(ev, b);
  r.start = r.end = ev.ts;
  r.name = intern(ev.name, b);
  const Cat cat = category(ev, b);
  r.domain = domain_of(cat, ev.cat, b);
  r.kind = RangeKind::mark;
  r.correlation = external_id(ev.args);
  builder_.add_range(r);
}

void EventParser::add_metadata(Event& ev, const JsonBatch& b) {
  const std::string_view name = unescape(ev.name, b);
  if (name == "process_name" || name == "process_labels") {
    const RawString& value = name == "process_name" ? ev.args.name : ev.args.labels;
    if (!value.present) return skip(Skip::metadata);
    const std::uint32_t pid = resolve_id(ev.pid, b);
    (name == "process_name" ? process_names_ : process_labels_)[pid] = to_string(value, b);
  } else if (name == "thread_name") {
    if (!ev.args.name.present) return skip(Skip::metadata);
    const std::uint32_t pid = resolve_id(ev.pid, b);
    const std::uint32_t tid = resolve_id(ev.tid, b);
    thread_names_[(std::uint64_t{pid} << 32) | tid] = std::string(trim_ws(to_string(ev.args.name, b)));
  } else if (name == "process_sort_index" || name == "thread_sort_index") {
    // Display order only; gpuscope orders tracks by (device, stream) and (pid, tid).
    ++sort_index_metadata_;
  } else {
    skip(Skip::metadata);
  }
}

// [SECTION] Memcpy and memset names --------------------------------------------------------------

namespace {

MemoryKind memory_kind(std::string_view s) {
  if (iequals(s, "Pageable")) return MemoryKind::pageable;
  if (iequals(s, "Pinned")) return MemoryKind::pinned;
  if (iequals(s, "Device")) return MemoryKind::device;
  if (iequals(s, "Array")) return MemoryKind::array;
  if (iequals(s, "Managed")) return MemoryKind::managed;
  if (iequals(s, "Device Static")) return MemoryKind::device_static;
  if (iequals(s, "Managed Static")) return MemoryKind::managed_static;
  return MemoryKind::unknown;
}

// "Memcpy HtoD (Pageable -> Device)" -> htod, pageable, device.
void parse_memcpy_name(std::string_view name, CopyKind* kind, MemoryKind* src, MemoryKind* dst) {
  static constexpr std::pair<std::string_view, CopyKind> kKinds[] = {
      {"HtoD", CopyKind::htod}, {"DtoH", CopyKind::dtoh}, {"DtoD", CopyKind::dtod}, {"HtoH", CopyKind::htoh},
      {"PtoP", CopyKind::ptop}, {"HtoA", CopyKind::htoa}, {"AtoH", CopyKind::atoh}, {"AtoA", CopyKind::atoa},
      {"AtoD", CopyKind::atod}, {"DtoA", CopyKind::dtoa}};
  for (const auto& [text, k] : kKinds)
    if (name.find(text) != std::string_view::npos) {
      *kind = k;
      break;
    }
  const std::size_t open = name.find('(');
  const std::size_t arrow = name.find("->", open == std::string_view::npos ? 0 : open);
  const std::size_t close = name.rfind(')');
  if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos ||
      close < arrow)
    return;
  *src = memory_kind(trim_ws(name.substr(open + 1, arrow - open - 1)));
  *dst = memory_kind(trim_ws(name.substr(arrow + 2, close - arrow - 2)));
}

MemoryKind memory_kind_in_parens(std::string_view name) {
  const std::size_t open = name.find('(');
  const std::size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return MemoryKind::unknown;
  return memory_kind(trim_ws(name.substr(open + 1, close - open - 1)));
}

}  // namespace

}  // namespace gpuscope::detail::chrome
