// The JSON objects of gpuscope.report/1: for each record, the doc's heading
// and intro, what is checked after reading it, and the code of the keys that
// are not a plain member. The keys themselves, in the order written, with
// their units and meanings, are the records' rows in
// analysis/profile_fields.h (listed once, for the report and the rank
// digest). report_json() writes them, parse_report_json() reads them back,
// and docs/report-schema.md's key tables are generated from them
// (report_schema_markdown(); a test fails when the doc differs, `cmake
// --build build --target update-docs` rewrites it).
//
// [SECTION] Time ranges and duration statistics
// [SECTION] Per device
// [SECTION] Categories and hotspots
// [SECTION] Framework ops
// [SECTION] Steps
// [SECTION] Idle time, launches, ranks
// [SECTION] Synchronization and copies
// [SECTION] Findings
// [SECTION] Critical path and simulated fixes
// [SECTION] Trace quality
// [SECTION] The top level
// [SECTION] Entry points
//
// A new number: compute it (src/analysis), then add its row to its record's
// list in analysis/profile_fields.h. A new record: its list there, and its
// Record<T> here.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/util/parallel.h"
#include "export/detail/report_fields.h"
#include "export/report_json.h"
#include "words/damage_text.h"

namespace gpuscope::detail {

// [SECTION] Time ranges and duration statistics -------------------------------------------

template <>
struct Record<TimeRange> {
  static constexpr std::string_view name = "range";
  static constexpr std::string_view meaning = "A time range on the trace's clock.";
  static void check(const TimeRange& r, const std::string& path, const Reader& reader) {
    if (r.end < r.start) reader.fail(path, "ends before it starts");
  }
};

template <>
struct Record<DurationStats> {
  static constexpr std::string_view name = "stats";
  static constexpr std::string_view meaning = "Summary statistics of a set of durations.";
};

// [SECTION] Per device ------------------------------------------------------------------------

template <>
struct Record<HwMetric> {
  static constexpr std::string_view name = "hw_metric";
  static constexpr std::string_view meaning =
      "One hardware series of a GPU over its window, as measured (docs/metrics.md, \"Hardware metrics\").";
};

template <>
struct Record<HwCategory> {
  static constexpr std::string_view name = "hw_category";
  static constexpr std::string_view meaning =
      "The hardware samples taken while kernels of one category ran (each sample to the longest kernel in flight): "
      "a statistical estimate.";
};

template <>
struct Record<DeviceHw> {
  static constexpr std::string_view name = "device_hw";
  static constexpr std::string_view meaning =
      "What the GPU's hardware measured (counter series `hw.*`, `nvml.*`); empty lists and zeros without them.";
};

template <>
struct Record<DeviceOccupancy> {
  static constexpr std::string_view name = "occupancy";
  static constexpr std::string_view meaning =
      "Theoretical occupancy of a GPU's kernels, weighted by kernel time. Formulas: docs/metrics.md, \"Occupancy\".";
};

template <>
struct Record<DeviceSummary> {
  static constexpr std::string_view name = "device";
  static constexpr std::string_view meaning =
      "One per GPU (per rank and GPU in jobs). Formulas: docs/metrics.md, \"Per GPU\".";
};

// [SECTION] Categories and hotspots -----------------------------------------------------------

template <>
struct Record<CategoryTime> {
  static constexpr std::string_view name = "category";
  static constexpr std::string_view meaning = "Kernel time of one kernel category (docs/metrics.md).";
};

template <>
struct Record<Hotspot> {
  static constexpr std::string_view name = "hotspot";
  static constexpr std::string_view meaning = "The kernels of one name.";
};

// [SECTION] Framework ops -------------------------------------------------------------------------

template <>
struct Record<OpKernel> {
  static constexpr std::string_view name = "op_kernel";
  static constexpr std::string_view meaning = "The kernels of one name under an op.";
};

template <>
struct Record<OpRow> {
  static constexpr std::string_view name = "op";
  static constexpr std::string_view meaning =
      "The calls of one framework op, per name or per name × input shapes and types (docs/ops.md).";
};

template <>
struct Record<OpSummary> {
  static constexpr std::string_view name = "op_summary";
  static constexpr std::string_view meaning = "How many GPU ops have a launching op, and what the shapes allow.";
};

template <>
struct Record<ModuleTime> {
  static constexpr std::string_view name = "module_time";
  static constexpr std::string_view meaning = "One nn.Module's GPU time, forward and backward.";
};

template <>
struct Record<ModuleSplit> {
  static constexpr std::string_view name = "module_split";
  static constexpr std::string_view meaning =
      "Forward and backward GPU time per nn.Module: each backward op linked to its forward op by PyTorch's "
      "sequence number (docs/ops.md).";
};

template <>
struct Record<WorkloadKind> {
  static constexpr std::string_view name = "workload";
  static constexpr std::string_view meaning =
      "What the analysis recognised the traced program to be, with the evidence; the findings' advice fits it.";
};

// [SECTION] Steps -------------------------------------------------------------------------------

template <>
struct Record<StepHw> {
  static constexpr std::string_view name = "step_hw";
  static constexpr std::string_view meaning =
      "What the GPU's hardware measured during the step: the means of the samples inside it (null: no samples).";
};

template <>
struct Record<Step> {
  static constexpr std::string_view name = "step";
  static constexpr std::string_view meaning =
      "One training step on one GPU; compute_ns, communication_ns, memcpy_ns and idle_ns add up to duration_ns.";
};

template <>
struct Record<HostRange> {
  static constexpr std::string_view name = "host_range";
  static constexpr std::string_view meaning = "Host ranges of one name (framework ops, Python functions, annotations).";
};

template <>
struct Record<OpGrowth> {
  static constexpr std::string_view name = "op_growth";
  static constexpr std::string_view meaning = "An op's host time in a slow step against its median over the steps.";
};

template <>
struct Record<SlowStep> {
  static constexpr std::string_view name = "slow_step";
  static constexpr std::string_view meaning =
      "A step a fifth slower than its GPU's median step or more, and what grew (docs/metrics.md, \"Slow steps\").";
};

template <>
struct Record<StepSummary> {
  static constexpr std::string_view name = "step_summary";
  static constexpr std::string_view meaning = "The steps together; the times are sums over all steps.";
};

// [SECTION] Idle time, launches, ranks ----------------------------------------------------

template <>
struct Record<IdleByCause> {
  static constexpr std::string_view name = "idle";
  static constexpr std::string_view meaning =
      "Idle gaps between consecutive ops of one stream, by cause (HTA's rules, docs/metrics.md).";
};

template <>
struct Record<LaunchStats> {
  static constexpr std::string_view name = "launches";
  static constexpr std::string_view meaning = "API calls that launched GPU ops, and the ops they launched.";
};

template <>
struct Record<CollectiveSite> {
  static constexpr std::string_view name = "collective_site";
  static constexpr std::string_view meaning =
      "One collective call site: the collectives of one kind and size at one place in their steps, on one GPU, "
      "compared across steps (docs/metrics.md, \"Collective sites\").";
};

template <>
struct Record<CollectiveKind> {
  static constexpr std::string_view name = "collective_kind";
  static constexpr std::string_view meaning = "The collective sites of one kind, pooled across GPUs and ranks.";
};

template <>
struct Record<CollectiveSummary> {
  static constexpr std::string_view name = "collective_summary";
  static constexpr std::string_view meaning =
      "The collective sites together: the same site of every GPU and rank pooled, its fastest instance anywhere "
      "taken as the transfer.";
};

template <>
struct Record<TemporalBreakdown> {
  static constexpr std::string_view name = "temporal";
  static constexpr std::string_view meaning =
      "HTA's temporal breakdown of one rank (of one rank and GPU when a trace holds several GPUs), computed as HTA "
      "does.";
};

template <>
struct Record<RankSummary> {
  static constexpr std::string_view name = "rank";
  static constexpr std::string_view meaning = "One rank (one file) of a job, per GPU when a process drove several.";
};

template <>
struct Record<CollectiveInstance> {
  static constexpr std::string_view name = "collective";
  static constexpr std::string_view meaning =
      "One collective instance of a job, matched across ranks by call site or in order (docs/scale.md); job clock.";
};

template <>
struct Record<Straggler> {
  static constexpr std::string_view name = "straggler";
  static constexpr std::string_view meaning = "A rank of a job by the wait it caused at the matched collectives.";
};

template <>
struct Record<JobStep> {
  static constexpr std::string_view name = "job_step";
  static constexpr std::string_view meaning = "A step of a job (the reference rank's steps) and its critical rank.";
};

template <>
struct Record<LeftOut> {
  static constexpr std::string_view name = "left_out";
  static constexpr std::string_view meaning = "A file of a job that was not analysed, or ranks no file gives.";
};

template <>
struct Record<Skew> {
  static constexpr std::string_view name = "skew";
  static constexpr std::string_view meaning =
      "How far GPUs or ranks are from each other; spreads are (max − min) / mean over GPUs with work, 0 = "
      "identical.";
};

// [SECTION] Synchronization and copies --------------------------------------------------------

template <>
struct Record<SyncStats> {
  static constexpr std::string_view name = "syncs";
  static constexpr std::string_view meaning = "Host-side synchronizations (device, stream and event syncs).";
};

template <>
struct Record<SyncSite> {
  static constexpr std::string_view name = "sync_site";
  static constexpr std::string_view meaning =
      "One place where the steps synchronize with the GPU between their launches (a CUDA graph capture cannot "
      "hold one).";
};

template <>
struct Record<StepPart> {
  static constexpr std::string_view name = "step_part";
  static constexpr std::string_view meaning =
      "A named range directly under the steps (record_function, NVTX), by name.";
};

template <>
struct Record<CopyGroup> {
  static constexpr std::string_view name = "copy_group";
  static constexpr std::string_view meaning = "The copies of one direction, stream kind and host memory.";
};

template <>
struct Record<MemcpyStats> {
  static constexpr std::string_view name = "memcpys";
  static constexpr std::string_view meaning = "Copies and fills done by the copy engines.";
};

// [SECTION] Findings --------------------------------------------------------------------------

template <>
struct Record<Finding> {
  static constexpr std::string_view name = "finding";
  static constexpr std::string_view meaning = "What a rule of docs/findings.md found.";
};

template <>
struct Record<HelpAnswer> {
  static constexpr std::string_view name = "help";
  static constexpr std::string_view meaning =
      "One of the changes users ask about (\"What would help?\"), answered from the trace.";
};

template <>
struct Record<IdleCharge> {
  static constexpr std::string_view name = "idle_charge";
  static constexpr std::string_view meaning =
      "One part of the GPUs' idle time by what it waited for, and the one finding that charges it.";
};

template <>
struct Record<HostFrame> {
  static constexpr std::string_view name = "host_frame";
  static constexpr std::string_view meaning = "A frame of the host's stacks and the samples it was innermost in.";
};

template <>
struct Record<HostWhere> {
  static constexpr std::string_view name = "host_where";
  static constexpr std::string_view meaning =
      "Where the host was during one cause's idle time: the host samples of the threads the GPUs waited for (the "
      "thread whose launch ended the gap, else the one that launched most of the GPU's work).";
};

// [SECTION] Critical path and simulated fixes ------------------------------------------------

template <>
struct Record<PathCategory> {
  static constexpr std::string_view name = "path_category";
  static constexpr std::string_view meaning = "GPU time on the critical path of one kernel category.";
};

template <>
struct Record<PathOp> {
  static constexpr std::string_view name = "path_op";
  static constexpr std::string_view meaning = "GPU ops of one name on the critical path.";
};

template <>
struct Record<CriticalPath> {
  static constexpr std::string_view name = "critical_path";
  static constexpr std::string_view meaning =
      "What decided the steps' length: their critical paths on the replayed dependency graph, summed over the "
      "steps simulated (`simulation.scope`), by kind and kernel category (docs/whatif.md). All zero when not "
      "simulated.";
};

template <>
struct Record<Prediction> {
  static constexpr std::string_view name = "prediction";
  static constexpr std::string_view meaning = "A fix's predicted step time.";
};

template <>
struct Record<Simulation> {
  static constexpr std::string_view name = "simulation";
  static constexpr std::string_view meaning =
      "The replay of the dependency graph that the simulated savings come from (docs/whatif.md).";
};

// [SECTION] Trace quality -------------------------------------------------------------------

// One table's rows in a file's damage, as the report lists them.
struct TableLossRow {
  std::string table;
  std::uint64_t loaded = 0, lost = 0;
  LossCount count = LossCount::exact;
};

}  // namespace gpuscope::detail

