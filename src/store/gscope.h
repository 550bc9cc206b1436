// .gscope files: gpuscope's native trace format (spec: docs/format.md).
//
// Versioned, chunked, columnar, zstd-compressed, checksummed per section,
// timestamps delta-encoded, with a footer index. Writers never leave a partial
// file under the real name; the appending writer (used by live capture) leaves
// a readable prefix if the process dies; the reader checks every length,
// checksum and id, loads what is intact from a truncated or damaged file and
// says what was lost, and refuses files from a newer format version.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace/builder.h"
#include "trace/error.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

// What the reader found besides the trace itself.
struct GscopeReadReport {
  std::uint32_t format_version = 0;
  std::string writer;    // writer version string from the header ("gpuscope 0.1.0")
  bool complete = true;  // footer present and every section intact
  std::uint64_t file_bytes = 0;
  std::uint64_t bytes_lost = 0;        // bytes of sections that were not loaded (damaged, truncated, or after either)
  std::uint64_t sections_read = 0;     // sections loaded
  std::uint64_t corrupt_sections = 0;  // sections skipped or stopped at because they were damaged
  std::uint64_t rows_lost = 0;         // rows lost (the trace's meta().damage says per table, and how well known)
  std::vector<std::string> problems;   // one line each: "section 12 (kernels) at byte 4096: checksum mismatch; …"
};

// True if the file starts with the .gscope magic. Never throws (false if unreadable).
bool is_gscope_file(const std::string& path);

// Reads a whole file. Throws InputError (file, offset, reason) when nothing
// usable can be read: empty file, wrong magic (a JSON or gzip file says so),
// newer format version (both versions named), corrupt header, a damaged or
// truncated file of which not one row could be read ("nothing could be
// recovered: " + the first problem), or a cancelled load. A truncated or
// partly corrupt file yields what is intact, with the loss described in the
// trace's meta().damage (truncated or not, bytes and rows lost per table —
// exact, a lower bound or an estimate —, one line per problem), in `report`,
// and in the meta stats: "store.unfinished" (no footer: the writer never
// finished), "store.truncated_bytes" (bytes not loaded),
// "store.corrupt_sections", "store.lost_rows.<table>",
// "store.unknown_sections" / "store.unknown_columns" (skipped, from a newer writer).
Trace read_gscope(const std::string& path, GscopeReadReport* report = nullptr, const LoadProgress& progress = {});

struct GscopeWriteOptions {
  // zstd level 1 with literals stored uncompressed (huffman_literals = false):
  // files ~13% bigger than level 3 with Huffman-coded literals, three times
  // faster to decompress (docs/PERFORMANCE.md, "Store"). Any zstd reads both.
  int zstd_level = 1;
  bool huffman_literals = false;
  std::uint32_t rows_per_chunk = 1u << 16;  // rows of one table per section (clamped to 1 … 2^20)
  bool compress = true;                     // false: sections stored raw (tests, fuzz seeds)
  bool sync = true;                         // write_gscope: fdatasync before the rename (durable across a power loss)
};

// Writes `trace` to `path` atomically (`<path>.tmp.<pid>`, then rename).
// Throws InputError naming `path` on I/O failure; `path` is then untouched and
// the temporary file removed.
void write_gscope(const Trace& trace, const std::string& path, const GscopeWriteOptions& options = {});

// A writer for live capture: rows arrive in chunks (TraceBuilder contents),
// each append writes them to the file with write(2), so a process killed at any
// point leaves a file that reads back up to the last complete section. The
// file is created (header written) by open() under `path` itself — a crash must
// leave the prefix where the user looks for it. finish() writes the footer;
// destroying an unfinished appender closes the file without one (it still
// reads, reported as unfinished). Errors throw InputError naming `path`; after
// one, the appender refuses further calls.
class GscopeAppender {
 public:
  static std::unique_ptr<GscopeAppender> open(const std::string& path, const GscopeWriteOptions& options = {});
  virtual ~GscopeAppender() = default;
  // Writes the builder's new strings, tracks (and renamed ones), devices,
  // processes, counter series and meta (when changed) since the last append,
  // then its rows, then clears the rows (strings and tracks stay, ids remain
  // valid). Rows need not be sorted; the reader sorts at load.
  // Thread-compatible: one caller.
  virtual void append(TraceBuilder& chunk) = 0;
  virtual void flush() = 0;  // fdatasync: durable across a power loss, not only a process kill
  // Footer + fdatasync; no appends afterwards. Meta changed after the last
  // append is not seen: append() the final builder (rows or not) first.
  virtual void finish() = 0;
  virtual std::uint64_t bytes_written() const = 0;
};

}  // namespace gpuscope
