// Streaming front end of the Chrome JSON importer (internal to src/import/).
//
// A producer thread reads the file (plain, or gzip through ISA-L's streaming
// inflate), and splits the JSON text into complete items without parsing them:
// each element of the events array ("traceEvents", or the root array of the
// bare-array form) and each other top-level value of the root object. It hands
// over pooled buffers that hold only complete items ("batches"); the consumer
// (chrome_json.cpp, the tokenizer) finds the events in them, which
// EventReader reads and EventParser maps into the trace. Memory stays
// bounded by the pool (a few buffers of a few MiB, grown only for a single
// item larger than a buffer, up to kMaxItemBytes and 1/16 of the memory
// budget, trace/budget.h), whatever the size of the file.
//
// The splitter checks the structure it walks over (brackets, strings, the
// punctuation between items, truncation, nesting depth) and UTF-8; the
// walker (chrome_json_walker.h) checks the rest (keys, literals, numbers,
// escapes) when the consumer reads a batch.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "import/import_memory.h"
#include "trace/load_progress.h"

namespace gpuscope::detail {

inline constexpr std::size_t kJsonPadding = 64;                     // simdjson's SIMDJSON_PADDING
inline constexpr std::size_t kMaxItemBytes = std::size_t{1} << 30;  // one event or top-level value
inline constexpr int kMaxJsonDepth = 256;

// The splitter looks at 64 bytes at a time through AVX2 and carry-less
// multiplication where the processor has them, else through SSE2; both find
// the same items and errors. Tests turn AVX2 off (for imports started after
// the call) to compare the two; returns whether the processor has it.
bool allow_splitter_avx2(bool allow);

// A run of items inside a batch buffer. Positions index JsonBatch::data.
struct JsonSegment {
  enum class Kind : std::uint8_t {
    events,     // [begin, end) holds `count` array elements separated by commas
    top_value,  // [begin, end) holds the value of top-level key `key`
  };
  Kind kind = Kind::events;
  std::size_t begin = 0, end = 0;
  std::size_t count = 0;
  std::string key;
};

// One pooled buffer. Byte 0 is reserved (the consumer writes '[' there when
// the first run starts at byte 1), data occupies [1, size), and at least
// kJsonPadding + 1 writable bytes follow `size`.
struct JsonBatch {
  TextBuffer data;  // import_memory.h: huge-page backed when large
  std::size_t capacity = 0;
  std::size_t size = 1;
  std::uint64_t stream_offset = 0;  // offset in the JSON text of data[1]
  std::uint64_t file_done = 0;      // file bytes consumed when the batch was handed over (progress)
  std::vector<JsonSegment> segments;
  bool last = false;
  // Set when the producer failed after these items (at JSON offset error_at,
  // which they precede, unless an invalid UTF-8 byte inside them is the
  // error): the consumer parses them, then throws `error` unless it found an
  // error before error_at. There is no batch after such a batch.
  std::exception_ptr error;
  std::uint64_t error_at = 0;

  std::uint64_t offset_of(const char* p) const {
    return stream_offset + static_cast<std::uint64_t>(p - (data.get() + 1));
  }
};

struct JsonStreamInfo {
  bool gzip = false;
  bool root_is_array = false;       // bare-array form
  bool unterminated_array = false;  // bare array that ends without ']' (allowed by the format)
  bool saw_trace_events = false;    // object form had a "traceEvents" key
  std::uint64_t file_bytes = 0;
  std::uint64_t json_bytes = 0;  // bytes of JSON text (decompressed size for gzip)
  // The text ended early (a file cut short): the items before the cut were
  // handed over; the rest is lost.
  bool cut_short = false;
  std::uint64_t cut_text_end = 0;      // where the text ends (offset in the JSON text)
  std::uint64_t cut_complete_end = 0;  // where its last complete item ends
  std::string cut_where;               // "inside an event that starts at byte 123", …
  bool cut_events_complete = false;    // the cut came after the events array: every event is there
  std::string gzip_cut;                // for gzip: where the compressed stream ends early, else empty
};

class JsonStream {
 public:
  // Opens the file and starts the producer thread. Throws InputError if the
  // file cannot be opened or is empty.
  JsonStream(const std::string& path, const LoadProgress& progress, std::size_t buffer_bytes = 4u << 20);
  ~JsonStream();  // stops and joins the producer
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // The next batch, or nullptr after the last one. Rethrows the producer's
  // InputError once the batches handed over before it have been taken (so
  // errors come in file order). Each batch must be given back with release()
  // before the producer can reuse it.
  JsonBatch* next();
  // next() without waiting: false when the producer has nothing to hand over
  // yet; else true, with *out as next() would return it (or its exception).
  bool try_next(JsonBatch** out);
  void release(JsonBatch* batch);
  // Asks the producer to stop (it fails with "cancelled"); for shutting a
  // pipeline down early. Thread-safe.
  void stop();

  // Valid once next() has returned nullptr.
  const JsonStreamInfo& info() const;
  bool gzip() const;
  std::uint64_t file_bytes() const;  // size of the file (compressed, for gzip); valid from the start

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::detail
