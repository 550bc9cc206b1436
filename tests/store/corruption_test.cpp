// Damaged, truncated and foreign files: the documented error, or a partial
// load that says what was lost — never a crash, a hang or garbage rows.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "store/detail/bytes.h"
#include "store/detail/format.h"
#include "store/detail/reader.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

using store_detail::list_sections;
using store_detail::read_gscope_bytes;
using store_detail::SectionInfo;
using Bytes = std::vector<std::uint8_t>;

struct Sample {
  Bytes bytes;
  std::size_t rows[kTableCount] = {};
  std::size_t total_rows = 0;
  std::multiset<std::tuple<int, TimeNs, TimeNs>> signatures;  // (table, start, end) of every row
};

std::multiset<std::tuple<int, TimeNs, TimeNs>> signatures(const Trace& t) {
  std::multiset<std::tuple<int, TimeNs, TimeNs>> s;
  t.tables().for_each_table([&](TableId id, const auto& table) {
    if constexpr (requires { table.start; })
      for (std::size_t i = 0; i < table.size(); ++i) s.emplace(static_cast<int>(id), table.start[i], table.end[i]);
    else
      for (std::size_t i = 0; i < table.size(); ++i) s.emplace(static_cast<int>(id), table.time[i], table.time[i]);
  });
  return s;
}

Sample make_sample(std::uint64_t seed, std::uint32_t rows_per_chunk, std::size_t max_rows = 60, bool compress = true) {
  testing::TempDir dir;
  testing::RandomTraceOptions o;
  o.max_rows = max_rows;
  const Trace t = testing::random_trace(seed, o);
  GscopeWriteOptions w;
  w.rows_per_chunk = rows_per_chunk;
  w.compress = compress;
  w.sync = false;
  write_gscope(t, dir.file("s.gscope"), w);
  Sample s;
  s.bytes = testing::read_bytes(dir.file("s.gscope"));
  for (int i = 0; i < kTableCount; ++i) {
    s.rows[i] = t.tables().rows(static_cast<TableId>(i));
    s.total_rows += s.rows[i];
  }
  s.signatures = signatures(t);
  return s;
}

std::size_t total_rows(const Trace& t) {
  std::size_t n = 0;
  for (int i = 0; i < kTableCount; ++i) n += t.tables().rows(static_cast<TableId>(i));
  return n;
}

// The rows of `part` are rows of the original (no garbage made it through).
void expect_subset(const Trace& part, const Sample& s) {
  auto sig = signatures(part);
  std::vector<std::tuple<int, TimeNs, TimeNs>> extra;
  std::set_difference(sig.begin(), sig.end(), s.signatures.begin(), s.signatures.end(), std::back_inserter(extra));
  EXPECT_TRUE(extra.empty()) << extra.size() << " rows that were not in the original";
}

InputError expect_input_error(const Bytes& bytes, const store_detail::ReadOptions& o = {}) {
  try {
    read_gscope_bytes(bytes, "f.gscope", nullptr, o);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.gscope");
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("", "");
}

// A load of damaged bytes: the partial trace, or nothing when the reader
// refused the file because not one row could be recovered (then the reason
// says so and names where the damage starts).
std::optional<Trace> read_damaged(const Bytes& bytes, GscopeReadReport* rep) {
  try {
    return read_gscope_bytes(bytes, "f.gscope", rep, {});
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.gscope");
    EXPECT_EQ(e.reason().rfind("nothing could be recovered: ", 0), 0u) << e.what();
    EXPECT_LE(e.offset(), bytes.size()) << e.what();
    return std::nullopt;
  }
}

// [SECTION] Foreign and damaged headers ------------------------------------------------------

TEST(GscopeCorruption, EmptyFile) {
  const InputError e = expect_input_error({});
  EXPECT_NE(e.reason().find("empty file"), std::string::npos) << e.what();
  EXPECT_EQ(e.offset(), 0u);
}

TEST(GscopeCorruption, JsonGivenAsGscope) {
  const std::string json = "  {\"traceEvents\": []}";
  const InputError e = expect_input_error(Bytes(json.begin(), json.end()));
  EXPECT_NE(e.reason().find("JSON"), std::string::npos) << e.what();
  EXPECT_EQ(e.offset(), 0u);
}

TEST(GscopeCorruption, GzipGivenAsGscope) {
  const InputError e = expect_input_error(Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3});
  EXPECT_NE(e.reason().find("gzip"), std::string::npos) << e.what();
}

