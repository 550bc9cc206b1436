// Host files: reading them, and adding their rows to a trace (see host_trace.h).
//
// [SECTION] Reading one line (chunk)
// [SECTION] Reading a file
// [SECTION] Rows into a trace
// [SECTION] Steps
#include "capture/host_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <unordered_map>

#include "trace/budget.h"
#include "trace/error.h"
#include "trace/files.h"

namespace gpuscope::capture {

namespace {

constexpr std::int64_t kFormat = 1;
constexpr std::size_t kMaxProblems = 5;

// [SECTION] Reading one line (chunk) --------------------------------------------------------------

// A chunk that does not have what its kind needs. The line is skipped.
struct BadChunk {
  std::string what;
};

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::optional<element> field(const object& o, std::string_view key) {
  element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS) return std::nullopt;
  return e;
}

array array_field(const object& o, std::string_view key) {
  const auto e = field(o, key);
  array a;
  if (!e || e->get_array().get(a) != simdjson::SUCCESS) throw BadChunk{"'" + std::string(key) + "' is not a list"};
  return a;
}

std::int64_t to_int(const element& e, std::string_view key) {
  std::int64_t v = 0;
  if (e.get_int64().get(v) == simdjson::SUCCESS) return v;
  std::uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS && u <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(u);
  throw BadChunk{"'" + std::string(key) + "' holds a value that is not an integer"};
}

std::int64_t int_field(const object& o, std::string_view key, std::int64_t fallback) {
  const auto e = field(o, key);
  return e ? to_int(*e, key) : fallback;
}

std::vector<std::int64_t> int_column(const object& o, std::string_view key) {
  std::vector<std::int64_t> out;
  for (element e : array_field(o, key)) out.push_back(to_int(e, key));
  return out;
}

std::string text(const element& e) {
  std::string_view s;
  return e.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : std::string();
}

class ChunkReader {
 public:
  explicit ChunkReader(HostProcess& p) : p_(p) {}

  // Reads one chunk into the process. Throws BadChunk; strings the chunk
  // carries are kept even then (later chunks use them).
  void read(const object& o) {
    std::string_view kind;
    if (o["k"].get_string().get(kind) != simdjson::SUCCESS) throw BadChunk{"no kind ('k')"};
    if (const auto s = field(o, "strings")) {
      array a;
      if (s->get_array().get(a) != simdjson::SUCCESS) throw Fatal{"'strings' is not a list"};
      for (element e : a) {
        std::string_view v;
        if (e.get_string().get(v) != simdjson::SUCCESS) throw Fatal{"'strings' holds a non-string"};
        p_.strings.emplace_back(v);
      }
    }
    if (kind == "process") return process(o);
    if (kind == "ranges") return ranges(o);
    if (kind == "samples") return samples(o);
    if (kind == "threads") return threads(o);
    if (kind == "overheads") return overheads(o);
    if (kind == "meta") return meta(o);
    if (kind == "parent") {  // started by multiprocessing (spawn): joins its parent like a forked child
      p_.forked_from = static_cast<std::uint32_t>(std::clamp<std::int64_t>(int_field(o, "pid", 0), 0, UINT32_MAX));
      return;
    }
    if (kind == "end") {
      p_.finished = true;
      return;
    }
    throw BadChunk{"unknown kind '" + std::string(kind) + "'"};
  }

  // A problem after which nothing more of the file can be trusted (the
  // strings' numbering is lost, or a newer format).
  struct Fatal {
    std::string what;
  };

 private:
  void process(const object& o) {
    const std::int64_t format = int_field(o, "format", 0);
    if (format > kFormat)
      throw Fatal{"written in host file format " + std::to_string(format) + " by a newer gpuscope (this one reads " +
                  std::to_string(kFormat) + ")"};
    p_.has_header = true;
    p_.pid = static_cast<std::uint32_t>(int_field(o, "pid", 0));
    p_.ppid = static_cast<std::uint32_t>(int_field(o, "ppid", 0));
    p_.forked_from = static_cast<std::uint32_t>(int_field(o, "forked_from", 0));
    p_.rank = static_cast<int>(std::clamp<std::int64_t>(int_field(o, "rank", -1), -1, INT32_MAX));
    p_.start_ns = int_field(o, "start_ns", 0);
    p_.command.clear();
    if (const auto argv = field(o, "argv")) {
      array a;
      if (argv->get_array().get(a) == simdjson::SUCCESS)
        for (element e : a) p_.command += (p_.command.empty() ? "" : " ") + text(e);
    }
  }

