// The Chrome JSON importer's event reader (chrome_json_reader.h): the keys it
// reads, as tables, and the reading of one event.
//
// [SECTION] Errors and values
// [SECTION] The keys of an event
// [SECTION] The keys of an event's args (kArgKeys)
// [SECTION] Reading an event
//
// Where do I add a key? A key of an event's args: a row in kArgKeys (where
// the value goes, read as which type) and its field in Args
// (chrome_json_event.h); then its mapping in the parser
// (chrome_json_parser.cpp). The keys of the event itself are the Trace Event
// Format's nine (event_field).
#include "import/chrome_json_reader.h"

#include <algorithm>
#include <charconv>

#include "import/chrome_json_keys.h"
#include "trace/error.h"

namespace gpuscope::detail::chrome {

// [SECTION] Errors and values --------------------------------------------------------------------

void Source::fail_at(const JsonBatch& b, const char* at, const std::string& what) const {
  throw InputError(path, gzip ? what + " (offset in the decompressed JSON)" : what, b.offset_of(at));
}

bool EventReader::read_time_slow(Walker& w, std::int64_t* ns) {
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
  bool sub = false;
  if (!parse_us_to_ns(text, ns, &sub)) return false;
  sub_us |= sub;
  return true;
}

IdValue EventReader::read_id(Walker& w) {
  IdValue id;
  if (w.try_small_int(&id.number)) {
    id.kind = IdValue::Kind::number;
  } else if (w.at_number()) {
    const std::string_view tok = w.number();
    if (parse_json_int(tok, &id.number)) {
      id.kind = IdValue::Kind::number;
    } else {
      id.kind = IdValue::Kind::string;
      id.text = RawString{tok, false, true};
    }
  } else if (w.peek() == '"') {
    id.text = read_string(w);
    // Numeric strings ("25738", as 2021 Kineto writes tids) are numbers.
    if (!id.text.escaped && parse_json_int(id.text.raw, &id.number))
      id.kind = IdValue::Kind::number;
    else
      id.kind = IdValue::Kind::string;
  } else {
    w.skip_value();
  }
  return id;
}

void EventReader::read_dims(Walker& w, std::uint32_t out[3]) {
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

[[gnu::noinline]] std::string_view EventReader::unescape_key(std::string_view raw, const JsonBatch& b) {
  key_scratch_.clear();
  if (!json_unescape(raw, &key_scratch_)) source_.fail_at(b, raw.data(), "invalid escape sequence in a key");
  return key_scratch_;
}

// A key of an event (or of its args) met again: its value is skipped and
// counted ("import.skipped.duplicate_key"); the first one stands. False then.
[[gnu::always_inline]] inline bool EventReader::once(std::uint32_t& seen, int bit, Walker& w) {
  if (!(seen & (1u << bit))) [[likely]] {
    seen |= 1u << bit;
    return true;
  }
  ++duplicate_keys;
  w.skip_value();
  return false;
}

// [SECTION] The keys of an event ----------------------------------------------------------------

namespace {

// The fields of an event (each one's number is its bit in the keys seen).
// The Trace Event Format fixes them (nine short keys, in every event): a
// switch on the key's length, then one inlined compare, is cheaper than a
// table here.
enum class EventField : std::uint8_t { ph, ts, dur, id, pid, tid, cat, name, args, other };

[[gnu::always_inline]] inline EventField event_field(std::string_view key) {
  switch (key.size()) {
    case 2:
      if (is_key(key, "ph")) return EventField::ph;
      if (is_key(key, "ts")) return EventField::ts;
      if (is_key(key, "id")) return EventField::id;
      break;
    case 3:
      if (is_key(key, "cat")) return EventField::cat;
      if (is_key(key, "pid")) return EventField::pid;
      if (is_key(key, "tid")) return EventField::tid;
      if (is_key(key, "dur")) return EventField::dur;
      break;
    case 4:
      if (is_key(key, "name")) return EventField::name;
      if (is_key(key, "args")) return EventField::args;
      break;
    default: break;
  }
  return EventField::other;
}

// [SECTION] The keys of an event's args (kArgKeys) -----------------------------------------------

// Where an arg's value goes, read as which type; `seen` is its bit in the
// keys seen (spellings of one key share it).
struct ArgField {
  enum class Type : std::uint8_t { integer, dims, string, raw_json, collective } type;
  std::uint8_t seen;
  std::uint32_t present = 0;  // ArgBit: integer and dims
  std::int64_t Args::*integer = nullptr;
  std::uint32_t (Args::*dims)[3] = nullptr;
  RawString Args::*string = nullptr;
  std::string_view Args::*raw_json = nullptr;
  std::uint8_t collective = 0;  // index in kCollectiveKeys
};

constexpr ArgField integer(std::uint8_t seen, std::int64_t Args::*field, ArgBit bit) {
  return ArgField{ArgField::Type::integer, seen, bit, field};
}
constexpr ArgField dims(std::uint8_t seen, std::uint32_t (Args::*field)[3], ArgBit bit) {
  return ArgField{ArgField::Type::dims, seen, bit, nullptr, field};
}
constexpr ArgField string(std::uint8_t seen, RawString Args::*field) {
  return ArgField{ArgField::Type::string, seen, 0, nullptr, nullptr, field};
}
constexpr ArgField raw_json(std::uint8_t seen, std::string_view Args::*field) {
  return ArgField{ArgField::Type::raw_json, seen, 0, nullptr, nullptr, nullptr, field};
}
constexpr ArgField collective(std::uint8_t seen, std::uint8_t index) {
  return ArgField{ArgField::Type::collective, seen, 0, nullptr, nullptr, nullptr, nullptr, index};
}

constexpr KeyTable<ArgField, 33, 128> kArgKeys({
    // GPU ops, API calls, syncs
    {"device", integer(0, &Args::device, kArgDevice)},
    {"stream", integer(1, &Args::stream, kArgStream)},
    {"correlation", integer(2, &Args::correlation, kArgCorrelation)},
    {"External id", integer(3, &Args::external, kArgExternal)},
    {"external id", integer(3, &Args::external, kArgExternal)},
    {"cbid", integer(4, &Args::cbid, kArgCbid)},
    {"bytes", integer(5, &Args::bytes, kArgBytes)},
    {"grid", dims(6, &Args::grid, kArgGrid)},
    {"block", dims(7, &Args::block, kArgBlock)},
    {"registers per thread", integer(8, &Args::registers, kArgRegisters)},
    {"shared memory", integer(9, &Args::smem, kArgSmem)},
    {"wait_on_cuda_event_id", integer(10, &Args::wait_event, kArgWaitEvent)},
    {"cuda_sync_kind", string(11, &Args::sync_kind)},
    // metadata events
    {"name", string(12, &Args::name)},
    {"labels", string(13, &Args::labels)},
    // [memory] events
    {"Bytes", integer(14, &Args::mem_bytes, kArgMemBytes)},
    {"Addr", integer(15, &Args::addr, kArgAddr)},
    {"Device Id", integer(16, &Args::mem_device, kArgMemDevice)},
    {"Device Type", integer(17, &Args::mem_device_type, kArgMemDeviceType)},
    {"Total Allocated", integer(18, &Args::total_allocated, kArgTotalAllocated)},
    {"Total Reserved", integer(19, &Args::total_reserved, kArgTotalReserved)},
    // record_shapes
    {"Input Dims", raw_json(20, &Args::input_dims)},
    {"Input type", raw_json(21, &Args::input_types)},
    {"Concrete Inputs", raw_json(22, &Args::concrete_inputs)},
    // collectives, in the order of kCollectiveKeys
    {"Collective name", collective(23, 0)},
    {"In msg nelems", collective(24, 1)},
    {"Out msg nelems", collective(25, 2)},
    {"dtype", collective(26, 3)},
    {"Group size", collective(27, 4)},
    {"Process Group Name", collective(28, 5)},
    // autograd: a forward op and its backward ops share the sequence number
    {"Sequence number", integer(29, &Args::sequence, kArgSequence)},
    {"Fwd thread id", integer(30, &Args::fwd_thread, kArgFwdThread)},
    // copies: ROCm's copy calls say their direction
    {"kind", string(31, &Args::copy_kind)},
});

}  // namespace

// [SECTION] Reading an event ---------------------------------------------------------------------

void EventReader::read_event(Walker& w, const JsonBatch& b, Event& ev) {
  ev.clear();
  if (!counter_keys_.empty()) counter_keys_.clear();  // clear() walks the deque's map even when empty
  bool flow = false;                                  // a flow's other fields are not used: only check their grammar
  std::uint32_t seen = 0;  // keys read: a repeated key keeps its first value (docs/import.md)
  for_each_member(w, b, [&](std::string_view key) {
    const EventField field = flow ? EventField::other : event_field(key);
    if (field == EventField::other) return w.skip_value();
    if (!once(seen, static_cast<int>(field), w)) return;
    switch (field) {
      case EventField::ph:
        ev.ph = read_string(w);
        flow = ev.is_flow();
        return;
      case EventField::ts:
        ev.has_ts = true;
        ev.ts_ok = read_time(w, &ev.ts);
        return;
      case EventField::dur:
        ev.has_dur = true;
        ev.dur_ok = read_time(w, &ev.dur);
        return;
      case EventField::id: ev.id = read_id(w); return;
      case EventField::pid: ev.pid = read_id(w); return;
      case EventField::tid: ev.tid = read_id(w); return;
      case EventField::cat: ev.cat = read_string(w); return;
      case EventField::name: ev.name = read_string(w); return;
      case EventField::args:  // a counter's numeric args are its values (the phase may come later)
        return read_args(w, b, ev.args, !ev.ph.present || ev.phase() == 'C');
      case EventField::other: return;
    }
  });
}

void EventReader::read_args(Walker& w, const JsonBatch& b, Args& a, bool collect_numbers) {
  if (w.peek() != '{') return w.skip_value();
  std::uint32_t seen = 0;  // keys read: a repeated key keeps its first value (docs/import.md)
  for_each_member(w, b, [&](std::string_view key) {
    const ArgField* f = kArgKeys.find(key);
    if (!f) {
      if (collect_numbers && w.at_number()) return read_number_arg(w, key, a);
      return w.skip_value();
    }
    // A counter's number under a key read elsewhere as text (a copy's
    // "kind"): a value of its series all the same.
    if (f->type == ArgField::Type::string && collect_numbers && w.at_number()) return read_number_arg(w, key, a);
    if (!once(seen, f->seen, w)) return;
    switch (f->type) {
      case ArgField::Type::integer:
        if (read_int(w, &(a.*f->integer))) a.present |= f->present;
        return;
      case ArgField::Type::dims:
        read_dims(w, a.*f->dims);
        a.present |= f->present;
        return;
      case ArgField::Type::string: a.*f->string = read_string(w); return;
      case ArgField::Type::raw_json: a.*f->raw_json = raw_value(w); return;
      case ArgField::Type::collective: a.collective[f->collective] = raw_value(w); return;
    }
  });
}

// A numeric arg of a counter event (a value of its series), kept as a double.
void EventReader::read_number_arg(Walker& w, std::string_view key, Args& a) {
  const std::string_view tok = w.number();
  double d = 0;
  const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
  if (ec != std::errc() || end != tok.data() + tok.size()) return;
  // Keys with escapes were unescaped into key_scratch_: keep a copy.
  const std::string_view k =
      key.data() == key_scratch_.data() ? std::string_view(counter_keys_.emplace_back(key)) : key;
  a.numbers.emplace_back(RawString{k, false, true}, d);
}

}  // namespace gpuscope::detail::chrome
