// .gscope files: gpuscope's native trace format (spec: docs/format.md).
//
// Versioned, chunked, columnar, zstd-compressed, checksummed per section,
// timestamps delta-encoded, with a footer index. Writers never leave a partial
// file under the real name; the appending writer (used by live capture) leaves
// a readable prefix if the process dies; the reader checks every length,
// checksum and id, loads what is intact from a truncated file and says what
// was lost, and refuses files from a newer format version.
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
  std::string writer;              // writer version string from the header
  bool complete = true;            // footer present and every section intact
  std::uint64_t file_bytes = 0;
  std::uint64_t bytes_lost = 0;    // bytes after the last intact section
  std::vector<std::string> problems;  // one line each: "section 12 at byte 4096: checksum mismatch"
};

// True if the file starts with the .gscope magic.
bool is_gscope_file(const std::string& path);

// Reads a whole file. Throws InputError (file, offset, reason) when nothing
// usable can be read: wrong magic, newer format version, corrupt header.
// A truncated or partly corrupt file yields what is intact, with the loss
// described in `report` (and in the trace's meta stats "store.*").
Trace read_gscope(const std::string& path, GscopeReadReport* report = nullptr, const LoadProgress& progress = {});

struct GscopeWriteOptions {
  int zstd_level = 3;
  std::uint32_t rows_per_chunk = 1u << 20;  // rows of one table per section
};

// Writes `trace` to `path` atomically (temporary name, then rename).
// Throws InputError naming `path` on I/O failure; `path` is then untouched.
void write_gscope(const Trace& trace, const std::string& path, const GscopeWriteOptions& options = {});

// A writer for live capture: rows arrive in chunks (TraceBuilder contents),
// each append makes them durable on disk, and a file killed mid-way still reads
// back up to the last complete chunk. finish() writes the footer; the file is
// written under `path` directly (a crash must leave the prefix where the user
// looks for it), as "<path>" from the first append.
class GscopeAppender {
 public:
  static std::unique_ptr<GscopeAppender> open(const std::string& path, const GscopeWriteOptions& options = {});
  virtual ~GscopeAppender() = default;
  // Writes the builder's new strings, tracks, devices, processes, series and
  // meta since the last append, then its rows, then clears the rows (strings
  // and tracks stay, ids remain valid). Thread-compatible: one caller.
  virtual void append(TraceBuilder& chunk) = 0;
  virtual void flush() = 0;  // fsync-level durability of what was appended
  virtual void finish() = 0;  // footer; no appends afterwards
  virtual std::uint64_t bytes_written() const = 0;
};

}  // namespace gpuscope