  std::uint32_t string_index(std::int64_t v, std::string_view column) const {
    if (v < 0 || static_cast<std::uint64_t>(v) >= p_.strings.size())
      throw BadChunk{"'" + std::string(column) + "' names string " + std::to_string(v) + ", which was never sent"};
    return static_cast<std::uint32_t>(v);
  }

  void ranges(const object& o) {
    const auto start = int_column(o, "start"), end = int_column(o, "end"), tid = int_column(o, "tid"),
               name = int_column(o, "name"), cat = int_column(o, "cat");
    const std::size_t n = start.size();
    // Optional columns: absent means none recorded.
    auto optional = [&](std::string_view key, std::int64_t none) {
      return field(o, key) ? int_column(o, key) : std::vector<std::int64_t>(n, none);
    };
    const auto seq = optional("seq", -1), fwd = optional("fwd", 0), ext = optional("ext", 0),
               dims = optional("dims", 0), types = optional("types", 0);
    for (const auto* c : {&end, &tid, &name, &cat, &seq, &fwd, &ext, &dims, &types})
      if (c->size() != n) throw BadChunk{"the columns of a 'ranges' chunk differ in length"};
    std::vector<HostRange> rows(n);
    for (std::size_t i = 0; i < n; ++i) {
      HostRange& r = rows[i];
      if (end[i] < start[i] || !valid_duration(start[i], end[i])) throw BadChunk{"a range ends before it starts"};
      if (cat[i] < 0 || cat[i] > 2) throw BadChunk{"unknown range category " + std::to_string(cat[i])};
      if (tid[i] == 0) throw BadChunk{"a range without a thread"};
      r.start = start[i];
      r.end = end[i];
      r.tid = tid[i];
      r.name = string_index(name[i], "name");
      r.dims = string_index(dims[i], "dims");
      r.types = string_index(types[i], "types");
      r.category = static_cast<HostRangeCategory>(cat[i]);
      if (seq[i] < -1 || fwd[i] < 0 || fwd[i] > UINT32_MAX) throw BadChunk{"a sequence number out of range"};
      r.sequence = seq[i];
      r.fwd_thread = static_cast<std::uint32_t>(fwd[i]);
      r.external_id = ext[i] < 0 ? 0 : static_cast<std::uint64_t>(ext[i]);
    }
    p_.ranges.insert(p_.ranges.end(), rows.begin(), rows.end());
  }

  void samples(const object& o) {
    const auto time = int_column(o, "time"), tid = int_column(o, "tid"), stack = int_column(o, "stack");
    if (tid.size() != time.size() || stack.size() != time.size())
      throw BadChunk{"the columns of a 'samples' chunk differ in length"};
    std::vector<HostSample> rows(time.size());
    for (std::size_t i = 0; i < time.size(); ++i) {
      if (tid[i] < 0 || tid[i] > UINT32_MAX) throw BadChunk{"a sample's thread id is out of range"};
      rows[i] = {time[i], static_cast<std::uint32_t>(tid[i]), string_index(stack[i], "stack")};
    }
    p_.samples.insert(p_.samples.end(), rows.begin(), rows.end());
  }

  void overheads(const object& o) {
    const auto start = int_column(o, "start"), end = int_column(o, "end"), tid = int_column(o, "tid"),
               kind = int_column(o, "kind");
    if (end.size() != start.size() || tid.size() != start.size() || kind.size() != start.size())
      throw BadChunk{"the columns of an 'overheads' chunk differ in length"};
    std::vector<HostOverhead> rows(start.size());
    for (std::size_t i = 0; i < start.size(); ++i) {
      if (end[i] < start[i] || !valid_duration(start[i], end[i])) throw BadChunk{"an overhead ends before it starts"};
      if (tid[i] <= 0 || tid[i] > UINT32_MAX) throw BadChunk{"an overhead's thread id is out of range"};
      rows[i] = {start[i], end[i], static_cast<std::uint32_t>(tid[i]), string_index(kind[i], "kind")};
    }
    p_.overheads.insert(p_.overheads.end(), rows.begin(), rows.end());
  }

