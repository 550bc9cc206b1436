// One Chrome trace event as the Chrome JSON importer reads it (internal to
// src/import/): the fields the reader (chrome_json_reader.h) takes from the
// text, which the parser (chrome_json_parser.h) maps to the trace's tables;
// the reasons an event is skipped; and the few string helpers both use.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::detail::chrome {

// A JSON string as it appears in the text (between its quotes).
struct RawString {
  std::string_view raw;
  bool escaped = false;  // contains a backslash: must be unescaped before use
  bool present = false;
};

// pid / tid / id: a number or a string, as the source wrote it.
struct IdValue {
  enum class Kind : std::uint8_t { none, number, string } kind = Kind::none;
  std::int64_t number = 0;
  RawString text;  // strings, and numbers that are not integers
};

// Which of Args' numeric fields the event had.
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
  // PyTorch's autograd link
  kArgSequence = 1u << 17,
  kArgFwdThread = 1u << 18,
};

// Kineto's description of a collective (record_param_comms, NCCL kernels),
// in the order Args::collective keeps them and the parser writes them.
inline constexpr std::array<std::string_view, 6> kCollectiveKeys = {
    "Collective name", "In msg nelems", "Out msg nelems", "dtype", "Group size", "Process Group Name"};

struct Args {
  std::uint32_t present = 0;  // ArgBit
  std::int64_t device = 0, stream = 0, correlation = 0, external = 0, cbid = 0, bytes = 0;
  std::int64_t registers = 0, smem = 0, wait_event = 0;
  std::int64_t mem_bytes = 0, addr = 0, mem_device = 0, mem_device_type = 0, total_allocated = 0, total_reserved = 0;
  std::int64_t sequence = 0, fwd_thread = 0;
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  RawString name, labels, sync_kind;
  // A copy call's or copy's "kind": ROCm's tracer writes the hipMemcpyKind
  // of the runtime call ("1": host to device, "2": device to host).
  RawString copy_kind;
  // PyTorch's record_shapes arguments, as raw JSON text of the batch.
  std::string_view input_dims, input_types, concrete_inputs;
  // The values of kCollectiveKeys, as raw JSON text.
  std::array<std::string_view, kCollectiveKeys.size()> collective;
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
    args.name = args.labels = args.sync_kind = args.copy_kind = RawString{};
    args.input_dims = args.input_types = args.concrete_inputs = {};
    args.collective = {};
    args.numbers.clear();
  }

  // The phase's letter, '\0' for a phase longer than one character.
  char phase() const { return ph.raw.size() == 1 ? ph.raw[0] : '\0'; }
  bool is_flow() const {
    const char p = phase();
    return p == 's' || p == 't' || p == 'f';
  }
  // Kineto's allocator events: {"ph":"i","name":"[memory]","args":{"Device Type":1,"Device Id":0,"Bytes":512,…}}.
  bool is_memory() const { return !name.escaped && name.raw == "[memory]"; }
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
  invalid_sequence,        // an op's "Sequence number" or "Fwd thread id" out of range: the op kept without them
  count_
};
inline constexpr std::array<std::string_view, static_cast<int>(Skip::count_)> kSkipNames = {"flow",
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
                                                                                            "duplicate_key",
                                                                                            "invalid_sequence"};
using SkipCounts = std::array<std::uint64_t, static_cast<int>(Skip::count_)>;

// ---- string helpers --------------------------------------------------------------------------

inline std::string_view trim_ws(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

inline bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// key == lit, with the literal's length known at compile time so that the
// comparison inlines to a few loads.
template <std::size_t N>
bool is_key(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

inline std::uint32_t as_u32(std::int64_t v) {
  return v < 0 ? 0 : static_cast<std::uint32_t>(v > 0xffffffffLL ? 0xffffffffLL : v);
}

}  // namespace gpuscope::detail::chrome
