// Payload encoders and decoders of every .gscope section kind (docs/format.md,
// "Sections"). Encoders append to a ByteWriter; decoders apply what they read
// to a TraceBuilder and throw FormatError for anything malformed, leaving the
// builder as it was for row chunks (a bad chunk is rolled back whole).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store/detail/bytes.h"
#include "store/detail/format.h"
#include "trace/builder.h"
#include "trace/fresh_memory.h"
#include "trace/trace.h"

namespace gpuscope::store_detail {

// [SECTION] Memory

// Fresh-memory hints (trace/fresh_memory.h): huge pages for the big
// columns a load reserves, and populate() for the rows of a chunk before they
// are decoded into it.
using gpuscope::detail::advise_huge_pages;
using gpuscope::detail::populate;

template <class T>
void reserve_column(std::vector<T>& col, std::size_t n) {
  col.reserve(n);
  advise_huge_pages(col.data(), col.capacity() * sizeof(T));
}

// [SECTION] Metadata sections

// Strings [first, end) of `table` (first >= 1: id 0 is always "").
void encode_strings(const StringTable& table, StringId first, StringId end, ByteWriter& out);
void decode_strings(ByteCursor in, TraceBuilder& b);

// Track records; each names its id. An id equal to the builder's track count
// adds a track, a smaller one renames that track (its identity must match).
void encode_tracks(std::span<const Track> tracks, std::span<const TrackId> ids, ByteWriter& out);
void decode_tracks(ByteCursor in, TraceBuilder& b);

void encode_devices(std::span<const Device> devices, ByteWriter& out);
void decode_devices(ByteCursor in, TraceBuilder& b);

void encode_processes(std::span<const Process> processes, ByteWriter& out);
void decode_processes(ByteCursor in, TraceBuilder& b);

// Counter series [first, end).
void encode_counter_series(std::span<const CounterSeries> all, std::uint32_t first, std::uint32_t end, ByteWriter& out);
void decode_counter_series(ByteCursor in, TraceBuilder& b);

void encode_meta(const TraceMeta& meta, ByteWriter& out);
void decode_meta(ByteCursor in, TraceBuilder& b);

// What a whole file holds, written first by write_gscope, so that a file cut
// short still says how much it had (the footer says the same at the end).
struct Contents {
  std::uint64_t table_rows[kTableCount] = {};
  std::uint64_t strings = 0, tracks = 0, counter_series = 0;
};
void encode_contents(const Contents& contents, ByteWriter& out);
Contents decode_contents(ByteCursor in);

// [SECTION] Row chunks

// Reused by the writer's column encoder (one value per row of a chunk).
struct ColumnScratch {
  std::vector<std::uint64_t> values;
};

// Rows [begin, begin + n) of table `id`.
void encode_rows(const TraceTables& tables, TableId id, std::size_t begin, std::size_t n, ByteWriter& out,
                 ColumnScratch& scratch);

struct RowDecodeContext {
  std::uint64_t reserve_rows[kTableCount] = {};  // expected totals (from the footer), 0 if unknown
  std::uint64_t unknown_columns = 0;             // columns this reader does not know, skipped
};

// Decodes a chunk of `rows` rows of table `id` and appends it to the builder's
// tables, after checking every id and interval against what the builder holds.
void decode_rows(TableId id, ByteCursor in, std::uint32_t rows, TraceBuilder& b, RowDecodeContext& ctx);

// [SECTION] Footer

struct IndexEntry {
  std::uint64_t offset = 0;
  std::uint16_t tag = 0;
  std::uint32_t items = 0;
};

struct Footer {
  std::vector<IndexEntry> sections;
  std::uint64_t table_rows[kTableCount] = {};
  std::uint64_t strings = 0, tracks = 0, counter_series = 0;
};

void encode_footer(const Footer& footer, ByteWriter& out);
Footer decode_footer(ByteCursor in);

}  // namespace gpuscope::store_detail
