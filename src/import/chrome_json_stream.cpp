// Streaming front end of the Chrome JSON importer: sources, splitter, producer
// thread. See chrome_json_stream.h for the contract.
//
// [SECTION] Byte sources (plain file, gzip through ISA-L)
// [SECTION] Splitter (finds complete items; checks the structure it walks)
// [SECTION] Producer thread and buffer pool
#include "import/chrome_json_stream.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include <simdjson.h>

#include "import/chrome_json_text.h"
#include "trace/budget.h"
#include "trace/error.h"

namespace gpuscope::detail {

namespace {

// [SECTION] Byte sources ----------------------------------------------------------------------

class FileHandle {
 public:
  explicit FileHandle(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw InputError(path, std::string("cannot stat: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) {
      ::close(fd_);
      throw InputError(path, "is a directory, expected a trace file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;

  // Reads up to n bytes; returns fewer only at the end of the file.
  std::size_t read(char* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r = ::read(fd_, dst + done, n - done);
      if (r < 0) {
        if (errno == EINTR) continue;
        throw InputError(path_, std::string("read error: ") + std::strerror(errno), position_ + done);
      }
      if (r == 0) break;
      done += static_cast<std::size_t>(r);
    }
    position_ += done;
    return done;
  }
  std::uint64_t size() const { return size_; }
  std::uint64_t position() const { return position_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t position_ = 0;
};

class Source {
 public:
  virtual ~Source() = default;
  // Fills up to n bytes of JSON text; returns 0 only at the end.
  virtual std::size_t read(char* dst, std::size_t n) = 0;
  virtual std::uint64_t file_done() const = 0;
  // After read() returned 0: why the text ended early, if it did (a gzip
  // stream without its end), else empty.
  virtual std::string cut_short() const { return {}; }
};

class PlainSource final : public Source {
 public:
  PlainSource(FileHandle& f, std::string prefix) : f_(f), prefix_(std::move(prefix)) {}
  std::size_t read(char* dst, std::size_t n) override {
    std::size_t done = 0;
    if (prefix_at_ < prefix_.size()) {  // bytes already read to sniff the format
      done = std::min(n, prefix_.size() - prefix_at_);
      std::memcpy(dst, prefix_.data() + prefix_at_, done);
      prefix_at_ += done;
    }
    return done + f_.read(dst + done, n - done);
  }
  std::uint64_t file_done() const override { return f_.position(); }

 private:
  FileHandle& f_;
  std::string prefix_;
  std::size_t prefix_at_ = 0;
};

// Streaming gzip through ISA-L (igzip): about 3–5 GB/s of JSON output on the
// reference machine, against ~1 GB/s for zlib. Concatenated gzip members
// (as `cat a.gz b.gz` makes) are decoded one after the other.
class GzipSource final : public Source {
 public:
  GzipSource(FileHandle& f, std::string prefix) : f_(f), in_(kInputBytes) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    in_len_ = prefix.size();
    state_ = std::make_unique<inflate_state>();
    start_member();
  }

  // Output produced before corrupt or truncated data is returned first and
  // the error comes with the next call, so that the text before it is split
  // (and its own errors found) whatever the read sizes were.
  std::size_t read(char* dst, std::size_t n) override {
    if (pending_) std::rethrow_exception(pending_);
    std::size_t produced = 0;
    try {
      read_some(dst, n, produced);
    } catch (const InputError&) {
      if (produced == 0) throw;
      pending_ = std::current_exception();
    }
    return produced;
  }
  std::uint64_t file_done() const override { return f_.position() - state_->avail_in; }

 private:
  void read_some(char* dst, std::size_t n, std::size_t& produced) {
    while (produced < n && !finished_) {
      if (state_->avail_in == 0 && !input_eof_) refill();
      if (member_done_) {
        // Between members: more gzip data may follow; anything else is an error.
        skip_member_gap();
        if (finished_) break;
        continue;
      }
      state_->next_out = reinterpret_cast<std::uint8_t*>(dst + produced);
      state_->avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(n - produced, 1u << 30));
      const int rc = isal_inflate(state_.get());
      produced += static_cast<std::size_t>(reinterpret_cast<char*>(state_->next_out) - (dst + produced));
      if (rc < 0) fail_corrupt(rc);
      if (state_->block_state == ISAL_BLOCK_FINISH) {
        member_done_ = true;
        continue;
      }
      if (state_->avail_in == 0 && input_eof_ && state_->avail_out > 0) {
        // The file ends inside the stream (a copy cut short): the text so far
        // is kept, and the splitter says where in it the complete items end.
        cut_ = "the gzip stream ends early, at byte " + std::to_string(f_.position()) +
               " of the file (its end-of-stream marker is missing)";
        finished_ = true;
        return;
      }
    }
  }

 public:
  std::string cut_short() const override { return cut_; }

 private:
  static constexpr std::size_t kInputBytes = 1u << 20;

  void start_member() {
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
    state_->next_in = reinterpret_cast<std::uint8_t*>(in_.data());
    state_->avail_in = static_cast<std::uint32_t>(in_len_);
    member_done_ = false;
  }

  void refill() {
    // Keep unconsumed input (ISA-L may leave some), then read more behind it.
    const std::size_t keep = state_->avail_in;
    if (keep) std::memmove(in_.data(), state_->next_in, keep);
    const std::size_t got = f_.read(in_.data() + keep, in_.size() - keep);
    if (got == 0) input_eof_ = true;
    in_len_ = keep + got;
    state_->next_in = reinterpret_cast<std::uint8_t*>(in_.data());
    state_->avail_in = static_cast<std::uint32_t>(in_len_);
  }

  void skip_member_gap() {
    for (;;) {
      if (state_->avail_in < 2 && !input_eof_) {
        refill();
        continue;
      }
      if (state_->avail_in == 0) {
        finished_ = true;
        return;
      }
      const std::uint8_t* p = state_->next_in;
      // Some writers pad the file with zero bytes: accept them at the end.
      if (std::all_of(p, p + state_->avail_in, [](std::uint8_t b) { return b == 0; })) {
        state_->next_in += state_->avail_in;
        state_->avail_in = 0;
        continue;
      }
      if (state_->avail_in >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
        const std::uint32_t avail = state_->avail_in;
        std::uint8_t* next = state_->next_in;
        isal_inflate_init(state_.get());
        state_->crc_flag = ISAL_GZIP;
        state_->next_in = next;
        state_->avail_in = avail;
        member_done_ = false;
        return;
      }
      throw InputError(f_.path(), "unexpected bytes after the end of the gzip stream", file_done());
    }
  }

  [[noreturn]] void fail_corrupt(int rc) {
    const char* what = "invalid compressed data";
    switch (rc) {
      case ISAL_INVALID_BLOCK: what = "invalid deflate block"; break;
      case ISAL_INVALID_SYMBOL: what = "invalid deflate symbol"; break;
      case ISAL_INVALID_LOOKBACK: what = "invalid back-reference distance"; break;
      case ISAL_INVALID_WRAPPER: what = "invalid gzip header"; break;
      case ISAL_UNSUPPORTED_METHOD: what = "unsupported compression method"; break;
      case ISAL_INCORRECT_CHECKSUM: what = "gzip checksum mismatch"; break;
      default: break;
    }
    throw InputError(f_.path(), std::string("corrupt gzip data: ") + what + " (offset in the compressed file)",
                     file_done());
  }

  FileHandle& f_;
  std::vector<char> in_;
  std::size_t in_len_ = 0;
  std::unique_ptr<inflate_state> state_;
  bool input_eof_ = false, member_done_ = false, finished_ = false;
  std::exception_ptr pending_;
  std::string cut_;
};

// [SECTION] Splitter ----------------------------------------------------------------------------

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

constexpr std::size_t kMaxRunBytes = 48u << 10;

// Index of the first byte in [p, p + n) that is a quote or a backslash (in a
// string), or a quote or a bracket (outside strings); n if none. SSE2 looks at
// 16 bytes per step: most of a trace is long strings and digits.
template <bool kInString>
std::size_t find_special(const char* p, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i lower20 = _mm_set1_epi8(0x20);
  const __m128i brace_open = _mm_set1_epi8('{'), brace_close = _mm_set1_epi8('}');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i hit;
    if constexpr (kInString) {
      hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    } else {
      // '[' | 0x20 == '{' and ']' | 0x20 == '}': two compares find all four brackets.
      const __m128i folded = _mm_or_si128(v, lower20);
      hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                         _mm_or_si128(_mm_cmpeq_epi8(folded, brace_open), _mm_cmpeq_epi8(folded, brace_close)));
    }
    const int mask = _mm_movemask_epi8(hit);
    if (mask) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < n; ++i) {
    const char c = p[i];
    if constexpr (kInString) {
      if (c == '"' || c == '\\') return i;
    } else {
      if (c == '"' || c == '{' || c == '}' || c == '[' || c == ']') return i;
    }
  }
  return n;
}

// What the splitter needs of 64 bytes of a container: the prefix XOR of its
// quotes within `valid` (bit i: an odd number of quotes at or before i, so
// bit 63 is the parity of them all), its brackets ('[' | 0x20 == '{' and
// ']' | 0x20 == '}': two compares find all four; which one it is is read
// from the text for the few there are), and whether it holds a backslash.
// Loads past the text stay inside the buffer's padding; their bits are
// masked off (a stale backslash only sends the block down the exact
// byte-by-byte path).
struct BlockMasks {
  std::uint64_t quote_prefix, brackets;
  bool backslash;
};

#if defined(__SSE2__)
[[gnu::always_inline]] inline BlockMasks block_masks_sse2(const char* p, std::uint64_t valid) {
  std::uint64_t quote = 0, brackets = 0;
  __m128i backslashes = _mm_setzero_si128();
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), lower20 = _mm_set1_epi8(0x20);
  const __m128i brace_open = _mm_set1_epi8('{'), brace_close = _mm_set1_epi8('}');
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, lower20);
    const int sh = 16 * k;
    backslashes = _mm_or_si128(backslashes, _mm_cmpeq_epi8(v, bs));
    quote |= std::uint64_t(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)))) << sh;
    brackets |= std::uint64_t(static_cast<unsigned>(_mm_movemask_epi8(
                    _mm_or_si128(_mm_cmpeq_epi8(folded, brace_open), _mm_cmpeq_epi8(folded, brace_close)))))
                << sh;
  }
  std::uint64_t prefix = quote & valid;
  prefix ^= prefix << 1;
  prefix ^= prefix << 2;
  prefix ^= prefix << 4;
  prefix ^= prefix << 8;
  prefix ^= prefix << 16;
  prefix ^= prefix << 32;
  return BlockMasks{prefix, brackets, _mm_movemask_epi8(backslashes) != 0};
}
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define GPUSCOPE_SPLITTER_AVX2 1

bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  }();
  return has;
}
#endif

std::atomic<bool> g_splitter_avx2_allowed{true};

bool splitter_avx2() {
#if defined(GPUSCOPE_SPLITTER_AVX2)
  return cpu_has_avx2() && g_splitter_avx2_allowed.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

#if defined(GPUSCOPE_SPLITTER_AVX2)

[[gnu::target("avx2,pclmul"), gnu::always_inline]] inline BlockMasks block_masks_avx2(const char* p,
                                                                                      std::uint64_t valid) {
  const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\'), lower20 = _mm256_set1_epi8(0x20);
  const __m256i brace_open = _mm256_set1_epi8('{'), brace_close = _mm256_set1_epi8('}');
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const __m256i lo_folded = _mm256_or_si256(lo, lower20), hi_folded = _mm256_or_si256(hi, lower20);
  const auto quote = (std::uint64_t(static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, q)))) << 32 |
                      static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, q)))) &
                     valid;
  const auto lo_brackets = static_cast<std::uint32_t>(_mm256_movemask_epi8(
      _mm256_or_si256(_mm256_cmpeq_epi8(lo_folded, brace_open), _mm256_cmpeq_epi8(lo_folded, brace_close))));
  const auto hi_brackets = static_cast<std::uint32_t>(_mm256_movemask_epi8(
      _mm256_or_si256(_mm256_cmpeq_epi8(hi_folded, brace_open), _mm256_cmpeq_epi8(hi_folded, brace_close))));
  const __m256i backslashes = _mm256_or_si256(_mm256_cmpeq_epi8(lo, bs), _mm256_cmpeq_epi8(hi, bs));
  // Carry-less multiplication by all ones is the prefix XOR.
  const __m128i prefix = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(quote)), _mm_set1_epi8(-1), 0);
  return BlockMasks{static_cast<std::uint64_t>(_mm_cvtsi128_si64(prefix)),
                    std::uint64_t{hi_brackets} << 32 | lo_brackets, !_mm256_testz_si256(backslashes, backslashes)};
}
#endif

