// The one JSON writer of gpuscope: every JSON document it writes (the
// report, diff, check, whatif, stats, info, the Chrome export, the viewer's
// frame report) is made of these strings and numbers, and all but the
// Chrome export's fixed layout by the Writer's structure. nlohmann::json is
// for reading only. It sits in trace/, the one module every writer may
// include (import/ for `info`, export/, viewer/).
//
// [SECTION] Strings and numbers
// [SECTION] The writer
//
// The bytes are those nlohmann's dump() gave for the same document
// (error_handler_t::replace, no ASCII escaping; indent 2 when pretty), with
// numbers in their shortest round-trip digits (C++17 std::to_chars; Grisu2
// sometimes printed 17 digits where fewer read back the same).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpuscope::json {

// [SECTION] Strings and numbers ---------------------------------------------------------------

// Appends `s` as a quoted JSON string: `"` and `\` escaped, control
// characters as \b \t \n \f \r or \u00xx, every other byte as it is.
// Bytes that are not valid UTF-8 (names from untrusted files) become U+FFFD,
// one for each maximal ill-formed subpart (the Unicode standard's
// recommended practice, as nlohmann's replace did): the output always
// parses. Returns how many U+FFFD it wrote.
std::size_t append_string(std::string& out, std::string_view s);

// A double in its shortest round-trip digits, laid out as a JSON number
// that is always a float: "1.0", "0.25", "0.0001", "1e-05",
// "123456789012345.0", "1e+15". NaN and infinity, which JSON cannot hold,
// are written as null.
void append_number(std::string& out, double v);

// A finite double as std::to_chars writes it, shortest of fixed and
// scientific ("1", "0.25", "1e-05"): the Chrome export's form. The caller
// leaves out NaN and infinity.
void append_shortest(std::string& out, double v);

void append_integer(std::string& out, std::int64_t v);
void append_unsigned(std::string& out, std::uint64_t v);

// [SECTION] The writer ------------------------------------------------------------------------

// A member for Writer::object(): its key and its value (anything
// Writer::value() takes, or a function that writes the value:
// [&](Writer& w) { … }). It refers to the value: use it within the
// expression that makes it.
template <class V>
struct KeyValue {
  std::string_view key;
  const V& value;
};
template <class V>
KeyValue<V> kv(std::string_view key, const V& value) {
  return {key, value};
}

// Appends one JSON text to a string as it is written: no tree is built, no
// string is allocated per value. Separators come by themselves: key() before
// each member of an object; an array's items are simply written one after
// another. Pretty: one member or item per line, indented by 2 spaces per
// level, "key": value; else one line without spaces. Empty containers are
// {} and [].
class Writer {
 public:
  // The value written next sits at `depth` levels of indentation, outside
  // any container.
  explicit Writer(std::string& out, bool pretty = true, int depth = 0) : s_(out), pretty_(pretty), depth_(depth) {}
  // Inside an object or array at `depth` that already holds `items` members
  // or items: a part of a document written apart from the rest (a range of
  // a list's items, formatted on another thread), then joined.
  static Writer inside(std::string& out, bool pretty, int depth, std::size_t items);

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  // Before each member of an object: the separator, the key and the colon.
  void key(std::string_view k);

  void null() {
    before_value();
    s_ += "null";
  }
  void boolean(bool b) {
    before_value();
    s_ += b ? "true" : "false";
  }
  void integer(std::int64_t v) {
    before_value();
    append_integer(s_, v);
  }
  void unsigned_integer(std::uint64_t v) {
    before_value();
    append_unsigned(s_, v);
  }
  void number(double v) {
    before_value();
    append_number(s_, v);
  }
  void string(std::string_view v) {
    before_value();
    replaced_ += append_string(s_, v);
  }
  // A value already written as JSON text (one line), copied as it is.
  void raw(std::string_view json_text) {
    before_value();
    s_ += json_text;
  }

  // A value by its C++ type: bool; integers; floating point (number());
  // strings; nullptr (null); std::optional (null when empty); std::vector
  // and std::array (arrays of their elements); std::pair (an array of two);
  // a function of a Writer& (it writes the value).
  template <class V>
  void value(const V& v);
  // key(k), then value(v).
  template <class V>
  void member(std::string_view k, const V& v) {
    key(k);
    value(v);
  }
  // These members, in this order, in the object open: members(kv("id", id), kv("ns", ns)).
  template <class... V>
  void members(const KeyValue<V>&... kvs) {
    (member(kvs.key, kvs.value), ...);
  }
  // An object of these members: object(kv("id", id), kv("ns", ns)).
  template <class... V>
  void object(const KeyValue<V>&... kvs) {
    begin_object();
    members(kvs...);
    end_object();
  }
  // An array of what each(item) writes (one value) for every item of `list`.
  template <class List, class Each>
  void array(const List& list, Each each) {
    begin_array();
    for (const auto& item : list) each(item);
    end_array();
  }

  // U+FFFD written for invalid UTF-8 so far (append_string).
  std::size_t replaced() const { return replaced_; }
  // Containers open.
  int open_containers() const { return open_; }
  // Nothing written yet in the innermost open container.
  bool container_empty() const { return open_ > 0 && first_[static_cast<std::size_t>(open_ - 1)]; }

 private:
  static constexpr int kMaxDepth = 64;

  void before_value() {
    if (after_key_)
      after_key_ = false;
    else if (open_ > 0)
      separator();
  }
  void separator();
  void newline(int depth) {
    s_ += '\n';
    s_.append(static_cast<std::size_t>(2 * depth), ' ');
  }
  void open(char bracket);
  void close(char bracket);

  std::string& s_;
  bool pretty_;
  int depth_;                            // indent of the next value, in levels
  int open_ = 0;                         // containers open
  bool after_key_ = false;               // a key was written, its value is next
  std::array<bool, kMaxDepth> first_{};  // per open container: nothing written in it yet
  std::size_t replaced_ = 0;
};

template <class V>
struct IsOptional : std::false_type {};
template <class E>
struct IsOptional<std::optional<E>> : std::true_type {};
template <class V>
struct IsSequence : std::false_type {};
template <class E, class A>
struct IsSequence<std::vector<E, A>> : std::true_type {};
template <class E, std::size_t N>
struct IsSequence<std::array<E, N>> : std::true_type {};
template <class V>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};

// For Writer::value() or kv(): `v` when `present`, else null
// (kv("device", json::or_null(d != kNoDevice, d))). It refers to `v`.
template <class V>
auto or_null(bool present, const V& v) {
  return [present, &v](Writer& w) {
    if (present)
      w.value(v);
    else
      w.null();
  };
}

template <class V>
void Writer::value(const V& v) {
  if constexpr (std::is_same_v<V, bool>) {
    boolean(v);
  } else if constexpr (std::is_same_v<V, std::nullptr_t>) {
    null();
  } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
    integer(static_cast<std::int64_t>(v));
  } else if constexpr (std::is_integral_v<V>) {
    unsigned_integer(static_cast<std::uint64_t>(v));
  } else if constexpr (std::is_floating_point_v<V>) {
    number(static_cast<double>(v));
  } else if constexpr (std::is_convertible_v<const V&, std::string_view>) {
    string(std::string_view(v));
  } else if constexpr (std::is_invocable_v<const V&, Writer&>) {
    v(*this);
  } else if constexpr (IsOptional<V>::value) {
    if (v)
      value(*v);
    else
      null();
  } else if constexpr (IsPair<V>::value) {
    begin_array();
    value(v.first);
    value(v.second);
    end_array();
  } else {
    static_assert(IsSequence<V>::value, "a value type the JSON writer does not know");
    begin_array();
    for (const auto& item : v) value(static_cast<const typename V::value_type&>(item));
    end_array();
  }
}

}  // namespace gpuscope::json
