// nsys-style summaries: grouping, statistics, and the three formats.
//
// [SECTION] Report names
// [SECTION] Grouping and statistics
// [SECTION] The tables
// [SECTION] Text
// [SECTION] CSV
// [SECTION] JSON
#include "export/stats_tables.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "analysis/util/stats.h"
#include "trace/json_writer.h"
#include "words/format.h"

namespace gpuscope {

// [SECTION] Report names -------------------------------------------------------------------------

namespace {

constexpr StatsReport kAll[] = {StatsReport::kernels, StatsReport::api,    StatsReport::memcpy, StatsReport::memset,
                                StatsReport::sync,    StatsReport::ranges, StatsReport::osrt,   StatsReport::steps};

struct Alias {
  std::string_view name;
  StatsReport report;
};
// Nsight Systems' names for the same summaries.
constexpr Alias kNsysNames[] = {{"cuda_gpu_kern_sum", StatsReport::kernels},
                                {"cuda_api_sum", StatsReport::api},
                                {"cuda_gpu_mem_time_sum", StatsReport::memcpy},
                                {"cuda_gpu_mem_size_sum", StatsReport::memcpy},
                                {"nvtx_sum", StatsReport::ranges},
                                {"osrt_sum", StatsReport::osrt}};

}  // namespace

std::string_view to_string(StatsReport r) {
  static constexpr std::string_view kNames[] = {"kernels", "api",    "memcpy", "memset",
                                                "sync",    "ranges", "osrt",   "steps"};  // by StatsReport's value
  static_assert(std::size(kNames) == std::size(kAll));
  const auto i = static_cast<std::size_t>(r);
  return i < std::size(kNames) ? kNames[i] : kNames[7];
}

bool parse_stats_report(std::string_view name, StatsReport* out) {
  for (StatsReport r : kAll)
    if (to_string(r) == name) return *out = r, true;
  for (const Alias& a : kNsysNames)
    if (a.name == name) return *out = a.report, true;
  return false;
}

std::span<const StatsReport> all_stats_reports() { return kAll; }
std::span<const StatsReport> default_stats_reports() { return std::span(kAll).first(7); }

// [SECTION] Grouping and statistics ------------------------------------------------------------------

namespace {

// Durations (and, for copies and memsets, sizes) of the rows of each group,
// groups by a numeric key in the order first seen.
class Groups {
 public:
  void add(std::uint64_t key, TimeNs duration, std::int64_t bytes = -1) {
    auto [it, added] = index_.emplace(key, keys_.size());
    if (added) {
      keys_.push_back(key);
      durations_.emplace_back();
      bytes_.emplace_back();
    }
    durations_[it->second].push_back(duration);
    if (bytes >= 0) bytes_[it->second].push_back(bytes);
  }
  std::size_t size() const { return keys_.size(); }
  std::uint64_t key(std::size_t g) const { return keys_[g]; }
  std::vector<TimeNs>& durations(std::size_t g) { return durations_[g]; }
  std::vector<TimeNs>& bytes(std::size_t g) { return bytes_[g]; }

