#include "store/detail/column_codec.h"

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

template <int W, bool Delta, bool Relative, class T>
std::uint64_t read_planes(const std::uint8_t* planes, std::size_t n, std::uint64_t base, const TimeNs* rel, T* out) {
  std::uint64_t bad = 0;
  std::uint64_t acc = base;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x;
    if constexpr (Delta)
      x = acc += static_cast<std::uint64_t>(unzigzag(gather<W>(planes, n, i)));
    else
      x = base + gather<W>(planes, n, i);
    if constexpr (Relative) x += static_cast<std::uint64_t>(rel[i]) ^ kSignBit;
    out[i] = from_mapped<T>(x, bad);
  }
  return bad;
}

template <bool Delta>
void write_planes_any(int width, const std::uint64_t* x, std::size_t n, std::uint64_t base, std::uint8_t* planes) {
  switch (width) {
    case 0:
      break;
    case 1:
      write_planes<1, Delta>(x, n, base, planes);
      break;
    case 2:
      write_planes<2, Delta>(x, n, base, planes);
      break;
    case 3:
      write_planes<3, Delta>(x, n, base, planes);
      break;
    case 4:
      write_planes<4, Delta>(x, n, base, planes);
      break;
    case 5:
      write_planes<5, Delta>(x, n, base, planes);
      break;
    case 6:
      write_planes<6, Delta>(x, n, base, planes);
      break;
    case 7:
      write_planes<7, Delta>(x, n, base, planes);
      break;
    default:
      write_planes<8, Delta>(x, n, base, planes);
      break;
  }
}

template <bool Delta, bool Relative, class T>
std::uint64_t read_planes_any(int width, const std::uint8_t* planes, std::size_t n, std::uint64_t base,
                              const TimeNs* rel, T* out) {
  switch (width) {
    case 0:
      return read_planes<0, Delta, Relative>(planes, n, base, rel, out);
    case 1:
      return read_planes<1, Delta, Relative>(planes, n, base, rel, out);
    case 2:
      return read_planes<2, Delta, Relative>(planes, n, base, rel, out);
    case 3:
      return read_planes<3, Delta, Relative>(planes, n, base, rel, out);
    case 4:
      return read_planes<4, Delta, Relative>(planes, n, base, rel, out);
    case 5:
      return read_planes<5, Delta, Relative>(planes, n, base, rel, out);
    case 6:
      return read_planes<6, Delta, Relative>(planes, n, base, rel, out);
    case 7:
      return read_planes<7, Delta, Relative>(planes, n, base, rel, out);
    default:
      return read_planes<8, Delta, Relative>(planes, n, base, rel, out);
  }
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
void decode_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, T* out) {
  if (blob.value_class != value_class_of<T>())
    throw FormatError("column '" + std::string(blob.name) + "' has the wrong value type");
  const bool relative = blob.mode & kModeRelativeFlag;
  const bool delta = (blob.mode & ~kModeRelativeFlag) == kModeDelta;
  std::uint64_t bad = 0;
  if (relative) {
    if constexpr (std::is_same_v<T, TimeNs>) {
      if (!relative_to) throw FormatError("column '" + std::string(blob.name) + "' cannot be relative");
      bad = delta ? read_planes_any<true, true>(blob.width, blob.planes, n, blob.base, relative_to, out)
                  : read_planes_any<false, true>(blob.width, blob.planes, n, blob.base, relative_to, out);
    } else {
      throw FormatError("column '" + std::string(blob.name) + "' cannot be relative");
    }
  } else {
    bad = delta ? read_planes_any<true, false>(blob.width, blob.planes, n, blob.base, nullptr, out)
                : read_planes_any<false, false>(blob.width, blob.planes, n, blob.base, nullptr, out);
  }
  if (bad) throw FormatError("column '" + std::string(blob.name) + "' has a value out of range");
}

#define GPUSCOPE_COLUMN_TYPE(T)                                                                             \
  template void encode_column<T>(std::string_view, const T*, std::size_t, const TimeNs*, bool, ByteWriter&, \
                                 std::vector<std::uint64_t>&);                                              \
  template void decode_column<T>(const ColumnBlob&, std::size_t, const TimeNs*, T*);
GPUSCOPE_COLUMN_TYPE(std::uint8_t)
GPUSCOPE_COLUMN_TYPE(std::uint16_t)
GPUSCOPE_COLUMN_TYPE(std::uint32_t)
GPUSCOPE_COLUMN_TYPE(std::uint64_t)
GPUSCOPE_COLUMN_TYPE(std::int32_t)
GPUSCOPE_COLUMN_TYPE(std::int64_t)
GPUSCOPE_COLUMN_TYPE(double)
#undef GPUSCOPE_COLUMN_TYPE

}  // namespace gpuscope::store_detail
