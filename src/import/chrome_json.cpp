// Chrome Trace Event / Kineto JSON importer: turns batches of complete events
// (from JsonStream, chrome_json_stream.h) into a Trace through TraceBuilder.
// What maps to what, and what is skipped and why: docs/import.md.
//
// [SECTION] Small helpers (strings, interning, skip counters)
// [SECTION] One event's fields (read with JsonWalker, chrome_json_walker.h)
// [SECTION] Importer (mapping events to the model)
// [SECTION] Importer: top-level values (deviceProperties, distributedInfo, …)
// [SECTION] Importer: finishing (names, processes, devices, time origin, meta)
// [SECTION] Entry point
//
// Speed notes: events are read straight from the batch text by a validating
// walker that looks only at the fields it needs (simdjson's on-demand API cost
// ~3x more per event: it steps through every structural token); field names
// are compared as raw bytes; strings are interned through an XXH3-keyed cache
// in front of the StringTable (whose FNV hash is slow on 300-byte kernel
// names); timestamps go from decimal text straight to integer ns.
#include "import/chrome_json.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/chrome_json_stream.h"
#include "import/chrome_json_text.h"
#include "import/chrome_json_walker.h"
#include "import/import_memory.h"
#include "trace/budget.h"
#include "trace/builder.h"