 private:
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::vector<TimeNs>> durations_, bytes_;
};

struct Summary {
  DurationStats s;
  double mean = 0, stddev = 0;
};

Summary summary_of(std::vector<TimeNs>& values) {
  Summary r;
  if (values.empty()) return r;
  r.s = summarize(values);
  const double n = static_cast<double>(values.size());
  r.mean = static_cast<double>(r.s.total) / n;
  double squares = 0;
  for (TimeNs v : values) squares += (static_cast<double>(v) - r.mean) * (static_cast<double>(v) - r.mean);
  r.stddev = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  return r;
}

// The columns every timed summary has, then the extra text columns, then the name.
std::vector<StatsColumn> timed_columns(const char* count, bool sizes, std::vector<StatsColumn> extra,
                                       const char* name_key, const char* name_header) {
  std::string count_header = count;
  count_header[0] = static_cast<char>(count_header[0] - 'a' + 'A');  // "calls" -> "Calls"
  std::vector<StatsColumn> c = {{"share", "Time (%)"},    {"total_ns", "Total (ns)"},  {count, count_header},
                                {"mean_ns", "Mean (ns)"}, {"median_ns", "Med (ns)"},   {"min_ns", "Min (ns)"},
                                {"max_ns", "Max (ns)"},   {"stddev_ns", "StdDev (ns)"}};
  if (sizes)
    c.insert(c.end(), {{"total_bytes", "Total (B)"},
                       {"mean_bytes", "Mean (B)"},
                       {"median_bytes", "Med (B)"},
                       {"min_bytes", "Min (B)"},
                       {"max_bytes", "Max (B)"}});
  c.insert(c.end(), extra.begin(), extra.end());
  c.push_back({name_key, name_header});
  return c;
}

// One row per group, largest total first (then by name): the statistics,
// then `extra(key)` (text cells), then `name(key)`.
template <class Extra, class Name>
void timed_rows(StatsTable& table, Groups& groups, bool sizes, Extra&& extra, Name&& name) {
  std::vector<Summary> sums(groups.size());
  TimeNs all = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) all += (sums[g] = summary_of(groups.durations(g))).s.total;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Summary& x = sums[g];
    std::vector<StatsCell> row;
    row.reserve(table.columns.size());
    if (all > 0)
      row.emplace_back(static_cast<double>(x.s.total) / static_cast<double>(all));
    else
      row.emplace_back(std::monostate{});
    row.emplace_back(x.s.total);
    row.emplace_back(static_cast<std::int64_t>(x.s.count));
    row.emplace_back(x.mean);
    row.emplace_back(x.s.median);
    row.emplace_back(x.s.min);
    row.emplace_back(x.s.max);
    row.emplace_back(x.stddev);
    if (sizes) {
      Summary b = summary_of(groups.bytes(g));
      row.emplace_back(b.s.total);
      row.emplace_back(b.mean);
      row.emplace_back(b.s.median);
      row.emplace_back(b.s.min);
      row.emplace_back(b.s.max);
    }
    for (std::string& e : extra(groups.key(g))) row.emplace_back(std::move(e));
    row.emplace_back(name(groups.key(g)));
    table.rows.push_back(std::move(row));
  }
  const std::size_t name_col = table.columns.size() - 1;
  std::stable_sort(table.rows.begin(), table.rows.end(), [&](const auto& a, const auto& b) {
    const auto ta = std::get<std::int64_t>(a[1]), tb = std::get<std::int64_t>(b[1]);
    return ta != tb ? ta > tb : std::get<std::string>(a[name_col]) < std::get<std::string>(b[name_col]);
  });
}

std::vector<std::string> no_extra(std::uint64_t) { return {}; }

bool on_device(const Trace& t, TrackId track, std::uint32_t device) {
  return device == kNoDevice || t.tracks()[track].device == device;
}

}  // namespace

// [SECTION] The tables -----------------------------------------------------------------------------

namespace {

StatsTable kernel_table(const Trace& t, std::uint32_t device) {
  StatsTable table{StatsReport::kernels, "CUDA kernels, by name", {}, {}, {}};
  table.columns = timed_columns("calls", false, {{"category", "Category"}}, "name", "Name");
  const KernelTable& k = t.kernels();
  Groups groups;
  std::vector<KernelCategory> category(t.strings().size(), KernelCategory::other);
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!on_device(t, k.track_at(i), device)) continue;
    groups.add(k.name[i], k.end[i] - k.start[i]);
    category[k.name[i]] = k.category_at(i);
  }
  timed_rows(
      table, groups, false,
      [&](std::uint64_t id) { return std::vector<std::string>{std::string(to_string(category[id]))}; },
      [&](std::uint64_t id) { return std::string(t.str(static_cast<StringId>(id))); });
  if (table.rows.empty()) table.note = "no kernels";
  return table;
}

StatsTable api_table(const Trace& t) {
  StatsTable table{StatsReport::api, "CUDA API calls, by name", {}, {}, {}};
  table.columns = timed_columns("calls", false, {}, "name", "Name");
  const ApiCallTable& a = t.api_calls();
  Groups groups;
  for (std::size_t i = 0; i < a.size(); ++i) groups.add(a.name[i], a.end[i] - a.start[i]);
  timed_rows(table, groups, false, no_extra,
             [&](std::uint64_t id) { return std::string(t.str(static_cast<StringId>(id))); });
  if (table.rows.empty()) table.note = "no CUDA API calls in this trace";
  return table;
}