class Splitter {
 public:
  Splitter(const std::string& path, bool gzip) : path_(path), gzip_(gzip), avx2_(splitter_avx2()) {}

  // Scans data[pos, end) of `b`, adding segments for every item completed.
  void scan(JsonBatch& b, std::size_t& pos, std::size_t end) {
    const char* d = b.data.get();
    while (pos < end) {
      if (in_item_) {
        if (!scan_item(b, pos, end)) return;
        complete_item(b, pos);
        continue;
      }
      const char c = d[pos];
      if (is_ws(c)) {  // a run of it (Kineto indents each event)
        do ++pos;
        while (pos < end && is_ws(d[pos]));
        continue;
      }
      switch (state_) {
        case State::start:
          if (!bom_checked_) {
            bom_checked_ = true;
            if (static_cast<unsigned char>(c) == 0xEF) {  // UTF-8 byte order mark
              if (end - pos < 3 && !eof_) return;
              if (end - pos >= 3 && static_cast<unsigned char>(d[pos + 1]) == 0xBB &&
                  static_cast<unsigned char>(d[pos + 2]) == 0xBF) {
                pos += 3;
                continue;
              }
            }
          }
          if (c == '{') {
            state_ = State::object_key_or_end;
          } else if (c == '[') {
            info_.root_is_array = true;
            events_in_root_ = true;
            state_ = State::events_first;
          } else {
            fail(b, pos, "not a Chrome trace: expected '{' or '[' at the start of the JSON document");
          }
          ++pos;
          break;
        case State::object_key_or_end:
        case State::object_key:
          if (c == '}' && state_ == State::object_key_or_end) {
            state_ = State::done;
            ++pos;
          } else if (c == '"') {
            begin_item(pos, ItemRole::key);
          } else {
            fail(b, pos, "expected a key string in the top-level object");
          }
          break;
        case State::object_colon:
          if (c != ':') fail(b, pos, "expected ':' after a top-level key");
          state_ = State::object_value;
          ++pos;
          break;
        case State::object_value:
          if (key_ == "traceEvents" && !info_.saw_trace_events) {  // a second one is a value the importer skips
            if (c != '[') fail(b, pos, "\"traceEvents\" is not an array");
            info_.saw_trace_events = true;
            state_ = State::events_first;
            ++pos;
          } else {
            begin_item(pos, ItemRole::value);
          }
          break;
        case State::object_comma_or_end:
          if (c == ',') {
            state_ = State::object_key;
          } else if (c == '}') {
            state_ = State::done;
          } else {
            fail(b, pos, "expected ',' or '}' after a top-level value");
          }
          ++pos;
          break;
        case State::events_first:
        case State::events_next:
          if (c == ']' && state_ == State::events_first) {
            end_events();
            ++pos;
          } else if (c == ']' || c == ',' || c == '}' || c == ':') {
            fail(b, pos, "expected an event object in the events array");
          } else {
            begin_item(pos, ItemRole::event);
          }
          break;
        case State::events_comma_or_end:
          if (c == ',') {
            state_ = State::events_next;
          } else if (c == ']') {
            end_events();
          } else {
            fail(b, pos, "expected ',' or ']' after an event");
          }
          ++pos;
          break;
        case State::done: fail(b, pos, "unexpected data after the end of the JSON document");
      }
    }
  }

