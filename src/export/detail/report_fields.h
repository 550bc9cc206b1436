// Internal to export/: the machinery that walks the report's fields (listed
// once, for the report and the rank digest, in analysis/profile_fields.h)
// three ways.
//
// [SECTION] Reading untrusted documents
// [SECTION] Fields and records
// [SECTION] Values by C++ type
// [SECTION] Kinds of field
// [SECTION] A record's keys from its rows
// [SECTION] Walking a record: write, read, document
//
// Every struct of the Profile that the report writes as a JSON object has a
// Record<T> (report_fields.cpp: the doc's heading and intro, a check after
// reading, the code of its custom keys) and kFields<T>, one Field per key,
// in the order written, made from the rows of its list. A row is turned into
// a field by a kind (ValueKind, GpuKind, DerivedKind, …) that knows how the value is
// written (as text, through trace/json_writer.h, key by key: no tree is
// built), how it is read back from an untrusted document (every miss names
// the key's path) and how docs/report-schema.md shows it; the writer, the
// reader and the doc's key tables all walk the same rows.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/profile.h"
#include "analysis/profile_fields.h"
#include "export/report_json.h"
#include "trace/error.h"
#include "trace/json_writer.h"

namespace gpuscope::detail {

using Json = nlohmann::ordered_json;  // documents read
using Out = json::Writer;             // documents written

// [SECTION] Reading untrusted documents -------------------------------------------------------

// Typed access to an untrusted document: every miss names the key's path.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(file_, (path.empty() ? std::string("the document") : "\"" + path + "\"") + ": " + what);
  }
  const Json& member(const Json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  const Json* optional(const Json& obj, const char* key) const {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  // Integers stay within ±2^62 so that differences and sums of two of them
  // (diff, the text report) cannot overflow; no real trace comes close.
  static constexpr std::int64_t kLimit = std::int64_t{1} << 62;
  std::int64_t i64(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    std::int64_t x = 0;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(kLimit))
      x = v.get<std::int64_t>();
    else if (v.is_number_integer() && !v.is_number_unsigned())
      x = v.get<std::int64_t>();
    else
      fail(join(path, key), "expected an integer");
    if (x > kLimit || x < -kLimit) fail(join(path, key), "out of range");
    return x;
  }
  std::uint64_t u64(const Json& obj, const char* key, const std::string& path) const {
    const std::int64_t x = i64(obj, key, path);
    if (x < 0) fail(join(path, key), "expected a non-negative integer");
    return static_cast<std::uint64_t>(x);
  }
  std::uint32_t u32(const Json& obj, const char* key, const std::string& path) const {
    const std::uint64_t v = u64(obj, key, path);
    if (v > 0xffffffffu) fail(join(path, key), "out of range");
    return static_cast<std::uint32_t>(v);
  }
  // An element of a list of ints (GPU ordinals), at `path`.
  std::uint32_t u32_item(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail(path, "expected an integer");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > 0xffffffffu
                               : v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 0xffffffffLL)
      fail(path, "out of range");
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  std::int32_t i32(const Json& obj, const char* key, const std::string& path) const {
    const std::int64_t v = i64(obj, key, path);
    if (v < INT32_MIN || v > INT32_MAX) fail(join(path, key), "out of range");
    return static_cast<std::int32_t>(v);
  }
  double f64(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_number()) fail(join(path, key), "expected a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || x > 1e15 || x < -1e15) fail(join(path, key), "out of range");
    return x;
  }
  bool boolean(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_boolean()) fail(join(path, key), "expected true or false");
    return v.get<bool>();
  }
  std::string str(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_string()) fail(join(path, key), "expected a string");
    return v.get<std::string>();
  }
  std::uint32_t device(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    return v.is_null() ? kNoDevice : u32(obj, key, path);
  }
  const Json& array(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_array()) fail(join(path, key), "expected an array");
    return v;
  }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

 private:
  const std::string& file_;
};

