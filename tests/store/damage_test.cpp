// What a damaged file says it lost: files cut at many offsets (in every
// section, the index, the header) and bits flipped at random, on a
// multi-GPU synthetic trace and on the real traces. Each case either loads
// its intact prefix and says exactly what was lost (meta().damage: the data
// whose sentences tests/words/damage_text_test.cpp checks), or is refused
// with a reason — never silent.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "import/chrome_json.h"
#include "import/synthetic.h"
#include "store/detail/format.h"
#include "store/detail/reader.h"
#include "store/gscope.h"
#include "store/test_files.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

using Bytes = std::vector<std::uint8_t>;
using store_detail::list_sections;
using store_detail::read_gscope_bytes;
using store_detail::SectionInfo;

struct Sample {
  Bytes bytes;
  std::uint64_t rows[kTableCount] = {};
};

Sample write_sample(const Trace& t, std::uint32_t rows_per_chunk) {
  testing::TempDir dir;
  GscopeWriteOptions w;
  w.rows_per_chunk = rows_per_chunk;
  w.sync = false;
  write_gscope(t, dir.file("s.gscope"), w);
  Sample s;
  s.bytes = testing::read_bytes(dir.file("s.gscope"));
  for (int i = 0; i < kTableCount; ++i) s.rows[i] = t.tables().rows(static_cast<TableId>(i));
  return s;
}

const Sample& four_gpus() {
  static const Sample s = [] {
    SyntheticOptions o;
    o.kernels = 6000;
    o.gpus = 4;
    return write_sample(make_synthetic_trace(o), 512);
  }();
  return s;
}

bool is_row_chunk(const SectionInfo& s) {
  return s.tag >= store_detail::kTagRowsBase && s.tag < store_detail::kTagRowsBase + kTableCount;
}

// A load of damaged bytes: either refused with a reason, or a trace whose
// damage is stated, whose every table adds up (loaded + lost = the
// original, when the count is exact), and whose cut is placed at the file's end.
// Returns whether it loaded.
bool check_load(const Bytes& b, const Sample& s, bool expect_exact) {
  GscopeReadReport rep;
  Trace t;
  try {
    t = read_gscope_bytes(b, "f.gscope", &rep, {});
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.gscope");
    EXPECT_FALSE(e.reason().empty());
    return false;
  }
  const FileDamage& d = t.meta().damage;
  EXPECT_TRUE(d.any()) << "a damaged file loaded without saying so";
  EXPECT_FALSE(d.problems.empty());
  EXPECT_EQ(d.rows_lost(), rep.rows_lost);
  std::uint64_t loaded = 0;
  for (int i = 0; i < kTableCount; ++i) {
    const TableLoss& l = d.tables[i];
    SCOPED_TRACE(std::string(to_string(static_cast<TableId>(i))));
    EXPECT_EQ(l.loaded, t.tables().rows(static_cast<TableId>(i)));
    loaded += l.loaded;
    if (expect_exact) {
      EXPECT_EQ(l.count, LossCount::exact);
      EXPECT_EQ(l.loaded + l.lost, s.rows[i]);
    } else {
      EXPECT_LE(l.loaded + (l.count == LossCount::estimate ? 0 : l.lost), s.rows[i]);
    }
  }
  EXPECT_GT(loaded, 0u) << "a load that kept no row must be refused";
  if (d.truncated) {
    EXPECT_EQ(d.file_bytes, b.size());
  }
  return true;
}

// [SECTION] Cuts ---------------------------------------------------------------------------------