  // Called at the end of the text, after the last scan(). A text that ends
  // early (a file cut short) is not an error here: the items before the cut
  // are complete and handed over, and info() says where and inside what the
  // text stopped (the importer decides whether anything usable remains).
  void finish(JsonBatch& b, std::size_t end) {
    eof_ = true;
    // An item still open here was cut, a scalar too: the document's closing
    // bracket must follow any item, so a number at the very end of the text
    // may have lost digits ("5" of "512") and is not taken.
    if (in_item_) {
      const std::string what = role_ == ItemRole::event ? "an event"
                               : role_ == ItemRole::key ? "a top-level key"
                                                        : "the top-level value \"" + key_ + "\"";
      return cut(offset(b, end), offset(b, item_start_),
                 "inside " + what + " that starts at byte " + std::to_string(offset(b, item_start_)),
                 role_ != ItemRole::event && info_.saw_trace_events);
    }
    switch (state_) {
      case State::done: return;
      case State::start: fail_at(offset(b, end), saw_any_ ? "no JSON value" : "empty file: no JSON value");
      case State::events_first:
      case State::events_next:
      case State::events_comma_or_end:
        if (events_in_root_) {  // the format allows a bare array without its closing ']'
          info_.unterminated_array = true;
          return;
        }
        return cut(offset(b, end), offset(b, end), "inside the \"traceEvents\" array, after a complete event", false);
      default: return cut(offset(b, end), offset(b, end), "inside the top-level object", info_.saw_trace_events);
    }
  }

  // The offset in b.data of the end of the complete items (the start of an
  // item the text ends inside, else `end`): what finish() keeps.
  std::size_t complete_end(std::size_t end) const { return in_item_ ? item_start_ : end; }

  // First byte that must be kept for the next buffer (an unfinished item), or end.
  std::size_t carry_start(std::size_t end) const { return in_item_ ? item_start_ : end; }

  // After scan() failed: the offset in b.data of the text that precedes the
  // error and can be checked for UTF-8 (every byte before a structural error
  // the splitter found, else the end of the last complete item, a top-level
  // key included); the producer reports an invalid byte there instead.
  std::size_t checkable_end() const { return failed_at_ ? failed_at_ : items_end_; }

  // The bytes before `delta + 1` were handed over; positions shift down.
  void rebase(std::size_t delta) {
    if (in_item_) item_start_ -= delta;
    items_end_ = 1;  // every complete item was in the bytes handed over
    run_open_ = false;
  }

  void note_bytes() { saw_any_ = true; }
  bool started() const { return state_ != State::start; }
  const JsonStreamInfo& info() const { return info_; }
  JsonStreamInfo& info() { return info_; }

 private:
  enum class State : std::uint8_t {
    start,
    object_key_or_end,
    object_key,
    object_colon,
    object_value,
    object_comma_or_end,
    events_first,
    events_next,
    events_comma_or_end,
    done
  };
  enum class ItemRole : std::uint8_t { key, value, event };

  void begin_item(std::size_t pos, ItemRole role) {
    in_item_ = true;
    role_ = role;
    item_start_ = pos;
    stack_.clear();
    in_string_ = escape_ = false;
    item_scalar_ = false;
    item_started_ = false;
  }

  // Advances through the item; true when it is complete (pos just past it).
  bool scan_item(JsonBatch& b, std::size_t& pos, std::size_t end) {
    const char* d = b.data.get();
    if (!item_started_) {
      item_started_ = true;
      const char c = d[pos];
      if (c == '"') {
        in_string_ = true;
        ++pos;
      } else if (c == '{' || c == '[') {
        stack_.push_back(c == '{' ? '}' : ']');
        ++pos;
      } else {
        item_scalar_ = true;
      }
    }
    if (item_scalar_) {
      while (pos < end) {
        const char c = d[pos];
        if (is_ws(c) || c == ',' || c == ']' || c == '}' || c == ':') return true;
        if (c == '"' || c == '{' || c == '[') fail(b, pos, "unexpected character in a JSON value");
        ++pos;
      }
      return false;
    }
    for (;;) {
      if (pos >= end) return false;
      // Containers take 64 bytes at a time unless a backslash is near.
      if (!stack_.empty() && !escape_) {
        const int r = scan_blocks(b, pos, end);
        if (r > 0) return true;
        if (r == 0) return false;  // at `end`
      }
      // Scalar: up to the end of this 64-byte stretch (or the item's end).
      const std::size_t stop = std::min(end, pos + 64);
      if (scan_scalar(b, pos, stop)) return true;
    }
  }

