#include "store/detail/column_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace gpuscope::store_detail {

namespace {

constexpr std::uint64_t kSignBit = 1ull << 63;

template <class T>
std::uint64_t to_mapped(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::bit_cast<std::uint64_t>(v);
  else if constexpr (std::is_signed_v<T>)
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) ^ kSignBit;
  else
    return static_cast<std::uint64_t>(v);
}

int byte_width(std::uint64_t v) { return v == 0 ? 0 : (71 - std::countl_zero(v)) / 8; }

// Maps x back to T; `bad` collects bits that show a value outside T.
template <class T>
T from_mapped(std::uint64_t x, std::uint64_t& bad) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<T>(x);
  } else if constexpr (std::is_signed_v<T>) {
    const auto v = static_cast<std::int64_t>(x ^ kSignBit);
    if constexpr (sizeof(T) < 8) {
      constexpr auto lo = static_cast<std::int64_t>(std::numeric_limits<T>::min());
      bad |= (static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(lo)) >> (8 * sizeof(T));
    }
    return static_cast<T>(v);
  } else {
    if constexpr (sizeof(T) < 8) bad |= x >> (8 * sizeof(T));
    return static_cast<T>(x);
  }
}

// [SECTION] Byte planes, one loop per (width, transform, type): the width is a
// compile-time constant so the inner byte loop unrolls and the row loop
// vectorizes (frame-of-reference) or stays one add per row (delta).

template <int W>
std::uint64_t gather(const std::uint8_t* planes, std::size_t n, std::size_t i) {
  std::uint64_t v = 0;
  for (int k = 0; k < W; ++k) v |= std::uint64_t{planes[k * n + i]} << (8 * k);
  return v;
}

// Row i's value before from_mapped: for a delta column, the running value `a`
// advanced by the row's delta; else base + the row's offset.
template <int W, bool Delta>
std::uint64_t mapped_at(const std::uint8_t* planes, std::size_t n, std::size_t i, std::uint64_t base,
                        std::uint64_t& a) {
  if constexpr (Delta)
    return a += static_cast<std::uint64_t>(unzigzag(gather<W>(planes, n, i)));
  else
    return base + gather<W>(planes, n, i);
}

template <int W, bool Delta>
void write_planes(const std::uint64_t* x, std::size_t n, std::uint64_t base, std::uint8_t* planes) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t u;
    if constexpr (Delta)
      u = i ? zigzag(static_cast<std::int64_t>(x[i] - x[i - 1])) : 0;
    else
      u = x[i] - base;
    for (int k = 0; k < W; ++k) planes[k * n + i] = static_cast<std::uint8_t>(u >> (8 * k));
  }
}

// Decodes rows [i0, i0 + k) of a chunk of n rows into out[0..k). `acc` carries
// a delta column's running value from block to block. With Stats it gathers,
// while the values are in registers, what the reader's row checks need: the
// min/max of an unsigned (id or enum) column. A relative column always
// reports whether a value is below its reference (an end before its start).
template <int W, bool Delta, bool Relative, bool Stats, class T>
void read_planes(const std::uint8_t* planes, std::size_t n, std::size_t i0, std::size_t k, std::uint64_t base,
                 std::uint64_t& acc, const TimeNs* rel, T* out, DecodeStats& st) {
  std::uint64_t bad = 0;
  [[maybe_unused]] T lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::lowest();
  if constexpr (Relative) {
    // x ^ kSignBit == x + kSignBit (mod 2^64), so the two sign flips of
    // from_mapped(base + stored + mapped(rel)) cancel: end = rel + base + stored.
    // "end < rel" as a signed compare, written with the subtraction's sign and
    // overflow bits (d = end - rel) so that the loop vectorizes without
    // 64-bit compare instructions; d's own sign bit also flags an end 2^63 or
    // more after rel (a duration no TimeNs holds). Either sends the reader to
    // its row-by-row check.
    std::uint64_t before = 0;
    [[maybe_unused]] std::uint64_t a = acc;
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint64_t d = mapped_at<W, Delta>(planes, n, i0 + j, base, a);
      const auto r = static_cast<std::uint64_t>(rel[j]);
      const std::uint64_t e = r + d;
      out[j] = static_cast<T>(e);
      before |= d | ((e ^ r) & (d ^ e));  // (sign ^ overflow) | sign == sign | overflow
    }
    if constexpr (Delta) acc = a;
    if (before >> 63) st.before_relative = true;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    // from_mapped is "+ kSignBit": folded into the base (or the running value).
    std::uint64_t a = acc + kSignBit;
    const std::uint64_t b = base + kSignBit;
    for (std::size_t j = 0; j < k; ++j) out[j] = static_cast<T>(mapped_at<W, Delta>(planes, n, i0 + j, b, a));
    if constexpr (Delta) acc = a - kSignBit;
  } else {
    std::uint64_t a = acc;
    for (std::size_t j = 0; j < k; ++j) {
      const T v = from_mapped<T>(mapped_at<W, Delta>(planes, n, i0 + j, base, a), bad);
      out[j] = v;
      if constexpr (Stats) {
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    }
    acc = a;
  }
  st.bad |= bad;
  if constexpr (Stats) {
    if (k) {
      st.min = std::min<std::uint64_t>(st.min, lo);
      st.max = std::max<std::uint64_t>(st.max, hi);
    }
  }
}