// [SECTION] Fields and records ----------------------------------------------------------------

// Specialised in report_fields.cpp for every struct written as a JSON object
// (its keys come from record::rows(v, record::Of<T>), analysis/profile_fields.h):
//   static constexpr std::string_view name, meaning;  // the doc's heading and intro
//   static constexpr Field<T> custom[] = {…};  // optional: the code of its kCustom rows, by key
//   static void check(const T&, const std::string& path, const Reader&);  // optional, after reading
template <class T>
struct Record;

template <class T>
concept IsRecord = requires {
  Record<T>::name;
};

// The doc's key tables, built by walking the records (describe_record).
struct SchemaDoc {
  std::vector<std::string_view> done;  // records already documented
  std::string text;
};

template <class T>
using ReadFn = void (*)(T& to, const char* key, const Json& from, const std::string& path, const Reader& r);
using NestedFn = void (*)(SchemaDoc& doc);

// Writes a list's items [begin, end) as text (ItemsFn); ItemCountFn says how many items the list writes (its limit
// applied), so that the writer can hand ranges of them to several threads.
template <class T>
using ItemsFn = void (*)(const T& from, const ReportJsonOptions& options, std::size_t begin, std::size_t end, Out& out);
template <class T>
using EmitFn = void (*)(const T& from, const char* key, Out& out, const ReportJsonOptions& options);
template <class T>
using ItemCountFn = std::size_t (*)(const T& from, const ReportJsonOptions& options);

template <class T>
struct Field {
  const char* key;  // nullptr: the keys of a nested record, written inline in this object
  std::string_view unit, meaning;
  std::string (*type)();  // the doc's type column
  // Writes the member(s): each key (out.key()) and its value.
  EmitFn<T> emit;
  // A list always written under its key: its items one at a time, as emit()
  // would put them in the array (write_report_text streams them); null for
  // every other field.
  ItemsFn<T> items;
  ItemCountFn<T> count;                          // with items: how many it writes
  ReadFn<T> read;                                // null: written only (derived from other keys)
  void (*rows)(SchemaDoc& doc, const Field& f);  // the doc's row(s) for this field
  NestedFn nested;                               // documents the record this field holds, if any
};

// A row before it knows which record's table it sits in: converts to
// Field<T> there. Kind::For<T> supplies the pointers.
template <class K, class T>
constexpr ItemsFn<T> items_of() {
  if constexpr (requires { K::items; })
    return K::items;
  else
    return nullptr;
}
template <class K, class T>
constexpr ItemCountFn<T> count_of() {
  if constexpr (requires { K::count; })
    return K::count;
  else
    return nullptr;
}
template <class Kind>
struct Spec {
  const char* key;
  std::string_view unit, meaning;
  template <class T>
  constexpr operator Field<T>() const {
    using K = typename Kind::template For<T>;
    return Field<T>{key,     unit,    meaning,  K::type, K::emit, items_of<K, T>(), count_of<K, T>(),
                    K::read, K::rows, K::nested};
  }
};

// The member at the end of a path of member pointers (&Step::range, &TimeRange::start).
template <auto... Path>
struct Member {
  template <class T>
  static auto& of(T& x) {
    return (x.*....*Path);
  }
  template <class T>
  using Value = std::remove_cvref_t<decltype(of(std::declval<T&>()))>;
};

// [SECTION] Values by C++ type ----------------------------------------------------------------

// Each enum's values (0 .. n-1, record::kEnumValues) are named by to_string:
// for reading names back and for the doc.
template <class E>
constexpr int kEnumSize = record::kEnumValues<E>;

template <class E>
bool parse_enum(std::string_view s, E* out) {
  static_assert(kEnumSize<E> > 0, "an enum the report writes needs its kEnumSize");
  for (int i = 0; i < kEnumSize<E>; ++i)
    if (to_string(static_cast<E>(i)) == s) return *out = static_cast<E>(i), true;
  return false;
}