  // Consecutive 64-byte blocks of a container, without backslashes: quote and
  // bracket bitmasks (block_masks), strings found by a prefix XOR of the
  // quotes, brackets outside strings walked bit by bit. Returns 1 if the item
  // ended (pos just past it), 0 at `end`, -1 at a block that holds a
  // backslash (the caller scans it byte by byte). AVX2 and carry-less
  // multiplication where the processor has them (the same masks).
  int scan_blocks(JsonBatch& b, std::size_t& pos, std::size_t end) {
#if defined(GPUSCOPE_SPLITTER_AVX2)
    if (avx2_) return scan_blocks_avx2(b, pos, end);
#endif
    return scan_blocks_sse2(b, pos, end);
  }

  int scan_blocks_sse2(JsonBatch& b, std::size_t& pos, std::size_t end) {
#if defined(__SSE2__)
    for (;;) {
      const std::size_t avail = std::min<std::size_t>(64, end - pos);
      const int r = walk_block(block_masks_sse2(b.data.get() + pos, valid_bits(avail)), b, pos, avail);
      if (r != 0 || pos >= end) return r;
    }
#else
    (void)b, (void)pos, (void)end;
    return -1;
#endif
  }

#if defined(GPUSCOPE_SPLITTER_AVX2)
  [[gnu::target("avx2,pclmul")]] int scan_blocks_avx2(JsonBatch& b, std::size_t& pos, std::size_t end) {
    for (;;) {
      const std::size_t avail = std::min<std::size_t>(64, end - pos);
      const int r = walk_block(block_masks_avx2(b.data.get() + pos, valid_bits(avail)), b, pos, avail);
      if (r != 0 || pos >= end) return r;
    }
  }
#endif