TEST(GscopeDamage, CutInEverySectionSaysExactlyWhatWasLost) {
  const Sample& s = four_gpus();
  const auto sections = list_sections(s.bytes);
  ASSERT_GT(sections.size(), 30u);
  const std::uint64_t hsize = store_detail::header_size(s.bytes);
  std::uint64_t first_rows_end = 0;  // the end of the first row chunk: the first cut that can keep a row
  for (const SectionInfo& sec : sections)
    if (is_row_chunk(sec) && !first_rows_end)
      first_rows_end = sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length;
  int loaded = 0, refused = 0;
  for (const SectionInfo& sec : sections) {
    const std::uint64_t end = sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length;
    for (const std::uint64_t cut : {sec.offset, sec.offset + 3, sec.offset + store_detail::kSectionHeaderBytes - 1,
                                    sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length / 2, end - 1}) {
      if (cut <= hsize || cut >= s.bytes.size()) continue;
      SCOPED_TRACE("cut at " + std::to_string(cut) + " in section at " + std::to_string(sec.offset));
      const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      if (check_load(b, s, true)) {
        ++loaded;
        EXPECT_GE(cut, first_rows_end);
      } else {
        ++refused;
        EXPECT_LT(cut, first_rows_end) << "refused although a row chunk was complete";
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(loaded, 100);
  EXPECT_GT(refused, 5);
}

TEST(GscopeDamage, CoverageNamesTheGpusWithoutData) {
  const Sample& s = four_gpus();
  // Kernels are stored by track, GPU by GPU: a cut inside the kernels keeps
  // the first GPUs and loses the others.
  const auto sections = list_sections(s.bytes);
  const auto kernels = std::find_if(sections.begin(), sections.end(), [](const SectionInfo& x) {
    return x.tag == store_detail::kTagRowsBase + static_cast<int>(TableId::kernels);
  });
  ASSERT_NE(kernels, sections.end());
  const std::uint64_t cut = kernels->offset + store_detail::kSectionHeaderBytes + kernels->stored_length + 10;
  const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
  const Trace t = read_gscope_bytes(b, "f.gscope", nullptr, {});
  const FileDamage& d = t.meta().damage;
  ASSERT_TRUE(d.truncated);
  EXPECT_EQ(d.file_bytes, cut);
  const TableLoss& k = d.tables[static_cast<int>(TableId::kernels)];
  EXPECT_EQ(k.loaded, kernels->items);
  EXPECT_EQ(k.lost, s.rows[static_cast<int>(TableId::kernels)] - kernels->items);
  EXPECT_EQ(k.count, LossCount::exact);
  const DeviceCoverage c = device_coverage(t);
  EXPECT_EQ(c.declared, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(c.with_data, (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(c.without_data(), (std::vector<std::uint32_t>{1, 2, 3}));
  // Nothing of it is called a recording loss.
  for (const auto& [key, value] : t.meta().stats) EXPECT_EQ(key.find("capture."), std::string::npos) << key;
}

TEST(GscopeDamage, CutInsideTheFooterLosesNothing) {
  const Sample& s = four_gpus();
  const std::uint64_t footer = list_sections(s.bytes).back().offset;
  for (const std::uint64_t cut : {footer, footer + 1, footer + 45, std::uint64_t(s.bytes.size() - 1)}) {
    const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const Trace t = read_gscope_bytes(b, "f.gscope", nullptr, {});
    const FileDamage& d = t.meta().damage;
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(s.bytes.size()) + ": " +
                 (d.problems.empty() ? std::string() : d.problems[0]));
    EXPECT_TRUE(d.truncated);
    EXPECT_EQ(d.rows_lost(), 0u);
    const TableLoss& k = d.tables[static_cast<int>(TableId::kernels)];
    EXPECT_EQ(k.loaded, s.rows[0]);
    EXPECT_EQ(k.count, LossCount::exact);
  }
}

TEST(GscopeDamage, CutInTheFirstSectionsIsRefusedNamingTheByte) {
  const Sample& s = four_gpus();
  const auto sections = list_sections(s.bytes);
  ASSERT_EQ(sections[0].tag, store_detail::kTagContents);
  ASSERT_EQ(sections[1].tag, store_detail::kTagStrings);
  const std::uint64_t cut = sections[1].offset + store_detail::kSectionHeaderBytes + 5;
  const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
  try {
    read_gscope_bytes(b, "f.gscope", nullptr, {});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), sections[1].offset);
    EXPECT_NE(e.reason().find("nothing could be recovered"), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("(strings) at byte " + std::to_string(sections[1].offset)), std::string::npos)
        << e.what();
    EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.what();
  }
}

// [SECTION] Files without the totals (written live) ----------------------------------------------

Bytes appended_file(const Trace& t, std::uint32_t rows_per_chunk, bool finish) {
  testing::TempDir dir;
  GscopeWriteOptions w;
  w.rows_per_chunk = rows_per_chunk;
  w.sync = false;
  {
    auto app = GscopeAppender::open(dir.file("a.gscope"), w);
    TraceBuilder b;
    for (const Device& d : t.devices()) b.add_device(d);
    for (const Track& tr : t.tracks()) b.add_track(tr);
    for (StringId id = 1; id < t.strings().size(); ++id) b.intern(t.str(id));
    const KernelTable& k = t.kernels();
    for (std::size_t i = 0; i < k.size(); ++i) {
      KernelRow r;
      r.start = k.start[i];
      r.end = k.end[i];
      r.track = k.track_at(i);
      r.name = k.name[i];
      r.grid_x = r.block_x = 1;
      b.add_kernel(r);
    }
    app->append(b);
    if (finish) app->finish();
  }
  return testing::read_bytes(dir.file("a.gscope"));
}

TEST(GscopeDamage, CutWithoutTotalsCountsALowerBound) {
  SyntheticOptions o;
  o.kernels = 3000;
  o.gpus = 2;
  const Trace t = make_synthetic_trace(o);
  Sample s;
  s.bytes = appended_file(t, 256, false);
  s.rows[0] = t.kernels().size();
  const auto sections = list_sections(s.bytes);
  int tested = 0;
  for (const SectionInfo& sec : sections) {
    if (!is_row_chunk(sec) || sec.offset == sections.back().offset) continue;
    const std::uint64_t cut = sec.offset + store_detail::kSectionHeaderBytes + sec.stored_length / 2;
    const Bytes b(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    GscopeReadReport rep;
    Trace part;
    try {
      part = read_gscope_bytes(b, "f.gscope", &rep, {});
    } catch (const InputError& e) {
      EXPECT_NE(e.reason().find("nothing could be recovered"), std::string::npos);
      continue;
    }
    const TableLoss& k = part.meta().damage.tables[0];
    EXPECT_EQ(k.count, LossCount::at_least);
    EXPECT_EQ(k.lost, sec.items);  // the cut section's header says how many it held
    EXPECT_LT(k.loaded + k.lost, s.rows[0] + 1);
    ++tested;
  }
  EXPECT_GT(tested, 5);
}

TEST(GscopeDamage, DamagedHeaderWithoutIndexIsSteppedOver) {
  SyntheticOptions o;
  o.kernels = 3000;
  o.gpus = 2;
  const Trace t = make_synthetic_trace(o);
  const Bytes file = appended_file(t, 256, false);  // unfinished: no footer, no index
  const auto sections = list_sections(file);
  std::vector<SectionInfo> chunks;
  for (const SectionInfo& sec : sections)
    if (is_row_chunk(sec)) chunks.push_back(sec);
  ASSERT_GT(chunks.size(), 6u);
  const SectionInfo& victim = chunks[chunks.size() / 2];
  Bytes b = file;
  b[victim.offset + 20] ^= 0x10;  // raw length: the header check fails, tag and items still read
  GscopeReadReport rep;
  const Trace part = read_gscope_bytes(b, "f.gscope", &rep, {});
  EXPECT_EQ(part.kernels().size(), t.kernels().size() - victim.items);
  const TableLoss& k = part.meta().damage.tables[0];
  EXPECT_EQ(k.lost, victim.items);
  EXPECT_EQ(k.count, LossCount::estimate);
  bool said = false;
  for (const std::string& p : part.meta().damage.problems)
    said = said || p.find("to the next intact section at byte " +
                          std::to_string(victim.offset + store_detail::kSectionHeaderBytes + victim.stored_length)) !=
                       std::string::npos;
  EXPECT_TRUE(said);
}

// [SECTION] Bit flips ------------------------------------------------------------------------------

TEST(GscopeDamage, RandomBitFlipsAreNeverSilent) {
  const Sample& s = four_gpus();
  std::mt19937_64 rng(77);
  int loaded = 0, refused = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Bytes b = s.bytes;
    const std::size_t at = rng() % b.size();
    b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    SCOPED_TRACE("bit flipped in byte " + std::to_string(at));
    // A finished file has its index, or its contents section when the index
    // is hit: every loss is exact.
    (check_load(b, s, true) ? loaded : refused)++;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(loaded, 300);
}

// [SECTION] A damaged file saved again ---------------------------------------------------------

TEST(GscopeDamage, DamageIsKeptWhenTheTraceIsSavedAgain) {
  const Sample& s = four_gpus();
  const Bytes cut(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(s.bytes.size() * 2 / 3));
  const Trace part = read_gscope_bytes(cut, "cut.gscope", nullptr, {});
  ASSERT_TRUE(part.meta().damage.any());
  const Sample again = write_sample(part, 512);
  GscopeReadReport rep;
  const Trace back = read_gscope_bytes(again.bytes, "again.gscope", &rep, {});
  EXPECT_TRUE(rep.complete);                          // the new file itself is intact …
  EXPECT_EQ(back.meta().damage, part.meta().damage);  // … and still says what its source lost
  // Cut the saved file too: both losses are said, the earlier one first.
  const Bytes cut2(again.bytes.begin(), again.bytes.begin() + static_cast<std::ptrdiff_t>(again.bytes.size() / 2));
  const Trace both = read_gscope_bytes(cut2, "cut2.gscope", nullptr, {});
  const FileDamage& d = both.meta().damage;
  ASSERT_GE(d.problems.size(), 2u);
  EXPECT_EQ(d.problems.front().rfind("before it was saved: ", 0), 0u) << d.problems.front();
  EXPECT_EQ(d.tables[0].loaded + d.tables[0].lost, s.rows[0]);
}

// [SECTION] The real traces --------------------------------------------------------------------

class GscopeDamageReal : public ::testing::TestWithParam<std::string> {};

TEST_P(GscopeDamageReal, CutAndFlipped) {
  const Sample s = write_sample(import_chrome_json(testing::real_trace(GetParam())), 4096);
  for (int i = 1; i < 20; ++i) {
    const std::size_t cut = s.bytes.size() * static_cast<std::size_t>(i) / 20;
    SCOPED_TRACE("cut at " + std::to_string(cut));
    check_load(Bytes(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(cut)), s, true);
  }
  std::mt19937_64 rng(5);
  for (int i = 0; i < 30; ++i) {
    Bytes b = s.bytes;
    const std::size_t at = rng() % b.size();
    b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    SCOPED_TRACE("bit flipped in byte " + std::to_string(at));
    check_load(b, s, true);
  }
}

INSTANTIATE_TEST_SUITE_P(RealTraces, GscopeDamageReal, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope
