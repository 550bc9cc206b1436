// A ChunkSink that keeps every chunk in memory and rebuilds the whole trace,
// as a reader of the .gscope file would. For tests of the collector.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "capture/chunk_sink.h"

namespace gpuscope::capture::testing {

class MemorySink final : public ChunkSink {
 public:
  // fail_at: the append (1-based) from which appends throw; 0 = never.
  explicit MemorySink(int fail_at = 0) : fail_at_(fail_at) {}

  void append(TraceBuilder& chunk) override {
    const int n = ++appends_;
    if (fail_at_ != 0 && n >= fail_at_) throw std::runtime_error("memory sink: disk full (simulated)");
    void* src[kTableCount] = {};
    chunk.tables().for_each_table([&](TableId id, auto& t) { src[static_cast<int>(id)] = &t; });
    tables_.for_each_table([&](TableId id, auto& out) {
      using Table = std::remove_reference_t<decltype(out)>;
      append_table(out, *static_cast<Table*>(src[static_cast<int>(id)]));
    });
    strings_ = chunk.strings();
    tracks_ = chunk.tracks();
    devices_ = chunk.devices();
    processes_ = chunk.processes();
    meta_ = chunk.meta();
    chunk.clear_rows();
  }
  void finish() override { finished_ = true; }
  std::uint64_t bytes_written() const override { return 1000u * static_cast<std::uint64_t>(appends_.load()); }
  const std::string& path() const override { return path_; }

  int appends() const { return appends_.load(); }
  bool finished() const { return finished_; }
  const TraceMeta& meta() const { return meta_; }

  // Everything appended, frozen into one trace.
  Trace trace() const {
    TraceBuilder b;
    b.strings_mutable() = strings_;
    for (const Track& t : tracks_) b.add_track(t);
    for (const Device& d : devices_) b.add_device(d);
    for (const Process& p : processes_) b.add_process(p);
    b.meta() = meta_;
    b.tables() = tables_;
    return b.freeze();
  }

 private:
  template <class Table>
  static void append_table(Table& out, Table& src) {
    const std::size_t out_rows = out.size(), src_rows = src.size();
    std::vector<void*> src_cols;
    src.for_each_column([&](ColumnInfo, auto& col) { src_cols.push_back(&col); });
    std::size_t i = 0;
    out.for_each_column([&](ColumnInfo info, auto& col) {
      using Column = std::remove_reference_t<decltype(col)>;
      const Column& s = *static_cast<Column*>(src_cols[i++]);
      if ((info.flags & kDerived) || (s.empty() && col.empty())) return;
      if (col.empty()) col.resize(out_rows);  // a sparse column gets its first value: back-fill
      if (s.empty())
        col.resize(out_rows + src_rows);
      else
        col.insert(col.end(), s.begin(), s.end());
    });
  }

  std::string path_ = "<memory>";
  int fail_at_;
  std::atomic<int> appends_{0};
  bool finished_ = false;
  TraceTables tables_;
  StringTable strings_;
  std::vector<Track> tracks_;
  std::vector<Device> devices_;
  std::vector<Process> processes_;
  TraceMeta meta_;
};

}  // namespace gpuscope::capture::testing