  static std::uint64_t valid_bits(std::size_t avail) {
    return avail == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << avail) - 1;
  }

  // The rest of one block, from its masks: 1 if the item ended there (pos
  // just past it), 0 if the block was consumed (pos past it), -1 if it holds
  // a backslash (pos unchanged).
  [[gnu::always_inline]] int walk_block(const BlockMasks& m, JsonBatch& b, std::size_t& pos, std::size_t avail) {
    // Past `end` (the last block of a buffer) a stale backslash only sends the
    // block down the exact byte-by-byte path.
    if (m.backslash) return -1;
    // inside[i] = parity of the quotes at or before i (flipped if a string is open).
    const std::uint64_t inside = in_string_ ? ~m.quote_prefix : m.quote_prefix;
    std::uint64_t brackets = m.brackets & valid_bits(avail) & ~inside;
    const char* d = b.data.get();
    while (brackets) {
      const std::size_t at = pos + static_cast<std::size_t>(__builtin_ctzll(brackets));
      brackets &= brackets - 1;
      const char c = d[at];
      if (c == '{' || c == '[') {
        if (stack_.size() >= kMaxJsonDepth)
          fail(b, at, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        stack_.push_back(c == '{' ? '}' : ']');
      } else {
        if (stack_.back() != c) fail(b, at, std::string("mismatched '") + c + "': expected '" + stack_.back() + "'");
        stack_.pop_back();
        if (stack_.empty()) {
          pos = at + 1;
          in_string_ = false;
          return 1;
        }
      }
    }
    if (m.quote_prefix >> 63) in_string_ = !in_string_;  // an odd number of quotes
    pos += avail;
    return 0;
  }

  // Byte-by-byte scan of [pos, stop); true when the item ended (pos just past it).
  bool scan_scalar(JsonBatch& b, std::size_t& pos, std::size_t stop) {
    const char* d = b.data.get();
    while (pos < stop) {
      if (in_string_) {
        if (escape_) {  // the byte after a backslash that ended the previous buffer
          escape_ = false;
          ++pos;
          continue;
        }
        pos += find_special<true>(d + pos, stop - pos);
        if (pos >= stop) return false;
        if (d[pos] == '\\') {
          if (pos + 1 >= stop) {
            escape_ = true;
            pos = stop;
            return false;
          }
          pos += 2;
          continue;
        }
        in_string_ = false;  // closing quote
        ++pos;
        if (stack_.empty()) return true;  // the item was a string
        continue;
      }
      pos += find_special<false>(d + pos, stop - pos);
      if (pos >= stop) return false;
      const char c = d[pos];
      if (c == '"') {
        in_string_ = true;
        ++pos;
      } else if (c == '{' || c == '[') {
        if (stack_.size() >= kMaxJsonDepth)
          fail(b, pos, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        stack_.push_back(c == '{' ? '}' : ']');
        ++pos;
      } else {
        if (stack_.back() != c) fail(b, pos, std::string("mismatched '") + c + "': expected '" + stack_.back() + "'");
        stack_.pop_back();
        ++pos;
        if (stack_.empty()) return true;
      }
    }
    return false;
  }

  void complete_item(JsonBatch& b, std::size_t end) {
    in_item_ = false;
    items_end_ = end;
    switch (role_) {
      case ItemRole::key: {
        key_.clear();
        const std::string_view raw(b.data.get() + item_start_ + 1, end - item_start_ - 2);
        if (!json_unescape(raw, &key_)) fail(b, item_start_, "invalid escape in a top-level key");
        state_ = State::object_colon;
        run_open_ = false;
        break;
      }
      case ItemRole::value:
        b.segments.push_back(JsonSegment{JsonSegment::Kind::top_value, item_start_, end, 1, key_});
        state_ = State::object_comma_or_end;
        run_open_ = false;
        break;
      case ItemRole::event:
        // Runs stay small so that simdjson's pass over a run and the
        // importer's walk of it happen while the run is still in cache.
        if (run_open_ && !b.segments.empty() && b.segments.back().kind == JsonSegment::Kind::events &&
            b.segments.back().end - b.segments.back().begin < kMaxRunBytes) {
          b.segments.back().end = end;
          ++b.segments.back().count;
        } else {
          b.segments.push_back(JsonSegment{JsonSegment::Kind::events, item_start_, end, 1, {}});
          run_open_ = true;
        }
        state_ = State::events_comma_or_end;
        break;
    }
  }

  void end_events() {
    run_open_ = false;
    state_ = events_in_root_ ? State::done : State::object_comma_or_end;
  }

  std::uint64_t offset(const JsonBatch& b, std::size_t pos) const { return b.stream_offset + (pos - 1); }

  void cut(std::uint64_t text_end, std::uint64_t complete_end, const std::string& where, bool events_complete) {
    info_.cut_short = true;
    info_.cut_events_complete = events_complete;
    info_.cut_text_end = text_end;
    info_.cut_complete_end = complete_end;
    info_.cut_where = where;
  }

  [[noreturn]] void fail(const JsonBatch& b, std::size_t pos, const std::string& what) {
    failed_at_ = pos;
    fail_at(offset(b, pos), what);
  }
  [[noreturn]] void fail_at(std::uint64_t off, const std::string& what) const {
    throw InputError(path_, gzip_ ? what + " (offset in the decompressed JSON)" : what, off);
  }

  std::string path_;
  bool gzip_;
  JsonStreamInfo info_;
  State state_ = State::start;
  bool bom_checked_ = false, eof_ = false, saw_any_ = false;
  bool events_in_root_ = false;
  bool run_open_ = false;
  std::string key_;
  // The item being scanned.
  bool in_item_ = false, item_started_ = false, item_scalar_ = false;
  ItemRole role_ = ItemRole::event;
  std::size_t item_start_ = 0;
  std::size_t items_end_ = 1;  // end of the last complete item in the batch being scanned
  std::size_t failed_at_ = 0;  // where scan() found a structural error (0: none)
  // The closers expected, innermost last: at most kMaxJsonDepth (a deeper
  // item fails before its push), so a fixed array without growth checks.
  struct Closers {
    std::array<char, kMaxJsonDepth> c;
    int n = 0;
    void clear() { n = 0; }
    bool empty() const { return n == 0; }
    int size() const { return n; }
    char back() const { return c[static_cast<std::size_t>(n - 1)]; }
    void push_back(char x) { c[static_cast<std::size_t>(n++)] = x; }
    void pop_back() { --n; }
  } stack_;
  bool in_string_ = false, escape_ = false;
  bool avx2_;  // 64-byte blocks through AVX2 (block_masks_avx2)
};

}  // namespace

// [SECTION] Producer thread and buffer pool -----------------------------------------------

struct JsonStream::Impl {
  // The two-thread importer holds up to three (parsed ahead of their merge,
  // or one of them and the one being parsed straight into the trace), which
  // leaves the producer one to fill and two to queue. Fewer than four would
  // deadlock it.
  static constexpr int kPoolSize = 6;

  std::string path;
  LoadProgress progress;
  std::size_t buffer_bytes;
  std::size_t max_item_bytes;  // one event or top-level value
  FileHandle file;
  std::unique_ptr<Source> source;
  bool gzip = false;
  JsonStreamInfo info;

  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::unique_ptr<JsonBatch>> pool;
  std::vector<JsonBatch*> free_batches;
  std::deque<JsonBatch*> full;
  bool producer_done = false;
  std::exception_ptr error;
  std::atomic<bool> stop{false};
  std::thread producer;

  Impl(const std::string& p, const LoadProgress& pr, std::size_t bytes)
      : path(p),
        progress(pr),
        buffer_bytes(bytes),
        // The pool's buffers keep the size a large item gave them: six of
        // them stay well inside the budget.
        max_item_bytes(static_cast<std::size_t>(
            std::clamp<std::uint64_t>(memory_budget() / 16, std::uint64_t{1} << 20, kMaxItemBytes))),
        file(p) {
    if (file.size() == 0) throw InputError(path, "empty file: no JSON value", 0);
    std::string prefix(2, '\0');
    prefix.resize(file.read(prefix.data(), 2));
    gzip = prefix.size() == 2 && static_cast<unsigned char>(prefix[0]) == 0x1f &&
           static_cast<unsigned char>(prefix[1]) == 0x8b;
    if (gzip)
      source = std::make_unique<GzipSource>(file, std::move(prefix));
    else
      source = std::make_unique<PlainSource>(file, std::move(prefix));
    info.gzip = gzip;
    info.file_bytes = file.size();
    for (int i = 0; i < kPoolSize; ++i) {
      auto b = std::make_unique<JsonBatch>();
      free_batches.push_back(b.get());
      pool.push_back(std::move(b));
    }
  }