// Copies or memsets of one GPU (kNoDevice: all), grouped by `kind` (a
// column of `rows`), with their time and bytes.
template <class Kind, class Rows, class KindColumn>
StatsTable by_copy_kind(StatsTable table, const Trace& t, std::uint32_t device, const Rows& rows,
                        const KindColumn& kind, const char* none) {
  Groups groups;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (on_device(t, rows.track_at(i), device))
      groups.add(kind[i], rows.end[i] - rows.start[i], static_cast<std::int64_t>(rows.bytes[i]));
  timed_rows(table, groups, true, no_extra,
             [](std::uint64_t k) { return std::string(to_string(static_cast<Kind>(k))); });
  if (table.rows.empty()) table.note = none;
  return table;
}

StatsTable memcpy_table(const Trace& t, std::uint32_t device) {
  StatsTable table{StatsReport::memcpy, "Memory copies, by kind (time and bytes)", {}, {}, {}};
  table.columns = timed_columns("count", true, {}, "kind", "Kind");
  const MemcpyTable& m = t.memcpys();
  return by_copy_kind<CopyKind>(std::move(table), t, device, m, m.kind, "no memory copies");
}

StatsTable memset_table(const Trace& t, std::uint32_t device) {
  StatsTable table{StatsReport::memset, "Memsets, by memory kind (time and bytes)", {}, {}, {}};
  table.columns = timed_columns("count", true, {}, "memory", "Memory");
  const MemsetTable& m = t.memsets();
  return by_copy_kind<MemoryKind>(std::move(table), t, device, m, m.mem_kind, "no memsets");
}

StatsTable sync_table(const Trace& t, std::uint32_t device) {
  StatsTable table{StatsReport::sync, "Synchronizations (host waits for the GPU), by what was waited on", {}, {}, {}};
  table.columns = timed_columns("count", false, {}, "type", "Type");
  const SyncTable& y = t.syncs();
  Groups groups;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (device == kNoDevice || y.device[i] == device) groups.add(y.type[i], y.end[i] - y.start[i]);
  timed_rows(table, groups, false, no_extra,
             [](std::uint64_t type) { return std::string(to_string(static_cast<SyncType>(type))); });
  if (table.rows.empty()) table.note = "no synchronizations recorded";
  return table;
}

// NVTX and framework ranges by (domain, name); marks have no duration and are counted in the note.
StatsTable range_table(const Trace& t) {
  StatsTable table{StatsReport::ranges, "NVTX and framework ranges, by domain and name", {}, {}, {}};
  table.columns = timed_columns("instances", false, {{"style", "Style"}, {"domain", "Domain"}}, "name", "Name");
  const RangeTable& r = t.ranges();
  Groups groups;
  std::unordered_map<std::uint64_t, RangeKind> style;
  std::uint64_t marks = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r.kind_at(i) == RangeKind::mark) {
      ++marks;
      continue;
    }
    const std::uint64_t key = (std::uint64_t{r.domain[i]} << 32) | r.name[i];
    groups.add(key, r.end[i] - r.start[i]);
    style.emplace(key, r.kind_at(i));
  }
  timed_rows(
      table, groups, false,
      [&](std::uint64_t key) {
        return std::vector<std::string>{std::string(to_string(style[key])),
                                        std::string(t.str(static_cast<StringId>(key >> 32)))};
      },
      [&](std::uint64_t key) { return std::string(t.str(static_cast<StringId>(key & 0xffffffffu))); });
  if (marks) table.note = format::count(marks) + " marks (instants, no duration) are not listed";
  if (table.rows.empty() && !marks) table.note = "no NVTX or framework ranges in this trace";
  return table;
}

// Why a trace has no OS runtime calls: its source cannot record them, or it
// could and recorded none.
std::string no_os_calls_note(const Trace& t) {
  switch (t.meta().source) {
    case TraceSource::nsys_sqlite:
      if (t.meta().property("nsys.osrt_api") == "absent")
        return "no OS runtime calls: the export has no OSRT_API table (OS runtime tracing was off; nsys profile "
               "--trace=osrt records them)";
      return "no OS runtime calls recorded: the export's OSRT_API table holds no calls";
    case TraceSource::cupti:
      return "no OS runtime calls: gpuscope capture does not record them (an Nsight Systems export traced with "
             "--trace=osrt has them)";
    case TraceSource::chrome_json:
      return "no OS runtime calls: Chrome/Kineto JSON traces do not record them (an Nsight Systems export traced "
             "with --trace=osrt has them)";
    case TraceSource::synthetic: return "no OS runtime calls: synthetic traces have none";
    case TraceSource::unknown: break;
  }
  return "no OS runtime calls in this trace";
}

