// gpuscope's native recorder of PyTorch ops (docs/capture.md, "The native observer").
//
// A global at::RecordFunction callback, built against one PyTorch version and
// loaded by the startup hook (gpuscope_hook/native_ops.py, through ctypes)
// only into a process that imported that version. Each op finished on a
// thread becomes one fixed-size row in that thread's buffer: start and end
// (CLOCK_REALTIME ns, the clock of the hook's other rows), the Linux thread
// id, the name, PyTorch's scope (user annotation or op), sequence number and
// forward thread, and the op's input shapes and dtypes as Kineto's "Input
// Dims" / "Input type" texts. Names and texts are interned in one table; the
// hook gives each its id in the host file and takes the rows in bulk, as the
// columns text of a "ranges" chunk (no Python per op), formatted in parts of
// at most ~256 KiB into one buffer kept for the process's life, which the hook
// writes to the host file as they come. Rows live in fixed blocks, moved by
// pointer when taken and reused. Memory is bounded: rows beyond the limit are
// dropped and counted, and no flush allocates text for all its rows.
//
// [SECTION] Rows, strings and thread buffers
// [SECTION] The callback
// [SECTION] Taking the rows
// [SECTION] Fork
// [SECTION] The C interface

#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/ScalarTypeToTypeMeta.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#ifndef GPUSCOPE_TORCH_VERSION
#error "GPUSCOPE_TORCH_VERSION (the torch.__version__ built against) must be defined"
#endif

namespace {

// [SECTION] Rows, strings and thread buffers

constexpr int kInterface = 2;              // what native_ops.py expects of this library
constexpr std::size_t kChunk = 256 << 10;  // the formatted text handed over per call (and a little more)

struct Row {
  int64_t start, end;
  int64_t seq;     // PyTorch's sequence number, -1 none
  uint64_t fwd;    // a backward op's forward thread (PyTorch's number), 0 none
  int32_t tid;     // Linux thread id
  uint32_t name;   // string ids (this library's; mapped to the host file's when taken)
  uint32_t dims;   // 0: none
  uint32_t types;  // 0: none
  uint8_t cat;     // 0 cpu_op, 1 user_annotation
};

// Rows are kept in fixed blocks: a buffer grows without copying what it holds,
// and blocks are reused (no fresh memory once a thread's buffer has grown).
constexpr std::size_t kBlockRows = 1024;
struct Block {
  Row rows[kBlockRows];  // left uninitialized: touched only as rows are written
};

struct ThreadBuffer {
  std::mutex mu;
  std::vector<Block*> blocks;  // the rows recorded, `count` of them
  std::size_t count = 0;
  std::vector<Block*> spare;  // blocks to reuse
  bool dead = false;          // its thread has exited: freed once taken
  // The take side's (under State::mu): the blocks taken, until formatted.
  std::vector<Block*> taken;
  std::size_t taken_count = 0;