// The common case of an id, enum or count column: unsigned, at most 4 bytes,
// frame of reference, and base + the largest value W bytes can hold fits T
// (checked once per chunk). Then every value fits, and the loop runs in T's
// own width (16 or more values per SSE2 instruction instead of 2) with no
// per-value range check.
template <int W, bool Stats, class T>
void read_planes_narrow(const std::uint8_t* planes, std::size_t n, std::size_t i0, std::size_t k, std::uint64_t base,
                        std::uint64_t&, const TimeNs*, T* out, DecodeStats& st) {
  static_assert(std::is_unsigned_v<T> && sizeof(T) <= 4 && W <= static_cast<int>(sizeof(T)));
  const auto b = static_cast<T>(base);
  [[maybe_unused]] T lo = std::numeric_limits<T>::max(), hi = 0;
  for (std::size_t j = 0; j < k; ++j) {
    T v = b;
    for (int p = 0; p < W; ++p) v = static_cast<T>(v + (static_cast<T>(planes[p * n + i0 + j]) << (8 * p)));
    out[j] = v;
    if constexpr (Stats) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  }
  if constexpr (Stats) {
    if (k) {
      st.min = std::min<std::uint64_t>(st.min, lo);
      st.max = std::max<std::uint64_t>(st.max, hi);
    }
  }
}

template <bool Delta>
void write_planes_any(int width, const std::uint64_t* x, std::size_t n, std::uint64_t base, std::uint8_t* planes) {
  switch (width) {
    case 0: break;
    case 1: write_planes<1, Delta>(x, n, base, planes); break;
    case 2: write_planes<2, Delta>(x, n, base, planes); break;
    case 3: write_planes<3, Delta>(x, n, base, planes); break;
    case 4: write_planes<4, Delta>(x, n, base, planes); break;
    case 5: write_planes<5, Delta>(x, n, base, planes); break;
    case 6: write_planes<6, Delta>(x, n, base, planes); break;
    case 7: write_planes<7, Delta>(x, n, base, planes); break;
    default: write_planes<8, Delta>(x, n, base, planes); break;
  }
}

using std::size_t;

// One decoder per (width, transform, type), chosen once per column.
template <class T>
using PlaneReader = void (*)(const std::uint8_t*, size_t, size_t, size_t, std::uint64_t, std::uint64_t&, const TimeNs*,
                             T*, DecodeStats&);

template <bool Delta, bool Relative, bool Stats, class T>
PlaneReader<T> plane_reader(int width) {
  switch (width) {
    case 0: return &read_planes<0, Delta, Relative, Stats, T>;
    case 1: return &read_planes<1, Delta, Relative, Stats, T>;
    case 2: return &read_planes<2, Delta, Relative, Stats, T>;
    case 3: return &read_planes<3, Delta, Relative, Stats, T>;
    case 4: return &read_planes<4, Delta, Relative, Stats, T>;
    case 5: return &read_planes<5, Delta, Relative, Stats, T>;
    case 6: return &read_planes<6, Delta, Relative, Stats, T>;
    case 7: return &read_planes<7, Delta, Relative, Stats, T>;
    default: return &read_planes<8, Delta, Relative, Stats, T>;
  }
}