  // Bytes of a pooled buffer: room for buffer_bytes of text, the padding and
  // two spare bytes, rounded down to whole huge pages when that large (the
  // default 4 MiB + 66 becomes 4 MiB: two huge pages rather than three).
  std::size_t buffer_capacity() const {
    const std::size_t want = buffer_bytes + kJsonPadding + 2;
    return want >= 2 * kHugePageBytes ? want & ~(kHugePageBytes - 1) : want;
  }

  bool cancelled() const {
    return stop.load(std::memory_order_relaxed) ||
           (progress.cancel && progress.cancel->load(std::memory_order_relaxed));
  }

  JsonBatch* acquire() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return !free_batches.empty() || cancelled(); });
    if (cancelled()) throw InputError(path, "cancelled");
    JsonBatch* b = free_batches.back();
    free_batches.pop_back();
    lock.unlock();
    if (b->capacity < buffer_capacity()) {
      b->capacity = buffer_capacity();
      b->data = alloc_text_buffer(b->capacity);
    }
    b->size = 1;
    b->segments.clear();
    b->last = false;
    b->error = nullptr;
    return b;
  }

  // Offset of the first byte that is not valid UTF-8 (n if all are). Only
  // used to say where, after simdjson's fast check has failed.
  static std::size_t first_invalid_utf8(const unsigned char* s, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
      const unsigned char c = s[i];
      std::size_t len = 0;
      std::uint32_t cp = 0;
      if (c < 0x80) {
        ++i;
        continue;
      } else if ((c & 0xE0) == 0xC0) {
        len = 2, cp = c & 0x1F;
      } else if ((c & 0xF0) == 0xE0) {
        len = 3, cp = c & 0x0F;
      } else if ((c & 0xF8) == 0xF0) {
        len = 4, cp = c & 0x07;
      } else {
        return i;
      }
      if (i + len > n) return i;
      for (std::size_t k = 1; k < len; ++k) {
        if ((s[i + k] & 0xC0) != 0x80) return i;
        cp = (cp << 6) | (s[i + k] & 0x3F);
      }
      const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
      if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
      i += len;
    }
    return n;
  }

  // Every byte of JSON text is checked once: [1, end) of each buffer handed
  // over (a carried-over item is checked in the next buffer; items start with
  // an ASCII byte, so no character is ever split).
  void validate_utf8(const JsonBatch* b, std::size_t end) const {
    const char* p = b->data.get() + 1;
    const std::size_t n = end - 1;
    if (simdjson::validate_utf8(p, n)) return;
    const std::size_t at = first_invalid_utf8(reinterpret_cast<const unsigned char*>(p), n);
    throw InputError(path, gzip ? "invalid UTF-8 (offset in the decompressed JSON)" : "invalid UTF-8",
                     b->stream_offset + at);
  }

  void hand_over(JsonBatch* b) {
    b->file_done = source->file_done();
    {
      std::lock_guard lock(mutex);
      full.push_back(b);
    }
    cv.notify_all();
  }

  static void grow(JsonBatch* b, std::size_t path_limit_bytes) {
    const std::size_t cap = std::max(b->capacity * 2, path_limit_bytes);
    TextBuffer data = alloc_text_buffer(cap);
    std::memcpy(data.get(), b->data.get(), b->size);
    b->data = std::move(data);
    b->capacity = cap;
  }

  // The batch being filled and the splitter's state (for fail()).
  JsonBatch* current = nullptr;
  std::optional<Splitter> splitter;

  void produce() {
    Splitter& sp = splitter.emplace(path, gzip);
    JsonBatch* cur = current = acquire();
    cur->stream_offset = 0;
    std::size_t pos = 1;
    std::uint64_t json_bytes = 0;
    for (;;) {
      if (cancelled()) throw InputError(path, "cancelled");
      const std::size_t limit = cur->capacity - kJsonPadding - 1;  // keep room for the padding and a ']'
      const std::size_t got = source->read(cur->data.get() + cur->size, limit - cur->size);
      if (got) sp.note_bytes();
      cur->size += got;
      json_bytes += got;
      sp.scan(*cur, pos, cur->size);
      if (got == 0) {
        // Text cut inside an item (a character may be cut too) is checked up to that item.
        validate_utf8(cur, sp.complete_end(cur->size));
        if (const std::string cut = source->cut_short(); !cut.empty() && !sp.started())
          throw InputError(path, "truncated gzip stream: " + cut + ", before any JSON text", file.size());
        sp.finish(*cur, cur->size);
        cur->last = true;
        info = sp.info();
        info.gzip = gzip;
        info.file_bytes = file.size();
        info.json_bytes = json_bytes;
        info.gzip_cut = source->cut_short();
        if (!info.gzip_cut.empty() && !info.cut_short) {
          // Every item is complete: the stream lost only its end (the checksum).
          info.cut_short = true;
          info.cut_text_end = info.cut_complete_end = json_bytes;
          info.cut_where = "after the end of the JSON document";
          info.cut_events_complete = true;
        }
        hand_over(cur);
        return;
      }
      if (cur->size < limit) continue;  // room left: read more before handing over
      const std::size_t keep = sp.carry_start(cur->size);
      if (keep == 1) {  // one item fills the whole buffer: make it bigger
        if (cur->capacity - kJsonPadding - 2 >= max_item_bytes)
          throw InputError(path,
                           "a single JSON item is larger than " + memory_size_text(max_item_bytes) +
                               (max_item_bytes < kMaxItemBytes ? " (1/16 of the memory budget; --max-memory)" : ""),
                           cur->stream_offset);
        grow(cur, 0);
        continue;
      }
      validate_utf8(cur, keep);
      JsonBatch* next = acquire();
      const std::size_t carry = cur->size - keep;
      while (next->capacity < carry + kJsonPadding + 2 + buffer_bytes / 2) grow(next, 0);
      std::memcpy(next->data.get() + 1, cur->data.get() + keep, carry);
      next->size = 1 + carry;
      next->stream_offset = cur->stream_offset + (keep - 1);
      sp.rebase(keep - 1);
      pos -= keep - 1;
      cur->size = keep;
      hand_over(cur);
      cur = current = next;
    }
  }

  // The producer failed (`e`): the complete items of the batch being filled
  // are handed over with the error, so that the consumer parses them first and
  // reports an error it finds there (earlier in the text) rather than this
  // one. An invalid UTF-8 byte before the error becomes the error, at its
  // offset: one in those items, in a top-level key, or (for a structural
  // error the splitter found) anywhere before it. Which error a file gets
  // then depends only on the text, not on where buffers happened to end
  // (which varies with the consumer's timing: a pooled buffer grown for a
  // large item is reused at its new size).
  void fail(std::exception_ptr e) {
    JsonBatch* b = std::exchange(current, nullptr);
    if (b && !cancelled()) {
      std::size_t end = 1;
      for (const JsonSegment& seg : b->segments) end = std::max(end, seg.end);
      std::uint64_t at = b->stream_offset + (end - 1);
      const std::size_t check = std::min(std::max(end, splitter ? splitter->checkable_end() : end), b->size);
      const char* p = b->data.get() + 1;
      if (!simdjson::validate_utf8(p, check - 1)) {
        const std::size_t q = first_invalid_utf8(reinterpret_cast<const unsigned char*>(p), check - 1);
        at = b->stream_offset + q;
        e = std::make_exception_ptr(
            InputError(path, gzip ? "invalid UTF-8 (offset in the decompressed JSON)" : "invalid UTF-8", at));
      }
      if (!b->segments.empty()) {
        b->size = end;
        b->error = e;
        b->error_at = at;
        hand_over(b);
      }
    }
    std::lock_guard lock(mutex);
    error = e;
  }

  void run() {
    try {
      produce();
    } catch (...) {
      fail(std::current_exception());
    }
    {
      std::lock_guard lock(mutex);
      producer_done = true;
    }
    cv.notify_all();
  }
};