  void threads(const object& o) {
    const auto tid = int_column(o, "tid"), name = int_column(o, "name");
    if (tid.size() != name.size()) throw BadChunk{"the columns of a 'threads' chunk differ in length"};
    for (std::size_t i = 0; i < tid.size(); ++i) {
      if (tid[i] <= 0 || tid[i] > UINT32_MAX) throw BadChunk{"a thread id is out of range"};
      p_.thread_names.emplace_back(static_cast<std::uint32_t>(tid[i]), string_index(name[i], "name"));
    }
  }

  void meta(const object& o) {
    object stats, notes;
    if (const auto s = field(o, "stats"); s && s->get_object().get(stats) == simdjson::SUCCESS)
      for (auto [k, v] : stats) {
        const std::int64_t n = to_int(v, k);
        if (n > 0) p_.stats[std::string(k)] += static_cast<std::uint64_t>(n);
      }
    if (const auto s = field(o, "notes"); s && s->get_object().get(notes) == simdjson::SUCCESS)
      for (auto [k, v] : notes) p_.notes[std::string(k)] = text(v);
  }

  HostProcess& p_;
};

void problem(HostProcess& p, std::size_t line, const std::string& what) {
  ++p.bad_lines;
  if (p.problems.size() < kMaxProblems) p.problems.push_back("line " + std::to_string(line) + ": " + what);
}

}  // namespace

// [SECTION] Reading a file -----------------------------------------------------------------------

HostProcess read_host_file(const std::string& path) {
  HostProcess p;
  p.path = path;
  // Read whole: at most the memory budget of it (a program can write any amount).
  std::error_code size_ec;
  const std::uint64_t bytes = std::filesystem::file_size(path, size_ec);
  if (!size_ec) check_memory_claim(path, "the host file of " + std::to_string(bytes) + " bytes", bytes);
  simdjson::padded_string all;
  if (simdjson::padded_string::load(path).get(all) != simdjson::SUCCESS)
    throw InputError(path, "cannot read the host file");
  simdjson::dom::parser parser;
  ChunkReader reader(p);
  const std::string_view text(all.data(), all.size());
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    ++line;
    std::size_t nl = text.find('\n', pos);
    const bool cut = nl == std::string_view::npos;  // the writer appends whole lines: this one was cut
    if (cut) nl = text.size();
    const std::string_view one = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (cut) {
      problem(p, line, "cut short (the process ended while writing it)");
      break;
    }
    object o;
    if (parser.parse(one.data(), one.size(), true).get_object().get(o) != simdjson::SUCCESS) {
      problem(p, line, "not a JSON object");
      continue;
    }
    try {
      reader.read(o);
    } catch (const BadChunk& e) {
      problem(p, line, e.what);
    } catch (const ChunkReader::Fatal& e) {
      problem(p, line, e.what + "; the rest of the file is not read");
      break;
    }
  }
  return p;
}

std::vector<HostProcess> read_host_files(const std::string& dir) {
  std::vector<HostProcess> out;
  for (const std::string& file : files::files_with_extension(dir, ".host")) {
    out.push_back(read_host_file(file));
    HostProcess& p = out.back();
    if (p.pid == 0) {  // no header: the pid is the file's name
      const std::string stem = std::filesystem::path(file).stem().string();
      p.pid = static_cast<std::uint32_t>(std::strtoul(stem.c_str(), nullptr, 10));
    }
  }
  std::sort(out.begin(), out.end(), [](const HostProcess& a, const HostProcess& b) { return a.pid < b.pid; });
  return out;
}

// [SECTION] Rows into a trace ---------------------------------------------------------------------

