// trace/budget.h and what the model does with hostile values: memory sizes,
// claims over the budget, names cut at the stated limit (and counted), times
// outside the plausible window dropped (and counted), regular expressions
// that cannot overflow the stack.
#include "trace/budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "trace/builder.h"
#include "trace/error.h"
#include "trace/name_pattern.h"

namespace gpuscope {
namespace {

TEST(MemoryBudget, SizesParseWithBinaryUnits) {
  EXPECT_EQ(parse_memory_size("512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_memory_size("2G"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_memory_size("1.5GiB"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_memory_size("300mb"), std::uint64_t{300} << 20);
  EXPECT_EQ(parse_memory_size("65536"), 65536u);
  EXPECT_EQ(parse_memory_size(" 64 K "), 65536u);
  EXPECT_GT(parse_memory_size("25%").value_or(0), 0u);
  for (const char* bad : {"", "0", "-1G", "G", "12X", "1.2.3M", "nan", "200%", "99999999999T"})
    EXPECT_FALSE(parse_memory_size(bad).has_value()) << bad;
  EXPECT_EQ(memory_size_text(512u << 20), "512 MiB");
  EXPECT_EQ(memory_size_text(std::uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(memory_size_text(300), "300 B");
}

TEST(MemoryBudget, TheProcessSettingWinsAndZeroRestoresTheDefault) {
  EXPECT_GE(default_memory_budget(), std::uint64_t{256} << 20);
  set_memory_budget(12345);
  EXPECT_EQ(memory_budget(), 12345u);
  set_memory_budget(0);
  EXPECT_GE(memory_budget(), std::uint64_t{256} << 20);
}

TEST(MemoryBudget, AClaimOverTheBudgetNamesWhatAndHowMuch) {
  EXPECT_NO_THROW(check_memory_claim("t.gscope", "x", 100, 100));
  try {
    check_memory_claim("t.gscope", "the contents section declares 20000000 rows", 2u << 30, 256u << 20, 40);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.gscope");
    EXPECT_EQ(e.offset(), 40u);
    EXPECT_NE(e.reason().find("the contents section declares 20000000 rows (2 GiB in memory), over the memory "
                              "budget of 256 MiB (--max-memory; 2,147,483,648 > 268,435,456 bytes)"),
              std::string::npos)
        << e.reason();
  }
  for (const auto& [bytes, said] : {std::pair<std::uint64_t, const char*>{1'000, "1,000 > 999 bytes"},
                                    {123'456, "123,456 > 999 bytes"},
                                    {1'234'567, "1,234,567 > 999 bytes"}}) {
    try {
      check_memory_claim("t.gscope", "x", bytes, 999);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(e.reason().find(said), std::string::npos) << e.reason();
    }
  }
  for (int t = 0; t < kTableCount; ++t) EXPECT_GE(row_memory_bytes(static_cast<TableId>(t)), 16u);
}

TEST(NameLimit, LongNamesAreCutAtACharacterBoundaryAndCountedOnce) {
  StringTable t;
  t.limit_length(10);
  EXPECT_EQ(t.get(t.intern("short")), "short");
  const StringId a = t.intern("0123456789abcdef");
  EXPECT_EQ(t.get(a), "0123456789");
  EXPECT_EQ(t.intern("0123456789abcdef"), a);  // the same name again: the same id, counted once
  EXPECT_EQ(t.find("0123456789xyz"), a);
  EXPECT_EQ(t.truncated(), 1u);
  // "é" is two bytes (c3 a9): a cut inside it backs off to before it.
  EXPECT_EQ(t.get(t.intern("012345678\xc3\xa9tail")), "012345678");
  EXPECT_EQ(t.truncated(), 2u);
  // Bulk appends (the .gscope reader) cut too, each string its own id.
  const std::vector<std::uint64_t> lengths = {12, 12, 2};
  ASSERT_TRUE(t.append_raw("aaaaaaaaaaaabbbbbbbbbbbbcc", lengths));
  EXPECT_EQ(t.get(t.size() - 3), "aaaaaaaaaa");
  EXPECT_EQ(t.get(t.size() - 2), "bbbbbbbbbb");
  EXPECT_EQ(t.get(t.size() - 1), "cc");
  EXPECT_EQ(t.truncated(), 4u);
}

TEST(NameLimit, ABuilderWithALimitSaysHowManyNamesItCut) {
  TraceBuilder b;
  b.limit_names(kMaxNameBytes);
  const std::string long_name(kMaxNameBytes + 1000, 'k');
  KernelRow k;
  k.track = b.gpu_track(0, 7);
  k.end = 10;
  k.name = b.intern(long_name);
  b.add_kernel(k);
  const Trace t = b.freeze();
  EXPECT_EQ(t.str(t.kernels().name[0]).size(), kMaxNameBytes);
  EXPECT_EQ(t.meta().stat("trace.truncated_names"), 1u);
  // Without a limit (traces built in code) nothing is cut.
  TraceBuilder plain;
  EXPECT_EQ(plain.strings().get(plain.intern(long_name)).size(), long_name.size());
}

// Two kernels at ±9e18 ns (±9e15 µs) made a span of -446744073.7 s: rows
// outside ±2^62 ns are dropped and counted, so no span or gap can overflow.
TEST(TimeWindow, RowsOutsideThePlausibleWindowAreDroppedAndCounted) {
  TraceBuilder b;
  const TrackId gpu = b.gpu_track(0, 7);
  for (const TimeNs start : {TimeNs{9'000'000'000'000'000'000}, TimeNs{-9'000'000'000'000'000'000}, TimeNs{1000}}) {
    KernelRow k;
    k.track = gpu;
    k.start = start;
    k.end = start + 5;
    k.name = b.intern("k");
    b.add_kernel(k);
  }
  CounterRow c;
  c.series = b.counter_series("power");
  c.time = kMaxPlausibleTime;
  b.add_counter(c);
  const Trace t = b.freeze();
  ASSERT_EQ(t.kernels().size(), 1u);
  EXPECT_EQ(t.kernels().start[0], 1000);
  EXPECT_EQ(t.counters().size(), 0u);
  EXPECT_EQ(t.meta().stat("trace.out_of_window.kernels"), 2u);
  EXPECT_EQ(t.meta().stat("trace.out_of_window.counters"), 1u);
  EXPECT_GE(t.end_time() - t.begin_time(), 0);
  EXPECT_TRUE(plausible_time(kMaxPlausibleTime - 1));
  EXPECT_TRUE(plausible_time(-kMaxPlausibleTime));
  EXPECT_FALSE(plausible_time(-kMaxPlausibleTime - 1));
  EXPECT_FALSE(plausible_time(kMaxPlausibleTime));
}

// std::regex recursed once per character: a 50,000-character name overflowed
// the stack. RE2 does not recurse.
TEST(NamePatterns, AFiftyThousandCharacterNameIsMatchedWithoutRecursion) {
  const std::string name = std::string(50'000, 'x') + "gemm_kernel";
  EXPECT_TRUE(NamePattern(".*gemm").search(name));
  EXPECT_TRUE(NamePattern("(x|y)*gemm").search(name));
  EXPECT_FALSE(NamePattern("^gemm").search(name));
  EXPECT_TRUE(NamePattern("GEMM", /*ignore_case=*/true).search(name));
  EXPECT_FALSE(NamePattern("GEMM").search(name));
}

TEST(NamePatterns, ABadPatternSaysWhatAndWhere) {
  for (const auto& [pattern, position] :
       std::vector<std::pair<std::string, std::size_t>>{{"[", 0}, {"ab(c", 2}, {"x**", 1}, {"a\\", 1}}) {
    try {
      (void)NamePattern(pattern);
      ADD_FAILURE() << pattern << " compiled";
    } catch (const PatternError& e) {
      EXPECT_EQ(e.position(), position) << pattern << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("(at character " + std::to_string(position + 1) + ")"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace gpuscope
