// The real traces cut short at many offsets, compressed and as plain JSON:
// each cut either loads the events complete before it and says where the
// file stopped, or — when no event is complete — fails saying it was cut.
// Never silent, never a crash; a longer cut never keeps fewer rows.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "import/chrome_json.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string gunzip(const std::string& gz) {
  // ISIZE, the last 4 bytes: the size of the text (the test traces are far below 4 GiB).
  const auto* p = reinterpret_cast<const unsigned char*>(gz.data() + gz.size() - 4);
  const std::size_t size = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::size_t>(p[3]) << 24);
  std::string out(size, '\0');
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::size_t got = 0;
  const libdeflate_result r = libdeflate_gzip_decompress(d, gz.data(), gz.size(), out.data(), out.size(), &got);
  libdeflate_free_decompressor(d);
  EXPECT_EQ(r, LIBDEFLATE_SUCCESS);
  out.resize(got);
  return out;
}

std::uint64_t total_rows(const Trace& t) {
  std::uint64_t n = 0;
  for (int i = 0; i < kTableCount; ++i) n += t.tables().rows(static_cast<TableId>(i));
  return n;
}

class CutRealTrace : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("gpuscope-cut-" + std::to_string(::getpid()) + "-" + testing::trace_test_name(GetParam()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Imports `bytes[0, n)` as `name`; checks what it says; returns its rows (0 when refused).
  std::uint64_t import_cut(const std::string& bytes, std::size_t n, const std::string& name,
                           const std::string& expected_problem, std::uint64_t whole_rows, std::uint64_t last_rows) {
    SCOPED_TRACE(name + " cut at " + std::to_string(n) + " of " + std::to_string(bytes.size()));
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
    Trace t;
    try {
      t = import_chrome_json(path);
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(e.reason().find("truncated"), std::string::npos) << e.what();
      EXPECT_EQ(last_rows, 0u) << "refused after a shorter cut had loaded: " << e.what();
      return 0;
    }
    const FileDamage& d = t.meta().damage;
    EXPECT_TRUE(d.truncated);
    EXPECT_EQ(d.file_bytes, n);
    EXPECT_LE(d.intact_bytes, n);
    EXPECT_FALSE(d.problems.empty());
    if (!d.problems.empty()) {
      EXPECT_NE(d.problems[0].find(expected_problem + std::to_string(n)), std::string::npos) << d.problems[0];
    }
    const std::uint64_t rows = total_rows(t);
    EXPECT_GT(rows, 0u);
    EXPECT_LE(rows, whole_rows);
    EXPECT_GE(rows, last_rows);
    for (int i = 0; i < kTableCount; ++i) {
      EXPECT_EQ(d.tables[i].loaded, t.tables().rows(static_cast<TableId>(i)));
    }
    return rows;
  }

  std::filesystem::path dir_;
};

TEST_P(CutRealTrace, CompressedAndPlainAtManyOffsets) {
  const std::string gz = read_all(testing::real_trace(GetParam()));
  const Trace whole = import_chrome_json(testing::real_trace(GetParam()));
  ASSERT_FALSE(whole.meta().damage.any());
  const std::uint64_t whole_rows = total_rows(whole);

  std::uint64_t last = 0;
  for (int i = 1; i < 16; ++i) {
    const std::size_t n = gz.size() * static_cast<std::size_t>(i) / 16;
    last = import_cut(gz, n, "cut.json.gz", "the gzip stream ends early, at byte ", whole_rows, last);
    if (::testing::Test::HasFailure()) return;
  }
  // Only the gzip trailer (checksum, size) missing: every row is there.
  EXPECT_EQ(import_cut(gz, gz.size() - 8, "cut.json.gz", "the gzip stream ends early, at byte ", whole_rows, last),
            whole_rows);
  EXPECT_GT(last, 0u);

  const std::string text = gunzip(gz);
  last = 0;
  for (int i = 1; i < 16; ++i) {
    const std::size_t n = text.size() * static_cast<std::size_t>(i) / 16;
    last = import_cut(text, n, "cut.json", "the JSON text ends early, at byte ", whole_rows, last);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(last, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, CutRealTrace, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

}  // namespace
}  // namespace gpuscope