namespace {

// PyTorch's threads whose Linux id the hook did not learn (autograd's device
// threads): the CPU track of the same process whose CUDA calls fall inside
// the thread's top-level ops most often, or none.
std::unordered_map<std::int64_t, TrackId> place_unknown_threads(const HostProcess& p, TraceBuilder& b) {
  std::unordered_map<std::int64_t, std::vector<std::pair<TimeNs, TimeNs>>> spans;
  for (const HostRange& r : p.ranges)
    if (r.tid < 0 && r.category == HostRangeCategory::cpu_op) spans[r.tid].emplace_back(r.start, r.end);
  std::unordered_map<std::int64_t, TrackId> out;
  if (spans.empty()) return out;
  const ApiCallTable& api = b.tables().api_calls;
  const std::vector<Track>& tracks = b.tracks();
  for (auto& [tid, s] : spans) {
    // The union of the thread's ops: sorted, disjoint intervals.
    std::sort(s.begin(), s.end());
    std::vector<std::pair<TimeNs, TimeNs>> merged;
    for (const auto& x : s) {
      if (!merged.empty() && x.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, x.second);
      else
        merged.push_back(x);
    }
    std::unordered_map<TrackId, std::uint64_t> votes;
    for (std::size_t i = 0; i < api.size(); ++i) {
      const Track& t = tracks[api.track_at(i)];
      if (t.kind != TrackKind::cpu || t.pid != p.pid) continue;
      auto it = std::upper_bound(merged.begin(), merged.end(), std::make_pair(api.start[i], INT64_MAX));
      if (it != merged.begin() && std::prev(it)->second >= api.start[i]) ++votes[api.track_at(i)];
    }
    TrackId best = kNoRow;
    std::uint64_t most = 0;
    for (const auto& [track, n] : votes)
      if (n > most || (n == most && track < best)) best = track, most = n;
    if (best != kNoRow) out[tid] = best;
  }
  return out;
}

StringId domain_of(HostRangeCategory c, TraceBuilder& b) {
  switch (c) {
    case HostRangeCategory::cpu_op: return b.intern("cpu_op");
    case HostRangeCategory::user_annotation: return b.intern("user_annotation");
    case HostRangeCategory::python_function: break;
  }
  return b.intern("python_function");
}

}  // namespace

void add_host_process(const HostProcess& p, TraceBuilder& b, bool owner) {
  std::vector<StringId> ids(p.strings.size());
  for (std::size_t i = 0; i < p.strings.size(); ++i) ids[i] = b.intern(p.strings[i]);
  const auto placed = place_unknown_threads(p, b);
  std::unordered_map<std::int64_t, TrackId> tracks;
  auto track_of = [&](std::int64_t tid) {
    auto it = tracks.find(tid);
    if (it != tracks.end()) return it->second;
    TrackId t;
    if (tid > 0) {
      t = b.cpu_track(p.pid, static_cast<std::uint32_t>(tid));
    } else if (auto pl = placed.find(tid); pl != placed.end()) {
      t = pl->second;
    } else {
      // Out of the range of Linux thread ids (at most 2^22), named for what it is.
      const std::uint32_t number = static_cast<std::uint32_t>(std::min<std::int64_t>(-tid, 0xffff));
      t = b.cpu_track(p.pid, 0xfff00000u + number);
      if (b.tracks()[t].name.empty()) b.set_track_name(t, "PyTorch thread " + std::to_string(number));
      b.meta().add_stat("capture.framework.threads_unplaced", 1);
    }
    return tracks[tid] = t;
  };
  StringId domains[3] = {domain_of(HostRangeCategory::cpu_op, b), domain_of(HostRangeCategory::user_annotation, b),
                         domain_of(HostRangeCategory::python_function, b)};
  for (const HostRange& h : p.ranges) {
    RangeRow r;
    r.start = h.start;
    r.end = h.end;
    r.track = track_of(h.tid);
    r.name = ids[h.name];
    r.domain = domains[static_cast<int>(h.category)];
    r.kind = RangeKind::annotation;
    r.correlation = static_cast<std::uint32_t>(std::min<std::uint64_t>(h.external_id, UINT32_MAX));
    r.input_dims = ids[h.dims];
    r.input_types = ids[h.types];
    r.sequence = stored_sequence(h.sequence);
    r.fwd_thread = h.fwd_thread;
    b.add_range(r);
  }
  const StringId sample_domain = b.intern(kHostSampleDomain);
  for (const HostSample& s : p.samples) {
    RangeRow r;
    r.start = r.end = s.time;
    r.track = track_of(s.tid == 0 ? -0xffff : static_cast<std::int64_t>(s.tid));
    r.name = ids[s.stack];
    r.domain = sample_domain;
    r.kind = RangeKind::mark;
    b.add_range(r);
  }
  for (const HostOverhead& h : p.overheads) b.add_overhead(OverheadRow{h.start, h.end, track_of(h.tid), ids[h.kind]});
  for (const auto& [tid, name] : p.thread_names) {
    const TrackId t = track_of(tid);
    if (b.tracks()[t].name.empty()) b.set_track_name(t, p.strings[name]);
  }
  bool known = false;
  for (const Process& x : b.processes()) known |= x.pid == p.pid;
  if (!known) b.add_process(Process{p.pid, p.command, p.rank});
  const std::string suffix = owner ? "" : ".pid" + std::to_string(p.pid);
  for (const auto& [k, v] : p.notes) b.meta().set_property(k + suffix, v);
  for (const auto& [k, v] : p.stats) b.meta().add_stat(k, v);
  b.meta().add_stat("capture.host.processes", 1);
  if (p.bad_lines) b.meta().add_stat("capture.host.bad_lines", p.bad_lines);
  if (!p.finished) b.meta().add_stat("capture.host.unfinished_processes", 1);
}