// The enum's values as the doc lists them: `a`, `b`, `c`.
template <class E>
std::string enum_values() {
  std::string s;
  for (int i = 0; i < kEnumSize<E>; ++i) s += (i ? ", `" : "`") + std::string(to_string(static_cast<E>(i))) + "`";
  return s;
}

// Whether T is a Wrapper<E> (a std::vector or a std::optional), and its E.
template <class T, template <class...> class Wrapper>
struct ElementOf : std::false_type {};
template <template <class...> class Wrapper, class E, class... Rest>
struct ElementOf<Wrapper<E, Rest...>, Wrapper> : std::true_type {
  using Element = E;
};
template <class T>
using ListOf = ElementOf<T, std::vector>;
template <class T>
using OptionalOf = ElementOf<T, std::optional>;

template <IsRecord T>
void read_record(T& x, const Json& in, const std::string& path, const Reader& r);
template <IsRecord T>
void describe_record(SchemaDoc& doc);

template <IsRecord T>
void emit_record(const T& x, Out& out, const ReportJsonOptions& options);
template <IsRecord T>
constexpr std::span<const Field<T>> fields_of();

// A value by its C++ type: records as objects, lists as arrays, enums by
// name, optionals null when empty.
template <class V>
void emit_value(const V& v, Out& out, const ReportJsonOptions& options) {
  if constexpr (OptionalOf<V>::value) {
    if (v)
      emit_value(*v, out, options);
    else
      out.null();
  } else if constexpr (IsRecord<V>) {
    emit_record(v, out, options);
  } else if constexpr (ListOf<V>::value) {
    out.begin_array();
    for (const auto& item : v) emit_value(item, out, options);
    out.end_array();
  } else if constexpr (std::is_enum_v<V>) {
    out.string(std::string_view(to_string(v)));
  } else if constexpr (std::is_same_v<V, bool>) {
    out.boolean(v);
  } else if constexpr (std::is_floating_point_v<V>) {
    out.number(static_cast<double>(v));
  } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
    out.integer(static_cast<std::int64_t>(v));
  } else if constexpr (std::is_integral_v<V>) {
    out.unsigned_integer(static_cast<std::uint64_t>(v));
  } else {
    static_assert(std::is_convertible_v<const V&, std::string_view>, "a value type the report does not know");
    out.string(std::string_view(v));
  }
}

// The value at `key` of the object `in` (itself at `path`).
template <class V>
void read_value(V& out, const Json& in, const char* key, const std::string& path, const Reader& r) {
  if constexpr (OptionalOf<V>::value) {
    if (r.member(in, key, path).is_null()) {
      out.reset();
    } else {
      typename OptionalOf<V>::Element value{};
      read_value(value, in, key, path, r);
      out = value;
    }
  } else if constexpr (IsRecord<V>) {
    read_record(out, r.member(in, key, path), Reader::join(path, key), r);
  } else if constexpr (ListOf<V>::value) {
    using E = typename ListOf<V>::Element;
    const Json& items = r.array(in, key, path);
    const std::string list = Reader::join(path, key);
    for (std::size_t i = 0; i < items.size(); ++i) {
      E item{};
      if constexpr (IsRecord<E>) {
        read_record(item, items[i], Reader::at(list, i), r);
      } else if constexpr (std::is_same_v<E, std::uint32_t>) {
        item = r.u32_item(items[i], Reader::at(list, i));
      } else {
        static_assert(std::is_same_v<E, std::string>, "lists hold records, strings or ints");
        if (!items[i].is_string()) r.fail(Reader::at(list, i), "expected a string");
        item = items[i].template get<std::string>();
      }
      out.push_back(std::move(item));
    }
  } else if constexpr (std::is_enum_v<V>) {
    const std::string s = r.str(in, key, path);
    if (!parse_enum(s, &out)) r.fail(Reader::join(path, key), "unknown value \"" + s + "\"");
  } else if constexpr (std::is_same_v<V, std::string>) {
    out = r.str(in, key, path);
  } else if constexpr (std::is_same_v<V, bool>) {
    out = r.boolean(in, key, path);
  } else if constexpr (std::is_same_v<V, double>) {
    out = r.f64(in, key, path);
  } else if constexpr (std::is_same_v<V, std::int64_t>) {
    out = r.i64(in, key, path);
  } else if constexpr (std::is_same_v<V, std::uint64_t>) {
    out = r.u64(in, key, path);
  } else if constexpr (std::is_same_v<V, std::uint32_t>) {
    out = r.u32(in, key, path);
  } else {
    static_assert(std::is_same_v<V, std::int32_t>, "a value type the report does not know");
    out = r.i32(in, key, path);
  }
}