namespace gpuscope::record {

// The report's own row type (FileDamage::tables as it lists them), listed
// here: the digest keeps the tables as they are.
template <class V>
constexpr void rows(V& v, Of<detail::TableLossRow>) {
  using L = detail::TableLossRow;
  field<&L::table>(v, "table", "",
                   "`kernels`, `memcpys`, `memsets`, `api_calls`, `ranges`, `syncs`, `counters` or `overheads`");
  field<&L::loaded>(v, "loaded", "", "rows read");
  field<&L::lost>(v, "lost", "", "rows lost, as `count` says");
  field<&L::count>(v, "count", "",
                   "how well `lost` is known: from the file's index or declared totals, a lower bound (more may have "
                   "followed the cut), or an estimate (a damaged section header's count)");
}

std::string file_headline(const FileQuality& q) { return damage_headline(q.damage, q.devices); }

}  // namespace gpuscope::record

namespace gpuscope::detail {

template <>
struct Record<TableLossRow> {
  static constexpr std::string_view name = "table_loss";
  static constexpr std::string_view meaning = "The rows of one table of a damaged file.";
};

// FileDamage::tables as a list of the tables that lost rows (or may have).
struct TableLossesKind {
  template <class T>
  struct For {
    static std::string type_() { return "[table_loss]"; }
    static void emit_(const T& q, const char* key, Out& out, const ReportJsonOptions& o) {
      out.key(key);
      out.begin_array();
      for (int i = 0; i < kTableCount; ++i) {
        const TableLoss& t = q.damage.tables[i];
        if (t.lost == 0 && t.count == LossCount::exact) continue;
        emit_record(TableLossRow{std::string(to_string(static_cast<TableId>(i))), t.loaded, t.lost, t.count}, out, o);
      }
      out.end_array();
    }
    static void read_(T& q, const char* key, const Json& from, const std::string& path, const Reader& r) {
      std::vector<TableLossRow> rows;
      read_value(rows, from, key, path, r);
      for (std::size_t n = 0; n < rows.size(); ++n) {
        int i = 0;
        while (i < kTableCount && to_string(static_cast<TableId>(i)) != rows[n].table) ++i;
        if (i == kTableCount) continue;  // a table of a later version
        q.damage.tables[i] = TableLoss{rows[n].loaded, rows[n].lost, rows[n].count};
      }
    }
    static void rows_(SchemaDoc& doc, const Field<T>& f) { add_row(doc, f.key, f.type(), f.unit, f.meaning); }
    static constexpr auto type = &type_;
    static constexpr EmitFn<T> emit = &emit_;
    static constexpr ReadFn<T> read = &read_;
    static constexpr auto rows = &rows_;
    static constexpr NestedFn nested = &describe_record<TableLossRow>;
  };
};

template <>
struct Record<FileQuality> {
  static constexpr std::string_view name = "file_quality";
  static constexpr std::string_view meaning =
      "What one analysed file lost in storage (cut short or damaged), apart from what the recorder dropped "
      "(docs/metrics.md, \"Trace quality\").";
  static constexpr Field<FileQuality> custom[] = {Spec<TableLossesKind>{"rows_lost", "", ""}};
};

template <>
struct Record<TraceQuality> {
  static constexpr std::string_view name = "trace_quality";
  static constexpr std::string_view meaning =
      "Storage damage of the analysed files, said first by every output; recording drops stay in `trace_stats` and "
      "the `dropped-records` finding.";
};

// [SECTION] The top level ---------------------------------------------------------------------

std::string string_type() { return "string"; }
std::string counters_type() { return "{string: int}"; }

void write_schema(const Profile&, const char* key, Out& out, const ReportJsonOptions&) {
  out.member(key, Profile::kSchema);
}
void read_schema(Profile&, const char* key, const Json& from, const std::string& path, const Reader& r) {
  const std::string schema = r.str(from, key, path);
  if (schema != Profile::kSchema)
    r.fail(Reader::join(path, key),
           "\"" + schema + "\" is not " + Profile::kSchema + " (made by another gpuscope version?)");
}

void write_trace_stats(const Profile& p, const char* key, Out& out, const ReportJsonOptions&) {
  out.key(key);
  out.begin_object();
  for (const auto& [name, value] : p.trace_stats) out.member(name, value);
  out.end_object();
}
void read_trace_stats(Profile& p, const char* key, const Json& from, const std::string& path, const Reader& r) {
  const Json& stats = r.member(from, key, path);
  const std::string at = Reader::join(path, key);
  if (!stats.is_object()) r.fail(at, "expected an object");
  for (const auto& item : stats.items()) p.trace_stats.emplace_back(item.key(), r.u64(stats, item.key().c_str(), at));
}

template <>
struct Record<Profile> {
  static constexpr std::string_view name = "";  // the document itself
  static constexpr std::string_view meaning = "Top level, in this order:";
  static constexpr Field<Profile> custom[] = {
      custom_key<&string_type, &write_schema, &read_schema>("schema"),
      custom_key<&counters_type, &write_trace_stats, &read_trace_stats>("trace_stats"),
  };
};

// [SECTION] Entry points ------------------------------------------------------------------------

namespace {

std::string escaped(std::string_view cell) {
  std::string s;
  for (char c : cell) {
    if (c == '|') s += '\\';
    s += c;
  }
  return s;
}

}  // namespace

void begin_table(SchemaDoc& doc, std::string_view name, std::string_view meaning) {
  if (!doc.text.empty()) doc.text += "\n";
  if (!name.empty()) doc.text += "### `" + std::string(name) + "`\n\n";
  doc.text += std::string(meaning) + "\n\n| key | type | unit | meaning |\n|---|---|---|---|\n";
}

void add_row(SchemaDoc& doc, std::string_view key, const std::string& type, std::string_view unit,
             std::string_view meaning) {
  doc.text +=
      "| `" + std::string(key) + "` | " + escaped(type) + " | " + escaped(unit) + " | " + escaped(meaning) + " |\n";
}

namespace {

// Items [begin, end) of one list, formatted into parts[part].
struct ListChunk {
  const Field<Profile>* field;
  std::size_t begin, end, part;
};

}  // namespace

// The keys that are not lists, and each list's key and brackets, are written
// here in order into the current part; each range of a list's items gets a
// part of its own, left empty until the ranges are formatted, all at once.
// A writer is made for each piece (Out::inside), where the piece sits in the
// document: a part's string moves when parts are added.
std::vector<std::string> write_report_parts(const Profile& p, const ReportJsonOptions& options,
                                            std::size_t chunk_items) {
  const bool pretty = options.pretty;
  if (chunk_items == 0) chunk_items = kReportChunkItems;
  std::vector<std::string> parts(1, "{");
  std::vector<ListChunk> chunks;
  bool keys = false;  // written in the top-level object so far
  for (const Field<Profile>& f : kFields<Profile>) {
    Out top = Out::inside(parts.back(), pretty, 0, keys);
    if (!f.items) {
      f.emit(p, f.key, top, options);
      keys = !top.container_empty();
      continue;
    }
    top.key(f.key);
    top.begin_array();
    keys = true;
    const std::size_t n = f.count(p, options);
    for (std::size_t begin = 0; begin < n; begin += chunk_items) {
      chunks.push_back(ListChunk{&f, begin, std::min(n, begin + chunk_items), parts.size()});
      parts.emplace_back();
    }
    parts.emplace_back();
    Out::inside(parts.back(), pretty, 1, n).end_array();
  }
  Out::inside(parts.back(), pretty, 0, keys).end_object();
  parallel_for(chunks.size(), options.jobs, [&](std::size_t i) {
    const ListChunk& c = chunks[i];
    Out out = Out::inside(parts[c.part], pretty, 1, c.begin);
    c.field->items(p, options, c.begin, c.end, out);
  });
  return parts;
}

std::string write_report_text(const Profile& p, const ReportJsonOptions& options, std::size_t chunk_items) {
  std::vector<std::string> parts = write_report_parts(p, options, chunk_items);
  std::size_t size = 0;
  for (const std::string& part : parts) size += part.size();
  std::string out;
  out.reserve(size + 1);  // report_json() adds a newline
  for (std::string& part : parts) {
    out += part;
    std::string().swap(part);
  }
  return out;
}

Profile read_report(const Json& document, const Reader& r) {
  Profile p;
  read_record(p, document, "", r);
  return p;
}

}  // namespace gpuscope::detail

namespace gpuscope {

void write_file_quality_json(json::Writer& out, const FileQuality& q) {
  detail::emit_record(q, out, ReportJsonOptions{});
}

void write_op_summary_json(json::Writer& out, const OpSummary& s) { detail::emit_record(s, out, ReportJsonOptions{}); }

std::string report_schema_markdown() {
  detail::SchemaDoc doc;
  detail::describe_record<Profile>(doc);
  return doc.text + "\n";  // a blank line ends the last table
}

}  // namespace gpuscope