// [SECTION] Steps ---------------------------------------------------------------------------------

namespace {

struct Span {
  TimeNs start, end;
};

// The thread's ProfilerStep boundaries: (start, end) of each step.
std::vector<Span> steps_of(const std::vector<Span>& optimizer, const std::vector<Span>& loader,
                           const std::vector<Span>& modules, TimeNs thread_end) {
  std::vector<Span> out;
  if (!optimizer.empty()) {
    TimeNs begin = optimizer.front().start;
    for (const Span& l : loader)
      if (l.start <= optimizer.front().start) begin = l.start;
    if (loader.empty() || loader.front().start > optimizer.front().start)
      for (const Span& m : modules)
        if (m.start < optimizer.front().start) {
          begin = m.start;
          break;
        }
    for (const Span& o : optimizer) {
      if (o.end <= begin) continue;
      out.push_back({begin, o.end});
      begin = o.end;
    }
    return out;
  }
  for (std::size_t i = 0; i + 1 < loader.size(); ++i) out.push_back({loader[i].start, loader[i + 1].start});
  if (loader.size() >= 2 && thread_end > loader.back().start) out.push_back({loader.back().start, thread_end});
  return out;
}

}  // namespace

std::string add_host_steps(TraceBuilder& b) {
  RangeTable& g = b.tables().ranges;
  const std::vector<Track>& tracks = b.tracks();
  const StringTable& strings = b.strings();
  struct PerThread {
    std::vector<Span> optimizer, loader, modules;
    TimeNs end = 0;
    std::string optimizer_name;
  };
  std::map<TrackId, PerThread> threads;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (tracks[g.track[i]].kind != TrackKind::cpu || g.kind_at(i) == RangeKind::mark) continue;
    const std::string_view name = strings.get(g.name[i]);
    if (name.starts_with("ProfilerStep#")) return "from the trace's own ProfilerStep ranges";
    PerThread& t = threads[g.track[i]];
    t.end = std::max(t.end, g.end[i]);
    if (name.starts_with("Optimizer.step#")) {
      t.optimizer.push_back({g.start[i], g.end[i]});
      t.optimizer_name = name;
    } else if (name.starts_with("enumerate(DataLoader)#")) {
      t.loader.push_back({g.start[i], g.end[i]});
    } else if (name.starts_with("nn.Module: ")) {
      t.modules.push_back({g.start[i], g.end[i]});
    }
  }
  std::string note;
  const StringId domain = b.intern("user_annotation");
  for (auto& [track, t] : threads) {
    auto by_start = [](const Span& a, const Span& c) { return a.start < c.start; };
    std::sort(t.optimizer.begin(), t.optimizer.end(), by_start);
    std::sort(t.loader.begin(), t.loader.end(), by_start);
    std::sort(t.modules.begin(), t.modules.end(), by_start);
    const std::vector<Span> steps = steps_of(t.optimizer, t.loader, t.modules, t.end);
    if (steps.empty()) continue;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      RangeRow r;
      r.start = steps[i].start;
      r.end = steps[i].end;
      r.track = track;
      r.name = b.intern("ProfilerStep#" + std::to_string(i));
      r.domain = domain;
      r.kind = RangeKind::annotation;
      b.add_range(r);
    }
    if (!note.empty()) note += "; ";
    note += std::to_string(steps.size()) + (steps.size() == 1 ? " step from " : " steps from ") +
            (t.optimizer.empty() ? std::string("enumerate(DataLoader)#… __next__") : t.optimizer_name) + " on thread " +
            std::to_string(tracks[track].tid);
  }
  return note.empty() ? "none: no Optimizer.step or DataLoader ranges" : note;
}

}  // namespace gpuscope::capture
