// Joining host files to the run's traces (see host_merge.h).
#include "capture/host_merge.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "capture/host_trace.h"
#include "capture/options.h"
#include "store/gscope.h"
#include "trace/error.h"

namespace gpuscope::capture {

void copy_trace(const Trace& t, TraceBuilder& b) {
  const StringTable& s = t.strings();
  std::vector<std::uint64_t> lengths;
  lengths.reserve(s.size());
  for (StringId i = 1; i < s.size(); ++i) lengths.push_back(s.offsets()[i + 1] - s.offsets()[i]);
  b.strings_mutable().append_raw(std::string_view(s.arena()).substr(s.offsets()[1]), lengths);
  for (const Track& track : t.tracks()) b.add_track(track);
  for (const Device& d : t.devices()) b.add_device(d);
  for (const Process& p : t.processes()) b.add_process(p);
  for (const CounterSeries& c : t.counter_series()) b.counter_series(c.name, c.device, c.unit);
  b.meta() = t.meta();
  // Stored columns only (compact ones as rows): derived ones are computed again at freeze.
  t.tables().for_each_table([&](TableId id, const auto& from) {
    b.tables().for_each_table([&](TableId to_id, auto& to) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(from)>, std::remove_cvref_t<decltype(to)>>) {
        if (to_id != id) return;
        std::vector<const void*> sources;
        from.for_each_column([&](ColumnInfo, const auto& col) { sources.push_back(&col); });
        std::size_t c = 0;
        to.for_each_column([&](ColumnInfo info, auto& col) {
          using Col = std::remove_cvref_t<decltype(col)>;
          const Col& src = *static_cast<const Col*>(sources[c++]);
          if (!(info.flags & kDerived)) col = src;
        });
        detail::expand_columns(to);  // a builder holds every row's value
      }
    });
  });
}

namespace {

bool usable_output(const ProcessReport& r) {
  std::error_code ec;
  return r.state != "failed" && !r.summary.output.empty() && std::filesystem::exists(r.summary.output, ec);
}

// %r of the pattern replaced by the process's rank (the CLI's own environment
// is not the process's).
std::string with_rank(std::string_view pattern, int rank) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'r') {
        out += std::to_string(rank < 0 ? 0 : rank);
      } else {
        out += pattern[i];
        out += pattern[i + 1];
      }
      ++i;
      continue;
    }
    out += pattern[i];
  }
  return out;
}

// A trace's beginning for a process CUDA never captured.
void host_only_meta(const HostProcess& p, TraceBuilder& b) {
  TraceMeta& m = b.meta();
  m.source = TraceSource::cupti;
  m.producer = std::string("gpuscope ") + GPUSCOPE_VERSION_STRING + " capture (host side only)";
  m.host = host_name();
  m.command_line = p.command;
  m.start_time_ns = p.start_ns;
  m.rank = p.rank;
  m.set_property("capture.mode", "host");
}

void count(const HostProcess& p, HostMerge& m) {
  for (const HostRange& r : p.ranges) {
    if (r.category == HostRangeCategory::python_function) {
      if (p.strings[r.name].starts_with("nn.Module: "))
        ++m.module_calls;
      else
        ++m.python_frames;
    } else {
      ++m.ops;
    }
  }
  m.samples += p.samples.size();
  for (const std::string& s : p.problems)
    if (m.problems.size() < 8) m.problems.push_back(p.path + ": " + s);
}

void merge_group(const std::vector<const HostProcess*>& members, const ProcessReport* cuda, const std::string& dir,
                 const std::string& pattern, HostMerge& m) {
  const HostProcess& owner = *members.front();
  TraceBuilder b;
  if (cuda) {
    m.output = cuda->summary.output;
    copy_trace(read_gscope(m.output), b);
  } else {
    m.host_only = true;
    std::string error;
    m.output = claim_output_file(with_rank(pattern, owner.rank), owner.pid, dir + "/claims", &error);
    if (m.output.empty()) throw InputError(pattern, error);
    host_only_meta(owner, b);
  }
  for (const HostProcess* p : members) {
    add_host_process(*p, b, p == &owner);
    m.pids.push_back(p->pid);
    count(*p, m);
  }
  m.steps = add_host_steps(b);
  b.meta().set_property("capture.steps", m.steps);
  auto it = owner.notes.find("capture.framework");
  m.framework = it == owner.notes.end() ? "" : it->second;
  write_gscope(b.freeze(), m.output);
}

}  // namespace

std::vector<HostMerge> merge_host_files(const std::string& dir, const std::vector<ProcessReport>& reports,
                                        const std::string& output_pattern) {
  std::vector<HostMerge> out;
  std::vector<HostProcess> hosts;
  try {
    hosts = read_host_files(dir);
  } catch (const std::exception& e) {
    out.push_back(HostMerge{.error = e.what()});
    return out;
  }
  std::map<std::uint32_t, const ProcessReport*> cuda;
  for (const ProcessReport& r : reports)
    if (usable_output(r)) cuda[r.pid] = &r;
  std::map<std::uint32_t, const HostProcess*> by_pid;
  for (const HostProcess& h : hosts) by_pid[h.pid] = &h;
  // A forked child without a CUDA file of its own joins its parent's file.
  auto owner_of = [&](std::uint32_t pid) {
    for (int hops = 0; hops < 64; ++hops) {
      if (cuda.count(pid)) return pid;
      auto it = by_pid.find(pid);
      if (it == by_pid.end() || it->second->forked_from == 0) return pid;
      const std::uint32_t parent = it->second->forked_from;
      if (!by_pid.count(parent) && !cuda.count(parent)) return pid;
      pid = parent;
    }
    return pid;
  };
  std::map<std::uint32_t, std::vector<const HostProcess*>> groups;
  for (const HostProcess& h : hosts) groups[owner_of(h.pid)].push_back(&h);
  for (auto& [owner, members] : groups) {
    // The owner first; a group whose owner wrote no host file (a CUDA-only
    // parent of a Python child) is led by that child, merged under its pid.
    std::stable_partition(members.begin(), members.end(), [&](const HostProcess* p) { return p->pid == owner; });
    HostMerge m;
    m.owner = owner;
    const auto c = cuda.find(owner);
    try {
      merge_group(members, c == cuda.end() ? nullptr : c->second, dir, output_pattern, m);
    } catch (const std::exception& e) {
      m.error = e.what();
      if (c == cuda.end()) m.output.clear();
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpuscope::capture
