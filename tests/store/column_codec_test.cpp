// The column codec against brute force: every value survives, and the width
// chosen is the smallest either transform allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "store/detail/column_codec.h"

namespace gpuscope::store_detail {
namespace {

// Bytes needed for v, counted the slow way.
int bytes_needed(std::uint64_t v) {
  int n = 0;
  while (v) {
    ++n;
    v >>= 8;
  }
  return n;
}

template <class T>
std::uint64_t mapped(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) + (1ull << 63);
  } else {
    return v;
  }
}

template <class T>
int brute_force_width(const std::vector<T>& v, const std::vector<TimeNs>* rel) {
  if (v.empty()) return 0;
  std::vector<std::uint64_t> x(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) x[i] = mapped(v[i]) - (rel ? mapped((*rel)[i]) : 0);
  const std::uint64_t lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  int delta = 0;
  for (std::size_t i = 1; i < x.size(); ++i) {
    const auto d = static_cast<std::int64_t>(x[i] - x[i - 1]);
    const std::uint64_t z = d < 0 ? (~static_cast<std::uint64_t>(d)) * 2 + 1 : static_cast<std::uint64_t>(d) * 2;
    delta = std::max(delta, bytes_needed(z));
  }
  return std::min(bytes_needed(hi - lo), delta);
}

template <class T>
std::vector<T> make_values(std::mt19937_64& rng, int shape, std::size_t n) {
  std::vector<T> v(n);
  using L = std::numeric_limits<T>;
  T acc{};
  for (std::size_t i = 0; i < n; ++i) {
    switch (shape) {
      case 0: v[i] = T{}; break;                                                    // all zero
      case 1: v[i] = static_cast<T>(42); break;                                     // constant
      case 2: v[i] = static_cast<T>(acc += static_cast<T>(rng() % 7)); break;       // ascending small steps
      case 3: v[i] = static_cast<T>(rng() % 300); break;                            // small random
      case 4: v[i] = static_cast<T>(rng()); break;                                  // anything
      case 5: v[i] = rng() % 2 ? L::max() : L::lowest(); break;                     // extremes
      default: v[i] = static_cast<T>(L::max() - static_cast<T>(rng() % 3)); break;  // near max
    }
  }
  return v;
}

template <class T>
void round_trip_type() {
  std::mt19937_64 rng(sizeof(T) * 31 + std::is_signed_v<T>);
  std::vector<std::uint64_t> scratch;
  for (std::size_t n : {0, 1, 2, 3, 255, 256, 1000}) {
    for (int shape = 0; shape < 7; ++shape) {
      for (bool min_one : {false, true}) {
        SCOPED_TRACE("n " + std::to_string(n) + " shape " + std::to_string(shape));
        const std::vector<T> v = make_values<T>(rng, shape, n);
        ByteWriter out;
        encode_column<T>("col", v.data(), n, nullptr, min_one, out, scratch);
        ByteCursor in(out.data(), out.size());
        const ColumnBlob blob = parse_column(in, n);
        EXPECT_TRUE(in.done());
        EXPECT_EQ(blob.name, "col");
        int expect = brute_force_width(v, nullptr);
        if (min_one && n && expect == 0) expect = 1;
        EXPECT_EQ(blob.width, expect);
        std::vector<T> back(n);
        decode_column<T>(blob, n, nullptr, back.data());
        EXPECT_EQ(0, n ? std::memcmp(back.data(), v.data(), n * sizeof(T)) : 0);
      }
    }
  }
}

TEST(ColumnCodec, RoundTripU8) { round_trip_type<std::uint8_t>(); }
TEST(ColumnCodec, RoundTripU16) { round_trip_type<std::uint16_t>(); }
TEST(ColumnCodec, RoundTripU32) { round_trip_type<std::uint32_t>(); }
TEST(ColumnCodec, RoundTripU64) { round_trip_type<std::uint64_t>(); }
TEST(ColumnCodec, RoundTripI32) { round_trip_type<std::int32_t>(); }
TEST(ColumnCodec, RoundTripI64) { round_trip_type<std::int64_t>(); }
TEST(ColumnCodec, RoundTripDouble) { round_trip_type<double>(); }

