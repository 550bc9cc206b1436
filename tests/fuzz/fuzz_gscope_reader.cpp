// libFuzzer target: the .gscope reader on arbitrary bytes.
//
// Each input is read twice: with checksums off (so mutated payloads reach the
// section decoders, the column codec and the builder) and on (the path real
// files take). The only acceptable failure is InputError; anything else —
// another exception, a sanitizer report, a hang — is a bug.
// Seeds: tests/fuzz/corpus/fuzz_gscope_reader/ (made by store_tests'
// FuzzSeeds test with GPUSCOPE_WRITE_FUZZ_SEEDS=1).
#include <cstddef>
#include <cstdint>
#include <span>

#include "store/detail/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::span<const std::uint8_t> bytes(data, size);
  for (const bool verify : {false, true}) {
    store_detail::ReadOptions options;
    options.verify_checksums = verify;
    // Inputs are a few KiB; exploring bigger expansions only makes runs slow
    // (ASan recycles every big buffer).
    options.max_raw_bytes = 1u << 20;
    // A small budget: a file declaring millions of rows is refused by its
    // claim (the run's -rss_limit_mb would catch one that is not).
    options.memory_budget = 64u << 20;
    try {
      GscopeReadReport report;
      const Trace t = store_detail::read_gscope_bytes(bytes, "fuzz.gscope", &report, options);
      // Touch what a consumer would: the per-track index and the correlation links.
      for (TrackId track = 0; track < t.tracks().size(); ++track)
        (void)t.rows_overlapping(TableId::kernels, track, t.begin_time(), t.end_time());
      for (RowIndex i = 0; i < t.kernels().size(); ++i) (void)t.launching_api(OpRef{OpTable::kernel, i});
    } catch (const InputError&) {
    }
  }
  return 0;
}