  void push(const Row& r) {
    const std::size_t i = count % kBlockRows;
    if (i == 0) {
      if (spare.empty()) {
        blocks.push_back(new Block);
      } else {
        blocks.push_back(spare.back());
        spare.pop_back();
      }
    }
    blocks.back()->rows[i] = r;
    ++count;
  }
  const Row& taken_row(std::size_t i) const { return taken[i / kBlockRows]->rows[i % kBlockRows]; }
  void recycle_taken() {  // under mu
    spare.insert(spare.end(), taken.begin(), taken.end());
    taken.clear();
    taken_count = 0;
  }
  ~ThreadBuffer() {
    for (const auto* list : {&blocks, &spare, &taken})
      for (Block* b : *list) delete b;
  }
};

// Where formatting the taken rows stands between two calls.
struct Cursor {
  bool active = false;
  std::vector<ThreadBuffer*> parts;  // the buffers with taken rows, in order
  std::vector<int> columns;          // Column values to write
  std::size_t column = 0, part = 0, row = 0;
  bool opened = false;  // the current column's key is written
  bool any = false;     // a value of the current column is written
};

struct State {
  std::mutex mu;  // the buffers' list, the strings, the take side
  std::vector<ThreadBuffer*> buffers;
  std::vector<std::string> strings{std::string()};  // id -> text; 0 is ""
  std::vector<uint8_t> shapeless{0};                // id -> an op whose inputs are not read
  std::unordered_set<std::string> shapeless_names;
  std::unordered_map<std::string, uint32_t> ids{{std::string(), 0}};
  std::atomic<bool> recording{false};
  bool shapes = false;
  at::CallbackHandle handle = 0;
  int64_t max_rows = 1 << 20;
  std::atomic<int64_t> buffered{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> generation{1};  // changes in a forked child: thread caches start again
  // The take side (one caller at a time, under mu).
  std::size_t strings_sent = 0;   // strings given to the hook so far
  std::vector<int64_t> file_ids;  // string id -> the host file's id
  std::string blob;
  Cursor cursor;
  std::unique_ptr<char[]> chunk;  // kChunk and some: the formatted text handed over
};

State& state() {
  static State* s = new State();  // never destroyed: threads may record while the process exits
  return *s;
}

uint32_t intern_locked(State& s, const std::string& text) {
  auto it = s.ids.find(text);
  if (it != s.ids.end()) return it->second;
  const auto id = static_cast<uint32_t>(s.strings.size());
  s.strings.push_back(text);
  s.shapeless.push_back(s.shapeless_names.count(text) ? 1 : 0);
  s.ids.emplace(text, id);
  return id;
}

uint32_t intern(const std::string& text) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  return intern_locked(s, text);
}

struct NameEntry {
  std::string text;  // the pointer may be reused for another name: checked on each hit
  uint32_t id;
  bool shapeless;
  bool evaluate;  // autograd's "autograd::engine::evaluate_function: <node>"
};

struct OpContext : at::ObserverContext {
  Row row{};
  uint64_t generation = 0;  // an op open across a fork ends in the child: not the child's
};

// What a thread keeps to itself: its buffer, Linux id and caches of string ids.
struct ThreadCache {
  uint64_t generation = 0;
  ThreadBuffer* buffer = nullptr;
  int32_t tid = 0;
  std::unordered_map<const char*, NameEntry> names;
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> inputs;  // dims + '\n' + types -> ids
  std::string dims, types, key;
  OpContext* evaluate = nullptr;  // the evaluate_function op just started on this thread

  ~ThreadCache() {
    if (buffer == nullptr || generation != state().generation.load()) return;
    std::lock_guard<std::mutex> g(buffer->mu);
    buffer->dead = true;
  }
};

ThreadCache& thread_cache() {
  thread_local ThreadCache c;
  State& s = state();
  const uint64_t gen = s.generation.load(std::memory_order_acquire);
  if (c.generation != gen) {
    c.generation = gen;
    c.tid = static_cast<int32_t>(syscall(SYS_gettid));
    c.buffer = new ThreadBuffer();
    std::lock_guard<std::mutex> g(s.mu);
    s.buffers.push_back(c.buffer);
  }
  return c;
}

const NameEntry& name_of(ThreadCache& c, const char* name) {
  auto it = c.names.find(name);
  if (it != c.names.end() && it->second.text == name) return it->second;
  State& s = state();
  NameEntry e;
  e.text = name;
  e.evaluate = e.text.rfind("autograd::engine::evaluate_function: ", 0) == 0;
  {
    std::lock_guard<std::mutex> g(s.mu);
    e.id = intern_locked(s, e.text);
    e.shapeless = s.shapeless[e.id] != 0;
  }
  return c.names.insert_or_assign(name, std::move(e)).first->second;
}

// [SECTION] The callback

void append_int(std::string& out, int64_t v) {
  char b[24];
  const auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (u < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out.append("\\u00");
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 15]);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

// Kineto's texts of an op's inputs, as PyTorch's profiler collection encodes them:
// a tensor's sizes and dtype; [] and "Scalar", "TensorList", or "" for anything else.
void input_texts(const at::RecordFunction& fn, ThreadCache& c) {
  c.dims.clear();  // cleared, not assigned: GCC 12 warns falsely (-Wrestrict) on assign
  c.types.clear();
  c.dims.push_back('[');
  c.types.push_back('[');
  bool first = true;
  for (const c10::IValue& v : fn.inputs()) {
    if (!first) {
      c.dims.push_back(',');
      c.types.push_back(',');
    }
    first = false;
    c.dims.push_back('[');
    std::string_view type;
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && !t.is_nested()) {
        bool first_size = true;
        for (const int64_t n : t.sizes()) {
          if (!first_size) c.dims.push_back(',');
          first_size = false;
          append_int(c.dims, n);
        }
        const auto name = c10::scalarTypeToTypeMeta(t.scalar_type()).name();
        type = std::string_view(name.data(), name.size());
      }
    } else if (v.isScalar()) {
      type = "Scalar";
    } else if (v.isTensorList()) {
      type = "TensorList";
    }
    c.dims.push_back(']');
    append_json_string(c.types, type);
  }
  c.dims.push_back(']');
  c.types.push_back(']');
}