template <class V>
std::string type_name() {
  if constexpr (OptionalOf<V>::value) {
    return type_name<typename OptionalOf<V>::Element>() + " or null";
  } else if constexpr (IsRecord<V>) {
    return std::string(Record<V>::name);
  } else if constexpr (ListOf<V>::value) {
    return "[" + type_name<typename ListOf<V>::Element>() + "]";
  } else if constexpr (std::is_same_v<V, std::string> || std::is_enum_v<V>) {
    return "string";
  } else if constexpr (std::is_same_v<V, bool>) {
    return "bool";
  } else if constexpr (std::is_floating_point_v<V>) {
    return "number";
  } else {
    static_assert(std::is_integral_v<V>, "a value type the report does not know");
    return "int";
  }
}

template <class V>
constexpr NestedFn nested_of() {
  if constexpr (IsRecord<V>)
    return &describe_record<V>;
  else if constexpr (ListOf<V>::value)
    return nested_of<typename ListOf<V>::Element>();
  else
    return nullptr;
}

// One row of a key table (report_fields.cpp formats it).
void add_row(SchemaDoc& doc, std::string_view key, const std::string& type, std::string_view unit,
             std::string_view meaning);

// A field's row; an enum's meaning ends with its values.
template <class V, class T>
void value_row(SchemaDoc& doc, const Field<T>& f) {
  if constexpr (std::is_enum_v<V>)
    add_row(doc, f.key, f.type(), f.unit, std::string(f.meaning) + (f.meaning.empty() ? "" : ": ") + enum_values<V>());
  else
    add_row(doc, f.key, f.type(), f.unit, f.meaning);
}

// [SECTION] Kinds of field ----------------------------------------------------------------------

// A member written and read by its C++ type: integers, numbers, strings,
// bools, enums (by name), records (objects), lists of records or strings.
template <auto... Path>
struct ValueKind {
  template <class T>
  struct For {
    using V = typename Member<Path...>::template Value<T>;
    static void emit_(const T& x, const char* key, Out& out, const ReportJsonOptions& o) {
      out.key(key);
      emit_value(Member<Path...>::of(x), out, o);
    }
    static void items_(const T& x, const ReportJsonOptions& o, std::size_t begin, std::size_t end, Out& out) {
      if constexpr (ListOf<V>::value) {
        const V& list = Member<Path...>::of(x);
        for (std::size_t i = begin; i < end && i < list.size(); ++i) emit_value(list[i], out, o);
      }
    }
    static std::size_t count_(const T& x, const ReportJsonOptions&) {
      if constexpr (ListOf<V>::value)
        return Member<Path...>::of(x).size();
      else
        return 0;
    }
    static void read_(T& x, const char* key, const Json& from, const std::string& path, const Reader& r) {
      read_value(Member<Path...>::of(x), from, key, path, r);
    }
    static constexpr auto type = &type_name<V>;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ItemsFn<T> items = ListOf<V>::value ? &items_ : nullptr;
    static constexpr ItemCountFn<T> count = ListOf<V>::value ? &count_ : nullptr;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &value_row<V, T>;
    static constexpr NestedFn nested = nested_of<V>();
  };
};