// OS runtime calls by function name, as Nsight Systems' osrt_sum: every call
// counts, a nested one (pthread_mutex_lock inside fread) as well as the one
// around it, so totals may add up to more than the threads' time.
StatsTable osrt_table(const Trace& t) {
  StatsTable table{StatsReport::osrt, "OS runtime calls, by function", {}, {}, {}};
  table.columns = timed_columns("calls", false, {}, "name", "Name");
  const OsCallTable& o = t.os_calls();
  Groups groups;
  std::uint64_t nested = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    groups.add(o.name[i], o.end[i] - o.start[i]);
    nested += o.nesting_at(i) != 0;
  }
  timed_rows(table, groups, false, no_extra,
             [&](std::uint64_t id) { return std::string(t.str(static_cast<StringId>(id))); });
  if (table.rows.empty())
    table.note = no_os_calls_note(t);
  else if (nested)
    table.note = format::count(nested) +
                 " calls ran inside another traced OS call; each is counted in its own row and in the time of the "
                 "call around it, as Nsight Systems' osrt_sum counts them";
  return table;
}

StatsTable step_table(const Profile& p, std::uint32_t device) {
  StatsTable table{StatsReport::steps, "Steps", {}, {}, {}};
  table.columns = {{"index", "Step"},
                   {"device", "GPU"},
                   {"rank", "Rank"},
                   {"start_ns", "Start (ns)"},
                   {"duration_ns", "Duration (ns)"},
                   {"compute_ns", "Compute (ns)"},
                   {"communication_ns", "Comm (ns)"},
                   {"memcpy_ns", "Memcpy (ns)"},
                   {"idle_ns", "Idle (ns)"},
                   {"input_wait_ns", "Input wait (ns)"},
                   {"host_wait_ns", "Host wait (ns)"},
                   {"name", "Name"}};
  auto id = [](std::int64_t v, bool known) { return known ? StatsCell(v) : StatsCell(std::monostate{}); };
  for (const Step& s : p.steps.steps) {
    if (device != kNoDevice && s.device != device) continue;
    std::vector<StatsCell> row;
    row.emplace_back(std::int64_t{s.index});
    row.push_back(id(s.device, s.device != kNoDevice));
    row.push_back(id(s.rank, s.rank >= 0));
    for (TimeNs v : {s.range.start - p.window.start, s.range.duration(), s.compute_ns, s.communication_ns, s.memcpy_ns,
                     s.idle_ns, s.input_wait_ns, s.host_wait_ns})
      row.emplace_back(v);
    row.emplace_back(s.name);
    table.rows.push_back(std::move(row));
  }
  table.note = table.rows.empty()
                   ? (p.steps.unused_step_ranges ? "no steps: " + std::to_string(p.steps.unused_step_ranges) +
                                                       " step ranges on the host, none around GPU work"
                      : p.steps.not_steps.empty() ? "no steps found"
                                                  : "no steps: " + p.steps.not_steps)
                   : "steps from " + std::string(to_string(p.steps.source)) + "; start_ns from the start of the trace";
  return table;
}

}  // namespace

std::vector<StatsTable> stats_tables(const Trace& trace, const Profile* profile, const StatsOptions& o) {
  const std::span<const StatsReport> wanted =
      o.reports.empty() ? default_stats_reports() : std::span<const StatsReport>(o.reports);
  std::vector<StatsTable> out;
  for (StatsReport r : wanted) {
    switch (r) {
      case StatsReport::kernels: out.push_back(kernel_table(trace, o.device)); break;
      case StatsReport::api: out.push_back(api_table(trace)); break;
      case StatsReport::memcpy: out.push_back(memcpy_table(trace, o.device)); break;
      case StatsReport::memset: out.push_back(memset_table(trace, o.device)); break;
      case StatsReport::sync: out.push_back(sync_table(trace, o.device)); break;
      case StatsReport::ranges: out.push_back(range_table(trace)); break;
      case StatsReport::osrt: out.push_back(osrt_table(trace)); break;
      case StatsReport::steps: out.push_back(step_table(profile ? *profile : Profile{}, o.device)); break;
    }
  }
  return out;
}

// [SECTION] Text -------------------------------------------------------------------------------------