TEST(GscopeCorruption, WrongMagic) {
  Sample s = make_sample(1, 16);
  s.bytes[3] ^= 0x20;
  const InputError e = expect_input_error(s.bytes);
  EXPECT_NE(e.reason().find("not a .gscope file"), std::string::npos) << e.what();
  EXPECT_EQ(e.offset(), 0u);
}

TEST(GscopeCorruption, FutureVersionIsRefusedNamingBothVersions) {
  Sample s = make_sample(2, 16);
  store_detail::store_le(s.bytes.data() + 8, store_detail::kFormatVersion + 1, 4);
  const InputError e = expect_input_error(s.bytes);
  EXPECT_NE(e.reason().find("version " + std::to_string(store_detail::kFormatVersion + 1)), std::string::npos)
      << e.what();
  EXPECT_NE(e.reason().find("version " + std::to_string(store_detail::kFormatVersion) + ")"), std::string::npos)
      << e.what();
  EXPECT_NE(e.reason().find("newer"), std::string::npos);
  EXPECT_EQ(e.offset(), 8u);
}

TEST(GscopeCorruption, FileErrorsNameTheFile) {
  testing::TempDir dir;
  try {
    read_gscope(dir.file("missing.gscope"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), dir.file("missing.gscope"));
    EXPECT_NE(e.reason().find("cannot open"), std::string::npos);
  }
  EXPECT_THROW(read_gscope(dir.path().string()), InputError);
}

// [SECTION] Every byte flipped ----------------------------------------------------------------

