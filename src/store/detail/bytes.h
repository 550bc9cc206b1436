// Little-endian byte buffers for the .gscope writer and a bounds-checked
// cursor for the reader. Every read through ByteCursor checks the remaining
// length first and throws FormatError, so no length in a file can make the
// reader step outside its buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::store_detail {

// A malformed payload. The reader turns it into a "corrupt section" problem.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline std::uint64_t load_le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}
inline void store_le(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// A growable byte buffer. Unlike std::vector it does not zero what extend()
// adds: the column encoder writes every byte of it anyway.
class ByteWriter {
 public:
  const std::uint8_t* data() const { return buf_.get(); }
  std::uint8_t* data() { return buf_.get(); }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }

  void u8(std::uint8_t v) { *extend(1) = v; }
  void fixed(std::uint64_t v, int bytes) { store_le(extend(bytes), v, bytes); }
  void varint(std::uint64_t v) {
    std::uint8_t* p = extend(10);
    std::size_t n = 0;
    while (v >= 0x80) {
      p[n++] = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    p[n++] = static_cast<std::uint8_t>(v);
    size_ -= 10 - n;
  }
  void svarint(std::int64_t v) { varint(zigzag(v)); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    fixed(bits, 8);
  }
  void str(std::string_view s) {
    varint(s.size());
    raw(s.data(), s.size());
  }
  void raw(const void* p, std::size_t n) {
    if (n) std::memcpy(extend(n), p, n);
  }
  // Makes room for n bytes (left uninitialized) and returns where they go.
  std::uint8_t* extend(std::size_t n) {
    if (cap_ - size_ < n) grow(n);
    std::uint8_t* at = buf_.get() + size_;
    size_ += n;
    return at;
  }

 private:
  void grow(std::size_t n) {
    const std::size_t cap = std::max(size_ + n, 2 * cap_ + 256);
    auto fresh = std::make_unique_for_overwrite<std::uint8_t[]>(cap);
    if (size_) std::memcpy(fresh.get(), buf_.get(), size_);
    buf_ = std::move(fresh);
    cap_ = cap;
  }
  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t size_ = 0, cap_ = 0;
};

class ByteCursor {
 public:
  ByteCursor(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}

  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
  bool done() const { return p_ == end_; }
  const std::uint8_t* position() const { return p_; }

  std::uint8_t u8() {
    need(1);
    return *p_++;
  }
  std::uint64_t fixed(int bytes) {
    need(bytes);
    const std::uint64_t v = load_le(p_, bytes);
    p_ += bytes;
    return v;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8();
      if (shift == 63 && b > 1) throw FormatError("varint overflows 64 bits");
      v |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    throw FormatError("varint longer than 10 bytes");
  }
  std::uint32_t varint32(const char* what) {
    const std::uint64_t v = varint();
    if (v > 0xffffffffu) throw FormatError(std::string(what) + " does not fit 32 bits");
    return static_cast<std::uint32_t>(v);
  }
  std::int64_t svarint() { return unzigzag(varint()); }
  double f64() {
    const std::uint64_t bits = fixed(8);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string_view str() {
    const std::uint64_t n = varint();
    need(n);
    std::string_view s(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(n));
    p_ += n;
    return s;
  }
  const std::uint8_t* take(std::uint64_t n) {
    need(n);
    const std::uint8_t* at = p_;
    p_ += n;
    return at;
  }

 private:
  void need(std::uint64_t n) const {
    if (n > remaining()) throw FormatError("payload ends early");
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

}  // namespace gpuscope::store_detail