namespace {

// A cell as a person reads it: shares as percentages, whole numbers with
// thousands separators, reals to one decimal, unknown as "-".
std::string text_cell(const StatsCell& c, bool share) {
  if (std::holds_alternative<std::monostate>(c)) return "-";
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&c)) {
    std::string s = format::count(static_cast<std::uint64_t>(*i < 0 ? -*i : *i));
    if (*i < 0) s.insert(0, 1, '-');
    return s;
  }
  const double v = std::get<double>(c);
  const std::string f = format::fixed(share ? v * 100 : std::abs(v), 1);
  if (share) return f;
  const std::size_t dot = f.find('.');
  std::string out = format::count(std::stoull(f.substr(0, dot)));
  if (v < 0) out.insert(0, 1, '-');
  return out.append(f, dot, std::string::npos);
}

// The table's rows as text, names shortened with a numbered key where asked.
std::string text_table(const StatsTable& t, const StatsTextOptions& o, std::size_t& next_key) {
  std::string out = t.title + "\n";
  if (t.rows.empty()) return out + "  (" + t.note + ")\n\n";
  const std::size_t n = t.columns.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> key;
  for (const auto& row : t.rows) {
    std::vector<std::string> line;
    for (std::size_t c = 0; c < n; ++c) line.push_back(text_cell(row[c], t.columns[c].key == "share"));
    std::string& name = line.back();
    if (o.max_name && name.size() > o.max_name) {
      const std::string k = "[" + std::to_string(next_key++) + "]";
      key.push_back("  " + k + " " + name);
      name = k + " " + name.substr(0, o.max_name > k.size() + 4 ? o.max_name - k.size() - 4 : 0) + "…";
    }
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> width(n);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = t.columns[c].header.size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  auto emit = [&](const std::vector<std::string>& line) {
    std::string s = " ";
    for (std::size_t c = 0; c + 1 < n; ++c) s += " " + std::string(width[c] - line[c].size(), ' ') + line[c];
    out += s + "  " + line[n - 1] + "\n";
  };
  std::vector<std::string> header;
  for (const StatsColumn& c : t.columns) header.push_back(c.header);
  emit(header);
  for (const auto& line : cells) emit(line);
  if (!t.note.empty()) out += "  (" + t.note + ")\n";
  if (!key.empty()) {
    out += "  Names shortened above, in full:\n";
    for (const std::string& k : key) out += "  " + k + "\n";
  }
  return out + "\n";
}

}  // namespace

std::string stats_text(const std::vector<StatsTable>& tables, const StatsTextOptions& options) {
  std::string out;
  std::size_t next_key = 1;
  for (const StatsTable& t : tables) out += text_table(t, options, next_key);
  return out;
}

// [SECTION] CSV -------------------------------------------------------------------------------------

namespace {

// Shortest text that reads back as the same double.
std::string real(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "";
}

std::string csv_field(const StatsCell& c) {
  if (std::holds_alternative<std::monostate>(c)) return "";
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c)) return real(*d);
  const std::string& s = std::get<std::string>(c);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

std::string stats_csv(const std::vector<StatsTable>& tables) {
  std::string out;
  for (const StatsTable& t : tables) {
    if (tables.size() > 1) out.append(out.empty() ? "# " : "\n# ").append(to_string(t.report)) += ": " + t.title + "\n";
    for (std::size_t c = 0; c < t.columns.size(); ++c) out.append(c ? "," : "").append(t.columns[c].key);
    out += '\n';
    for (const auto& row : t.rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out.append(c ? "," : "").append(csv_field(row[c]));
      out += '\n';
    }
  }
  return out;
}

// [SECTION] JSON ------------------------------------------------------------------------------------

std::string stats_json(const std::vector<StatsTable>& tables, const std::string& file) {
  using json::kv;
  std::string text;
  json::Writer out(text);
  const auto row_json = [&](const StatsTable& t, const std::vector<StatsCell>& row) {
    out.begin_object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      out.key(t.columns[c].key);
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
              out.null();
            else
              out.value(v);
          },
          row[c]);
    }
    out.end_object();
  };
  const auto table_json = [&](const StatsTable& t) {
    const auto columns = [&](json::Writer& w) { w.array(t.columns, [&](const StatsColumn& c) { w.string(c.key); }); };
    const auto rows = [&](json::Writer& w) { w.array(t.rows, [&](const auto& row) { row_json(t, row); }); };
    out.object(kv("report", to_string(t.report)), kv("title", t.title), kv("note", t.note), kv("columns", columns),
               kv("rows", rows));
  };
  out.object(kv("schema", "gpuscope.stats/1"), kv("file", file),
             kv("reports", [&](json::Writer& w) { w.array(tables, table_json); }));
  return text + "\n";
}

}  // namespace gpuscope