template <bool Stats, class T>
PlaneReader<T> narrow_reader(int width) {
  if constexpr (std::is_unsigned_v<T> && sizeof(T) <= 4) {
    switch (width) {
      case 0: return &read_planes_narrow<0, Stats, T>;
      case 1: return &read_planes_narrow<1, Stats, T>;
      case 2:
        if constexpr (sizeof(T) >= 2) return &read_planes_narrow<2, Stats, T>;
        break;
      case 3:
        if constexpr (sizeof(T) >= 4) return &read_planes_narrow<3, Stats, T>;
        break;
      case 4:
        if constexpr (sizeof(T) >= 4) return &read_planes_narrow<4, Stats, T>;
        break;
      default: break;
    }
  }
  (void)width;
  return nullptr;
}

// Whether a frame-of-reference column of `width` bytes over `base` can only
// hold values that fit T (so the narrow reader needs no per-value check).
template <class T>
bool fits_narrow(int width, std::uint64_t base) {
  if constexpr (std::is_unsigned_v<T> && sizeof(T) <= 4) {
    if (width > static_cast<int>(sizeof(T))) return false;
    const std::uint64_t largest = width == 0 ? 0 : (std::uint64_t{1} << (8 * width)) - 1;
    return base <= std::numeric_limits<T>::max() && largest <= std::numeric_limits<T>::max() - base;
  } else {
    (void)width;
    (void)base;
    return false;
  }
}

// Runs the decoder over the chunk in blocks; `emit(i0, k)` gives the output
// for rows [i0, i0 + k) and `done(i0, k)` is called once they are written.
template <class T, class Out, class Done>
DecodeStats run_reader(PlaneReader<T> read, const ColumnBlob& blob, size_t n, const TimeNs* rel, Out&& emit,
                       Done&& done) {
  DecodeStats st;
  std::uint64_t acc = blob.base;
  for (size_t i0 = 0; i0 < n; i0 += kDecodeBlock) {
    const size_t k = std::min(kDecodeBlock, n - i0);
    T* out = emit(i0, k);
    read(blob.planes, n, i0, k, blob.base, acc, rel ? rel + i0 : nullptr, out, st);
    done(i0, k);
  }
  return st;
}

template <bool Stats, class T>
PlaneReader<T> choose_reader(const ColumnBlob& blob, bool relative, bool delta, bool narrow_ok) {
  if (relative) {
    if constexpr (std::is_same_v<T, TimeNs>)
      return delta ? plane_reader<true, true, Stats, T>(blob.width) : plane_reader<false, true, Stats, T>(blob.width);
    return nullptr;
  }
  if (!delta && narrow_ok && fits_narrow<T>(blob.width, blob.base))
    if (PlaneReader<T> r = narrow_reader<Stats, T>(blob.width)) return r;
  return delta ? plane_reader<true, false, Stats, T>(blob.width) : plane_reader<false, false, Stats, T>(blob.width);
}

template <class T, class Out, class Done>
DecodeStats decode_any(const ColumnBlob& blob, size_t n, const TimeNs* relative_to, const DecodeOptions& opt,
                       Out&& emit, Done&& done) {
  if (blob.value_class != value_class_of<T>())
    throw FormatError("column '" + std::string(blob.name) + "' has the wrong value type");
  const bool relative = blob.mode & kModeRelativeFlag;
  const bool delta = (blob.mode & ~kModeRelativeFlag) == kModeDelta;
  if (relative && (!std::is_same_v<T, TimeNs> || !relative_to))
    throw FormatError("column '" + std::string(blob.name) + "' cannot be relative");
  // Stats only where a check will read them, and only for unsigned columns.
  const bool stats = opt.stats && std::is_unsigned_v<T>;
  const PlaneReader<T> read = stats ? choose_reader<true, T>(blob, relative, delta, opt.narrow)
                                    : choose_reader<false, T>(blob, relative, delta, opt.narrow);
  DecodeStats st = run_reader<T>(read, blob, n, relative ? relative_to : nullptr, emit, done);
  st.relative_checked = relative;
  if (st.bad) throw FormatError("column '" + std::string(blob.name) + "' has a value out of range");
  return st;
}

}  // namespace

template <class T>
void encode_column(std::string_view name, const T* values, std::size_t n, const TimeNs* relative_to, bool min_width_one,
                   ByteWriter& out, std::vector<std::uint64_t>& scratch) {
  if (scratch.size() < n) scratch.resize(n);
  std::uint64_t* x = scratch.data();
  std::uint8_t mode = 0;
  bool relative = false;
  if constexpr (std::is_same_v<T, TimeNs>) relative = relative_to != nullptr;
  if (relative) {
    mode |= kModeRelativeFlag;
    for (std::size_t i = 0; i < n; ++i) x[i] = to_mapped(values[i]) - to_mapped(relative_to[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) x[i] = to_mapped(values[i]);
  }

  std::uint64_t lo = ~0ull, hi = 0, delta_or = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  for (std::size_t i = 1; i < n; ++i) delta_or |= zigzag(static_cast<std::int64_t>(x[i] - x[i - 1]));
  const int for_width = n ? byte_width(hi - lo) : 0;
  const int delta_width = byte_width(delta_or);
  const bool delta = delta_width < for_width;
  int width = delta ? delta_width : for_width;
  if (min_width_one && n && width == 0) width = 1;
  const std::uint64_t base = n == 0 ? 0 : delta ? x[0] : lo;
  mode |= delta ? kModeDelta : kModeFrameOfReference;

  out.u8(static_cast<std::uint8_t>(name.size()));
  out.raw(name.data(), name.size());
  out.u8(static_cast<std::uint8_t>(value_class_of<T>()));
  out.u8(sizeof(T));
  out.u8(mode);
  out.varint(base);
  out.u8(static_cast<std::uint8_t>(width));
  std::uint8_t* planes = out.extend(static_cast<std::size_t>(width) * n);
  if (delta)
    write_planes_any<true>(width, x, n, base, planes);
  else
    write_planes_any<false>(width, x, n, base, planes);
}

ColumnBlob parse_column(ByteCursor& in, std::size_t n) {
  ColumnBlob b;
  const std::uint8_t name_len = in.u8();
  b.name = std::string_view(reinterpret_cast<const char*>(in.take(name_len)), name_len);
  const std::uint8_t cls = in.u8();
  if (cls > static_cast<std::uint8_t>(ValueClass::floating))
    throw FormatError("column '" + std::string(b.name) + "': unknown value class");
  b.value_class = static_cast<ValueClass>(cls);
  b.value_bytes = in.u8();
  b.mode = in.u8();
  if ((b.mode & ~kModeRelativeFlag) > kModeDelta)
    throw FormatError("column '" + std::string(b.name) + "': unknown encoding");
  b.base = in.varint();
  b.width = in.u8();
  if (b.width > 8) throw FormatError("column '" + std::string(b.name) + "': width over 8 bytes");
  b.planes = in.take(static_cast<std::uint64_t>(b.width) * n);
  return b;
}

template <class T>
DecodeStats decode_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, T* out,
                          const DecodeOptions& options) {
  return decode_any<T>(
      blob, n, relative_to, options, [out](size_t i0, size_t) { return out + i0; }, [](size_t, size_t) {});
}

template <class T>
DecodeStats append_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, std::vector<T>& col,
                          const DecodeOptions& options) {
  // Each block goes through a buffer in L1 and is appended: the column's
  // fresh memory is written once (resize() would zero it first, a second pass
  // over ~1 GB in a big load). A rejected column leaves its rows appended: the
  // caller rolls the chunk back.
  alignas(64) T buf[kDecodeBlock];
  return decode_any<T>(
      blob, n, relative_to, options, [&buf](size_t, size_t) { return buf; },
      [&](size_t, size_t k) { col.insert(col.end(), buf, buf + k); });
}

#define GPUSCOPE_COLUMN_TYPE(T)                                                                                   \
  template void encode_column<T>(std::string_view, const T*, std::size_t, const TimeNs*, bool, ByteWriter&,       \
                                 std::vector<std::uint64_t>&);                                                    \
  template DecodeStats decode_column<T>(const ColumnBlob&, std::size_t, const TimeNs*, T*, const DecodeOptions&); \
  template DecodeStats append_column<T>(const ColumnBlob&, std::size_t, const TimeNs*, std::vector<T>&,           \
                                        const DecodeOptions&);
GPUSCOPE_COLUMN_TYPE(std::uint8_t)
GPUSCOPE_COLUMN_TYPE(std::uint16_t)
GPUSCOPE_COLUMN_TYPE(std::uint32_t)
GPUSCOPE_COLUMN_TYPE(std::uint64_t)
GPUSCOPE_COLUMN_TYPE(std::int32_t)
GPUSCOPE_COLUMN_TYPE(std::int64_t)
GPUSCOPE_COLUMN_TYPE(double)
#undef GPUSCOPE_COLUMN_TYPE

}  // namespace gpuscope::store_detail