std::pair<uint32_t, uint32_t> input_ids(const at::RecordFunction& fn, ThreadCache& c) {
  input_texts(fn, c);
  c.key.clear();
  c.key.append(c.dims).push_back('\n');
  c.key.append(c.types);
  auto it = c.inputs.find(c.key);
  if (it != c.inputs.end()) return it->second;
  const std::pair<uint32_t, uint32_t> ids{intern(c.dims), intern(c.types)};
  c.inputs.emplace(c.key, ids);
  return ids;
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Autograd's evaluate_function op has no sequence number of its own: like the
// profiler, it takes that of the node call it starts with (the next op on its
// thread, of backward scope), and its forward thread.
void link_evaluate(ThreadCache& c, const at::RecordFunction& fn, const NameEntry& name, OpContext* ctx) {
  const auto scope = fn.scope();
  if (c.evaluate != nullptr && scope == at::RecordScope::BACKWARD_FUNCTION) {
    c.evaluate->row.seq = ctx->row.seq;
    c.evaluate->row.fwd = ctx->row.fwd;
  }
  c.evaluate = name.evaluate && scope == at::RecordScope::FUNCTION ? ctx : nullptr;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  State& s = state();
  if (!s.recording.load(std::memory_order_relaxed)) return nullptr;
  try {
    ThreadCache& c = thread_cache();
    auto ctx = std::make_unique<OpContext>();
    Row& r = ctx->row;
    const NameEntry& name = name_of(c, fn.name());
    r.name = name.id;
    r.cat = fn.scope() == at::RecordScope::USER_SCOPE ? 1 : 0;
    r.tid = c.tid;
    r.seq = fn.seqNr();  // at the start, as the profiler reads them
    r.fwd = r.seq >= 0 ? fn.forwardThreadId() : 0;
    link_evaluate(c, fn, name, ctx.get());
    if (s.shapes && !name.shapeless) std::tie(r.dims, r.types) = input_ids(fn, c);
    ctx->generation = c.generation;
    r.start = now_ns();
    return ctx;
  } catch (...) {
    s.errors.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
}

void on_end(const at::RecordFunction& /*fn*/, at::ObserverContext* ctx) {
  if (ctx == nullptr) return;
  State& s = state();
  try {
    const auto* op = static_cast<OpContext*>(ctx);
    Row r = op->row;
    r.end = now_ns();
    ThreadCache& c = thread_cache();
    if (c.evaluate == ctx) c.evaluate = nullptr;  // freed after this
    if (op->generation != c.generation) return;
    if (s.buffered.fetch_add(1, std::memory_order_relaxed) >= s.max_rows) {
      s.buffered.fetch_sub(1, std::memory_order_relaxed);
      s.dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::lock_guard<std::mutex> g(c.buffer->mu);
    c.buffer->push(r);
  } catch (...) {
    s.errors.fetch_add(1, std::memory_order_relaxed);
  }
}

// [SECTION] Taking the rows

enum Column { kStart, kEnd, kTid, kName, kCat, kDims, kTypes, kSeq, kFwd };
constexpr const char* kKeys[] = {"start", "end", "tid", "name", "cat", "dims", "types", "seq", "fwd"};

// Drops the taken rows (formatted, or left half-formatted by a flush that stopped).
void finish_format_locked(State& s) {
  Cursor& k = s.cursor;
  for (ThreadBuffer* b : k.parts) {
    std::lock_guard<std::mutex> g(b->mu);
    b->recycle_taken();  // the thread's next blocks
  }
  k.parts.clear();
  k.active = false;
}

// Moves every thread's rows to the take side, block pointers only (no row
// copied); frees the buffers of exited threads once their
// rows are formatted. Rows a flush took and did not format (it failed, or
// writing had stopped) are dropped and counted.
int64_t collect_locked(State& s) {
  if (s.cursor.active) finish_format_locked(s);
  std::size_t kept = 0;
  int64_t moved = 0;
  for (ThreadBuffer* b : s.buffers) {
    bool dead;
    {
      std::lock_guard<std::mutex> g(b->mu);
      if (b->taken_count) s.dropped.fetch_add(b->taken_count, std::memory_order_relaxed);
      b->recycle_taken();
      b->taken.swap(b->blocks);
      b->taken_count = std::exchange(b->count, 0);
      moved += static_cast<int64_t>(b->taken_count);
      dead = b->dead;
    }
    if (dead && b->taken_count == 0)
      delete b;
    else
      s.buffers[kept++] = b;
  }
  s.buffers.resize(kept);
  s.buffered.fetch_sub(moved, std::memory_order_relaxed);
  return moved;
}

void begin_format_locked(State& s) {
  Cursor& k = s.cursor;
  k.parts.clear();
  bool sequenced = false;
  for (ThreadBuffer* b : s.buffers) {
    if (b->taken_count == 0) continue;
    k.parts.push_back(b);
    for (std::size_t i = 0; i < b->taken_count && !sequenced; ++i) sequenced = b->taken_row(i).seq >= 0;
  }
  k.columns.assign({kStart, kEnd, kTid, kName, kCat});
  if (s.shapes) k.columns.insert(k.columns.end(), {kDims, kTypes});
  if (sequenced) k.columns.insert(k.columns.end(), {kSeq, kFwd});
  k.column = k.part = k.row = 0;
  k.opened = k.any = false;
  k.active = true;
}

// Writes the current column's values from the cursor on, while p is below limit
// (each value takes at most 21 bytes past it).
template <typename F>
char* put_values(Cursor& k, char* p, const char* limit, F value) {
  while (k.part < k.parts.size()) {
    const ThreadBuffer& b = *k.parts[k.part];
    std::size_t row = k.row;
    bool any = k.any;
    while (row < b.taken_count && p < limit) {  // a block at a time
      const Row* const first = &b.taken_row(row);
      const Row* const end = first + std::min(b.taken_count - row, kBlockRows - row % kBlockRows);
      const Row* r = first;
      for (; r != end && p < limit; ++r) {
        if (any) *p++ = ',';
        any = true;
        p = std::to_chars(p, p + 20, value(*r)).ptr;
      }
      row += static_cast<std::size_t>(r - first);
    }
    k.any = any;
    k.row = row;
    if (row < b.taken_count) return p;
    ++k.part;
    k.row = 0;
  }
  return p;
}

char* put_column(State& s, int column, char* p, const char* limit) {
  Cursor& k = s.cursor;
  const int64_t* const ids = s.file_ids.data();
  const std::size_t n = s.file_ids.size();
  auto file_id = [ids, n](uint32_t id) -> int64_t { return id < n ? ids[id] : 0; };
  switch (column) {
    case kStart: return put_values(k, p, limit, [](const Row& r) { return r.start; });
    case kEnd: return put_values(k, p, limit, [](const Row& r) { return r.end; });
    case kTid: return put_values(k, p, limit, [](const Row& r) { return int64_t{r.tid}; });
    case kName: return put_values(k, p, limit, [&](const Row& r) { return file_id(r.name); });
    case kCat: return put_values(k, p, limit, [](const Row& r) { return int64_t{r.cat}; });
    case kDims: return put_values(k, p, limit, [&](const Row& r) { return file_id(r.dims); });
    case kTypes: return put_values(k, p, limit, [&](const Row& r) { return file_id(r.types); });
    case kSeq: return put_values(k, p, limit, [](const Row& r) { return r.seq; });
    case kFwd: return put_values(k, p, limit, [](const Row& r) { return static_cast<int64_t>(r.fwd); });
    default: return p;
  }
}

// The next part of the taken rows as the columns of a "ranges" chunk, with the
// host file's string ids, into s.chunk: at most kChunk bytes and a value more;
// 0 once all is given (the rows are then dropped).
std::size_t format_next_locked(State& s) {
  Cursor& k = s.cursor;
  if (!k.active) begin_format_locked(s);
  if (!s.chunk) s.chunk.reset(new char[kChunk + 64]);
  char* const begin = s.chunk.get();
  const char* const limit = begin + kChunk;
  char* p = begin;
  while (k.column < k.columns.size() && p < limit) {
    const int column = k.columns[k.column];
    if (!k.opened) {
      const std::string_view key = kKeys[column];
      p = std::copy(key.begin(), key.end(), std::copy_n(",\"", 2, p));
      p = std::copy_n("\":[", 3, p);
      k.opened = true;
      k.any = false;
      k.part = k.row = 0;
    }
    p = put_column(s, column, p, limit);
    if (k.part < k.parts.size()) break;
    *p++ = ']';
    ++k.column;
    k.opened = false;
  }
  if (p == begin) finish_format_locked(s);
  return static_cast<std::size_t>(p - begin);
}

// [SECTION] Fork

// A forked child has only the forking thread: the other threads' buffers (and
// rows, which the parent writes itself) are left behind, and every string is
// new to the child's host file.
void before_fork() { state().mu.lock(); }
void after_fork_parent() { state().mu.unlock(); }
void after_fork_child() {
  State& s = state();
  s.buffers.clear();  // their locks may be held by threads that do not exist here
  s.cursor.parts.clear();
  s.cursor.active = false;
  s.buffered.store(0);
  s.dropped.store(0);
  s.errors.store(0);
  s.strings_sent = 0;
  s.file_ids.clear();
  s.generation.fetch_add(1, std::memory_order_release);
  s.mu.unlock();
}

}  // namespace

// [SECTION] The C interface

extern "C" {

__attribute__((visibility("default"))) int gpuscope_observer_interface() { return kInterface; }
__attribute__((visibility("default"))) const char* gpuscope_observer_torch_version() { return GPUSCOPE_TORCH_VERSION; }
__attribute__((visibility("default"))) int gpuscope_observer_cxx11_abi() { return _GLIBCXX_USE_CXX11_ABI; }

// Starts recording: shapes (0/1), the names of ops whose inputs are not read
// ('\n'-separated), the most rows held. 0, or -1 with why in `error`.
__attribute__((visibility("default"))) int gpuscope_observer_start(int shapes, const char* shapeless, int64_t max_rows,
                                                                   char* error, size_t error_size) {
  State& s = state();
  try {
    std::lock_guard<std::mutex> g(s.mu);
    if (s.handle == 0) {
      s.shapes = shapes != 0;
      s.max_rows = max_rows > 0 ? max_rows : 1;
      for (std::string_view rest = shapeless ? shapeless : ""; !rest.empty();) {
        const auto nl = rest.find('\n');
        const std::string name(rest.substr(0, nl));
        s.shapeless_names.insert(name);
        const auto it = s.ids.find(name);
        if (it != s.ids.end()) s.shapeless[it->second] = 1;
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      }
      static std::once_flag fork_handlers;
      std::call_once(fork_handlers, [] { pthread_atfork(before_fork, after_fork_parent, after_fork_child); });
      s.handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(s.shapes));
    }
    s.recording.store(true);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_size, "unknown error");
  }
  return -1;
}

// Stops recording (the callback stays registered, and returns at once).
__attribute__((visibility("default"))) void gpuscope_observer_stop() { state().recording.store(false); }

// Takes every thread's rows; returns how many, and how many strings are new
// (read them with gpuscope_observer_new_strings, then give their ids).
__attribute__((visibility("default"))) int64_t gpuscope_observer_collect(int64_t* new_strings) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  const int64_t n = collect_locked(s);
  *new_strings = static_cast<int64_t>(s.strings.size() - s.strings_sent);
  return n;
}

