// Internal entry points of the .gscope reader, for tests and the fuzz target.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store/gscope.h"

namespace gpuscope::store_detail {

struct ReadOptions {
  // The fuzz target turns checksums off so that mutated payloads reach the
  // decoders; every other caller keeps them on.
  bool verify_checksums = true;
  // Upper bound on the decompressed bytes of the whole file; exceeding it is
  // a corrupt section. Defaults to no bound (zstd bounds expansion per frame).
  std::uint64_t max_raw_bytes = ~std::uint64_t{0};
  // The memory the load may take (trace/budget.h); 0: memory_budget().
  std::uint64_t memory_budget = 0;
};

// read_gscope on bytes in memory; `name` is the file named in errors.
Trace read_gscope_bytes(std::span<const std::uint8_t> bytes, const std::string& name, GscopeReadReport* report,
                        const ReadOptions& options, const LoadProgress& progress = {});

struct SectionInfo {
  std::uint64_t offset = 0;
  std::uint16_t tag = 0;
  std::uint8_t codec = 0;
  std::uint32_t items = 0;
  std::uint64_t raw_length = 0, stored_length = 0;
};

// The sections of a well-formed prefix, in file order (stops at the first
// header that does not parse). The footer section is included.
std::vector<SectionInfo> list_sections(std::span<const std::uint8_t> bytes);
std::uint64_t header_size(std::span<const std::uint8_t> bytes);  // 0 if the header does not parse

}  // namespace gpuscope::store_detail
