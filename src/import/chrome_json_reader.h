// EventReader: reads one Chrome trace event (or a top-level value) from the
// batch text into an Event (chrome_json_event.h), through the validating
// JsonWalker (chrome_json_walker.h). Internal to src/import/.
//
// It takes only the fields the importer maps; which keys those are, and where
// each value goes, are tables in chrome_json_reader.cpp (kEventKeys,
// kArgKeys). Field names are compared as raw bytes (unescaped only when they
// hold an escape); timestamps go from decimal text straight to integer ns.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "import/chrome_json_event.h"
#include "import/chrome_json_stream.h"
#include "import/chrome_json_text.h"
#include "import/chrome_json_walker.h"

namespace gpuscope::detail::chrome {

using Walker = JsonWalker;

// The file being read, for error messages (its JSON offsets count
// decompressed bytes when it is gzip).
struct Source {
  std::string path;
  bool gzip = false;

  // Throws InputError naming the file and the JSON offset of `at` in batch b.
  [[noreturn]] void fail_at(const JsonBatch& b, const char* at, const std::string& what) const;
};

class EventReader {
 public:
  explicit EventReader(const Source& source) : source_(source) {}

  // Reads the object at the cursor (an event) into ev, cleared first.
  void read_event(Walker& w, const JsonBatch& b, Event& ev);

  // ---- values (also for the root object's values) ----

  // A string (else the value is skipped and the result is not present).
  [[gnu::always_inline]] static RawString read_string(Walker& w) {
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
    return parse_json_int(w.number(), out);
  }

  // ts / dur: a JSON number (or a numeric string) in µs, to exact ns.
  [[gnu::always_inline]] bool read_time(Walker& w, std::int64_t* ns) {
    bool sub = false;
    if (w.try_us_to_ns(ns, &sub)) {
      sub_us |= sub;
      return true;
    }
    return read_time_slow(w, ns);
  }

  static IdValue read_id(Walker& w);
  static void read_dims(Walker& w, std::uint32_t out[3]);

  // The JSON text of the value at the walker, skipped.
  static std::string_view raw_value(Walker& w) {
    const char* begin = w.pos();
    w.skip_value();
    return std::string_view(begin, static_cast<std::size_t>(w.pos() - begin));
  }

  // A key at the cursor, with its ':': its text, unescaped if it had escapes.
  [[gnu::always_inline]] std::string_view read_key(Walker& w, const JsonBatch& b) {
    if (w.peek() != '"') throw JsonSyntaxError{w.pos(), "expected a key string"};
    bool esc = false;
    const std::string_view raw = w.string(&esc);
    w.skip_ws();
    w.expect(':', "expected ':' after a key");
    w.skip_ws();
    if (!esc) return raw;
    return unescape_key(raw, b);
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

  bool sub_us = false;               // a ts or dur was not a whole number of µs
  std::uint64_t duplicate_keys = 0;  // keys met again in an event or its args (Skip::duplicate_key)

 private:
  bool read_time_slow(Walker& w, std::int64_t* ns);
  std::string_view unescape_key(std::string_view raw, const JsonBatch& b);
  bool once(std::uint32_t& seen, int bit, Walker& w);
  void read_args(Walker& w, const JsonBatch& b, Args& a, bool collect_numbers);
  void read_number_arg(Walker& w, std::string_view key, Args& a);

  const Source& source_;
  std::string key_scratch_;
  std::deque<std::string> counter_keys_;  // escaped counter arg names of the current event
};

}  // namespace gpuscope::detail::chrome