// A GPU ordinal, null where the value is "no particular GPU" (kNoDevice).
template <auto... Path>
struct GpuKind {
  template <class T>
  struct For {
    static_assert(std::is_same_v<typename Member<Path...>::template Value<T>, std::uint32_t>);
    static std::string type_() { return "int or null"; }
    static void emit_(const T& x, const char* key, Out& out, const ReportJsonOptions&) {
      const std::uint32_t d = Member<Path...>::of(x);
      out.key(key);
      if (d == kNoDevice)
        out.null();
      else
        out.unsigned_integer(d);
    }
    static void read_(T& x, const char* key, const Json& from, const std::string& path, const Reader& r) {
      Member<Path...>::of(x) = r.device(from, key, path);
    }
    static constexpr auto type = &type_;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &value_row<std::uint32_t, T>;
    static constexpr NestedFn nested = nullptr;
  };
};

// A count that may be unknown (std::optional<std::uint64_t>): null when
// unknown, never 0; a missing key (a report from before the field) reads as
// unknown.
template <auto... Path>
struct MaybeKind {
  template <class T>
  struct For {
    static_assert(std::is_same_v<typename Member<Path...>::template Value<T>, std::optional<std::uint64_t>>);
    static std::string type_() { return "int or null"; }
    static void emit_(const T& x, const char* key, Out& out, const ReportJsonOptions&) {
      const std::optional<std::uint64_t>& v = Member<Path...>::of(x);
      out.key(key);
      if (v)
        out.unsigned_integer(*v);
      else
        out.null();
    }
    static void read_(T& x, const char* key, const Json& from, const std::string& path, const Reader& r) {
      const Json* v = r.optional(from, key);
      if (v && !v->is_null())
        Member<Path...>::of(x) = r.u64(from, key, path);
      else
        Member<Path...>::of(x).reset();
    }
    static constexpr auto type = &type_;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &value_row<std::uint64_t, T>;
    static constexpr NestedFn nested = nullptr;
  };
};

// A list of which the writer keeps the first `options.*Limit` (0 = all).
template <auto Limit, auto... Path>
struct ListKind {
  template <class T>
  struct For : ValueKind<Path...>::template For<T> {
    static std::size_t count_(const T& x, const ReportJsonOptions& o) {
      const std::size_t n = Member<Path...>::of(x).size();
      return o.*Limit && o.*Limit < n ? o.*Limit : n;
    }
    static void items_(const T& x, const ReportJsonOptions& o, std::size_t begin, std::size_t end, Out& out) {
      const auto& list = Member<Path...>::of(x);
      for (std::size_t i = begin; i < end && i < count_(x, o); ++i) emit_value(list[i], out, o);
    }
    static void emit_(const T& x, const char* key, Out& out, const ReportJsonOptions& o) {
      out.key(key);
      out.begin_array();
      items_(x, o, 0, count_(x, o), out);
      out.end_array();
    }
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ItemsFn<T> items = &items_;
    static constexpr ItemCountFn<T> count = &count_;
  };
};

// An enum whose missing, mistyped or unknown value reads as its first
// value ("unknown") instead of failing.
template <auto... Path>
struct LenientKind {
  template <class T>
  struct For : ValueKind<Path...>::template For<T> {
    using V = typename Member<Path...>::template Value<T>;
    static_assert(std::is_enum_v<V>);
    static void read_(T& x, const char* key, const Json& from, const std::string&, const Reader& r) {
      if (const Json* v = r.optional(from, key); v && v->is_string()) {
        V parsed{};
        if (parse_enum(v->template get<std::string>(), &parsed)) Member<Path...>::of(x) = parsed;
      }
    }
    static constexpr ReadFn<T> read = &read_;
  };
};