// Flipping any one byte is either refused (file header) or detected: the load
// is partial, says so, loses only what it reports, and has no foreign rows.
void flip_every_byte(const Sample& s) {
  const std::uint64_t hsize = store_detail::header_size(s.bytes);
  ASSERT_GT(hsize, 0u);
  for (std::size_t at = 0; at < s.bytes.size(); ++at) {
    SCOPED_TRACE("byte " + std::to_string(at));
    Bytes b = s.bytes;
    b[at] ^= static_cast<std::uint8_t>(1u << (at % 8));
    if (at < hsize) {
      expect_input_error(b);
      continue;
    }
    GscopeReadReport rep;
    const std::optional<Trace> loaded = read_damaged(b, &rep);
    if (!loaded) continue;  // refused: nothing could be recovered
    const Trace& t = *loaded;
    EXPECT_GT(total_rows(t), 0u);
    EXPECT_FALSE(rep.complete);
    EXPECT_FALSE(rep.problems.empty());
    EXPECT_GE(rep.corrupt_sections, 1u);
    EXPECT_EQ(total_rows(t) + rep.rows_lost, s.total_rows);
    EXPECT_EQ(t.meta().stat("store.corrupt_sections"), rep.corrupt_sections);
    expect_subset(t, s);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(GscopeCorruption, EveryByteFlippedCompressed) { flip_every_byte(make_sample(3, 7, 25, true)); }
TEST(GscopeCorruption, EveryByteFlippedRaw) { flip_every_byte(make_sample(4, 7, 25, false)); }

TEST(GscopeCorruption, DamagedRowChunkIsSkippedAloneWhenTheIndexIsIntact) {
  const Sample s = make_sample(5, 10, 80);
  const auto sections = list_sections(s.bytes);
  int tested = 0;
  for (const SectionInfo& sec : sections) {
    if (sec.tag < store_detail::kTagRowsBase || sec.tag >= store_detail::kTagRowsBase + kTableCount) continue;
    Bytes b = s.bytes;
    b[sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length / 2] ^= 0x55;
    GscopeReadReport rep;
    const Trace t = read_gscope_bytes(b, "f.gscope", &rep, {});
    EXPECT_EQ(rep.corrupt_sections, 1u);
    EXPECT_EQ(rep.rows_lost, sec.items);
    EXPECT_EQ(total_rows(t), s.total_rows - sec.items);
    const std::string table(to_string(static_cast<TableId>(sec.tag - store_detail::kTagRowsBase)));
    EXPECT_EQ(t.meta().stat("store.lost_rows." + table), sec.items);
    ASSERT_EQ(rep.problems.size(), 1u);
    EXPECT_NE(rep.problems[0].find("checksum mismatch"), std::string::npos) << rep.problems[0];
    EXPECT_NE(rep.problems[0].find("at byte " + std::to_string(sec.offset)), std::string::npos) << rep.problems[0];
    ++tested;
  }
  EXPECT_GT(tested, 5);
}

TEST(GscopeCorruption, DamagedStringsSectionStopsTheLoadThere) {
  const Sample s = make_sample(6, 10, 80);
  const auto sections = list_sections(s.bytes);
  const auto strings = std::find_if(sections.begin(), sections.end(),
                                    [](const SectionInfo& x) { return x.tag == store_detail::kTagStrings; });
  ASSERT_NE(strings, sections.end());
  Bytes b = s.bytes;
  b[strings->offset + store_detail::kSectionHeaderBytes] ^= 1;
  // No row can be read without the strings: the file is refused, saying where and why.
  const InputError e = expect_input_error(b);
  EXPECT_EQ(e.offset(), strings->offset);
  EXPECT_NE(e.reason().find("nothing could be recovered"), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("(strings) at byte " + std::to_string(strings->offset)), std::string::npos) << e.what();
  EXPECT_NE(e.reason().find("nothing after it was loaded"), std::string::npos) << e.what();
}

// [SECTION] Truncation -------------------------------------------------------------------------

TEST(GscopeCorruption, TruncatedAtEverySectionBoundaryAndMidSection) {
  const Sample s = make_sample(7, 9, 80);
  const auto sections = list_sections(s.bytes);
  ASSERT_GT(sections.size(), 10u);
  std::size_t rows_before = 0;
  for (const SectionInfo& sec : sections) {
    const std::uint64_t cuts[] = {sec.offset, sec.offset + 1, sec.offset + store_detail::kSectionHeaderBytes - 1,
                                  sec.offset + store_detail::kSectionHeaderBytes,
                                  sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length / 2};
    for (const std::uint64_t cut : cuts) {
      if (cut >= s.bytes.size()) continue;
      SCOPED_TRACE("cut at " + std::to_string(cut) + " in section at " + std::to_string(sec.offset));
      const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      GscopeReadReport rep;
      const std::optional<Trace> loaded = read_damaged(b, &rep);
      if (!loaded) {
        EXPECT_EQ(rows_before, 0u) << "refused although complete rows came before the cut";
        continue;
      }
      const Trace& t = *loaded;
      EXPECT_FALSE(rep.complete);
      EXPECT_EQ(total_rows(t), rows_before);
      EXPECT_EQ(rep.bytes_lost, cut - sec.offset);
      EXPECT_EQ(t.meta().stat("store.unfinished"), 1u);
      EXPECT_EQ(t.meta().stat("store.truncated_bytes"), cut - sec.offset);
      ASSERT_FALSE(rep.problems.empty());
      expect_subset(t, s);
    }
    if (sec.tag >= store_detail::kTagRowsBase && sec.tag < store_detail::kTagRowsBase + kTableCount)
      rows_before += sec.items;
  }
  EXPECT_EQ(rows_before, s.total_rows);
}

TEST(GscopeCorruption, TruncatedAtEveryByte) {
  const Sample s = make_sample(8, 5, 20);
  std::size_t last_rows = 0;
  const std::uint64_t hsize = store_detail::header_size(s.bytes);
  for (std::size_t cut = 0; cut < s.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    if (cut < hsize) {
      expect_input_error(b);
      continue;
    }
    GscopeReadReport rep;
    const std::optional<Trace> loaded = read_damaged(b, &rep);
    if (!loaded) {
      EXPECT_EQ(last_rows, 0u) << "refused after a shorter cut had loaded rows";
      continue;
    }
    EXPECT_FALSE(rep.complete);
    EXPECT_GT(total_rows(*loaded), 0u);
    EXPECT_GE(total_rows(*loaded), last_rows);
    last_rows = total_rows(*loaded);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(last_rows, s.total_rows);  // cut inside the footer: every row is there
}

TEST(GscopeCorruption, GarbageAfterAFinishedFile) {
  Sample s = make_sample(9, 16);
  s.bytes.insert(s.bytes.end(), {1, 2, 3, 4, 5});
  GscopeReadReport rep;
  const Trace t = read_gscope_bytes(s.bytes, "f.gscope", &rep, {});
  EXPECT_EQ(total_rows(t), s.total_rows);
  EXPECT_FALSE(rep.complete);
  EXPECT_FALSE(rep.problems.empty());
}

// [SECTION] Random damage with checksums off (what the fuzz target does) ---------------------

TEST(GscopeCorruption, RandomMutationsWithChecksumsOffNeverCrash) {
  std::mt19937_64 rng(1234);
  const Sample samples[] = {make_sample(10, 8, 40, false), make_sample(11, 8, 40, true)};
  store_detail::ReadOptions o;
  o.verify_checksums = false;
  o.max_raw_bytes = 64u << 20;
  int partial = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes b = samples[iter % 2].bytes;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 4) {
        case 0: b[at] = static_cast<std::uint8_t>(rng()); break;
        case 1: b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
        case 2: b[at] = rng() % 2 ? 0xff : 0; break;
        default: b.resize(at); break;
      }
      if (b.empty()) break;
    }
    try {
      GscopeReadReport rep;
      read_gscope_bytes(b, "f.gscope", &rep, o);
      ++partial;
    } catch (const InputError&) {
      ++refused;
    }
  }
  EXPECT_GT(partial, 100);
  EXPECT_GT(refused, 10);
}

}  // namespace
}  // namespace gpuscope