bool allow_splitter_avx2(bool allow) {
  g_splitter_avx2_allowed.store(allow, std::memory_order_relaxed);
#if defined(GPUSCOPE_SPLITTER_AVX2)
  return cpu_has_avx2();
#else
  return false;
#endif
}

JsonStream::JsonStream(const std::string& path, const LoadProgress& progress, std::size_t buffer_bytes)
    : impl_(std::make_unique<Impl>(path, progress, std::max<std::size_t>(buffer_bytes, 16))) {
  impl_->producer = std::thread([this] { impl_->run(); });
}

JsonStream::~JsonStream() {
  stop();
  if (impl_->producer.joinable()) impl_->producer.join();
}

void JsonStream::stop() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
}

JsonBatch* JsonStream::next() {
  std::unique_lock lock(impl_->mutex);
  impl_->cv.wait(lock, [&] { return !impl_->full.empty() || impl_->producer_done || impl_->error; });
  // Batches handed over before the producer failed come first: their text
  // precedes the error, so errors are reported in file order whatever the
  // threads' timing.
  if (!impl_->full.empty()) {
    JsonBatch* b = impl_->full.front();
    impl_->full.pop_front();
    return b;
  }
  if (impl_->error) std::rethrow_exception(impl_->error);
  return nullptr;
}

bool JsonStream::try_next(JsonBatch** out) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->full.empty() && !impl_->producer_done && !impl_->error) return false;
  }
  *out = next();  // does not wait now: only this thread takes batches
  return true;
}

void JsonStream::release(JsonBatch* batch) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->free_batches.push_back(batch);
  }
  impl_->cv.notify_all();
}

const JsonStreamInfo& JsonStream::info() const { return impl_->info; }
bool JsonStream::gzip() const { return impl_->gzip; }
std::uint64_t JsonStream::file_bytes() const { return impl_->file.size(); }

}  // namespace gpuscope::detail
