// Chrome Trace Event / Kineto JSON importer: the tokenizer. It takes batches
// of complete items from the splitter (JsonStream, chrome_json_stream.h),
// finds each event in them, has EventReader read it (chrome_json_reader.h)
// and EventParser map it to the trace (chrome_json_parser.h), and splits the
// batches among one or two parse threads. What maps to what, and what is
// skipped and why: chrome_json.h, docs/import.md.
//
// [SECTION] Events in a batch
// [SECTION] Importer: one thread
// [SECTION] Importer: two threads (worker, pending batches)
// [SECTION] Importer: merging in file order
// [SECTION] Entry point
//
// Speed notes: events are read straight from the batch text by a validating
// walker that looks only at the fields it needs (simdjson's on-demand API cost
// ~3x more per event: it steps through every structural token); field names
// are found in perfect-hash tables of keys (chrome_json_keys.h); strings are
// interned through an XXH3-keyed cache in front of the StringTable;
// timestamps go from decimal text straight to integer ns.
#include "import/chrome_json.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "import/chrome_json_parser.h"
#include "import/chrome_json_reader.h"
#include "import/chrome_json_stream.h"

namespace gpuscope {

namespace {

using detail::JsonBatch;
using detail::JsonSegment;
using detail::JsonStream;
using detail::chrome::Event;
using detail::chrome::EventParser;
using detail::chrome::EventReader;
using detail::chrome::Source;
using detail::chrome::Walker;

// [SECTION] Events in a batch --------------------------------------------------------------------

// An event or top-level value a local parser left to the whole parser, with
// how far its rows, strings and tracks had got when it came.
struct Deferred {
  const char* event;  // start of the event's text, or null for a top-level value
  const JsonSegment* segment;
  EventParser::Mark mark;
};

// A parser of alternate batches (two threads): its own reader, parser (Role::local) and rows.
struct LocalParser {
  explicit LocalParser(const Source& source) : reader(source), parser(source, EventParser::Role::local) {}
  EventReader reader;
  EventParser parser;
  Event ev;
  std::vector<Deferred> deferred;  // what the whole parser still has to take from this batch
  std::exception_ptr error;        // the batch's first error, thrown at its place in the merge
};

// Finds each event of a run of the events array and maps it; with `deferred`
// (a local parser), the events that must wait for the whole parser go there.
void parse_events(const Source& source, EventReader& reader, EventParser& parser, Event& ev, JsonBatch& b,
                  const JsonSegment& seg, std::vector<Deferred>* deferred) {
  Walker w(b.data.get() + seg.begin);
  const char* event_start = w.pos();
  try {
    for (std::size_t i = 0; i < seg.count; ++i) {
      w.skip_ws();
      if (i > 0) {
        w.expect(',', "expected ',' between events");
        w.skip_ws();
      }
      event_start = w.pos();
      if (w.peek() != '{') source.fail_at(b, event_start, "an element of the events array is not an object");
      const std::uint64_t duplicates = reader.duplicate_keys;
      reader.read_event(w, b, ev);
      if (deferred && parser.must_defer(ev)) {
        reader.duplicate_keys = duplicates;  // counted when the merge reads it again
        deferred->push_back(Deferred{event_start, nullptr, parser.mark()});
      } else {
        parser.add_event(ev, b);
      }
    }
  } catch (const detail::JsonSyntaxError& e) {
    source.fail_at(b, e.at,
                   std::string("malformed JSON: ") + e.what + " (in the event that starts at byte " +
                       std::to_string(b.offset_of(event_start)) + ")");
  }
}

// Role::local: every segment of a batch; an error is kept for the merge.
void parse_local_batch(const Source& source, LocalParser& l, JsonBatch& b) {
  try {
    for (const JsonSegment& seg : b.segments) {
      if (seg.kind == JsonSegment::Kind::events)
        parse_events(source, l.reader, l.parser, l.ev, b, seg, &l.deferred);
      else
        l.deferred.push_back(Deferred{nullptr, &seg, l.parser.mark()});
    }
  } catch (...) {
    l.error = std::current_exception();
  }
}

// Throws the first in file order of `found` (an error met while parsing
// batch b's items) and the producer's error that ended b, if any.
[[noreturn]] void throw_first(const JsonBatch& b, std::exception_ptr found) {
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

// Gives a batch back to the stream's pool when it goes out of scope.
struct Release {
  JsonStream& s;
  JsonBatch* b;
  ~Release() {
    if (b) s.release(b);
  }
};

// [SECTION] Importer: one thread -----------------------------------------------------------------

class Importer {
 public:
  Importer(const std::string& path, const ChromeImportOptions& options)
      : source_{path, false}, options_(options), reader_(source_), parser_(source_, EventParser::Role::whole) {}

  Trace run() {
    JsonStream stream(source_.path, options_.progress, options_.buffer_bytes ? options_.buffer_bytes : 4u << 20);
    source_.gzip = stream.gzip();
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
    parser_.finish(stream.info(), reader_);
    return parser_.freeze();
  }

 private:
  class Worker;
  class TwoThreads;

  void check_cancel() {
    if (options_.progress.cancel && options_.progress.cancel->load(std::memory_order_relaxed))
      throw InputError(source_.path, "cancelled");
  }
  void report_progress(const JsonBatch& b, const JsonStream& stream) {
    if (options_.progress.on_progress) options_.progress.on_progress(b.file_done, stream.file_bytes());
  }

  void run_one_thread(JsonStream& stream, JsonBatch* batch) {
    for (; batch; batch = stream.next()) {
      Release release{stream, batch};
      parse_whole_batch(*batch, stream);
    }
  }

  // Parses and maps every item of `batch` into the whole parser; throws the
  // first error in file order (its own, or the producer's that ended it).
  void parse_whole_batch(JsonBatch& batch, const JsonStream& stream) {
    check_cancel();
    // With two threads, the worker faults in the column memory grown here
    // (most of it is filled by later batches).
    parser_.grow_columns(batch, stream.file_bytes(), nullptr, two_threads_ ? &untouched_ : nullptr);
    std::exception_ptr found;
    try {
      for (const JsonSegment& seg : batch.segments) {
        if (seg.kind == JsonSegment::Kind::events)
          parse_events(source_, reader_, parser_, ev_, batch, seg, nullptr);
        else
          parser_.add_top_value(reader_, batch, seg);
      }
    } catch (const InputError&) {
      found = std::current_exception();
    }
    if (found || batch.error) throw_first(batch, found);
    report_progress(batch, stream);
  }

  void run_two_threads(JsonStream& stream, JsonBatch* first);
  void merge_local(LocalParser& l, JsonBatch& b, const JsonStream& stream);
  void merge_local_rows(LocalParser& l, JsonBatch& b);

  Source source_;
  ChromeImportOptions options_;
  EventReader reader_;
  EventParser parser_;
  Event ev_;
  std::vector<detail::MemoryRange> untouched_;  // grown column memory not yet faulted in (two threads)
  bool two_threads_ = false;
};

// [SECTION] Importer: two threads ----------------------------------------------------------------
//
// A worker thread parses batches into local parsers (LocalParser) that fill
// their own rows, strings and tracks and defer what depends on other
// batches (metadata, B/E, counters, string ids, top-level values). The
// calling thread takes everything else, in file order: it merges parsed
// batches (rows appended column by column with their string and track ids
// renumbered; each deferred event mapped here, at its place among the
// rows), and parses batches itself: straight into the whole parser when
// every batch before it has been merged, else into a local parser of its
// own. Strings and tracks are interned in the order the events use them, so
// the trace is the one run_one_thread() makes (tests compare them).
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

class Importer::Worker {
 public:
  explicit Worker(const Source& source) : source_(source), thread_([this] { loop(); }) {}
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
  std::uint64_t post(LocalParser& parser, JsonBatch* b, std::vector<detail::MemoryRange> prefault) {
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
    LocalParser* parser;
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
      parse_local_batch(source_, *job.parser, *job.batch);
      {
        std::lock_guard lock(mutex_);
        ++done_;
      }
      cv_.notify_all();
    }
  }
  const Source& source_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::uint64_t posted_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

// The state of one two-thread import: the batches parsed (or being parsed)
// into local parsers, in file order, waiting for their merge, and the
// stream's next batches.
class Importer::TwoThreads {
 public:
  // Batches parsed ahead of their merge, at most (JsonStream's pool must hold
  // more than this: see kPoolSize).
  static constexpr std::size_t kLocalParsers = 3;

  TwoThreads(Importer& whole, JsonStream& stream, JsonBatch* first)
      : whole_(whole), stream_(stream), pending_(stream), more_(!first->last), worker_(whole.source_) {
    for (std::size_t i = 0; i < kLocalParsers; ++i) {
      locals_.push_back(std::make_unique<LocalParser>(whole.source_));
      free_.push_back(locals_.back().get());
    }
  }

  // Runs the batches from `first` on; throws the first error in file order.
  void run(JsonBatch* first) {
    Release direct{stream_, first};  // the batch to parse straight into the whole parser
    for (;;) {
      if (direct.b) {  // every batch before it is merged
        feed_worker();
        whole_.parse_whole_batch(*direct.b, stream_);
        stream_.release(std::exchange(direct.b, nullptr));
      } else if (pending_.empty()) {
        direct.b = fetch(true);
        if (!direct.b) break;
      } else {
        step();
      }
    }
    if (stream_error_) std::rethrow_exception(stream_error_);
    for (const auto& l : locals_) whole_.parser_.absorb(l->parser, l->reader);
  }

 private:
  struct Item {
    JsonBatch* batch;
    LocalParser* parser;
    std::uint64_t job;  // the worker's job number; 0: parsed by the calling thread
  };
  // Gives the pending batches back when destroyed: declared before the
  // worker, so that on an exception the worker is joined before any batch it
  // may still read goes back to the pool.
  struct Pending : std::deque<Item> {
    explicit Pending(JsonStream& s) : stream(s) {}
    ~Pending() {
      for (const Item& i : *this) stream.release(i.batch);
    }
    JsonStream& stream;
  };

  // With batches pending: merges the next if it is parsed; else queues the
  // worker's next one, or parses a later one here rather than wait, if the
  // producer has one ready (when it is the slower, waiting for it here would
  // leave the worker without work and the merge waiting); else waits.
  void step() {
    const Item front = pending_.front();
    if (front.job == 0 || worker_.done(front.job)) {
      pending_.pop_front();
      Release release{stream_, front.batch};
      whole_.merge_local(*front.parser, *front.batch, stream_);
      free_.push_back(front.parser);
      return;
    }
    if (feed_worker()) return;
    if (more_ && !free_.empty()) {
      if (JsonBatch* b = fetch(false)) {
        LocalParser* l = take_free();
        pending_.push_back(Item{b, l, 0});
        parse_local_batch(whole_.source_, *l, *b);
        return;
      }
    }
    worker_.wait(front.job);
  }

  // The next batch (nullptr at the end, or after a stream error, kept for
  // later); with `wait` false, also nullptr when none is ready yet.
  JsonBatch* fetch(bool wait) {
    if (!more_) return nullptr;
    JsonBatch* b = nullptr;
    try {
      if (!wait) {
        if (!stream_.try_next(&b)) return nullptr;
      } else {
        b = stream_.next();
      }
    } catch (...) {
      stream_error_ = std::current_exception();
    }
    if (!b || b->last) more_ = false;
    return b;
  }

  // Gives the worker the next batch if the producer has one ready, unless
  // the worker has one queued already.
  bool feed_worker() {
    if (!more_ || free_.empty() || worker_.has_queued()) return false;
    JsonBatch* b = fetch(false);
    if (!b) return false;
    LocalParser* l = take_free();
    const std::uint64_t job = worker_.post(*l, b, std::exchange(whole_.untouched_, {}));
    pending_.push_back(Item{b, l, job});
    return true;
  }

  LocalParser* take_free() {
    LocalParser* l = free_.back();
    free_.pop_back();
    return l;
  }

  Importer& whole_;
  JsonStream& stream_;
  std::vector<std::unique_ptr<LocalParser>> locals_;
  std::vector<LocalParser*> free_;
  Pending pending_;
  bool more_;
  std::exception_ptr stream_error_;  // comes after every batch handed over before it
  Worker worker_;                    // last: joined first
};

void Importer::run_two_threads(JsonStream& stream, JsonBatch* first) {
  two_threads_ = true;
  TwoThreads(*this, stream, first).run(first);
}

// [SECTION] Importer: merging in file order ------------------------------------------------------

// Merges what local parser `l` made of batch `b` (then releases nothing:
// the caller does), in file order; rethrows its error at its place.
void Importer::merge_local(LocalParser& l, JsonBatch& b, const JsonStream& stream) {
  parser_.grow_columns(b, stream.file_bytes(), &l.parser, &untouched_);
  std::exception_ptr found;
  try {
    merge_local_rows(l, b);
  } catch (const InputError&) {
    found = std::current_exception();
  }
  if (!found) found = l.error;
  l.error = nullptr;
  if (found || b.error) throw_first(b, found);
  report_progress(b, stream);
}

void Importer::merge_local_rows(LocalParser& l, JsonBatch& b) {
  for (const Deferred& d : l.deferred) {
    parser_.merge_rows(l.parser, d.mark);
    if (d.segment) {
      parser_.add_top_value(reader_, b, *d.segment);
      continue;
    }
    Walker w(d.event);
    try {
      reader_.read_event(w, b, ev_);
    } catch (const detail::JsonSyntaxError& e) {  // the local parser read it already: cannot happen
      source_.fail_at(b, e.at, std::string("malformed JSON: ") + e.what);
    }
    parser_.add_event(ev_, b);
  }
  parser_.merge_rows(l.parser, l.parser.mark());
  l.deferred.clear();
  l.parser.clear_merged_rows();
}

}  // namespace

// [SECTION] Entry point --------------------------------------------------------------------------

Trace import_chrome_json(const std::string& path, const ChromeImportOptions& options) {
  return Importer(path, options).run();
}

}  // namespace gpuscope