// [SECTION] Files built by hand from docs/format.md ---------------------------------------------

namespace gpuscope {
namespace {

using namespace store_detail;

// A header with an empty writer string (26 bytes), as the spec allows.
Bytes spec_header() {
  ByteWriter h;
  h.raw(kMagic.data(), kMagic.size());
  h.fixed(kFormatVersion, 4);
  h.fixed(26, 4);
  h.fixed(0, 2);
  h.fixed(XXH3_64bits(h.data(), h.size()), 8);
  return Bytes(h.data(), h.data() + h.size());
}

// A raw (codec 0) section per the spec's header layout.
void spec_section(Bytes& file, std::uint16_t tag, std::uint32_t items, const ByteWriter& payload) {
  std::uint8_t h[kSectionHeaderBytes] = {'G', 'S', 'E', 'C'};
  store_le(h + 4, tag, 2);
  store_le(h + 8, items, 4);
  store_le(h + 16, payload.size(), 8);
  store_le(h + 24, payload.size(), 8);
  store_le(h + 32, XXH3_64bits(payload.data(), payload.size()), 8);
  std::uint8_t checked[36];
  std::memcpy(checked, h, 12);
  std::memcpy(checked + 12, h + 16, 24);
  store_le(h + 12, XXH3_64bits(checked, sizeof checked) & 0xffffffffu, 4);
  file.insert(file.end(), h, h + sizeof h);
  file.insert(file.end(), payload.data(), payload.data() + payload.size());
}

void spec_trailer(Bytes& file, std::uint64_t footer_offset) {
  std::uint8_t t[kTrailerBytes];
  store_le(t, footer_offset, 8);
  std::memcpy(t + 8, kEndMagic.data(), 8);
  file.insert(file.end(), t, t + sizeof t);
}

TEST(GscopeSpec, HandBuiltFileReads) {
  Bytes file = spec_header();
  ByteWriter strings;  // first_id 1, two strings
  strings.varint(1);
  strings.varint(2);
  strings.varint(5);
  strings.varint(3);
  strings.raw("relu_abc", 8);
  const std::uint64_t s_at = file.size();
  spec_section(file, kTagStrings, 2, strings);
  ByteWriter tracks;
  tracks.varint(1);
  ByteWriter rec;
  rec.varint(0);
  rec.u8(0);  // GPU
  rec.varint(0);
  rec.varint(7);
  rec.varint(0);
  rec.varint(0);
  rec.str("stream 7");
  rec.u8(0xaa);  // a field from a later version: ignored
  tracks.varint(rec.size());
  tracks.raw(rec.data(), rec.size());
  const std::uint64_t t_at = file.size();
  spec_section(file, kTagTracks, 1, tracks);
  // Two kernels: start (delta), end (relative, frame of reference), track, correlation, name; the
  // rest of the kernel columns are required too.
  ByteWriter rows;
  rows.varint(2);
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> cols = {
      {"track", {0, 0}},   {"correlation", {5, 6}}, {"name", {1, 2}},        {"grid_x", {1, 1}},
      {"grid_y", {1, 1}},  {"grid_z", {1, 1}},      {"block_x", {32, 32}},   {"block_y", {1, 1}},
      {"block_z", {1, 1}}, {"registers", {8, 8}},   {"static_smem", {0, 0}}, {"dynamic_smem", {0, 0}}};
  rows.u8(static_cast<std::uint8_t>(2 + cols.size()));
  auto column = [&](std::string_view name, std::uint8_t cls, std::uint8_t mode, std::uint64_t base,
                    std::vector<std::uint8_t> plane0) {
    rows.u8(static_cast<std::uint8_t>(name.size()));
    rows.raw(name.data(), name.size());
    rows.u8(cls);
    rows.u8(8);
    rows.u8(mode);
    rows.varint(base);
    rows.u8(plane0.empty() ? 0 : 1);
    rows.raw(plane0.data(), plane0.size());
  };
  // start = 1000, 1010: delta mode, base = M(1000) = 1000 ^ 2^63, deltas zigzag(10) = 20.
  column("start", 1, kModeDelta, 1000ull ^ (1ull << 63), {0, 20});
  // end = start + 100 and start + 50: relative, frame of reference, base 50.
  column("end", 1, kModeRelativeFlag | kModeFrameOfReference, 50, {50, 0});
  for (auto& [name, v] : cols) {
    const std::uint64_t lo = std::min(v[0], v[1]);
    column(name, 0, kModeFrameOfReference, lo,
           v[0] == v[1]
               ? std::vector<std::uint8_t>{}
               : std::vector<std::uint8_t>{static_cast<std::uint8_t>(v[0] - lo), static_cast<std::uint8_t>(v[1] - lo)});
  }
  const std::uint64_t r_at = file.size();
  spec_section(file, kTagRowsBase, 2, rows);
  ByteWriter footer;
  footer.varint(3);
  footer.varint(s_at);
  footer.varint(kTagStrings);
  footer.varint(2);
  footer.varint(t_at - s_at);
  footer.varint(kTagTracks);
  footer.varint(1);
  footer.varint(r_at - t_at);
  footer.varint(kTagRowsBase);
  footer.varint(2);
  footer.varint(8);
  footer.varint(2);
  for (int i = 1; i < 8; ++i) footer.varint(0);
  footer.varint(3);
  footer.varint(1);
  footer.varint(0);
  const std::uint64_t f_at = file.size();
  spec_section(file, kTagFooter, 0, footer);
  spec_trailer(file, f_at);

  GscopeReadReport rep;
  const Trace t = read_gscope_bytes(file, "spec.gscope", &rep, {});
  EXPECT_TRUE(rep.complete) << (rep.problems.empty() ? "" : rep.problems[0]);
  EXPECT_EQ(rep.writer, "");
  ASSERT_EQ(t.kernels().size(), 2u);
  EXPECT_EQ(t.kernels().start, (std::vector<TimeNs>{1000, 1010}));
  EXPECT_EQ(t.kernels().end, (std::vector<TimeNs>{1100, 1060}));
  EXPECT_EQ(t.str(t.kernels().name[0]), "relu_");
  EXPECT_EQ(t.str(t.kernels().name[1]), "abc");
  EXPECT_EQ(t.kernels().correlation[1], 6u);
  EXPECT_EQ(t.kernels().block_x[0], 32u);
  EXPECT_EQ(t.tracks().at(0).name, "stream 7");
}

// A footer right after a short header whose index points past the end of the
// file: refused as an index, never followed.
TEST(GscopeSpec, FooterIndexPointingOutsideTheFileIsIgnored) {
  Bytes file = spec_header();
  ByteWriter footer;
  footer.varint(1);
  footer.varint(1ull << 60);  // a section "at" 2^60
  footer.varint(kTagDevices);
  footer.varint(0);
  footer.varint(8);
  for (int i = 0; i < 8; ++i) footer.varint(0);
  footer.varint(1);
  footer.varint(0);
  footer.varint(0);
  const std::uint64_t f_at = file.size();
  ASSERT_LT(f_at, kSectionHeaderBytes);
  spec_section(file, kTagFooter, 0, footer);
  spec_trailer(file, f_at);
  for (const bool verify : {true, false}) {
    ReadOptions o;
    o.verify_checksums = verify;
    GscopeReadReport rep;
    const Trace t = read_gscope_bytes(file, "spec.gscope", &rep, o);
    EXPECT_FALSE(rep.complete);
    ASSERT_FALSE(rep.problems.empty());
    EXPECT_NE(rep.problems[0].find("footer index"), std::string::npos) << rep.problems[0];
  }
}

}  // namespace
}  // namespace gpuscope