TEST(ColumnCodec, EndTimesRelativeToStart) {
  std::mt19937_64 rng(9);
  std::vector<std::uint64_t> scratch;
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 1 + rng() % 500;
    std::vector<TimeNs> start(n), end(n);
    TimeNs t = trial % 5 == 0 ? std::numeric_limits<TimeNs>::min() + 5 : 1'700'000'000'000'000'000;
    for (std::size_t i = 0; i < n; ++i) {
      start[i] = t;
      end[i] = t + static_cast<TimeNs>(rng() % (trial % 2 ? 100 : 10'000'000));
      t += static_cast<TimeNs>(rng() % 1000);
    }
    ByteWriter out;
    encode_column<TimeNs>("start", start.data(), n, nullptr, true, out, scratch);
    encode_column<TimeNs>("end", end.data(), n, start.data(), false, out, scratch);
    ByteCursor in(out.data(), out.size());
    const ColumnBlob s = parse_column(in, n), e = parse_column(in, n);
    EXPECT_EQ(std::max(1, brute_force_width(start, nullptr)), s.width);
    EXPECT_TRUE(e.mode & kModeRelativeFlag);
    EXPECT_EQ(e.width, brute_force_width(end, &start));
    EXPECT_LE(e.width, trial % 2 ? 1 : 3);
    std::vector<TimeNs> s2(n), e2(n);
    decode_column<TimeNs>(s, n, nullptr, s2.data());
    decode_column<TimeNs>(e, n, s2.data(), e2.data());
    EXPECT_EQ(s2, start);
    EXPECT_EQ(e2, end);
  }
}

TEST(ColumnCodec, RejectsValuesThatDoNotFitAndWrongTypes) {
  std::vector<std::uint64_t> scratch;
  const std::vector<std::uint32_t> big = {1, 70000, 3};
  ByteWriter out;
  encode_column<std::uint32_t>("x", big.data(), big.size(), nullptr, false, out, scratch);
  ByteCursor in(out.data(), out.size());
  const ColumnBlob blob = parse_column(in, big.size());
  std::vector<std::uint16_t> narrow(3);
  EXPECT_THROW(decode_column<std::uint16_t>(blob, 3, nullptr, narrow.data()), FormatError);
  std::vector<std::int32_t> other(3);
  EXPECT_THROW(decode_column<std::int32_t>(blob, 3, nullptr, other.data()), FormatError);
  // The same column fits a u64.
  std::vector<std::uint64_t> wide(3);
  decode_column<std::uint64_t>(blob, 3, nullptr, wide.data());
  EXPECT_EQ(wide[1], 70000u);

  const std::vector<std::int64_t> neg = {-5, std::numeric_limits<std::int32_t>::min() - 1ll};
  ByteWriter o2;
  encode_column<std::int64_t>("y", neg.data(), 2, nullptr, false, o2, scratch);
  ByteCursor in2(o2.data(), o2.size());
  const ColumnBlob b2 = parse_column(in2, 2);
  std::vector<std::int32_t> i32(2);
  EXPECT_THROW(decode_column<std::int32_t>(b2, 2, nullptr, i32.data()), FormatError);
}

TEST(ColumnCodec, ParseRejectsTruncatedAndBadHeaders) {
  std::vector<std::uint64_t> scratch;
  const std::vector<std::uint32_t> v(100, 7);
  ByteWriter out;
  encode_column<std::uint32_t>("x", v.data(), v.size(), nullptr, true, out, scratch);
  for (std::size_t cut = 0; cut < out.size(); ++cut) {
    ByteCursor in(out.data(), cut);
    EXPECT_THROW(parse_column(in, v.size()), FormatError) << cut;
  }
  std::vector<std::uint8_t> bytes(out.data(), out.data() + out.size());
  bytes[1 + 1 + 2] = 9;  // mode byte after name, class, size
  ByteCursor in(bytes.data(), bytes.size());
  EXPECT_THROW(parse_column(in, v.size()), FormatError);
}

// The decoder's fast paths against its general path and brute force: the
// narrow path (small unsigned columns whose frame of reference proves every
// value fits) and the general one give the same values and the same min/max,
// decode_column and append_column agree, and chunks longer than a decode
// block carry a delta column's running value across blocks.
template <class T>
void fast_paths_agree() {
  std::mt19937_64 rng(sizeof(T) * 7 + 3);
  std::vector<std::uint64_t> scratch;
  for (std::size_t n : {std::size_t{1}, kDecodeBlock - 1, kDecodeBlock, kDecodeBlock + 1, std::size_t{5000}}) {
    for (int shape = 0; shape < 7; ++shape) {
      SCOPED_TRACE("n " + std::to_string(n) + " shape " + std::to_string(shape));
      const std::vector<T> v = make_values<T>(rng, shape, n);
      ByteWriter out;
      encode_column<T>("col", v.data(), n, nullptr, false, out, scratch);
      ByteCursor in(out.data(), out.size());
      const ColumnBlob blob = parse_column(in, n);
      std::vector<T> fast(n), general(n);
      const DecodeStats a = decode_column<T>(blob, n, nullptr, fast.data(), {.stats = true, .narrow = true});
      const DecodeStats b = decode_column<T>(blob, n, nullptr, general.data(), {.stats = true, .narrow = false});
      EXPECT_EQ(fast, v);
      EXPECT_EQ(general, v);
      if constexpr (std::is_unsigned_v<T>) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        EXPECT_EQ(a.min, std::uint64_t{*lo});
        EXPECT_EQ(a.max, std::uint64_t{*hi});
        EXPECT_EQ(b.min, std::uint64_t{*lo});
        EXPECT_EQ(b.max, std::uint64_t{*hi});
      }
      // Appended after rows already there, as the reader does chunk by chunk.
      std::vector<T> col(3, T{1});
      col.reserve(3 + n);
      append_column<T>(blob, n, nullptr, col);
      ASSERT_EQ(col.size(), 3 + n);
      EXPECT_TRUE(std::equal(v.begin(), v.end(), col.begin() + 3));
      EXPECT_EQ(col[0], T{1});
    }
  }
}

