// Little-endian byte buffers for the .gscope writer and a bounds-checked
// cursor for the reader. Every read through ByteCursor checks the remaining
// length first and throws FormatError, so no length in a file can make the
// reader step outside its buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

inline std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
inline std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

class ByteWriter {
 public:
  std::vector<std::uint8_t>& bytes() { return buf_; }
  const std::vector<std::uint8_t>& bytes() const { return buf_; }
  std::size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

  void u8(std::uint8_t v) { buf_.push_back(v); }
  void fixed(std::uint64_t v, int bytes) {
    const std::size_t at = buf_.size();
    buf_.resize(at + bytes);
    store_le(buf_.data() + at, v, bytes);
  }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      buf_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    buf_.push_back(static_cast<std::uint8_t>(v));
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
    const auto* b = static_cast<const std::uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  // Makes room for n bytes and returns where they go.
  std::uint8_t* extend(std::size_t n) {
    const std::size_t at = buf_.size();
    buf_.resize(at + n);
    return buf_.data() + at;
  }

 private:
  std::vector<std::uint8_t> buf_;
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
