// ChunkSink: where the collector sends decoded rows, one chunk at a time.
//
// The live sink is a .gscope file written through GscopeAppender (each chunk
// is on disk once append() returns, so a program that dies leaves a readable
// prefix). Tests use an in-memory sink (tests/capture/memory_sink.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trace/builder.h"

namespace gpuscope::capture {

class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  // Writes the builder's rows (and new strings, tracks, devices, meta), then
  // clears its rows. Throws (InputError naming the file) on I/O failure.
  virtual void append(TraceBuilder& chunk) = 0;
  // Makes everything durable and closes the file; no appends afterwards.
  virtual void finish() = 0;
  virtual std::uint64_t bytes_written() const = 0;
  virtual const std::string& path() const = 0;
};

// A .gscope file at `path` (created if needed). nullptr and *error if it
// cannot be opened.
std::unique_ptr<ChunkSink> open_gscope_sink(const std::string& path, std::string* error) noexcept;

}  // namespace gpuscope::capture
