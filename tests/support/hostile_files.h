// Hostile input built in code (docs/robustness.md): small files that declare
// or expand to far more than they hold. Shared by the store, import and CLI
// tests; `GPUSCOPE_HOSTILE_DIR=DIR build/tests/cli_tests
// --gtest_filter='Hostile*'` leaves a copy of each in DIR to reproduce the
// measurements by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuscope::testing {

// A .gscope of `kernels` identical kernels (one GPU stream, all at time 0),
// appended 65,536 at a time: about 3 KiB on disk per million kernels, each
// kernel ~100 bytes once loaded. `finish` false: no footer (the reader
// walks the sections without an index, as for a killed capture).
void write_identical_kernels_gscope(const std::string& path, std::uint64_t kernels, bool finish = true);

// A .gscope of `names` kernels, each with its own name of `length` bytes
// ("k<number>" padded with 'x').
void write_long_names_gscope(const std::string& path, std::size_t names, std::size_t length);

// A gzip-compressed Chrome trace of `events` identical kernel events:
// ~100 bytes of JSON each, compressed about a thousandfold.
void write_kernel_events_json_gz(const std::string& path, std::uint64_t events);

// Where a test leaves a copy of its hostile files: GPUSCOPE_HOSTILE_DIR, else empty.
std::string hostile_copy_dir();

}  // namespace gpuscope::testing