// A value read only when present: keys added within /1 that reports saved by
// an earlier gpuscope lack (then the member keeps its default). Present, it
// is checked like any other.
template <auto... Path>
struct OptionalKind {
  template <class T>
  struct For : ValueKind<Path...>::template For<T> {
    static void read_(T& x, const char* key, const Json& from, const std::string& path, const Reader& r) {
      if (r.optional(from, key)) read_value(Member<Path...>::of(x), from, key, path, r);
    }
    static constexpr ReadFn<T> read = &read_;
  };
};

// A value computed from others when writing (a step's duration); not read
// back (the reader has what it is computed from).
template <auto Compute>
struct DerivedKind {
  template <class T>
  struct For {
    using V = std::remove_cvref_t<decltype(Compute(std::declval<const T&>()))>;
    static void emit_(const T& x, const char* key, Out& out, const ReportJsonOptions& o) {
      out.key(key);
      emit_value(Compute(x), out, o);
    }
    static constexpr auto type = &type_name<V>;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = nullptr;
    static constexpr auto rows = &value_row<V, T>;
    static constexpr NestedFn nested = nullptr;
  };
};

// A nested record's keys written into this object (a step's start_ns and
// end_ns), read at this object's path, the record's check included.
template <auto... Path>
struct InlineKind {
  template <class T>
  struct For {
    using V = typename Member<Path...>::template Value<T>;
    static_assert(IsRecord<V>);
    static std::string type_() { return {}; }
    static void emit_(const T& x, const char*, Out& out, const ReportJsonOptions& o) {
      for (const Field<V>& f : fields_of<V>()) f.emit(Member<Path...>::of(x), f.key, out, o);
    }
    static void read_(T& x, const char*, const Json& from, const std::string& path, const Reader& r) {
      read_record(Member<Path...>::of(x), from, path, r);
    }
    static void rows_(SchemaDoc& doc, const Field<T>&) {
      for (const Field<V>& f : fields_of<V>()) f.rows(doc, f);
    }
    static constexpr auto type = &type_;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &rows_;
    static constexpr NestedFn nested = nullptr;
  };
};

// A key with its own type name, writer and reader (the schema, the trace statistics).
template <std::string (*Type)(), auto Emit, auto Read>
struct CustomKind {
  template <class T>
  struct For {
    static void rows_(SchemaDoc& doc, const Field<T>& f) { add_row(doc, f.key, f.type(), f.unit, f.meaning); }
    static constexpr auto type = Type;
    static constexpr EmitFn<T> emit = Emit;
    static constexpr ReadFn<T> read = Read;
    static constexpr auto rows = &rows_;
    static constexpr NestedFn nested = nullptr;
  };
};

// The code of a key the record's rows mark kCustom (Record<T>::custom).
template <std::string (*Type)(), auto Emit, auto Read>
constexpr Spec<CustomKind<Type, Emit, Read>> custom_key(const char* key) {
  return {key, "", ""};
}

// [SECTION] A record's keys from its rows -----------------------------------------------------

// The field a row of record T makes: its kind by the row's flags.
template <class T, unsigned Flags, auto... Path>
constexpr Field<T> field_of(const record::Row& row) {
  using namespace record;
  if constexpr ((Flags & kCustom) != 0) {
    for (const Field<T>& c : Record<T>::custom) {
      if (std::string_view(c.key) != row.key) continue;
      Field<T> f = c;
      f.unit = row.unit, f.meaning = row.meaning;
      return f;
    }
    throw "report_fields.cpp: a kCustom row whose key Record<T>::custom lacks";
  } else if constexpr ((Flags & kGpu) != 0) {
    return Spec<GpuKind<Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kMaybe) != 0) {
    return Spec<MaybeKind<Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kAdded) != 0) {
    return Spec<OptionalKind<Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kLenient) != 0) {
    return Spec<LenientKind<Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kInline) != 0) {
    return Spec<InlineKind<Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kTop) != 0) {
    return Spec<ListKind<&ReportJsonOptions::top, Path...>>{row.key, row.unit, row.meaning};
  } else if constexpr ((Flags & kSteps) != 0) {
    return Spec<ListKind<&ReportJsonOptions::max_steps, Path...>>{row.key, row.unit, row.meaning};
  } else {
    return Spec<ValueKind<Path...>>{row.key, row.unit, row.meaning};
  }
}

