// Memory budgets for reading untrusted input (docs/robustness.md).
//
// A trace file is untrusted: a small file can declare millions of rows or
// names of gigabytes, a gzip stream can expand a thousandfold, and a stream
// (/dev/zero, a pipe) may never end. So every reader works within a budget:
// the most memory one read of one trace may take (the trace it builds and the
// buffers it builds it with). What a reader reads says how much it will need
// (the rows and string bytes a file declares, the text a stream or a
// decompressor has handed over so far, the rows built so far), and it checks
// that against the budget before it allocates, refusing with an InputError
// that names the section and the claimed size.
//
// The budget is one setting for the process: set_memory_budget() (the CLI's
// --max-memory, Python's max_memory=; GPUSCOPE_MAX_MEMORY in the
// environment), else a quarter of physical memory (the
// analysis of a loaded trace takes up to about three times the trace again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace/types.h"

namespace gpuscope {

// Physical memory of this machine in bytes; 0 when it cannot be found.
std::uint64_t physical_memory_bytes();

// A quarter of physical memory, at least 256 MiB (4 GiB when physical
// memory is unknown).
std::uint64_t default_memory_budget();

// The budget every reader uses: the last set_memory_budget(), else the
// environment's GPUSCOPE_MAX_MEMORY (read once; a size as
// parse_memory_size() reads it), else the default.
std::uint64_t memory_budget();
// 0 restores the default. Thread-safe (readers on other threads see it for
// reads they start afterwards).
void set_memory_budget(std::uint64_t bytes);

// On the calling thread, while it lives: memory_budget() is `bytes` (0:
// unchanged). For a library call given its own budget (Python's
// gpuscope.open(..., max_memory=)); the readers take the budget on the
// thread that starts the read.
class ScopedMemoryBudget {
 public:
  explicit ScopedMemoryBudget(std::uint64_t bytes);
  ~ScopedMemoryBudget();
  ScopedMemoryBudget(const ScopedMemoryBudget&) = delete;
  ScopedMemoryBudget& operator=(const ScopedMemoryBudget&) = delete;

 private:
  std::uint64_t previous_;
};

// "512M", "2G", "1.5GiB", "300MB", "65536" (bytes), "25%" (of physical
// memory). Units are binary (K = 1024). nullopt when it does not parse or is 0.
std::optional<std::uint64_t> parse_memory_size(std::string_view text);

// "512 MiB", "1.5 GiB", "300 B".
std::string memory_size_text(std::uint64_t bytes);

// Throws InputError(file, "<what> would take <bytes> in memory, over the
// memory budget of <budget> (--max-memory)") when `bytes` > `budget`.
// `what` names the section and its claim: "the contents section declares
// 20,000,000 kernels".
void check_memory_claim(const std::string& file, std::string_view what, std::uint64_t bytes,
                        std::uint64_t budget = memory_budget(), std::uint64_t offset = ~std::uint64_t{0});

// Bytes one row of `table` takes in a loaded trace (every column, stored and
// derived, at one element each), for turning a declared row count into memory.
std::uint64_t row_memory_bytes(TableId table);

// Names longer than this are cut (at a UTF-8 character boundary) when a
// reader interns them, counted under the stat "trace.truncated_names". Real
// kernel names reach a few KiB (the longest in tests/data/traces: 5,123
// characters); the analysis does work per name in proportion to its length,
// so this also bounds the time a file of long names can take.
inline constexpr std::size_t kMaxNameBytes = std::size_t{16} << 10;

// Times the model accepts: in [−2^62, 2^62) ns of the epoch (about 146 years
// either side of 1970), so that the difference of any two times — a span, a
// gap, a duration — fits in int64. Exactly the times whose top two bits are
// equal, which lets a column be checked without a branch per row. TraceBuilder::freeze() drops rows outside
// it, counted under "trace.out_of_window.<table>".
inline constexpr TimeNs kMaxPlausibleTime = TimeNs{1} << 62;
// And the durations of one table's rows add up to at most 2^59 ns (18 years
// of events): a sum over every table (nine of them) stays under 2^63. A
// trace over it is refused (TraceBuilder::freeze throws TraceError).
inline constexpr TimeNs kMaxTableDuration = TimeNs{1} << 59;
inline constexpr bool plausible_time(TimeNs t) { return t >= -kMaxPlausibleTime && t < kMaxPlausibleTime; }

}  // namespace gpuscope
