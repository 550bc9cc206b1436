// Writes .gscope sections to a file descriptor: compression, checksums, the
// footer index. Shared by write_gscope (whole trace, temporary file) and the
// appender (live capture, the real file).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/detail/bytes.h"
#include "store/detail/sections.h"
#include "store/gscope.h"

namespace gpuscope::store_detail {

class SectionWriter {
 public:
  // Takes ownership of `fd`. `path` names the file in errors.
  SectionWriter(int fd, std::string path, const GscopeWriteOptions& options);
  ~SectionWriter();
  SectionWriter(const SectionWriter&) = delete;
  SectionWriter& operator=(const SectionWriter&) = delete;

  void write_header();
  void write_section(std::uint16_t tag, std::uint32_t items, const ByteWriter& payload);
  void write_footer();  // footer section + trailer
  void sync();
  void close();  // throws if close(2) reports a failed write

  std::uint64_t offset() const { return offset_; }
  Footer& footer() { return footer_; }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err) const;
  void write_all(const std::uint8_t* a, std::size_t na, const std::uint8_t* b, std::size_t nb);

  int fd_;
  std::string path_;
  GscopeWriteOptions options_;
  std::uint64_t offset_ = 0;
  Footer footer_;
  struct Zstd;
  std::unique_ptr<Zstd> zstd_;
  std::vector<std::uint8_t> compressed_;
};

// What has been written of a trace so far, so that each append writes only
// what is new or changed.
struct WrittenState {
  StringId strings = 1;  // id 0 ("") is implicit
  std::vector<Track> tracks;
  std::vector<Device> devices;
  std::vector<Process> processes;
  std::uint32_t counter_series = 0;
  TraceMeta meta;
  bool meta_written = false;
};

struct TraceParts {
  const StringTable& strings;
  const std::vector<Track>& tracks;
  const std::vector<Device>& devices;
  const std::vector<Process>& processes;
  const std::vector<CounterSeries>& counter_series;
  const TraceMeta& meta;
  const TraceTables& tables;
};

// Metadata sections for what is new since `state`, then row chunks of every table.
void write_trace_parts(SectionWriter& w, WrittenState& state, const TraceParts& parts, std::uint32_t rows_per_chunk);

}  // namespace gpuscope::store_detail