// Rows the report writes in the record's own object.
template <unsigned Flags>
constexpr bool kInObject = (Flags & (record::kElsewhere | record::kDigestOnly)) == 0;

// Counts the record's keys (out null), or makes them into out.
template <class T>
struct FieldMaker {
  Field<T>* out = nullptr;
  std::size_t n = 0;
  template <unsigned Flags, auto... Path>
  constexpr void member(const record::Row& row) {
    if constexpr (kInObject<Flags>) {
      if (out) out[n] = field_of<T, Flags, Path...>(row);
      ++n;
    }
  }
  template <auto Compute>
  constexpr void computed(const record::Row& row) {
    if (out) out[n] = Spec<DerivedKind<Compute>>{row.key, row.unit, row.meaning};
    ++n;
  }
};

template <class T>
constexpr std::size_t key_count() {
  FieldMaker<T> count;
  rows(count, record::Of<T>{});
  return count.n;
}

template <class T>
constexpr std::array<Field<T>, key_count<T>()> make_fields() {
  std::array<Field<T>, key_count<T>()> fields{};
  FieldMaker<T> maker{fields.data()};
  rows(maker, record::Of<T>{});
  return fields;
}

// The record's keys, in the order written.
template <IsRecord T>
inline constexpr auto kFields = make_fields<T>();

template <IsRecord T>
constexpr std::span<const Field<T>> fields_of() {
  return kFields<T>;
}

// [SECTION] Walking a record: write, read, document -----------------------------------------

template <IsRecord T>
void emit_record(const T& x, Out& out, const ReportJsonOptions& options) {
  out.begin_object();
  for (const Field<T>& f : kFields<T>) f.emit(x, f.key, out, options);
  out.end_object();
}

template <IsRecord T>
void read_record(T& x, const Json& in, const std::string& path, const Reader& r) {
  for (const Field<T>& f : kFields<T>)
    if (f.read) f.read(x, f.key, in, path, r);
  if constexpr (requires { Record<T>::check(x, path, r); }) Record<T>::check(x, path, r);
}

// Starts a record's key table (report_fields.cpp formats it).
void begin_table(SchemaDoc& doc, std::string_view name, std::string_view meaning);

// The record's key table, then those of the records it holds that are not
// documented yet (depth first, in the order of their keys).
template <IsRecord T>
void describe_record(SchemaDoc& doc) {
  for (std::string_view done : doc.done)
    if (done == Record<T>::name) return;
  doc.done.push_back(Record<T>::name);
  begin_table(doc, Record<T>::name, Record<T>::meaning);
  for (const Field<T>& f : kFields<T>) f.rows(doc, f);
  for (const Field<T>& f : kFields<T>)
    if (f.nested) f.nested(doc);
}

// The whole document (report_fields.cpp instantiates the walks for it),
// indented by 2 when options.pretty, else on one line, written as text key
// by key, the items of its lists one at a time: no tree is ever built (for
// a job of 1,024 ranks it would be ~1 KB per step of every rank). The lists are cut into
// ranges of `chunk_items` items, formatted on `options.jobs` threads, each
// range into its own part; the parts, in order, are the document, the same
// bytes whatever the number of threads or the size of the ranges.
inline constexpr std::size_t kReportChunkItems = 512;
std::vector<std::string> write_report_parts(const Profile& p, const ReportJsonOptions& options,
                                            std::size_t chunk_items = kReportChunkItems);
std::string write_report_text(const Profile& p, const ReportJsonOptions& options,
                              std::size_t chunk_items = kReportChunkItems);
Profile read_report(const Json& document, const Reader& r);

}  // namespace gpuscope::detail
