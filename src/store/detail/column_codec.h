// Column encoding of .gscope row chunks (docs/format.md, "Row chunks").
//
// Every value is first mapped to a u64 that keeps differences intact
// (unsigned: as is; signed: two's complement with the sign bit flipped;
// double: its bits). A time column after the table's first one is stored
// relative to it (end - start = the duration). Then, per chunk, the cheaper of
//   frame of reference: stored = x - min(x)
//   delta:              stored = zigzag(x[i] - x[i-1]), base = x[0]
// is kept, at the smallest byte width that holds every stored value, as byte
// planes (all low bytes, then all second bytes, …). Byte planes turn the
// mostly-zero high bytes into long runs that zstd removes almost for free.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/detail/bytes.h"
#include "store/detail/format.h"
#include "trace/types.h"

namespace gpuscope::store_detail {

// One column of a chunk as found in a payload.
struct ColumnBlob {
  std::string_view name;
  ValueClass value_class = ValueClass::unsigned_int;
  std::uint8_t value_bytes = 0;
  std::uint8_t mode = 0;
  std::uint64_t base = 0;
  std::uint8_t width = 0;
  const std::uint8_t* planes = nullptr;  // width * rows bytes
};

// Appends one column of `n` values. `relative_to` (time columns after the
// first) holds the start times of the same rows. `min_width_one` forces a
// width of at least one byte, so every row of a chunk costs a stored byte and
// a reader can bound a chunk's row count by its payload size.
template <class T>
void encode_column(std::string_view name, const T* values, std::size_t n, const TimeNs* relative_to, bool min_width_one,
                   ByteWriter& out, std::vector<std::uint64_t>& scratch);

// What decoding saw, for the reader's row checks (so that they need no second
// pass over the rows).
struct DecodeStats {
  std::uint64_t min = ~std::uint64_t{0}, max = 0;  // with DecodeOptions::stats, unsigned columns; min > max: none
  bool relative_checked = false;                   // decoded relative to `relative_to`: before_relative is meaningful
  bool before_relative = false;                    // some value < its relative_to, or 2^63 or more above it
  std::uint64_t bad = 0;                           // internal: bits of values that do not fit T
};

struct DecodeOptions {
  bool stats = true;   // gather min/max (unsigned columns)
  bool narrow = true;  // allow the narrow fast path (tests turn it off to compare both paths)
};

// Rows are decoded in blocks of this many (a block of int64 fits L1 twice).
inline constexpr std::size_t kDecodeBlock = 1024;

// Parses the next column of a chunk of `n` rows. Throws FormatError.
ColumnBlob parse_column(ByteCursor& in, std::size_t n);

// Decodes `blob` into out[0..n). Throws FormatError if the column's type
// class differs from T's or a value does not fit T.
template <class T>
DecodeStats decode_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, T* out,
                          const DecodeOptions& options = {});

// The same, appended to `col` (its capacity reserved by the caller) without
// zero-filling it first. On a throw some rows may have been appended.
template <class T>
DecodeStats append_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, std::vector<T>& col,
                          const DecodeOptions& options = {});

template <class T>
constexpr ValueClass value_class_of() {
  if constexpr (std::is_floating_point_v<T>)
    return ValueClass::floating;
  else if constexpr (std::is_signed_v<T>)
    return ValueClass::signed_int;
  else
    return ValueClass::unsigned_int;
}

}  // namespace gpuscope::store_detail