// The strings not yet given to the hook, each followed by a NUL.
__attribute__((visibility("default"))) const char* gpuscope_observer_new_strings(int64_t count, size_t* size) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.blob.clear();
  const auto end = std::min(s.strings.size(), s.strings_sent + static_cast<std::size_t>(count));
  for (std::size_t i = s.strings_sent; i < end; ++i) s.blob.append(s.strings[i]).push_back('\0');
  *size = s.blob.size();
  return s.blob.data();
}

// The host file's ids of the `count` strings last read.
__attribute__((visibility("default"))) void gpuscope_observer_string_ids(const int64_t* ids, int64_t count) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.file_ids.insert(s.file_ids.end(), ids, ids + count);
  s.strings_sent += static_cast<std::size_t>(count);
}

// The collected rows as a "ranges" chunk's columns (",\"start\":[…],…"), a
// part of at most ~256 KiB at each call, valid until the next; size 0 once all
// of it is given. The next collect drops what a caller left unread.
__attribute__((visibility("default"))) const char* gpuscope_observer_format_next(size_t* size) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  *size = format_next_locked(s);
  return s.chunk.get();
}

// Rows dropped (the buffers were full) and callback failures since the last call.
__attribute__((visibility("default"))) int64_t gpuscope_observer_dropped() {
  return static_cast<int64_t>(state().dropped.exchange(0));
}
__attribute__((visibility("default"))) int64_t gpuscope_observer_errors() {
  return static_cast<int64_t>(state().errors.exchange(0));
}

}  // extern "C"
