// The reader's per-chunk row checks: decoding gathers each id column's min/max
// and whether an end came before its start, and a check walks the rows only
// when those cannot clear the chunk. Both ways must accept exactly the chunks
// TraceBuilder::freeze accepts and name the same first bad row.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "store/detail/sections.h"

namespace gpuscope::store_detail {
namespace {

// Tracks 0 and 2 on the GPU, 1 on the CPU; strings "", "a", "b".
TraceBuilder make_builder() {
  TraceBuilder b;
  b.add_track(Track{TrackKind::gpu, 0, 1, 0, 0, ""});
  b.add_track(Track{TrackKind::cpu, 0, 0, 10, 11, ""});
  b.add_track(Track{TrackKind::gpu, 0, 2, 0, 0, ""});
  b.intern("a");
  b.intern("b");
  return b;
}

// n kernels on GPU tracks 0 and 2, valid; `edit` then breaks some.
KernelTable kernels(std::size_t n) {
  KernelTable k;
  for (std::size_t i = 0; i < n; ++i) {
    k.start.push_back(1000 + static_cast<TimeNs>(i) * 10);
    k.end.push_back(k.start.back() + 5);
    k.track.push_back(i % 3 == 0 ? 2 : 0);
    k.correlation.push_back(static_cast<std::uint32_t>(i + 1));
    k.name.push_back(1 + static_cast<StringId>(i % 2));
    k.grid_x.push_back(1);
    k.grid_y.push_back(1);
    k.grid_z.push_back(1);
    k.block_x.push_back(32);
    k.block_y.push_back(1);
    k.block_z.push_back(1);
    k.registers.push_back(8);
    k.static_smem.push_back(0);
    k.dynamic_smem.push_back(0);
  }
  return k;
}

// Encodes `t` (the trace's `member` table) as one chunk and decodes it into
// `b`; returns the error ("" if accepted).
template <class Table>
std::string decode(TableId id, Table TraceTables::*member, const Table& t, TraceBuilder& b) {
  TraceTables tables;
  tables.*member = t;
  ByteWriter out;
  ColumnScratch scratch;
  encode_rows(tables, id, 0, t.size(), out, scratch);
  RowDecodeContext ctx;
  try {
    decode_rows(id, ByteCursor(out.data(), out.size()), static_cast<std::uint32_t>(t.size()), b, ctx);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

// Kernels decoded into a builder: the error, "" if accepted. The builder is
// left as it was when the chunk is refused.
std::string decode_kernels(const KernelTable& k) {
  TraceBuilder b = make_builder();
  const std::string error = decode(TableId::kernels, &TraceTables::kernels, k, b);
  if (!error.empty()) {
    EXPECT_EQ(b.tables().kernels.size(), 0u) << "a refused chunk is rolled back";
    return error;
  }
  EXPECT_EQ(b.tables().kernels.start, k.start);
  EXPECT_EQ(b.tables().kernels.end, k.end);
  EXPECT_EQ(b.tables().kernels.track, k.track);
  EXPECT_EQ(b.tables().kernels.name, k.name);
  return "";
}

TEST(GscopeRowChecks, ValidChunksPassIncludingMixedTrackKindsInTheIdRange) {
  // Tracks 0 and 2 are GPU tracks but 1 (between them) is not: min/max cannot
  // clear the chunk, the row walk does.
  for (std::size_t n : {1, 3, 1500, 5000}) EXPECT_EQ(decode_kernels(kernels(n)), "") << n;
  KernelTable one_track = kernels(2000);
  for (TrackId& t : one_track.track) t = 2;
  EXPECT_EQ(decode_kernels(one_track), "");
}

TEST(GscopeRowChecks, BadRowsAreNamedWhereverTheyAre) {
  for (std::size_t bad : {std::size_t{0}, std::size_t{1023}, std::size_t{1024}, std::size_t{2999}}) {
    SCOPED_TRACE("bad row " + std::to_string(bad));
    KernelTable k = kernels(3000);
    k.track[bad] = 3;
    EXPECT_EQ(decode_kernels(k), "kernels row " + std::to_string(bad) + " of the chunk: track id 3 out of range");
    k = kernels(3000);
    k.track[bad] = 1;
    EXPECT_EQ(decode_kernels(k),
              "kernels row " + std::to_string(bad) + " of the chunk: on a CPU track, expected a GPU track");
    k = kernels(3000);
    k.name[bad] = 3;
    EXPECT_EQ(decode_kernels(k), "kernels row " + std::to_string(bad) + " of the chunk: name string id out of range");
    k = kernels(3000);
    k.end[bad] = k.start[bad] - 1;
    EXPECT_EQ(decode_kernels(k), "kernels row " + std::to_string(bad) + " of the chunk: ends before it starts");
  }
}

TEST(GscopeRowChecks, EndBeforeStartAcrossTheInt64Wrap) {
  KernelTable k = kernels(4);
  k.start[2] = std::numeric_limits<TimeNs>::max() - 5;
  k.end[2] = std::numeric_limits<TimeNs>::min() + 5;  // end - start wraps to +11
  EXPECT_EQ(decode_kernels(k), "kernels row 2 of the chunk: ends before it starts");
  k.end[2] = std::numeric_limits<TimeNs>::max();
  EXPECT_EQ(decode_kernels(k), "");
  // Longer than a TimeNs can hold: end - start would overflow.
  k.start[2] = std::numeric_limits<TimeNs>::min() + 1;
  EXPECT_EQ(decode_kernels(k), "kernels row 2 of the chunk: lasts 2^63 ns or more");
}

TEST(GscopeRowChecks, SparseColumnsAndEnumsAreCheckedToo) {
  KernelTable k = kernels(1200);
  k.mangled.assign(1200, 0);
  k.mangled[700] = 2;
  EXPECT_EQ(decode_kernels(k), "");
  k.mangled[1100] = 9;
  EXPECT_EQ(decode_kernels(k), "kernels row 1100 of the chunk: mangled string id out of range");

  // An API call's domain is an enum: one past the last value is refused.
  TraceTables tables;
  ApiCallTable& a = tables.api_calls;
  for (std::size_t i = 0; i < 1500; ++i) {
    a.start.push_back(static_cast<TimeNs>(i));
    a.end.push_back(static_cast<TimeNs>(i) + 1);
    a.track.push_back(1);
    a.correlation.push_back(static_cast<std::uint32_t>(i + 1));
    a.name.push_back(1);
    a.domain.push_back(static_cast<std::uint8_t>(ApiDomain::other));
  }
  a.domain[1400] = static_cast<std::uint8_t>(ApiDomain::other) + 1;
  TraceBuilder b = make_builder();
  EXPECT_EQ(decode(TableId::api_calls, &TraceTables::api_calls, a, b),
            "api_calls row 1400 of the chunk: domain value out of range");
}

// Every string column is checked, the sparse ones of ranges (a framework op's
// inputs, its collective) too: an id past the string table would be read
// out of bounds by whoever shows it.
TEST(GscopeRowChecks, EveryStringColumnOfRangesIsChecked) {
  auto decode_ranges = [](const RangeTable& r) {
    TraceBuilder b = make_builder();
    return decode(TableId::ranges, &TraceTables::ranges, r, b);
  };
  RangeTable good;
  for (std::size_t i = 0; i < 1300; ++i) {
    good.start.push_back(static_cast<TimeNs>(i) * 10);
    good.end.push_back(static_cast<TimeNs>(i) * 10 + 5);
    good.track.push_back(1);
    good.name.push_back(1);
    good.domain.push_back(2);
    good.kind.push_back(0);
  }
  EXPECT_EQ(decode_ranges(good), "");
  for (std::vector<StringId> RangeTable::*column :
       {&RangeTable::name, &RangeTable::domain, &RangeTable::input_dims, &RangeTable::input_types,
        &RangeTable::concrete_inputs, &RangeTable::collective}) {
    RangeTable r = good;
    if ((r.*column).empty()) (r.*column).assign(r.size(), 0);
    (r.*column)[1250] = 2;
    EXPECT_EQ(decode_ranges(r), "");
    (r.*column)[1250] = 3;  // strings "", "a", "b": 3 is past the end
    const std::string error = decode_ranges(r);
    EXPECT_TRUE(error.starts_with("ranges row 1250 of the chunk: ") && error.ends_with(" string id out of range"))
        << error;
  }
}

}  // namespace
}  // namespace gpuscope::store_detail
