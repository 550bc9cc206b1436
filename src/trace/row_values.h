// How a Row's values are stored in its table's columns, for the code that
// appends rows (TraceBuilder::add_*) and for readers that write rows in place
// (src/import/nsys): both store a row exactly alike.
#pragma once

#include <algorithm>
#include <type_traits>

#include "trace/tables.h"

namespace gpuscope::detail {

// A Row's value as its column stores it: an enumeration as its byte, a u32
// in 16 bits clamped to 65535 (CUDA's limit for a grid's y and z).
template <class T, class V>
T to_column(V v) {
  if constexpr (std::is_enum_v<V>) {
    static_assert(std::is_same_v<T, std::underlying_type_t<V>>, "an enumeration is stored as its underlying type");
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, V>) {
    return v;
  } else {
    static_assert(std::is_same_v<V, std::uint32_t> && std::is_same_v<T, std::uint16_t>,
                  "a Row's type and its column's differ only for enumerations and u32 stored in 16 bits");
    return static_cast<T>(std::min<V>(v, 0xffff));
  }
}

// The row as stored: a kernel keeps its mangled name only when it differs
// from the name shown.
template <class Row>
const Row& stored_row(const Row& r) {
  return r;
}
inline KernelRow stored_row(KernelRow r) {
  if (r.mangled == r.name) r.mangled = 0;
  return r;
}

}  // namespace gpuscope::detail