namespace gpuscope {

namespace {

using detail::JsonBatch;
using detail::JsonSegment;

// [SECTION] Small helpers ------------------------------------------------------------------------

// A JSON string as it appears in the text (between its quotes).
struct RawString {
  std::string_view raw;
  bool escaped = false;  // contains a backslash: must be unescaped before use
  bool present = false;
};

std::string_view trim_ws(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// key == lit, with the literal's length known at compile time so that the
// comparison inlines to a few loads (field names are compared per event).
template <std::size_t N>
bool is_key(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Interns strings through a cache keyed by XXH3: most names repeat thousands
// of times, and hashing them with XXH3 once per event is far cheaper than the
// StringTable's byte-at-a-time hash.
class InternCache {
 public:
  explicit InternCache(TraceBuilder& b) : b_(b), slots_(1024) {}

  StringId get(std::string_view s) {
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

 private:
  struct Slot {
    std::uint64_t hash = 0;
    StringId id = 0;
    bool used = false;
  };
  void rehash() {
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
  TraceBuilder& b_;
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

// Reasons an event is not kept, counted in meta.stats as "import.skipped.<reason>".
enum class Skip : std::uint8_t {
  flow,  // s/t/f flow events: links already carried by args.correlation
  missing_ph,
  missing_ts,
  invalid_ts,   // ts not a number (or numeric string), or out of range
  missing_dur,  // X event without dur
  invalid_dur,
  negative_dur,
  gpu_op_without_device,
  gpu_op_without_stream,
  unmatched_end,   // E without a B on its thread
  unclosed_begin,  // B never closed
  metadata,        // M events other than process_name / process_labels / thread_name
  counter_without_values,
  memory_without_bytes,    // a [memory] event without "Bytes"
  memory_on_other_device,  // a [memory] event of a device type other than CPU or CUDA
  duplicate_key,           // a key an event (or its args, or the root object) already had: the first stands
  count_
};
constexpr std::array<std::string_view, static_cast<int>(Skip::count_)> kSkipNames = {"flow",
                                                                                     "missing_ph",
                                                                                     "missing_ts",
                                                                                     "invalid_ts",
                                                                                     "missing_dur",
                                                                                     "invalid_dur",
                                                                                     "negative_dur",
                                                                                     "gpu_op_without_device",
                                                                                     "gpu_op_without_stream",
                                                                                     "unmatched_end",
                                                                                     "unclosed_begin",
                                                                                     "metadata",
                                                                                     "counter_without_values",
                                                                                     "memory_without_bytes",
                                                                                     "memory_on_other_device",
                                                                                     "duplicate_key"};

// [SECTION] One event's fields -------------------------------------------------------------------

// pid / tid / id: a number or a string, as the source wrote it.
struct IdValue {
  enum class Kind : std::uint8_t { none, number, string } kind = Kind::none;
  std::int64_t number = 0;
  RawString text;  // strings, and numbers that are not integers
};

enum ArgBit : std::uint32_t {
  kArgDevice = 1u << 0,
  kArgStream = 1u << 1,
  kArgCorrelation = 1u << 2,
  kArgExternal = 1u << 3,
  kArgCbid = 1u << 4,
  kArgBytes = 1u << 5,
  kArgGrid = 1u << 6,
  kArgBlock = 1u << 7,
  kArgRegisters = 1u << 8,
  kArgSmem = 1u << 9,
  kArgWaitEvent = 1u << 10,
  // Kineto's [memory] events
  kArgMemBytes = 1u << 11,
  kArgAddr = 1u << 12,
  kArgMemDevice = 1u << 13,
  kArgMemDeviceType = 1u << 14,
  kArgTotalAllocated = 1u << 15,
  kArgTotalReserved = 1u << 16,
};

struct Args {
  std::uint32_t present = 0;
  std::int64_t device = 0, stream = 0, correlation = 0, external = 0, cbid = 0, bytes = 0;
  std::int64_t registers = 0, smem = 0, wait_event = 0;
  std::int64_t mem_bytes = 0, addr = 0, mem_device = 0, mem_device_type = 0, total_allocated = 0, total_reserved = 0;
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  RawString name, labels, sync_kind;
  // PyTorch's record_shapes arguments, as raw JSON text of the batch.
  std::string_view input_dims, input_types, concrete_inputs;
  // Kineto's description of a collective (record_param_comms, NCCL kernels),
  // as raw JSON values: "Collective name", "In msg nelems", "Out msg nelems",
  // "dtype", "Group size", "Process Group Name".
  std::array<std::string_view, 6> collective;
  std::vector<std::pair<RawString, double>> numbers;  // C events: every numeric arg
};

struct Event {
  RawString ph, cat, name;
  IdValue pid, tid, id;
  bool has_ts = false, ts_ok = false, has_dur = false, dur_ok = false;
  std::int64_t ts = 0, dur = 0;
  Args args;

  void clear() {
    ph = cat = name = RawString{};
    pid = tid = id = IdValue{};
    has_ts = ts_ok = has_dur = dur_ok = false;
    ts = dur = 0;
    args.present = 0;
    args.name = args.labels = args.sync_kind = RawString{};
    args.input_dims = args.input_types = args.concrete_inputs = {};
    args.collective = {};
    args.numbers.clear();
  }
};

// [SECTION] Importer ---------------------------------------------------------------------------

class Importer {
 public:
  // whole: parses and maps every event into its own builder (the result).
  // local: a parser of alternate batches for run_two_threads(): maps the
  // events whose mapping is independent of the other batches (X and i
  // events with numeric ids, flows, skips) into its own rows, and defers the
  // rest (metadata, B/E, counters, string ids, top-level values) to the whole
  // importer, which merges rows and deferred events in file order.
  enum class Role : std::uint8_t { whole, local };

  Importer(const std::string& path, const ChromeImportOptions& options, Role role = Role::whole)
      : path_(path), options_(options), role_(role), cache_(builder_), budget_(memory_budget()) {
    builder_.meta().source = TraceSource::chrome_json;
    // Local parsers keep whole names: the merge interns (and cuts) them, so
    // that one and two threads count the same names cut.
    if (role == Role::whole) builder_.limit_names(kMaxNameBytes);
  }

  Trace run() {
    detail::JsonStream stream(path_, options_.progress, options_.buffer_bytes ? options_.buffer_bytes : 4u << 20);
    gzip_ = stream.gzip();
    JsonBatch* first = stream.next();
    // Two parsing threads when there is more than one batch and more than one
    // core (a one-batch file is not worth a thread).
    const int threads = options_.parse_threads > 0                 ? options_.parse_threads
                        : std::thread::hardware_concurrency() >= 2 ? 2
                                                                   : 1;
    if (first && !first->last && threads >= 2)
      run_two_threads(stream, first);
    else
      run_one_thread(stream, first);
    info_ = stream.info();
    finish();
    Trace t;
    try {
      t = builder_.freeze();
    } catch (const TraceError& e) {
      throw InputError(path_, std::string("inconsistent trace: ") + e.what());
    }
    return t;
  }

 private:
  // ---- the batch loop: one thread ------------------------------------------------------------

  struct Release {
    detail::JsonStream& s;
    JsonBatch* b;
    ~Release() {
      if (b) s.release(b);
    }
  };

  void check_cancel() {
    if (options_.progress.cancel && options_.progress.cancel->load(std::memory_order_relaxed))
      throw InputError(path_, "cancelled");
  }
  void report_progress(const JsonBatch& b, const detail::JsonStream& stream) {
    if (options_.progress.on_progress) options_.progress.on_progress(b.file_done, stream.file_bytes());
  }

  void run_one_thread(detail::JsonStream& stream, JsonBatch* batch) {
    for (; batch; batch = stream.next()) {
      Release release{stream, batch};
      parse_whole_batch(*batch, stream);
    }
  }

  // Parses and maps every item of `batch` into this (whole) importer; throws
  // the first error in file order (its own, or the producer's that ended it).
  void parse_whole_batch(JsonBatch& batch, const detail::JsonStream& stream) {
    check_cancel();
    // With two threads, the worker faults in the column memory grown here
    // (most of it is filled by later batches).
    grow_columns(batch, stream.file_bytes(), nullptr, two_threads_ ? &untouched_ : nullptr);
    std::exception_ptr found;
    try {
      for (const JsonSegment& seg : batch.segments) {
        if (seg.kind == JsonSegment::Kind::events)
          parse_events(batch, seg);
        else
          parse_top_value(batch, seg);
      }
    } catch (const InputError&) {
      found = std::current_exception();
    }
    if (found || batch.error) throw_first(batch, found);
    report_progress(batch, stream);
  }

  // Throws the first in file order of `found` (an error met while parsing
  // batch b's items) and the producer's error that ended b, if any.
  [[noreturn]] static void throw_first(const JsonBatch& b, std::exception_ptr found) {
    if (found && b.error) {
      try {
        std::rethrow_exception(found);
      } catch (const InputError& e) {
        if (e.offset() != InputError::kNoOffset && e.offset() >= b.error_at) std::rethrow_exception(b.error);
      } catch (...) {
      }
    }
    std::rethrow_exception(found ? found : b.error);
  }

  // ---- the batch loop: two threads -------------------------------------------------------------
  //
  // A worker thread parses batches into local Importers (Role::local) that
  // fill their own rows, strings and tracks and defer what depends on other
  // batches (metadata, B/E, counters, string ids, top-level values). The
  // calling thread takes everything else, in file order: it merges parsed
  // batches (rows appended column by column with their string and track ids
  // renumbered; each deferred event mapped here, at its place among the
  // rows), and parses batches itself: straight into this importer when every
  // batch before it has been merged, else into a local importer of its own.
  // Strings and tracks are interned in the order the events use them, so the
  // trace is the one run_one_thread() makes (tests compare them).
  //
  // Neither thread waits while there is work: the worker gets its next batch
  // queued as soon as the producer has one, and the calling thread, when the
  // batch it must merge next is not parsed yet, parses a later one (if one is
  // ready) rather than wait. So the split between them follows their speed
  // (the worker shares its core with the producer, and on a loaded machine
  // either may be preempted); when the producer is the slower (gzip), neither
  // takes a batch ahead of the other by waiting for it.
  //
  // Errors surface in file order: a local parser's error when the merge
  // reaches its batch, a stream error once every batch handed over before it
  // has been taken.

  class Worker {
   public:
    Worker() : thread_([this] { loop(); }) {}
    ~Worker() {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
        jobs_.clear();  // not started: dropped (the running one finishes)
      }
      cv_.notify_all();
      thread_.join();
    }
    // Queues `b` for `parser`, first faulting in `prefault` (columns the merge
    // will fill); returns the job's number for done() and wait().
    std::uint64_t post(Importer& parser, JsonBatch* b, std::vector<detail::MemoryRange> prefault) {
      std::uint64_t seq;
      {
        std::lock_guard lock(mutex_);
        seq = ++posted_;
        jobs_.push_back(Job{&parser, b, std::move(prefault)});
      }
      cv_.notify_all();
      return seq;
    }
    bool done(std::uint64_t seq) {
      std::lock_guard lock(mutex_);
      return done_ >= seq;
    }
    bool has_queued() {  // a job not started yet
      std::lock_guard lock(mutex_);
      return !jobs_.empty();
    }
    void wait(std::uint64_t seq) {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return done_ >= seq; });
    }

   private:
    struct Job {
      Importer* parser;
      JsonBatch* batch;
      std::vector<detail::MemoryRange> prefault;
    };
    void loop() {
      for (;;) {
        Job job;
        {
          std::unique_lock lock(mutex_);
          cv_.wait(lock, [&] { return !jobs_.empty() || stop_; });
          if (stop_) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        for (const detail::MemoryRange& r : job.prefault) detail::prefault_pages(r);
        job.parser->parse_local_batch(*job.batch);
        {
          std::lock_guard lock(mutex_);
          ++done_;
        }
        cv_.notify_all();
      }
    }
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Job> jobs_;
    std::uint64_t posted_ = 0, done_ = 0;
    bool stop_ = false;
    std::thread thread_;  // last: started once the rest is ready
  };

  // Batches parsed (or being parsed) into local importers, in file order,
  // waiting for their merge; gives their buffers back when destroyed.
  struct Pending {
    struct Item {
      JsonBatch* batch;
      Importer* parser;
      std::uint64_t job;  // the worker's job number; 0: parsed by the calling thread
    };
    detail::JsonStream& stream;
    std::deque<Item> items;
    ~Pending() {
      for (const Item& i : items) stream.release(i.batch);
    }
  };

  // Batches parsed ahead of their merge, at most (JsonStream's pool must hold
  // more than this: see kPoolSize).
  static constexpr std::size_t kLocalParsers = 3;

  void run_two_threads(detail::JsonStream& stream, JsonBatch* first) {
    std::vector<std::unique_ptr<Importer>> locals;
    std::vector<Importer*> free_locals;
    for (std::size_t i = 0; i < kLocalParsers; ++i) {
      locals.push_back(std::make_unique<Importer>(path_, options_, Role::local));
      locals.back()->gzip_ = gzip_;
      free_locals.push_back(locals.back().get());
    }
    two_threads_ = true;
    Release direct{stream, first};  // the batch to parse straight into this importer
    // Declared before the worker, so that on an exception the worker is
    // joined before any batch it may still read goes back to the pool.
    Pending pending{stream, {}};
    bool more = !first->last;
    std::exception_ptr stream_error;  // comes after every batch handed over before it
    // The next batch (nullptr at the end, or after a stream error, kept for
    // later); with `wait` false, also nullptr when none is ready yet.
    auto fetch = [&](bool wait) -> JsonBatch* {
      if (!more) return nullptr;
      JsonBatch* b = nullptr;
      try {
        if (!wait) {
          if (!stream.try_next(&b)) return nullptr;
        } else {
          b = stream.next();
        }
      } catch (...) {
        stream_error = std::current_exception();
      }
      if (!b || b->last) more = false;
      return b;
    };
    Worker worker;
    // Gives the worker the next batch if the producer has one ready, unless
    // the worker has one queued already.
    auto feed_worker = [&] {
      if (!more || free_locals.empty() || worker.has_queued()) return false;
      JsonBatch* b = fetch(false);
      if (!b) return false;
      Importer* l = free_locals.back();
      free_locals.pop_back();
      const std::uint64_t job = worker.post(*l, b, std::exchange(untouched_, {}));
      pending.items.push_back(Pending::Item{b, l, job});
      return true;
    };
    for (;;) {
      if (direct.b) {  // every batch before it is merged
        feed_worker();
        parse_whole_batch(*direct.b, stream);
        stream.release(std::exchange(direct.b, nullptr));
        continue;
      }
      if (pending.items.empty()) {
        direct.b = fetch(true);
        if (!direct.b) break;
        continue;
      }
      const Pending::Item front = pending.items.front();
      if (front.job == 0 || worker.done(front.job)) {
        pending.items.pop_front();
        Release release{stream, front.batch};
        merge_local(*front.parser, *front.batch, stream);
        free_locals.push_back(front.parser);
        continue;
      }
      // The next batch to merge is still being parsed: queue the worker's next
      // one, or parse a later one here rather than wait, if the producer has
      // one ready (when it is the slower, waiting for it here would leave the
      // worker without work and the merge waiting).
      if (feed_worker()) continue;
      if (more && !free_locals.empty()) {
        if (JsonBatch* b = fetch(false)) {
          Importer* l = free_locals.back();
          free_locals.pop_back();
          pending.items.push_back(Pending::Item{b, l, 0});
          l->parse_local_batch(*b);
          continue;
        }
      }
      worker.wait(front.job);
    }
    if (stream_error) std::rethrow_exception(stream_error);
    for (const auto& l : locals) absorb(*l);
  }

  // Role::local: parses every segment of a batch; an error is kept for the merge.
  void parse_local_batch(JsonBatch& b) {
    try {
      for (const JsonSegment& seg : b.segments) {
        if (seg.kind == JsonSegment::Kind::events)
          parse_events(b, seg);
        else
          defer(nullptr, &seg);
      }
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  // An event or top-level value left to the whole importer, with how far the
  // local rows, strings and tracks had got when it came.
  struct Deferred {
    const char* event;  // start of the event's text, or null for a top-level value
    const JsonSegment* segment;
    std::array<std::size_t, kTableCount> rows;
    std::uint32_t strings, tracks;
  };

  void defer(const char* event_start, const JsonSegment* segment = nullptr) {
    Deferred d{
        event_start, segment, {}, builder_.strings().size(), static_cast<std::uint32_t>(builder_.tracks().size())};
    builder_.tables().for_each_table([&](TableId id, const auto& t) { d.rows[static_cast<int>(id)] = t.size(); });
    deferred_.push_back(d);
  }

  // Whether a local parser must leave this (fully read) event to the whole importer.
  bool must_defer(const Event& ev) const {
    if (!ev.ph.present || ev.ph.raw.empty()) return false;  // skipped (counted) locally
    const char ph = ev.ph.raw.size() == 1 ? ev.ph.raw[0] : '\0';
    if (ph == 's' || ph == 't' || ph == 'f') return false;
    if (ph == 'M' || ph == 'B' || ph == 'E' || ph == 'C') return true;  // state kept across events
    if ((ph == 'i' || ph == 'I') && is_memory_event(ev)) return true;   // series, as for counters
    // X, i / I and skipped phases: local unless an id must be made up.
    return !resolves_without_pseudo_id(ev.pid) || !resolves_without_pseudo_id(ev.tid);
  }

  // resolve_id() without its side effect: true when it would not make up an id.
  static bool resolves_without_pseudo_id(const IdValue& v) {
    if (v.kind == IdValue::Kind::none) return true;
    if (v.kind == IdValue::Kind::number)
      return v.number >= std::numeric_limits<std::int32_t>::min() && v.number <= 0xffffffffLL;
    if (v.text.escaped || !starts_with_ci(v.text.raw, "stream ")) return false;
    std::int64_t n = 0;
    return detail::parse_json_int(trim_ws(v.text.raw.substr(7)), &n) && n >= 0 && n <= 0xffffffffLL;
  }

  // Merges what local parser `l` made of batch `b` (then releases nothing:
  // the caller does), in file order; rethrows its error at its place.
  void merge_local(Importer& l, JsonBatch& b, const detail::JsonStream& stream) {
    grow_columns(b, stream.file_bytes(), &l, &untouched_);
    std::exception_ptr found;
    try {
      merge_local_rows(l, b);
    } catch (const InputError&) {
      found = std::current_exception();
    }
    if (!found) found = l.error_;
    l.error_ = nullptr;
    if (found || b.error) throw_first(b, found);
    report_progress(b, stream);
  }

  void merge_local_rows(Importer& l, JsonBatch& b) {
    for (const Deferred& d : l.deferred_) {
      merge_rows(l, d.rows, d.strings, d.tracks);
      if (d.segment) {
        parse_top_value(b, *d.segment);
      } else {
        Walker w(d.event);
        try {
          ev_.clear();
          counter_keys_.clear();
          read_event(w, b, ev_);
        } catch (const detail::JsonSyntaxError& e) {  // the local parser read it already: cannot happen
          fail_at(b, e.at, std::string("malformed JSON: ") + e.what);
        }
        add_event(ev_, b);
      }
    }
    std::array<std::size_t, kTableCount> all{};
    l.builder_.tables().for_each_table([&](TableId id, const auto& t) { all[static_cast<int>(id)] = t.size(); });
    merge_rows(l, all, l.builder_.strings().size(), static_cast<std::uint32_t>(l.builder_.tracks().size()));
    l.deferred_.clear();
    l.merged_rows_ = {};
    l.builder_.clear_rows();  // keeps its strings, tracks and column capacity
  }

  // Appends l's rows up to `rows` (per table), first interning its strings and
  // tracks up to `strings` / `tracks`, in the order l made them.
  void merge_rows(Importer& l, const std::array<std::size_t, kTableCount>& rows, std::uint32_t strings,
                  std::uint32_t tracks) {
    while (l.global_string_.size() < strings) {
      const StringId local = static_cast<StringId>(l.global_string_.size());
      l.global_string_.push_back(local == kEmptyString ? kEmptyString : cache_.get(l.builder_.strings().get(local)));
    }
    while (l.global_track_.size() < tracks) {
      const Track& t = l.builder_.tracks()[l.global_track_.size()];
      l.global_track_.push_back(t.kind == TrackKind::gpu ? builder_.gpu_track(t.device, t.stream)
                                                         : builder_.cpu_track(t.pid, t.tid));
    }
    TraceTables& local_tables = l.builder_.tables();
    builder_.tables().for_each_table([&](TableId id, auto& table) {
      std::size_t& done = l.merged_rows_[static_cast<int>(id)];
      const std::size_t end = rows[static_cast<int>(id)];
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
  void append_rows(Table& to, Table& from, std::size_t begin, std::size_t end, const Importer& l) {
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
        } else if (info.name == "name" || info.name == "domain" || info.name == "mangled" ||
                   info.name == "input_dims" || info.name == "input_types" || info.name == "concrete_inputs" ||
                   info.name == "collective") {
          for (std::size_t i = at; i < col.size(); ++i) col[i] = l.global_string_[col[i]];
        }
      }
    });
  }

  // A local parser's counts and flags, added to this importer's.
  void absorb(const Importer& l) {
    for (std::size_t i = 0; i < skips_.size(); ++i) skips_[i] += l.skips_[i];
    for (const auto& [reason, n] : l.dynamic_skips_) dynamic_skips_[reason] += n;
    sort_index_metadata_ += l.sort_index_metadata_;
    collective_args_ += l.collective_args_;
    sub_us_ |= l.sub_us_;
    kineto_ |= l.kineto_;
    schema_2021_ |= l.schema_2021_;
    min_time_ = std::min(min_time_, l.min_time_);
    max_time_ = std::max(max_time_, l.max_time_);
    profiler_span_start_ = std::min(profiler_span_start_, l.profiler_span_start_);
    for (std::uint32_t d : l.sync_devices_)
      if (std::find(sync_devices_.begin(), sync_devices_.end(), d) == sync_devices_.end()) sync_devices_.push_back(d);
  }

  // Before a batch: room in each table that grew in the last batch for twice
  // the rows that batch added (or, before merging a local parser's batch, for
  // the rows it made), grown in one step to the estimated final count: rows
  // so far scaled by the estimated total of JSON text (for gzip: the
  // compression ratio so far times the file size), plus 10%, and never more
  // than one row per 32 bytes of text (no event is shorter), so that an
  // unrepresentative start cannot reserve much. import_memory.h says why.
  void grow_columns(const JsonBatch& b, std::uint64_t file_bytes, Importer* incoming = nullptr,
                    std::vector<detail::MemoryRange>* untouched = nullptr) {
    const std::uint64_t held = check_memory(b, incoming);
    const std::uint64_t json_done = b.stream_offset;  // the rows so far come from this much text
    double json_total = 0;
    if (json_done > 0 && b.file_done > 0 && file_bytes >= b.file_done)
      json_total = static_cast<double>(b.stream_offset + b.size - 1) *
                   (static_cast<double>(file_bytes) / static_cast<double>(b.file_done));
    std::array<std::size_t, kTableCount> incoming_rows{};
    if (incoming)
      incoming->builder_.tables().for_each_table(
          [&](TableId id, const auto& t) { incoming_rows[static_cast<int>(id)] = t.size(); });
    builder_.tables().for_each_table([&](TableId id, auto& table) {
      const std::size_t n = table.size();
      std::size_t& before = rows_before_batch_[static_cast<int>(id)];
      const std::size_t added = incoming ? incoming_rows[static_cast<int>(id)] : n - before;
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
      detail::grow_table(table, headroom, static_cast<std::size_t>(std::min(estimate, room)), untouched);
    });
  }

  // The memory budget (trace/budget.h), before each batch: what is built so
  // far, and the rows of a local parser about to be merged. Returns those bytes.
  std::uint64_t check_memory(const JsonBatch& b, const Importer* incoming) const {
    const std::uint64_t held = builder_.memory_bytes() + (incoming ? incoming->builder_.memory_bytes() : 0);
    check_memory_claim(path_,
                       "the events of the first " + std::to_string(b.stream_offset) + " bytes of JSON text" +
                           (gzip_ ? " (decompressed)" : ""),
                       held, budget_, b.stream_offset);
    return held;
  }

  // ---- errors -------------------------------------------------------------------------------

  [[noreturn]] void fail_at(const JsonBatch& b, const char* at, const std::string& what) {
    throw InputError(path_, gzip_ ? what + " (offset in the decompressed JSON)" : what, b.offset_of(at));
  }

  void skip(Skip reason) { ++skips_[static_cast<int>(reason)]; }

  // ---- strings ------------------------------------------------------------------------------

  // Interns a raw JSON string (unescaping it first if needed).
  StringId intern(const RawString& s, const JsonBatch& b) {
    if (!s.present || s.raw.empty()) return kEmptyString;
    if (!s.escaped) return cache_.get(s.raw);
    return cache_.get(unescape(s, b));
  }

  std::string_view unescape(const RawString& s, const JsonBatch& b) {
    if (!s.escaped) return s.raw;
    scratch_.clear();
    if (!detail::json_unescape(s.raw, &scratch_)) fail_at(b, s.raw.data(), "invalid escape sequence in a string");
    return scratch_;
  }

  std::string to_string(const RawString& s, const JsonBatch& b) { return std::string(unescape(s, b)); }

  // ---- reading one event (JsonWalker) ----------------------------------------------------------

  using Walker = detail::JsonWalker;

  [[gnu::always_inline]] RawString read_string(Walker& w) {
    if (w.peek() != '"') {
      w.skip_value();
      return {};
    }
    bool esc = false;
    const std::string_view s = w.string(&esc);
    return RawString{s, esc, true};
  }

  // An integer value; other types are skipped (false).
  [[gnu::always_inline]] static bool read_int(Walker& w, std::int64_t* out) {
    if (w.try_small_int(out)) return true;
    if (!w.at_number()) {
      w.skip_value();
      return false;
    }
    return detail::parse_json_int(w.number(), out);
  }

  IdValue read_id(Walker& w) {
    IdValue id;
    if (w.try_small_int(&id.number)) {
      id.kind = IdValue::Kind::number;
    } else if (w.at_number()) {
      const std::string_view tok = w.number();
      if (detail::parse_json_int(tok, &id.number)) {
        id.kind = IdValue::Kind::number;
      } else {
        id.kind = IdValue::Kind::string;
        id.text = RawString{tok, false, true};
      }
    } else if (w.peek() == '"') {
      id.text = read_string(w);
      // Numeric strings ("25738", as 2021 Kineto writes tids) are numbers.
      if (!id.text.escaped && detail::parse_json_int(id.text.raw, &id.number))
        id.kind = IdValue::Kind::number;
      else
        id.kind = IdValue::Kind::string;
    } else {
      w.skip_value();
    }
    return id;
  }

  // ts / dur: a JSON number (or a numeric string) in µs, to exact ns.
  [[gnu::always_inline]] bool read_time(Walker& w, std::int64_t* ns) {
    bool sub = false;
    if (w.try_us_to_ns(ns, &sub)) {
      sub_us_ |= sub;
      return true;
    }
    std::string_view text;
    if (w.at_number()) {
      text = w.number();
    } else if (w.peek() == '"') {
      const RawString s = read_string(w);
      if (s.escaped) return false;
      text = s.raw;
    } else {
      w.skip_value();
      return false;
    }
    bool sub_us = false;
    if (!detail::parse_us_to_ns(text, ns, &sub_us)) return false;
    sub_us_ |= sub_us;
    return true;
  }

  static void read_dims(Walker& w, std::uint32_t out[3]) {
    if (w.peek() != '[') return w.skip_value();
    w.consume('[');
    w.skip_ws();
    if (w.consume(']')) return;
    for (int k = 0;; ++k) {
      w.skip_ws();
      std::int64_t n = 0;
      if (read_int(w, &n) && k < 3) out[k] = static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 0, 0xffffffff));
      w.skip_ws();
      if (w.consume(',')) continue;
      w.expect(']', "expected ',' or ']' in an array");
      return;
    }
  }

  // A key at the cursor: its text, unescaped if it had escapes.
  [[gnu::always_inline]] std::string_view read_key(Walker& w, const JsonBatch& b) {
    if (w.peek() != '"') throw detail::JsonSyntaxError{w.pos(), "expected a key string"};
    bool esc = false;
    const std::string_view raw = w.string(&esc);
    w.skip_ws();
    w.expect(':', "expected ':' after a key");
    w.skip_ws();
    if (!esc) return raw;
    return unescape_key(raw, b);
  }
  [[gnu::noinline]] std::string_view unescape_key(std::string_view raw, const JsonBatch& b) {
    key_scratch_.clear();
    if (!detail::json_unescape(raw, &key_scratch_)) fail_at(b, raw.data(), "invalid escape sequence in a key");
    return key_scratch_;
  }

  // Iterates the members of the object at the cursor: f(key) must consume the value.
  template <class F>
  [[gnu::always_inline]] void for_each_member(Walker& w, const JsonBatch& b, F&& f) {
    w.expect('{', "expected an object");
    w.skip_ws();
    if (w.consume('}')) return;
    for (;;) {
      w.skip_ws();
      f(read_key(w, b));
      w.skip_ws();
      if (w.consume(',')) continue;
      w.expect('}', "expected ',' or '}' in an object");
      return;
    }
  }

  // The JSON text of the value at the walker, skipped.
  static std::string_view raw_value(Walker& w) {
    const char* begin = w.pos();
    w.skip_value();
    return std::string_view(begin, static_cast<std::size_t>(w.pos() - begin));
  }

  // JSON text without the whitespace outside strings, interned.
  StringId intern_json(std::string_view text) {
    if (text.empty()) return kEmptyString;
    json_scratch_.clear();
    bool in_string = false, escaped = false;
    for (char c : text) {
      if (in_string) {
        json_scratch_.push_back(c);
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
        continue;
      }
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
      if (c == '"') in_string = true;
      json_scratch_.push_back(c);
    }
    return cache_.get(json_scratch_);
  }

  // A key of an event (or of its args) met again: its value is skipped and
  // counted ("import.skipped.duplicate_key"); the first one stands. False then.
  bool once(std::uint32_t& seen, int bit, Walker& w) {
    if (!(seen & (1u << bit))) [[likely]] {
      seen |= 1u << bit;
      return true;
    }
    skip(Skip::duplicate_key);
    w.skip_value();
    return false;
  }

  // The collective's arguments Kineto recorded on an op, as one compact JSON
  // object (0 without a collective name or message size), counted.
  StringId collective_json(const Args& a) {
    if (a.collective[0].empty() && a.collective[1].empty()) return kEmptyString;
    static constexpr std::array<std::string_view, 6> kKeys = {"Collective name", "In msg nelems", "Out msg nelems",
                                                              "dtype",           "Group size",    "Process Group Name"};
    collective_scratch_ = "{";
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
      if (a.collective[i].empty()) continue;
      if (collective_scratch_.size() > 1) collective_scratch_ += ',';
      collective_scratch_ += '"';
      collective_scratch_ += kKeys[i];
      collective_scratch_ += "\":";
      collective_scratch_ += a.collective[i];
    }
    collective_scratch_ += '}';
    ++collective_args_;
    return intern_json(collective_scratch_);
  }

  void read_args(Walker& w, const JsonBatch& b, Event& ev, bool collect_numbers) {
    if (w.peek() != '{') return w.skip_value();
    Args& a = ev.args;
    std::uint32_t seen = 0;  // keys read: a repeated key keeps its first value (docs/import.md)
    for_each_member(w, b, [&](std::string_view key) {
      switch (key.size()) {
        case 4:
          if (is_key(key, "grid")) {
            if (!once(seen, 0, w)) return;
            read_dims(w, a.grid);
            a.present |= kArgGrid;
            return;
          }
          if (is_key(key, "cbid")) {
            if (!once(seen, 1, w)) return;
            if (read_int(w, &a.cbid)) a.present |= kArgCbid;
            return;
          }
          if (is_key(key, "name")) {
            if (!once(seen, 2, w)) return;
            a.name = read_string(w);
            return;
          }
          if (is_key(key, "Addr")) {
            if (!once(seen, 3, w)) return;
            if (read_int(w, &a.addr)) a.present |= kArgAddr;
            return;
          }
          break;
        case 5:
          if (is_key(key, "dtype")) {
            if (!once(seen, 26, w)) return;
            a.collective[3] = raw_value(w);
            return;
          }
          if (is_key(key, "block")) {
            if (!once(seen, 4, w)) return;
            read_dims(w, a.block);
            a.present |= kArgBlock;
            return;
          }
          if (is_key(key, "bytes")) {
            if (!once(seen, 5, w)) return;
            if (read_int(w, &a.bytes)) a.present |= kArgBytes;
            return;
          }
          if (is_key(key, "Bytes")) {
            if (!once(seen, 6, w)) return;
            if (read_int(w, &a.mem_bytes)) a.present |= kArgMemBytes;
            return;
          }
          break;
        case 6:
          if (is_key(key, "device")) {
            if (!once(seen, 7, w)) return;
            if (read_int(w, &a.device)) a.present |= kArgDevice;
            return;
          }
          if (is_key(key, "stream")) {
            if (!once(seen, 8, w)) return;
            if (read_int(w, &a.stream)) a.present |= kArgStream;
            return;
          }
          if (is_key(key, "labels")) {
            if (!once(seen, 9, w)) return;
            a.labels = read_string(w);
            return;
          }
          break;
        case 9:
          if (is_key(key, "Device Id")) {
            if (!once(seen, 10, w)) return;
            if (read_int(w, &a.mem_device)) a.present |= kArgMemDevice;
            return;
          }
          break;
        case 10:
          if (is_key(key, "Input Dims")) {
            if (!once(seen, 11, w)) return;
            a.input_dims = raw_value(w);
            return;
          }
          if (is_key(key, "Group size")) {
            if (!once(seen, 27, w)) return;
            a.collective[4] = raw_value(w);
            return;
          }
          if (is_key(key, "Input type")) {
            if (!once(seen, 12, w)) return;
            a.input_types = raw_value(w);
            return;
          }
          break;
        case 11:
          if (is_key(key, "correlation")) {
            if (!once(seen, 13, w)) return;
            if (read_int(w, &a.correlation)) a.present |= kArgCorrelation;
            return;
          }
          if (is_key(key, "External id") || is_key(key, "external id")) {
            if (!once(seen, 14, w)) return;
            if (read_int(w, &a.external)) a.present |= kArgExternal;
            return;
          }
          if (is_key(key, "Device Type")) {
            if (!once(seen, 15, w)) return;
            if (read_int(w, &a.mem_device_type)) a.present |= kArgMemDeviceType;
            return;
          }
          break;
        case 13:
          if (is_key(key, "shared memory")) {
            if (!once(seen, 16, w)) return;
            if (read_int(w, &a.smem)) a.present |= kArgSmem;
            return;
          }
          if (is_key(key, "In msg nelems")) {
            if (!once(seen, 24, w)) return;
            a.collective[1] = raw_value(w);
            return;
          }
          break;
        case 14:
          if (is_key(key, "cuda_sync_kind")) {
            if (!once(seen, 17, w)) return;
            a.sync_kind = read_string(w);
            return;
          }
          if (is_key(key, "Out msg nelems")) {
            if (!once(seen, 25, w)) return;
            a.collective[2] = raw_value(w);
            return;
          }
          if (is_key(key, "Total Reserved")) {
            if (!once(seen, 18, w)) return;
            if (read_int(w, &a.total_reserved)) a.present |= kArgTotalReserved;
            return;
          }
          break;
        case 15:
          if (is_key(key, "Total Allocated")) {
            if (!once(seen, 19, w)) return;
            if (read_int(w, &a.total_allocated)) a.present |= kArgTotalAllocated;
            return;
          }
          if (is_key(key, "Concrete Inputs")) {
            if (!once(seen, 20, w)) return;
            a.concrete_inputs = raw_value(w);
            return;
          }
          if (is_key(key, "Collective name")) {
            if (!once(seen, 23, w)) return;
            a.collective[0] = raw_value(w);
            return;
          }
          break;
        case 18:
          if (is_key(key, "Process Group Name")) {
            if (!once(seen, 28, w)) return;
            a.collective[5] = raw_value(w);
            return;
          }
          break;
        case 20:
          if (is_key(key, "registers per thread")) {
            if (!once(seen, 21, w)) return;
            if (read_int(w, &a.registers)) a.present |= kArgRegisters;
            return;
          }
          break;
        case 21:
          if (is_key(key, "wait_on_cuda_event_id")) {
            if (!once(seen, 22, w)) return;
            if (read_int(w, &a.wait_event)) a.present |= kArgWaitEvent;
            return;
          }
          break;
        default:
          break;
      }
      if (collect_numbers && w.at_number()) {
        const std::string_view tok = w.number();
        double d = 0;
        const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
        if (ec == std::errc() && end == tok.data() + tok.size()) {
          // Keys with escapes were unescaped into key_scratch_: keep a copy.
          const std::string_view k =
              key.data() == key_scratch_.data() ? std::string_view(counter_keys_.emplace_back(key)) : key;
          a.numbers.emplace_back(RawString{k, false, true}, d);
        }
        return;
      }
      w.skip_value();
    });
  }

  void read_event(Walker& w, const JsonBatch& b, Event& ev) {
    bool flow = false;       // a flow's other fields are not used: only check their grammar
    std::uint32_t seen = 0;  // keys read: a repeated key keeps its first value (docs/import.md)
    for_each_member(w, b, [&](std::string_view key) {
      if (flow) return w.skip_value();
      switch (key.size()) {
        case 2:
          if (is_key(key, "ph")) {
            if (!once(seen, 0, w)) return;
            ev.ph = read_string(w);
            flow = ev.ph.raw.size() == 1 && (ev.ph.raw[0] == 's' || ev.ph.raw[0] == 'f' || ev.ph.raw[0] == 't');
            return;
          }
          if (is_key(key, "ts")) {
            if (!once(seen, 1, w)) return;
            ev.has_ts = true;
            ev.ts_ok = read_time(w, &ev.ts);
            return;
          }
          if (is_key(key, "id")) {
            if (!once(seen, 2, w)) return;
            ev.id = read_id(w);
            return;
          }
          break;
        case 3:
          if (is_key(key, "cat")) {
            if (!once(seen, 3, w)) return;
            ev.cat = read_string(w);
            return;
          }
          if (is_key(key, "pid")) {
            if (!once(seen, 4, w)) return;
            ev.pid = read_id(w);
            return;
          }
          if (is_key(key, "tid")) {
            if (!once(seen, 5, w)) return;
            ev.tid = read_id(w);
            return;
          }
          if (is_key(key, "dur")) {
            if (!once(seen, 6, w)) return;
            ev.has_dur = true;
            ev.dur_ok = read_time(w, &ev.dur);
            return;
          }
          break;
        case 4:
          if (is_key(key, "name")) {
            if (!once(seen, 7, w)) return;
            ev.name = read_string(w);
            return;
          }
          if (is_key(key, "args")) {
            if (!once(seen, 8, w)) return;
            const bool counter = !ev.ph.present || (ev.ph.raw.size() == 1 && ev.ph.raw[0] == 'C');
            read_args(w, b, ev, counter);
            return;
          }
          break;
        default:
          break;
      }
      w.skip_value();
    });
  }

  // ---- batches ------------------------------------------------------------------------------

  void parse_events(JsonBatch& b, const JsonSegment& seg) {
    const char* base = b.data.get();
    Walker w(base + seg.begin);
    const char* event_start = w.pos();
    try {
      for (std::size_t i = 0; i < seg.count; ++i) {
        w.skip_ws();
        if (i > 0) {
          w.expect(',', "expected ',' between events");
          w.skip_ws();
        }
        event_start = w.pos();
        if (w.peek() != '{') fail_at(b, event_start, "an element of the events array is not an object");
        ev_.clear();
        counter_keys_.clear();
        const std::uint64_t duplicates = skips_[static_cast<int>(Skip::duplicate_key)];
        read_event(w, b, ev_);
        if (role_ == Role::local && must_defer(ev_)) {
          skips_[static_cast<int>(Skip::duplicate_key)] = duplicates;  // counted when the merge reads it again
          defer(event_start);
        } else {
          add_event(ev_, b);
        }
      }
    } catch (const detail::JsonSyntaxError& e) {
      fail_at(b, e.at,
              std::string("malformed JSON: ") + e.what + " (in the event that starts at byte " +
                  std::to_string(b.offset_of(event_start)) + ")");
    }
  }

  // ---- mapping one event ----------------------------------------------------------------------

  enum class Cat : std::uint8_t {
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

  // Kineto categories of both schemas (2021: Kernel, Memcpy, Memset, Runtime, Operator, …).
  // Exact spelling first (an inlined compare: what Kineto writes, once per
  // event), then ignoring case.
  template <std::size_t N>
  [[gnu::always_inline]] static bool is_cat(std::string_view cat, const char (&lit)[N]) {
    return std::memcmp(cat.data(), lit, N - 1) == 0 || iequals(cat, std::string_view(lit, N - 1));
  }

  Cat classify(std::string_view cat) {
    switch (cat.size()) {
      case 6:
        if (is_cat(cat, "kernel")) return Cat::kernel;
        if (is_cat(cat, "memcpy")) return Cat::memcpy;
        if (is_cat(cat, "memset")) return Cat::memset;
        if (is_cat(cat, "driver")) return Cat::driver;
        if (is_cat(cat, "cpu_op")) return Cat::cpu_op;
        if (is_cat(cat, "python")) return Cat::python_function;
        break;
      case 7:
        if (is_cat(cat, "runtime")) return Cat::runtime;
        break;
      case 8:
        if (is_cat(cat, "operator")) return Cat::cpu_op;
        break;
      case 9:
        if (is_cat(cat, "cuda_sync")) return Cat::sync;
        break;
      case 10:
        if (is_cat(cat, "gpu_memcpy")) return Cat::memcpy;
        if (is_cat(cat, "gpu_memset")) return Cat::memset;
        break;
      case 11:
        if (is_cat(cat, "cuda_driver")) return Cat::driver;
        break;
      case 12:
        if (is_cat(cat, "cuda_runtime")) return Cat::runtime;
        break;
      case 15:
        if (is_cat(cat, "user_annotation")) return Cat::user_annotation;
        if (is_cat(cat, "python_function")) return Cat::python_function;
        break;
      case 19:
        if (is_cat(cat, "gpu_user_annotation")) return Cat::gpu_annotation;
        break;
      default:
        break;
    }
    return Cat::other;
  }

  // Numeric id for a pid/tid: numbers as they are; strings like "stream 7"
  // give their number; other strings get a stable made-up id (named after the
  // string) from the top of the range, where real pids and tids never are.
  std::uint32_t resolve_id(const IdValue& v, const JsonBatch& b, bool* is_pseudo = nullptr) {
    if (is_pseudo) *is_pseudo = false;
    if (v.kind == IdValue::Kind::number) {
      if (v.number >= std::numeric_limits<std::int32_t>::min() && v.number <= 0xffffffffLL)
        return static_cast<std::uint32_t>(v.number);
    }
    if (v.kind == IdValue::Kind::none) return 0;
    std::string text = v.kind == IdValue::Kind::number ? std::to_string(v.number) : to_string(v.text, b);
    if (starts_with_ci(text, "stream ")) {
      std::int64_t n = 0;
      if (detail::parse_json_int(trim_ws(std::string_view(text).substr(7)), &n) && n >= 0 && n <= 0xffffffffLL)
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

  TrackId cpu_track(const Event& ev, const JsonBatch& b) {
    const std::uint32_t pid = resolve_id(ev.pid, b);
    const std::uint32_t tid = resolve_id(ev.tid, b);
    const std::uint64_t key = (std::uint64_t{pid} << 32) | tid;
    if (key == last_cpu_key_ && last_cpu_track_ != kNoRow) return last_cpu_track_;
    last_cpu_key_ = key;
    last_cpu_track_ = builder_.cpu_track(pid, tid);
    return last_cpu_track_;
  }

  // GPU (device, stream): args.device / args.stream, else Kineto's pid = device, tid = stream.
  bool gpu_track(const Event& ev, const JsonBatch& b, TrackId* out, std::uint32_t* device_out = nullptr) {
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
    if (device_out) *device_out = device;
    return true;
  }

  static std::uint32_t as_u32(std::int64_t v) {
    return v < 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(v, 0xffffffffLL));
  }
  std::uint32_t correlation(const Args& a) const { return (a.present & kArgCorrelation) ? as_u32(a.correlation) : 0; }
  std::uint32_t external_id(const Args& a) const { return (a.present & kArgExternal) ? as_u32(a.external) : 0; }

  StringId domain_of(Cat c, const RawString& cat, const JsonBatch& b) {
    switch (c) {
      case Cat::cpu_op:
        return domain_ids_[0] ? domain_ids_[0] : (domain_ids_[0] = cache_.get("cpu_op"));
      case Cat::user_annotation:
        return domain_ids_[1] ? domain_ids_[1] : (domain_ids_[1] = cache_.get("user_annotation"));
      case Cat::python_function:
        return domain_ids_[2] ? domain_ids_[2] : (domain_ids_[2] = cache_.get("python_function"));
      case Cat::gpu_annotation:
        return domain_ids_[3] ? domain_ids_[3] : (domain_ids_[3] = cache_.get("gpu_user_annotation"));
      default:
        return intern(cat, b);
    }
  }

  void add_event(Event& ev, const JsonBatch& b) {
    if (!ev.ph.present || ev.ph.raw.empty()) {
      skip(Skip::missing_ph);
      return;
    }
    const char ph = ev.ph.raw.size() == 1 ? ev.ph.raw[0] : '\0';
    if (ph == 'M') return add_metadata(ev, b);
    if (ph == 's' || ph == 't' || ph == 'f') return skip(Skip::flow);
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
      case 'X':
        return add_complete(ev, b);
      case 'B':
        return add_begin(ev, b);
      case 'E':
        return add_end(ev, b);
      case 'i':
      case 'I':
        return add_instant(ev, b);
      case 'C':
        return add_counter(ev, b);
      default:
        return;
    }
  }

  void note_time(std::int64_t t) {
    min_time_ = std::min(min_time_, t);
    max_time_ = std::max(max_time_, t);
  }

  void add_complete(Event& ev, const JsonBatch& b) {
    if (!ev.has_dur) return skip(Skip::missing_dur);
    if (!ev.dur_ok) return skip(Skip::invalid_dur);
    if (ev.dur < 0) return skip(Skip::negative_dur);
    const TimeNs start = ev.ts;
    if (start > std::numeric_limits<TimeNs>::max() - ev.dur) return skip(Skip::invalid_dur);
    const TimeNs end = start + ev.dur;
    note_time(end);
    const Cat cat = ev.cat.present ? classify(unescape(ev.cat, b)) : Cat::other;
    if (ev.cat.present && cat != Cat::other && ev.cat.raw.size() && ev.cat.raw[0] >= 'A' && ev.cat.raw[0] <= 'Z')
      schema_2021_ = true;
    if (cat != Cat::other && cat != Cat::python_function) kineto_ = true;
    switch (cat) {
      case Cat::kernel:
        return kernel_event(ev, b, start, end);
      case Cat::memcpy:
        return memcpy_event(ev, b, start, end);
      case Cat::memset:
        return memset_event(ev, b, start, end);
      case Cat::runtime:
      case Cat::driver:
        return api_event(ev, b, start, end, cat);
      case Cat::sync:
        return sync_event(ev, b, start, end);
      case Cat::gpu_annotation:
        return gpu_range_event(ev, b, start, end, cat);
      default:
        return cpu_range_event(ev, b, start, end, cat);
    }
  }

  // What every GPU op row takes from its event: the track (false when the
  // event names none: counted and skipped), time and correlation; and the
  // bytes of a copy or memset.
  template <class Row>
  bool gpu_op(Row& r, const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
    if (!gpu_track(ev, b, &r.track)) return false;
    r.start = start;
    r.end = end;
    r.correlation = correlation(ev.args);
    if constexpr (requires { r.bytes; })
      if (ev.args.present & kArgBytes) r.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(ev.args.bytes, 0));
    return true;
  }

  void kernel_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
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

  void memcpy_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
    MemcpyRow r;
    if (!gpu_op(r, ev, b, start, end)) return;
    parse_memcpy_name(unescape(ev.name, b), &r.kind, &r.src_kind, &r.dst_kind);
    builder_.add_memcpy(r);
  }

  void memset_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
    MemsetRow r;
    if (!gpu_op(r, ev, b, start, end)) return;
    r.mem_kind = memory_kind_in_parens(unescape(ev.name, b));
    builder_.add_memset(r);
  }

