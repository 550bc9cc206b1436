// The two-thread import (batches parsed alternately by two threads, merged in
// file order) against the one-thread import on the same input: the same trace,
// column by column and string by string, and the same error at the same byte
// offset for malformed input, through buffers small enough to put batch
// boundaries everywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "import/chrome_json.h"
#include "import/chrome_json_stream.h"
#include "support/real_traces.h"

namespace gpuscope {
namespace {

std::string write_temp(const std::string& name, const std::string& bytes) {
  // One folder per test process, removed when the process exits.
  static const struct Dir {
    std::string path = ::testing::TempDir() + "gpuscope_import_threads_" + std::to_string(::getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } dir;
  const std::string path = dir.path + "/" + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

Trace import(const std::string& path, int threads, std::size_t buffer_bytes) {
  ChromeImportOptions o;
  o.parse_threads = threads;
  o.buffer_bytes = buffer_bytes;
  return import_chrome_json(path, o);
}

// Every table column, string, track, device, process, series and meta field.
void expect_same_trace(const Trace& a, const Trace& b, const std::string& what) {
  ASSERT_EQ(a.strings().size(), b.strings().size()) << what;
  for (StringId i = 0; i < a.strings().size(); ++i)
    ASSERT_EQ(a.strings().get(i), b.strings().get(i)) << what << " string " << i;
  std::vector<std::string> a_cols, b_cols;
  auto digest = [](const Trace& t, std::vector<std::string>& out) {
    t.tables().for_each_table([&](TableId id, const auto& table) {
      table.for_each_column([&](ColumnInfo info, const auto& col) {
        using T = typename std::remove_cvref_t<decltype(col)>::value_type;
        std::vector<T> rows(col.begin(), col.end());
        if constexpr (detail::is_compact_column<std::remove_cvref_t<decltype(col)>>)
          if (col.compacted()) detail::expand_rows(table, col, 0, table.size(), rows);
        std::string s(to_string(id));
        s += "." + std::string(info.name) + ":" + std::to_string(rows.size()) + ":";
        s.append(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(T));
        out.push_back(std::move(s));
      });
    });
  };
  digest(a, a_cols);
  digest(b, b_cols);
  ASSERT_EQ(a_cols.size(), b_cols.size());
  for (std::size_t i = 0; i < a_cols.size(); ++i)
    EXPECT_TRUE(a_cols[i] == b_cols[i]) << what << " column " << a_cols[i].substr(0, a_cols[i].find(':'));
  EXPECT_EQ(a.tracks(), b.tracks()) << what;
  EXPECT_EQ(a.devices(), b.devices()) << what;
  EXPECT_EQ(a.processes(), b.processes()) << what;
  EXPECT_EQ(a.counter_series(), b.counter_series()) << what;
  EXPECT_EQ(a.meta(), b.meta()) << what;
}

// A trace that mixes everything the importer maps locally (X events with
// numeric ids, instants, flows, skips) with everything it defers to the merge
// (metadata, B/E, counters, string pids and tids, top-level values), escapes,
// so that batch boundaries fall between all of them.
std::string mixed_trace(int events, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out =
      "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n\"traceEvents\": [\n";
  std::int64_t t = 1000;
  const char* names[] = {"aten::conv2d", "aten::add_", "void k<float>(int)", "cudaLaunchKernel", "n\\u00e9", "a\\\"b"};
  for (int i = 0; i < events; ++i) {
    if (i) out += ",\n";
    t += static_cast<std::int64_t>(rng() % 50);
    const std::string ts = std::to_string(t) + (rng() % 3 ? "" : "." + std::to_string(rng() % 1000));
    const std::string name = names[rng() % 6];
    const std::string pid = rng() % 10 ? std::to_string(100 + rng() % 2) : "\"Main Process\"";
    const std::string tid = rng() % 10 ? std::to_string(200 + rng() % 3) : (rng() % 2 ? "\"stream 7\"" : "\"worker\"");
    switch (rng() % 16) {
      case 0:
      case 1:
      case 2:
        out += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name + "\", \"pid\": 0, \"tid\": " + tid +
               ", \"ts\": " + ts +
               ", \"dur\": 3, \"args\": {\"device\": 0, \"stream\": " + std::to_string(7 + rng() % 2) +
               ", \"correlation\": " + std::to_string(i) + ", \"grid\": [4, 1, 1], \"block\": [64, 1, 1]" +
               (rng() % 4 ? "" : ", \"registers per thread\": 32") + "}}";
        break;
      case 3:
      case 4:
        out += "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" + name + "\", \"pid\": " + pid +
               ", \"tid\": " + tid + ", \"ts\": " + ts +
               ", \"dur\": 2, \"args\": {\"correlation\": " + std::to_string(i) + (rng() % 3 ? "" : ", \"cbid\": 211") +
               "}}";
        break;
      case 5:
      case 6:
        out += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name + "\", \"pid\": " + pid +
               ", \"tid\": " + tid + ", \"ts\": " + ts +
               ", \"dur\": 10, \"args\": {\"External id\": " + std::to_string(i % 7) + "}}";
        break;
      case 7:
        out +=
            "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, "
            "\"tid\": 7, \"ts\": " +
            ts + ", \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, \"bytes\": 64}}";
        break;
      case 8:
        out += "{\"ph\": \"s\", \"id\": " + std::to_string(i) + ", \"pid\": 100, \"tid\": 200, \"ts\": " + ts +
               ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
        break;
      case 9:
        out += "{\"ph\": \"B\", \"name\": \"" + name + "\", \"pid\": " + pid + ", \"tid\": " + tid + ", \"ts\": " + ts +
               "}";
        break;
      case 10: out += "{\"ph\": \"E\", \"pid\": " + pid + ", \"tid\": " + tid + ", \"ts\": " + ts + "}"; break;
      case 11:
        out += "{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 100, \"ts\": " + ts +
               ", \"args\": {\"used\": " + std::to_string(rng() % 100) + ", \"fr\\u0065e\": 1.5}}";
        break;
      case 12:
        if (rng() % 2) {
          out += "{\"ph\": \"i\", \"name\": \"" + name + "\", \"pid\": 100, \"tid\": 200, \"ts\": " + ts + "}";
        } else {  // allocator events: with totals, or (2021 schema) only the change
          const bool totals = rng() % 2;
          out += "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 200, \"ts\": " + ts +
                 ", \"args\": {\"Device Type\": 1, \"Device Id\": " + std::to_string(rng() % 2) +
                 ", \"Bytes\": " + std::to_string(static_cast<int>(rng() % 2000) - 1000) +
                 ", \"Addr\": " + std::to_string(rng() % 100000) +
                 (totals ? ", \"Total Allocated\": " + std::to_string(rng() % 100000) + ", \"Total Reserved\": 99999"
                         : "") +
                 "}}";
        }
        break;
      case 13:
        out += "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + tid +
               ", \"args\": {\"name\": \"T" + std::to_string(i) + "\"}}";
        break;
      case 14:
        out += rng() % 2 ? "{\"ph\": \"X\", \"name\": \"no ts\", \"pid\": 1, \"tid\": 1, \"dur\": 1}"
                         : "{\"ph\": \"Q\", \"name\": \"odd phase\", \"ts\": 5}";
        break;
      default:
        out += "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": " + pid +
               ", \"tid\": " + tid + ", \"ts\": " + ts + ", \"dur\": 100000}";
        break;
    }
  }
  out += "\n], \"traceName\": \"mixed\", \"baseTimeNanoseconds\": 1000000000000000000}\n";
  return out;
}

TEST(ChromeJsonThreads, MixedTraceSameAsOneThreadAtEveryBufferSize) {
  const std::string path = write_temp("mixed.json", mixed_trace(3000, 7));
  const Trace ref = import(path, 1, 0);
  EXPECT_GT(ref.kernels().size(), 300u);
  EXPECT_GT(ref.ranges().size(), 300u);
  EXPECT_GT(ref.counters().size(), 100u);
  EXPECT_GT(ref.memory_events().size(), 50u);
  for (std::size_t bytes : {std::size_t{64}, std::size_t{301}, std::size_t{4096}, std::size_t{65536}}) {
    expect_same_trace(ref, import(path, 2, bytes), "two threads, buffer " + std::to_string(bytes));
    expect_same_trace(ref, import(path, 1, bytes), "one thread, buffer " + std::to_string(bytes));
  }
}

class ChromeJsonThreadsOnRealTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(ChromeJsonThreadsOnRealTrace, SameAsOneThread) {
  const std::string p = testing::real_trace(GetParam());
  const Trace one = import(p, 1, 0);
  // 1 MiB buffers: every file has several batches, so both threads parse.
  expect_same_trace(one, import(p, 2, 1u << 20), p);
}

INSTANTIATE_TEST_SUITE_P(RealTraces, ChromeJsonThreadsOnRealTrace, ::testing::ValuesIn(testing::real_trace_files()),
                         testing::TraceFileName());

// The error of importing `path`, or nullopt.
std::optional<std::string> error_of(const std::string& path, int threads, std::size_t bytes) {
  try {
    import(path, threads, bytes);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

TEST(ChromeJsonThreads, MalformedInputGivesTheSameFirstError) {
  const std::string good = mixed_trace(400, 11);
  std::mt19937_64 rng(3);
  int errors = 0;
  for (int iter = 0; iter < 60; ++iter) {
    std::string bad = good;
    // One or two corruptions: the first in file order must be the one reported.
    for (int k = 0; k < 1 + iter % 2; ++k) {
      const std::size_t at = 40 + rng() % (bad.size() - 80);
      const char* junk[] = {"#", "\\x", "\"", "}", ",,", "\x01"};
      bad.insert(at, junk[rng() % 6]);
    }
    const std::string path = write_temp("bad.json", bad);
    for (std::size_t bytes : {std::size_t{512}, std::size_t{4096}}) {
      const auto one = error_of(path, 1, bytes);
      const auto two = error_of(path, 2, bytes);
      EXPECT_EQ(one, two) << "corruption " << iter << ", buffer " << bytes;
      errors += one.has_value();
    }
  }
  EXPECT_GT(errors, 60);
}

// The splitter's AVX2 blocks against its SSE2 blocks: the same trace, and the
// same first error, with buffers small enough to put batch ends everywhere.
class SplitterWithoutAvx2 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!detail::allow_splitter_avx2(true)) GTEST_SKIP() << "no AVX2 on this processor: the splitter has one path";
  }
  void TearDown() override { detail::allow_splitter_avx2(true); }
  static Trace import_sse2(const std::string& path, int threads, std::size_t bytes) {
    detail::allow_splitter_avx2(false);
    Trace t = import(path, threads, bytes);
    detail::allow_splitter_avx2(true);
    return t;
  }
};

TEST_F(SplitterWithoutAvx2, SameTraceAsWithAvx2) {
  const std::string path = write_temp("mixed_simd.json", mixed_trace(3000, 5));
  for (std::size_t bytes : {std::size_t{64}, std::size_t{301}, std::size_t{65536}})
    expect_same_trace(import(path, 1, bytes), import_sse2(path, 1, bytes), "buffer " + std::to_string(bytes));
  for (const std::string& file : testing::real_trace_files()) {
    if (!file.ends_with(".json.gz") && !file.ends_with(".json")) continue;
    const std::string p = testing::real_trace(file);
    expect_same_trace(import(p, 2, 1u << 20), import_sse2(p, 2, 1u << 20), p);
  }
}

TEST_F(SplitterWithoutAvx2, SameFirstErrorAsWithAvx2) {
  const std::string good = mixed_trace(400, 13);
  std::mt19937_64 rng(5);
  int errors = 0;
  for (int iter = 0; iter < 80; ++iter) {
    std::string bad = good;
    const std::size_t at = 40 + rng() % (bad.size() - 80);
    const char* junk[] = {"\"", "}", "]", "{", "[", "\\", "\\\"", "\x01"};
    bad.insert(at, junk[rng() % 8]);
    const std::string path = write_temp("bad_simd.json", bad);
    std::optional<std::string> sse2;
    detail::allow_splitter_avx2(false);
    sse2 = error_of(path, 1, 512);
    detail::allow_splitter_avx2(true);
    EXPECT_EQ(error_of(path, 1, 512), sse2) << "corruption " << iter;
    errors += sse2.has_value();
  }
  EXPECT_GT(errors, 40);
}

}  // namespace
}  // namespace gpuscope
