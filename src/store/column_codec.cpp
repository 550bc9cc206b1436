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
  if constexpr (std::is_floating_point_v<T>) return std::bit_cast<std::uint64_t>(v);
  else if constexpr (std::is_signed_v<T>) return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) ^ kSignBit;
  else return static_cast<std::uint64_t>(v);
}

int byte_width(std::uint64_t v) { return v == 0 ? 0 : (71 - std::countl_zero(v)) / 8; }

// Gathers W byte planes into u64 values.
template <int W>
void gather(const std::uint8_t* planes, std::size_t n, std::uint64_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v = 0;
    for (int k = 0; k < W; ++k) v |= std::uint64_t{planes[k * n + i]} << (8 * k);
    out[i] = v;
  }
}

void gather_any(int width, const std::uint8_t* planes, std::size_t n, std::uint64_t* out) {
  switch (width) {
    case 0: std::memset(out, 0, n * sizeof(std::uint64_t)); break;
    case 1: gather<1>(planes, n, out); break;
    case 2: gather<2>(planes, n, out); break;
    case 3: gather<3>(planes, n, out); break;
    case 4: gather<4>(planes, n, out); break;
    case 5: gather<5>(planes, n, out); break;
    case 6: gather<6>(planes, n, out); break;
    case 7: gather<7>(planes, n, out); break;
    default: gather<8>(planes, n, out); break;
  }
}

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

}  // namespace

template <class T>
void encode_column(std::string_view name, const T* values, std::size_t n, const TimeNs* relative_to,
                   bool min_width_one, ByteWriter& out, std::vector<std::uint64_t>& scratch) {
  scratch.resize(n);
  std::uint64_t* x = scratch.data();
  std::uint8_t mode = 0;
  if (relative_to) {
    if constexpr (std::is_same_v<T, TimeNs>) {
      mode |= kModeRelativeFlag;
      for (std::size_t i = 0; i < n; ++i) x[i] = to_mapped(values[i]) - to_mapped(relative_to[i]);
    }
  }
  if (!(mode & kModeRelativeFlag))
    for (std::size_t i = 0; i < n; ++i) x[i] = to_mapped(values[i]);

  std::uint64_t lo = ~0ull, hi = 0, delta_or = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    if (i) delta_or |= zigzag(static_cast<std::int64_t>(x[i] - x[i - 1]));
  }
  const int for_width = n ? byte_width(hi - lo) : 0;
  const int delta_width = byte_width(delta_or);
  const bool delta = delta_width < for_width;
  int width = delta ? delta_width : for_width;
  if (min_width_one && n && width == 0) width = 1;
  std::uint64_t base = 0;
  if (n) {
    base = delta ? x[0] : lo;
    if (delta) {
      std::uint64_t prev = x[0];
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t cur = x[i];
        x[i] = zigzag(static_cast<std::int64_t>(cur - prev));
        prev = cur;
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) x[i] -= lo;
    }
  }
  mode |= delta ? kModeDelta : kModeFrameOfReference;

  out.u8(static_cast<std::uint8_t>(name.size()));
  out.raw(name.data(), name.size());
  out.u8(static_cast<std::uint8_t>(value_class_of<T>()));
  out.u8(sizeof(T));
  out.u8(mode);
  out.varint(base);
  out.u8(static_cast<std::uint8_t>(width));
  std::uint8_t* planes = out.extend(static_cast<std::size_t>(width) * n);
  for (int k = 0; k < width; ++k) {
    std::uint8_t* plane = planes + k * n;
    const int shift = 8 * k;
    for (std::size_t i = 0; i < n; ++i) plane[i] = static_cast<std::uint8_t>(x[i] >> shift);
  }
}

ColumnBlob parse_column(ByteCursor& in, std::size_t n) {
  ColumnBlob b;
  const std::uint8_t name_len = in.u8();
  b.name = std::string_view(reinterpret_cast<const char*>(in.take(name_len)), name_len);
  const std::uint8_t cls = in.u8();
  if (cls > static_cast<std::uint8_t>(ValueClass::floating)) throw FormatError("column '" + std::string(b.name) + "': unknown value class");
  b.value_class = static_cast<ValueClass>(cls);
  b.value_bytes = in.u8();
  b.mode = in.u8();
  if ((b.mode & ~kModeRelativeFlag) > kModeDelta) throw FormatError("column '" + std::string(b.name) + "': unknown encoding");
  b.base = in.varint();
  b.width = in.u8();
  if (b.width > 8) throw FormatError("column '" + std::string(b.name) + "': width over 8 bytes");
  b.planes = in.take(static_cast<std::uint64_t>(b.width) * n);
  return b;
}

template <class T>
void decode_column(const ColumnBlob& blob, std::size_t n, const TimeNs* relative_to, T* out,
                   std::vector<std::uint64_t>& scratch) {
  if (blob.value_class != value_class_of<T>())
    throw FormatError("column '" + std::string(blob.name) + "' has the wrong value type");
  const bool relative = blob.mode & kModeRelativeFlag;
  if (relative && (!relative_to || !std::is_same_v<T, TimeNs>))
    throw FormatError("column '" + std::string(blob.name) + "' cannot be relative");
  if (n == 0) return;
  scratch.resize(n);
  std::uint64_t* x = scratch.data();
  gather_any(blob.width, blob.planes, n, x);
  if ((blob.mode & ~kModeRelativeFlag) == kModeDelta) {
    std::uint64_t acc = blob.base;
    for (std::size_t i = 0; i < n; ++i) {
      acc += static_cast<std::uint64_t>(unzigzag(x[i]));
      x[i] = acc;
    }
  } else {
    const std::uint64_t base = blob.base;
    for (std::size_t i = 0; i < n; ++i) x[i] += base;
  }
  std::uint64_t bad = 0;
  if (relative) {
    if constexpr (std::is_same_v<T, TimeNs>)
      for (std::size_t i = 0; i < n; ++i) out[i] = from_mapped<T>(x[i] + to_mapped(relative_to[i]), bad);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = from_mapped<T>(x[i], bad);
  }
  if (bad) throw FormatError("column '" + std::string(blob.name) + "' has a value out of range");
}

#define GPUSCOPE_COLUMN_TYPE(T)                                                                          \
  template void encode_column<T>(std::string_view, const T*, std::size_t, const TimeNs*, bool, ByteWriter&, \
                                 std::vector<std::uint64_t>&);                                            \
  template void decode_column<T>(const ColumnBlob&, std::size_t, const TimeNs*, T*, std::vector<std::uint64_t>&);
GPUSCOPE_COLUMN_TYPE(std::uint8_t)
GPUSCOPE_COLUMN_TYPE(std::uint16_t)
GPUSCOPE_COLUMN_TYPE(std::uint32_t)
GPUSCOPE_COLUMN_TYPE(std::uint64_t)
GPUSCOPE_COLUMN_TYPE(std::int32_t)
GPUSCOPE_COLUMN_TYPE(std::int64_t)
GPUSCOPE_COLUMN_TYPE(double)
#undef GPUSCOPE_COLUMN_TYPE

}  // namespace gpuscope::store_detail