  void api_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
    const Args& a = ev.args;
    ApiCallRow r;
    r.track = cpu_track(ev, b);
    r.start = start;
    r.end = end;
    r.correlation = correlation(a);
    r.name = intern(ev.name, b);
    r.domain = cat == Cat::runtime ? ApiDomain::runtime : ApiDomain::driver;
    if (a.present & kArgCbid) r.cbid = as_u32(a.cbid);
    builder_.add_api_call(r);
  }

  void sync_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end) {
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

  void gpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
    const Args& a = ev.args;
    RangeRow r;
    if (!gpu_track(ev, b, &r.track)) return;
    r.start = start;
    r.end = end;
    r.name = intern(ev.name, b);
    r.domain = domain_of(cat, ev.cat, b);
    r.kind = RangeKind::annotation;
    r.correlation = external_id(a);
    builder_.add_range(r);
  }

  void cpu_range_event(const Event& ev, const JsonBatch& b, TimeNs start, TimeNs end, Cat cat) {
    const Args& a = ev.args;
    RangeRow r;
    r.track = cpu_track(ev, b);
    r.start = start;
    r.end = end;
    r.name = intern(ev.name, b);
    r.domain = domain_of(cat, ev.cat, b);
    r.kind = RangeKind::annotation;
    r.correlation = external_id(a);
    r.input_dims = intern_json(a.input_dims);
    r.input_types = intern_json(a.input_types);
    r.concrete_inputs = intern_json(a.concrete_inputs);
    r.collective = collective_json(a);
    if (cat == Cat::other && ev.cat.present && iequals(unescape(ev.cat, b), "Trace") &&
        starts_with_ci(unescape(ev.name, b), "PyTorch Profiler"))
      profiler_span_start_ = std::min(profiler_span_start_, start);
    builder_.add_range(r);
  }

  struct OpenBegin {
    TimeNs start;
    StringId name, domain;
    std::uint32_t correlation;
  };

  void add_begin(Event& ev, const JsonBatch& b) {
    const TrackId track = cpu_track(ev, b);
    const Cat cat = ev.cat.present ? classify(unescape(ev.cat, b)) : Cat::other;
    open_[track].push_back(OpenBegin{ev.ts, intern(ev.name, b), domain_of(cat, ev.cat, b), external_id(ev.args)});
  }

  void add_end(Event& ev, const JsonBatch& b) {
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

  // Kineto's allocator events: {"ph":"i","name":"[memory]","args":{"Device Type":1,"Device Id":0,"Bytes":512,…}}.
  static bool is_memory_event(const Event& ev) { return !ev.name.escaped && ev.name.raw == "[memory]"; }

  void add_instant(Event& ev, const JsonBatch& b) {
    if (is_memory_event(ev)) return add_memory_event(ev);
    RangeRow r;
    r.track = cpu_track(ev, b);
    r.start = r.end = ev.ts;
    r.name = intern(ev.name, b);
    const Cat cat = ev.cat.present ? classify(unescape(ev.cat, b)) : Cat::other;
    r.domain = domain_of(cat, ev.cat, b);
    r.kind = RangeKind::mark;
    r.correlation = external_id(ev.args);
    builder_.add_range(r);
  }

  enum class MemorySeries : std::uint8_t { allocated, since_start, reserved };

  std::uint32_t memory_series(std::uint32_t device, MemorySeries which) {
    const std::uint64_t key = (std::uint64_t{device} << 2) | static_cast<std::uint64_t>(which);
    auto it = memory_series_.find(key);
    if (it != memory_series_.end()) return it->second;
    const std::string_view name = which == MemorySeries::allocated     ? series_name::kMemoryAllocated
                                  : which == MemorySeries::since_start ? series_name::kMemoryAllocatedSinceStart
                                                                       : series_name::kMemoryReserved;
    const std::uint32_t id = builder_.counter_series(name, device, "B");
    memory_series_.emplace(key, id);
    if (which == MemorySeries::since_start) since_start_series_.push_back(id);
    if (device != kNoDevice &&
        std::find(memory_devices_.begin(), memory_devices_.end(), device) == memory_devices_.end())
      memory_devices_.push_back(device);
    return id;
  }

  // A [memory] event: one row of memory_events on the device's allocated
  // series; with "Total Allocated" / "Total Reserved" (current Kineto) also a
  // sample of the allocated and reserved series. Without the totals (2021
  // schema) the event belongs to the "since start" series, whose samples
  // finish() adds up from the changes. Device Type 0 is the host (c10's CPU),
  // 1 a GPU (CUDA, also ROCm's).
  void add_memory_event(const Event& ev) {
    const Args& a = ev.args;
    if (!(a.present & kArgMemBytes)) return skip(Skip::memory_without_bytes);
    std::uint32_t device = kNoDevice;
    const bool has_id = (a.present & kArgMemDevice) && a.mem_device >= 0 && a.mem_device <= 0xffffffffLL;
    if (a.present & kArgMemDeviceType) {
      if (a.mem_device_type == 1) {
        if (!has_id) return skip(Skip::memory_on_other_device);
        device = static_cast<std::uint32_t>(a.mem_device);
      } else if (a.mem_device_type != 0) {
        return skip(Skip::memory_on_other_device);
      }
    } else if (has_id) {
      device = static_cast<std::uint32_t>(a.mem_device);
    }
    const bool absolute = a.present & kArgTotalAllocated;
    const std::uint32_t series = memory_series(device, absolute ? MemorySeries::allocated : MemorySeries::since_start);
    MemoryEventRow r;
    r.time = ev.ts;
    r.series = series;
    r.bytes = a.mem_bytes;
    if ((a.present & kArgAddr) && a.addr > 0) r.address = static_cast<std::uint64_t>(a.addr);
    builder_.add_memory_event(r);
    if (absolute) builder_.add_counter(CounterRow{ev.ts, series, static_cast<double>(a.total_allocated)});
    if ((a.present & kArgTotalReserved) && device != kNoDevice)
      builder_.add_counter(
          CounterRow{ev.ts, memory_series(device, MemorySeries::reserved), static_cast<double>(a.total_reserved)});
  }

  // The samples of each "since start" series: its changes added up in time
  // order (file order among equal times), from 0 before the first.
  void add_since_start_samples() {
    const MemoryEventTable& m = builder_.tables().memory_events;
    for (std::uint32_t series : since_start_series_) {
      std::vector<RowIndex> rows;
      for (std::size_t i = 0; i < m.size(); ++i)
        if (m.series[i] == series) rows.push_back(static_cast<RowIndex>(i));
      std::stable_sort(rows.begin(), rows.end(), [&](RowIndex x, RowIndex y) { return m.time[x] < m.time[y]; });
      std::int64_t level = 0;
      for (RowIndex i : rows) {
        level += m.bytes[i];
        builder_.add_counter(CounterRow{m.time[i], series, static_cast<double>(level)});
      }
    }
  }

  // Each numeric arg of a C event is one series, "<name>.<arg>" ("<name> <id>.<arg>" with an id).
  // A GPU's hardware series as gpuscope's Chrome export writes them ("hw.*",
  // "nvml.*" on the GPU's process, one arg named after the unit) come back as
  // they were: that name, unit and device.
  void add_counter(Event& ev, const JsonBatch& b) {
    if (ev.args.numbers.empty()) return skip(Skip::counter_without_values);
    std::string base = to_string(ev.name, b);
    if (ev.id.kind == IdValue::Kind::none && ev.args.numbers.size() == 1 &&
        (base.starts_with(series_name::kHardwarePrefix) || base.starts_with(series_name::kNvmlPrefix)) &&
        ev.pid.kind == IdValue::Kind::number && ev.pid.number >= 0 && ev.pid.number < 0xffffffffLL) {
      const auto& [key, value] = ev.args.numbers.front();
      std::string unit = to_string(key, b);
      if (unit == "value") unit.clear();
      const auto device = static_cast<std::uint32_t>(ev.pid.number);
      std::string lookup = base + "\x1f" + std::to_string(device) + "\x1f" + unit;
      auto it = series_.find(lookup);
      std::uint32_t id;
      if (it != series_.end()) {
        id = it->second;
      } else {
        id = builder_.counter_series(base, device, unit);
        series_.emplace(std::move(lookup), id);
      }
      builder_.add_counter(CounterRow{ev.ts, id, value});
      return;
    }
    if (ev.id.kind == IdValue::Kind::number)
      base += " " + std::to_string(ev.id.number);
    else if (ev.id.kind == IdValue::Kind::string)
      base += " " + to_string(ev.id.text, b);
    for (const auto& [key, value] : ev.args.numbers) {
      std::string series = base + "." + to_string(key, b);
      auto it = series_.find(series);
      std::uint32_t id;
      if (it != series_.end()) {
        id = it->second;
      } else {
        id = builder_.counter_series(series);
        series_.emplace(std::move(series), id);
      }
      builder_.add_counter(CounterRow{ev.ts, id, value});
    }
  }

  void add_metadata(Event& ev, const JsonBatch& b) {
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

  // "Memcpy HtoD (Pageable -> Device)" -> htod, pageable, device.
  static void parse_memcpy_name(std::string_view name, CopyKind* kind, MemoryKind* src, MemoryKind* dst) {
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

  static MemoryKind memory_kind_in_parens(std::string_view name) {
    const std::size_t open = name.find('(');
    const std::size_t close = name.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return MemoryKind::unknown;
    return memory_kind(trim_ws(name.substr(open + 1, close - open - 1)));
  }

  static MemoryKind memory_kind(std::string_view s) {
    if (iequals(s, "Pageable")) return MemoryKind::pageable;
    if (iequals(s, "Pinned")) return MemoryKind::pinned;
    if (iequals(s, "Device")) return MemoryKind::device;
    if (iequals(s, "Array")) return MemoryKind::array;
    if (iequals(s, "Managed")) return MemoryKind::managed;
    if (iequals(s, "Device Static")) return MemoryKind::device_static;
    if (iequals(s, "Managed Static")) return MemoryKind::managed_static;
    return MemoryKind::unknown;
  }

  // [SECTION] Importer: top-level values -------------------------------------------------------

  // A value of the root object other than "traceEvents", read with the same
  // walker (the splitter has delimited it; the buffer's padding follows it).
  void parse_top_value(JsonBatch& b, const JsonSegment& seg) {
    const char* begin = b.data.get() + seg.begin;
    const char* end = b.data.get() + seg.end;
    Walker w(begin);
    try {
      const char c = w.peek();
      // A key the root object had already (a second "traceEvents" too): the first stands.
      if (seg.key == "traceEvents" || !top_keys_.insert(seg.key).second) {
        skip(Skip::duplicate_key);
        w.skip_value();
      } else if (seg.key == "deviceProperties" && c == '[') {
        read_device_properties(w, b);
      } else if (seg.key == "distributedInfo" && c == '{') {
        read_distributed_info(w, b);
      } else if (c == '"') {
        const RawString s = read_string(w);
        top_scalar(seg.key, to_string(s, b), b, begin);
      } else if (w.at_number() || c == 't' || c == 'f') {
        w.skip_value();
        top_scalar(seg.key, std::string(begin, static_cast<std::size_t>(w.pos() - begin)), b, begin);
      } else {
        w.skip_value();  // other objects and arrays ("INFO", "metadata", …): checked, not used
      }
      if (w.pos() != end) throw detail::JsonSyntaxError{w.pos(), "unexpected character in a value"};
    } catch (const detail::JsonSyntaxError& e) {
      fail_at(b, e.at, std::string("malformed JSON: ") + e.what + " (in the value of \"" + seg.key + "\")");
    }
  }

  void top_scalar(const std::string& key, const std::string& value, const JsonBatch& b, const char* at) {
    if (key == "baseTimeNanoseconds") {
      std::int64_t base = 0;
      if (!detail::parse_json_int(value, &base)) fail_at(b, at, "\"baseTimeNanoseconds\" is not an integer");
      origin_ns_ = base;
      kineto_ = true;
    } else if (key == "schemaVersion" || key == "traceName") {
      kineto_ = true;
    } else if (key == "host_name" || key == "hostname") {
      builder_.meta().host = value;
    }
    if (value.size() <= 256) builder_.meta().set_property("chrome.meta." + key, value);
  }

  void read_device_properties(Walker& w, const JsonBatch& b) {
    w.expect('[', "expected an array");
    w.skip_ws();
    if (w.consume(']')) return;
    for (;;) {
      w.skip_ws();
      if (w.peek() == '{') {
        Device d;
        bool has_id = false;
        for_each_member(w, b, [&](std::string_view key) {
          if (is_key(key, "name") || is_key(key, "uuid")) {
            const RawString s = read_string(w);
            if (s.present) (is_key(key, "name") ? d.name : d.uuid) = to_string(s, b);
            return;
          }
          std::int64_t n = 0;
          if (!read_int(w, &n)) return;
          const std::uint32_t u32 = as_u32(n);
          if (is_key(key, "id")) {
            d.id = u32;
            has_id = true;
          } else if (is_key(key, "totalGlobalMem")) {
            d.memory_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0));
          } else if (is_key(key, "computeMajor")) {
            d.compute_major = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 1000));
          } else if (is_key(key, "computeMinor")) {
            d.compute_minor = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 1000));
          } else if (is_key(key, "numSms")) {
            d.sm_count = u32;
          } else if (is_key(key, "maxThreadsPerBlock")) {
            d.max_threads_per_block = u32;
          } else if (is_key(key, "maxThreadsPerMultiprocessor")) {
            d.max_threads_per_sm = u32;
          } else if (is_key(key, "maxBlocksPerMultiprocessor") || is_key(key, "maxBlocksPerMultiProcessor")) {
            d.max_blocks_per_sm = u32;
          } else if (is_key(key, "regsPerMultiprocessor")) {
            d.registers_per_sm = u32;
          } else if (is_key(key, "sharedMemPerMultiprocessor")) {
            d.shared_memory_per_sm = u32;
          } else if (is_key(key, "warpSize")) {
            d.warp_size = u32;
          } else if (is_key(key, "clockRate")) {
            d.core_clock_khz = u32;
          } else if (is_key(key, "memoryClockRate")) {
            d.memory_clock_khz = u32;
          } else if (is_key(key, "memoryBusWidth")) {
            d.memory_bus_width_bits = u32;
          }
        });
        if (has_id) listed_devices_.push_back(std::move(d));
      } else {
        w.skip_value();
      }
      w.skip_ws();
      if (w.consume(',')) continue;
      w.expect(']', "expected ',' or ']' in an array");
      return;
    }
  }

  void read_distributed_info(Walker& w, const JsonBatch& b) {
    for_each_member(w, b, [&](std::string_view key) {
      std::int64_t n = 0;
      if (is_key(key, "rank")) {
        if (read_int(w, &n))
          builder_.meta().rank = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, -1, 0x7fffffff));
      } else if (is_key(key, "world_size")) {
        if (read_int(w, &n))
          builder_.meta().world_size = static_cast<std::int32_t>(std::clamp<std::int64_t>(n, 0, 0x7fffffff));
      } else if (is_key(key, "backend")) {
        const RawString s = read_string(w);
        if (s.present) builder_.meta().set_property("chrome.distributed.backend", to_string(s, b));
      } else {
        w.skip_value();
      }
    });
    kineto_ = true;
  }

  // [SECTION] Importer: finishing -------------------------------------------------------------

  void finish() {
    if (info_.cut_short) note_cut();
    if (!info_.root_is_array && !info_.saw_trace_events)
      throw InputError(path_, "not a Chrome trace: the top-level object has no \"traceEvents\" array");
    TraceMeta& meta = builder_.meta();

    // Unclosed B events.
    for (auto& [track, stack] : open_)
      for (std::size_t i = 0; i < stack.size(); ++i) skip(Skip::unclosed_begin);

    // Times: the model's clock is absolute ns; ts was relative to baseTimeNanoseconds.
    if (origin_ns_ != 0) shift_times(origin_ns_);
    add_since_start_samples();
    if (info_.cut_short) note_rows_after_cut();

    // Track names from thread_name metadata (trailing blanks trimmed).
    for (TrackId id = 0; id < builder_.tracks().size(); ++id) {
      const Track& t = builder_.tracks()[id];
      if (t.kind == TrackKind::cpu) {
        auto it = thread_names_.find((std::uint64_t{t.pid} << 32) | t.tid);
        if (it != thread_names_.end()) {
          builder_.set_track_name(id, it->second);
        } else if (auto p = pseudo_names_.find(t.tid); p != pseudo_names_.end()) {
          builder_.set_track_name(id, p->second);
        }
      } else {
        // Kineto: pid = device, tid = stream, named "stream 7 ".
        auto it = thread_names_.find((std::uint64_t{t.device} << 32) | t.stream);
        if (it != thread_names_.end() && starts_with_ci(it->second, "stream"))
          builder_.set_track_name(id, it->second);
        else
          builder_.set_track_name(id, "stream " + std::to_string(t.stream));
      }
    }

    // Processes: every pid with a CPU track or a name, except Kineto's
    // per-GPU pseudo-processes (labelled "GPU N").
    std::vector<std::uint32_t> pids;
    for (const Track& t : builder_.tracks())
      if (t.kind == TrackKind::cpu) pids.push_back(t.pid);
    for (const auto& [pid, name] : process_names_) pids.push_back(pid);
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    for (std::uint32_t pid : pids) {
      auto labels = process_labels_.find(pid);
      if (labels != process_labels_.end() && starts_with_ci(labels->second, "GPU")) continue;
      Process p;
      p.pid = pid;
      if (auto n = process_names_.find(pid); n != process_names_.end())
        p.name = n->second;
      else if (auto s = pseudo_names_.find(pid); s != pseudo_names_.end())
        p.name = s->second;
      const bool pseudo = pid >= kPseudoIdBase && pseudo_names_.count(pid);
      p.rank = pseudo ? -1 : meta.rank;
      builder_.add_process(p);
    }

    // Devices: those the events use, described by deviceProperties when listed.
    std::vector<std::uint32_t> used_devices_ = sync_devices_;
    used_devices_.insert(used_devices_.end(), memory_devices_.begin(), memory_devices_.end());
    for (const Track& t : builder_.tracks())
      if (t.kind == TrackKind::gpu) used_devices_.push_back(t.device);
    std::sort(used_devices_.begin(), used_devices_.end());
    used_devices_.erase(std::unique(used_devices_.begin(), used_devices_.end()), used_devices_.end());
    for (std::uint32_t id : used_devices_) {
      Device d;
      d.id = id;
      for (const Device& listed : listed_devices_)
        if (listed.id == id) d = listed;
      builder_.add_device(d);
    }
    if (!listed_devices_.empty()) meta.set_property("chrome.devices_listed", std::to_string(listed_devices_.size()));

    // Meta.
    meta.producer = kineto_ ? (schema_2021_ ? "PyTorch Profiler (Kineto), 2021 schema" : "PyTorch Profiler (Kineto)")
                            : "Chrome trace JSON";
    meta.set_property("chrome.ts_origin_ns", std::to_string(origin_ns_));
    meta.set_property("chrome.sub_us_timestamps", sub_us_ ? "1" : "0");
    meta.set_property("chrome.form", info_.root_is_array ? "array" : "object");
    if (info_.gzip) meta.set_property("chrome.gzip", "1");
    meta.set_stat("import.json_bytes", info_.json_bytes);
    if (info_.unterminated_array) meta.set_stat("import.unterminated_array", 1);
    // A plausible epoch (after 2001) is the recording's wall-clock start.
    constexpr std::int64_t kEpoch2001Ns = 1'000'000'000'000'000'000;
    if (min_time_ != std::numeric_limits<std::int64_t>::max()) {
      std::int64_t first =
          profiler_span_start_ != std::numeric_limits<TimeNs>::max() ? profiler_span_start_ : min_time_;
      TimeNs shifted = 0;  // with the origin added, unless that overflows (a fuzzed origin can be anything)
      if (origin_ns_ != 0 && !__builtin_add_overflow(first, origin_ns_, &shifted)) first = shifted;
      if (first >= kEpoch2001Ns) meta.start_time_ns = first;
    }
    for (int i = 0; i < static_cast<int>(Skip::count_); ++i)
      if (skips_[i]) meta.set_stat("import.skipped." + std::string(kSkipNames[i]), skips_[i]);
    for (const auto& [reason, n] : dynamic_skips_) meta.set_stat("import.skipped." + reason, n);
    if (sort_index_metadata_) meta.set_stat("import.ignored.sort_index_metadata", sort_index_metadata_);
    if (collective_args_) meta.set_stat("import.collective_args", collective_args_);
  }

  // The text ended early (a file cut short): the events before the cut are
  // kept and meta().damage says where it stopped; with none, nothing usable
  // remains and the import fails.
  void note_cut() {
    std::string what = info_.gzip_cut.empty()
                           ? "the JSON text ends early, at byte " + std::to_string(info_.cut_text_end) +
                                 " (the end of the file), " + info_.cut_where
                           : info_.gzip_cut + "; the JSON text in it ends at byte " +
                                 std::to_string(info_.cut_text_end) + ", " + info_.cut_where;
    std::uint64_t rows = 0;
    builder_.tables().for_each_table([&](TableId, const auto& t) { rows += t.size(); });
    if (rows == 0)
      throw InputError(path_, "truncated: " + what + "; no event could be recovered", info_.cut_complete_end);
    // Cut after the events array (or only the end of the gzip stream missing): every event is there.
    const bool all_there = info_.cut_events_complete;
    FileDamage& d = builder_.meta().damage;
    d.truncated = true;
    d.file_bytes = info_.file_bytes;
    // For gzip, where in the compressed bytes the last complete event ends is
    // not known: the whole file was read, and its end is missing.
    d.intact_bytes = info_.gzip ? info_.file_bytes : info_.cut_complete_end;
    d.bytes_lost = info_.gzip ? 0 : info_.file_bytes - std::min(info_.file_bytes, info_.cut_complete_end);
    d.problems.push_back(what + (all_there ? "; every event was loaded" : "; the events before it were loaded"));
  }

  // After a cut: the rows each table holds, once every row is made (the
  // memory series' samples are added up at the end).
  void note_rows_after_cut() {
    const bool all_there = info_.cut_events_complete;
    FileDamage& d = builder_.meta().damage;
    builder_.tables().for_each_table([&](TableId id, const auto& t) {
      TableLoss& loss = d.tables[static_cast<int>(id)];
      loss.loaded = t.size();
      loss.count = all_there ? LossCount::exact : LossCount::at_least;  // how much followed the cut is unknown
    });
  }

  void shift_times(std::int64_t delta) {
    auto shift = [&](std::vector<TimeNs>& col) {
      for (TimeNs& t : col) {
        if ((delta > 0 && t > std::numeric_limits<TimeNs>::max() - delta) ||
            (delta < 0 && t < std::numeric_limits<TimeNs>::min() - delta))
          throw InputError(path_, "timestamps plus baseTimeNanoseconds do not fit in 64-bit nanoseconds");
        t += delta;
      }
    };
    builder_.tables().for_each_table([&](TableId, auto& table) {
      table.for_each_column([&](ColumnInfo info, auto& col) {
        if constexpr (std::is_same_v<std::decay_t<decltype(col)>, std::vector<TimeNs>>)
          if (info.flags & kTime) shift(col);
      });
    });
  }

  static constexpr std::uint32_t kPseudoIdBase = 0xF0000000u;

  std::string path_;
  ChromeImportOptions options_;
  Role role_;
  TraceBuilder builder_;
  InternCache cache_;
  Event ev_;
  std::string scratch_, key_scratch_, json_scratch_;
  std::deque<std::string> counter_keys_;  // escaped counter arg names of the current event
  bool gzip_ = false;
  detail::JsonStreamInfo info_;

  std::array<std::uint64_t, static_cast<int>(Skip::count_)> skips_{};
  std::array<std::size_t, kTableCount> rows_before_batch_{};
  std::set<std::string> top_keys_;              // keys of the root object read (a repeated one is skipped)
  std::uint64_t budget_;                        // memory the import may take (trace/budget.h)
  std::vector<detail::MemoryRange> untouched_;  // grown column memory not yet faulted in (two threads)
  bool two_threads_ = false;

  // Role::local: what the whole importer still has to take from this batch.
  std::vector<Deferred> deferred_;
  std::exception_ptr error_;
  std::array<std::size_t, kTableCount> merged_rows_{};  // rows of this batch merged so far
  std::vector<StringId> global_string_;                 // local string id -> the whole importer's
  std::vector<TrackId> global_track_;                   // local track id -> the whole importer's
  std::map<std::string, std::uint64_t> dynamic_skips_;
  std::uint64_t sort_index_metadata_ = 0;
  std::uint64_t collective_args_ = 0;  // ops whose collective's arguments were kept (RangeRow::collective)
  std::string collective_scratch_;

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
  std::vector<Device> listed_devices_;

  std::int64_t origin_ns_ = 0;
  bool sub_us_ = false, kineto_ = false, schema_2021_ = false;
  std::int64_t min_time_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_time_ = std::numeric_limits<std::int64_t>::min();
  TimeNs profiler_span_start_ = std::numeric_limits<TimeNs>::max();
};

}  // namespace

// [SECTION] Entry point ----------------------------------------------------------------------------

Trace import_chrome_json(const std::string& path, const ChromeImportOptions& options) {
  return Importer(path, options).run();
}

}  // namespace gpuscope