TEST(ColumnCodec, FastPathsAgreeU8) { fast_paths_agree<std::uint8_t>(); }
TEST(ColumnCodec, FastPathsAgreeU16) { fast_paths_agree<std::uint16_t>(); }
TEST(ColumnCodec, FastPathsAgreeU32) { fast_paths_agree<std::uint32_t>(); }
TEST(ColumnCodec, FastPathsAgreeU64) { fast_paths_agree<std::uint64_t>(); }
TEST(ColumnCodec, FastPathsAgreeI32) { fast_paths_agree<std::int32_t>(); }
TEST(ColumnCodec, FastPathsAgreeI64) { fast_paths_agree<std::int64_t>(); }

// A u16 column stored with a base that a 2-byte width would push past 65535
// must take the checked path: in range values decode, one over is refused.
TEST(ColumnCodec, NarrowPathOnlyWhenTheHeaderProvesTheValuesFit) {
  std::vector<std::uint64_t> scratch;
  const std::vector<std::uint32_t> near = {65000, 65535, 65100};  // base 65000, width 1 (offsets < 256)
  ByteWriter out;
  encode_column<std::uint32_t>("x", near.data(), near.size(), nullptr, false, out, scratch);
  ByteCursor in(out.data(), out.size());
  const ColumnBlob blob = parse_column(in, near.size());
  std::vector<std::uint16_t> v(3);
  const DecodeStats st = decode_column<std::uint16_t>(blob, 3, nullptr, v.data());
  EXPECT_EQ(v, (std::vector<std::uint16_t>{65000, 65535, 65100}));
  EXPECT_EQ(st.max, 65535u);
  const std::vector<std::uint32_t> over = {65000, 65536};
  ByteWriter o2;
  encode_column<std::uint32_t>("x", over.data(), over.size(), nullptr, false, o2, scratch);
  ByteCursor in2(o2.data(), o2.size());
  const ColumnBlob b2 = parse_column(in2, over.size());
  EXPECT_THROW(decode_column<std::uint16_t>(b2, 2, nullptr, v.data()), FormatError);
}

// The relative (end) decoder reports an end before its start, including when
// the 64-bit sum wraps (an end of INT64_MIN + 5 after a start near INT64_MAX
// is stored as a small positive offset).
TEST(ColumnCodec, RelativeColumnReportsEndsBeforeStarts) {
  std::vector<std::uint64_t> scratch;
  constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max(), kMin = std::numeric_limits<TimeNs>::min();
  struct Case {
    std::vector<TimeNs> start, end;
    bool before;
  };
  const std::vector<Case> cases = {
      {{10, 20, 30}, {15, 20, 31}, false},
      {{10, 20, 30}, {15, 19, 31}, true},
      {{kMax - 5, kMax - 5}, {kMax, kMin + 5}, true},
      {{kMin, kMin + 1}, {kMax, kMin + 1}, true},  // kMin .. kMax: longer than any TimeNs duration
      {{kMin, kMin + 1}, {-1, kMin + 1}, false},   // the longest duration a TimeNs holds
      {{0, 0}, {kMin, 0}, true},
  };
  for (const Case& c : cases) {
    for (std::size_t copies : {std::size_t{1}, std::size_t{700}}) {  // 700 * 3 rows span several blocks
      std::vector<TimeNs> start, end;
      for (std::size_t k = 0; k < copies; ++k) {
        start.insert(start.end(), c.start.begin(), c.start.end());
        end.insert(end.end(), c.end.begin(), c.end.end());
      }
      const std::size_t n = start.size();
      ByteWriter out;
      encode_column<TimeNs>("start", start.data(), n, nullptr, true, out, scratch);
      encode_column<TimeNs>("end", end.data(), n, start.data(), false, out, scratch);
      ByteCursor in(out.data(), out.size());
      const ColumnBlob s = parse_column(in, n), e = parse_column(in, n);
      std::vector<TimeNs> s2(n), e2(n);
      decode_column<TimeNs>(s, n, nullptr, s2.data());
      const DecodeStats st = decode_column<TimeNs>(e, n, s2.data(), e2.data());
      EXPECT_EQ(e2, end);
      EXPECT_TRUE(st.relative_checked);
      EXPECT_EQ(st.before_relative, c.before) << "case with " << c.start.size() << " rows, copies " << copies;
    }
  }
}

}  // namespace
}  // namespace gpuscope::store_detail
