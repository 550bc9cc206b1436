// The report's field table (src/export/report_fields.cpp) against what it
// drives: docs/report-schema.md's key tables (generated from it, row for
// row), the JSON the writer makes (every object has exactly its documented
// keys, in order, of the documented types) and the reader (round trip, the
// path of what is wrong).
//
// GPUSCOPE_UPDATE_DOCS=1 (`cmake --build build --target update-docs`) makes
// the doc test rewrite the doc's generated part instead of failing.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/profile.h"
#include "export/detail/report_fields.h"
#include "export/report_json.h"
#include "support/profile_fill.h"
#include "trace/error.h"

namespace gpuscope {
namespace {

using nlohmann::ordered_json;

const std::string kDocPath = std::string(GPUSCOPE_SOURCE_DIR) + "/docs/report-schema.md";
constexpr std::string_view kBegin = "<!-- BEGIN report fields -->\n";
constexpr std::string_view kEnd = "<!-- END report fields -->\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A Profile with every list non-empty, every optional GPU both set and
// unset, and values that differ from their defaults.
Profile full_profile() {
  Profile p;
  p.source = TraceSource::chrome_json;
  p.producer = "PyTorch Profiler (Kineto)";
  p.files = {"rank0.json", "rank1.json"};
  p.clock_alignment = "aligned on the first all-reduce";
  p.window = {1'000, 9'000};
  p.kernel_time_ns = 5'000;
  DeviceSummary d;
  d.id = 1;
  d.name = "H200";
  d.compute_major = 9;
  d.rank = 1;
  d.window = {1'100, 8'900};
  d.span_ns = 7'800;
  d.utilization = 0.625;
  d.kernels = 12;
  d.memory_bytes = 150'000'000'000;
  d.occupancy.small_grid_tiny_ops = {{"aten::add_ [[1],[1],[]]", 2'400, 680}};
  d.peak_allocated_bytes = 0;  // known to be 0: written as 0, not null
  p.devices = {d};
  CategoryTime c;
  c.category = KernelCategory::padding;
  c.time_ns = 2'000;
  c.share = 0.4;
  c.count = 3;
  c.stats = {3, 2'000, 500, 800, 666, 700};
  p.categories = {c};
  Hotspot h;
  h.name = "Eigen::TensorPaddingOp";
  h.category = KernelCategory::padding;
  h.stats = c.stats;
  h.share = 0.4;
  h.tensor_cores = true;
  Hotspot h2 = h;
  h2.name = "void pad_kernel<float>";
  h2.device = 1;
  p.hotspots = {h, h2};
  // One op with every roofline figure known, one with none (null, not 0).
  OpRow op;
  op.name = "aten::mm";
  op.shapes = "[[64,128],[128,32]]";
  op.dtypes = R"(["float","float"])";
  op.path = "ProfilerStep#1 > aten::matmul";
  op.calls = 2;
  op.cpu_self_ns = 300;
  op.cpu_total_ns = 400;
  op.gpu_self_ns = op.gpu_total_ns = 1'000;
  op.kernels = op.kernels_total = 2;
  op.launch_ns = 50;
  op.family = "gemm";
  op.flops = 1048576;
  op.bytes = 114688;
  op.achieved_tflops = 1.048576;
  op.achieved_tbps = 0.114688;
  op.intensity = 9.142857;
  op.roofline_fraction = 0.25;
  op.bound = "memory";
  op.math = "fp32";
  op.dims = "M=64 N=32 K=128 batch=1";
  op.top_kernels = {{"volta_sgemm_128x64_nn", KernelCategory::gemm, 2, 1'000}};
  OpRow none;
  none.name = "(no op)";
  none.gpu_self_ns = none.gpu_total_ns = 10;
  none.kernels = none.kernels_total = 1;
  none.top_kernels = op.top_kernels;
  p.ops = {op, none};
  p.op_names = p.ops;
  p.op_names[0].shapes = p.op_names[0].dtypes = "";
  p.op_summary = {3, 3, 2, 1, 10, 3, 0, 0, true};
  p.module_split = {true, 3, 2, 1, 900, 100, {{"model.fc", 500, 800, 2}, {"(no module)", 40, 0, 0}}, 300, 4};
  p.devices[0].achieved_tflops = 1.048576;
  p.devices[0].peaks_source = "NVIDIA H200 Tensor Core GPU datasheet (SXM, dense) (H200 SXM)";
  DeviceHw& hw = p.devices[0].hw;
  hw.metrics = {{"hw.sm_active", "%", 120, 45.5, 3, 98}};
  hw.by_category = {{KernelCategory::gemm, 80, 0.75, 0.5, 0.25, 1.5e12}};
  hw.busy_samples = 100;
  hw.low_busy_samples = 40;
  hw.busy_sm_active = 0.5;
  hw.low_kernels = {"small_kernel"};
  hw.throttle_samples = 4;
  hw.throttle_mask = 0x40;
  hw.throttled_steps = 1;
  hw.other_steps = 2;
  hw.throttled_step_mean_ns = 1'700;
  hw.other_step_mean_ns = 1'500;
  hw.sm_clock_max_mhz = 1980;
  hw.throttled_sm_clock_mhz = 1400;
  for (int i = 0; i < 3; ++i) {
    Step s;
    s.index = i;
    s.name = "step " + std::to_string(i);
    s.range = {1'000 + i * 2'000, 2'500 + i * 2'000};
    s.compute_ns = 1'000;
    s.idle_ns = 500;
    s.device = i == 0 ? kNoDevice : 1;
    s.rank = 1;
    if (i == 2) s.peak_allocated_bytes = 7'000'000'000, s.min_allocated_bytes = 1'000'000'000;
    if (i == 1) s.hw = {0.5, 0.25, 0.125, 1e12, 1980, 450.5, 71, true};
    p.steps.steps.push_back(s);
  }
  p.steps.source = StepSource::nvtx;
  p.steps.step_time = {3, 4'500, 1'500, 1'500, 1'500, 1'500};
  p.steps.total_ns = 4'500;
  p.steps.outside_gpu_ns = 900, p.steps.before_gpu_ns = 600;
  p.steps.outside_ranges = {{"preprocess", 500, 2}};
  p.steps.lead_ranges = {{"torch/cuda/__init__.py(1030): synchronize", 300, 3}};
  p.steps.slow_steps = {{"ProfilerStep#9", 0, 0, 163, 126, 61, 24, 98, 99, 7, {{"aten::batch_norm", 25, 16}}}};
  p.steps.backlog_categories = {{KernelCategory::elementwise, 700, 0, 4, {}}};
  p.workload.data_loading_ns = 900;
  p.workload.input_work = {{"preprocess", 600, 2}};
  p.idle = {{1, 1, 7, 100, 20, 3}};
  p.launches.launches = 12;
  p.launches.launch_delay = {12, -50, -10, 30, -4, -2};
  p.launches.short_kernel_share = 0.25;
  p.temporal_breakdown = {{1, kNoDevice, 7'800, 1'000, 6'000, 800, 0.128, 0.769, 0.103}};
  RankSummary r;
  r.rank = 1;
  r.source_file = "rank1.json";
  r.clock_offset_ns = -250;
  r.device = 1;
  p.ranks = {r};
  p.skew = {2, 0.1, 0.2, 0.3, 1, 1};
  CollectiveInstance ci;
  ci.index = 0;
  ci.kind = "all_reduce";
  ci.step = 3;
  ci.range = {2'000, 2'600};
  ci.first_arrival_ns = 2'000;
  ci.last_arrival_ns = 2'300;
  ci.last_rank = 1;
  ci.wait_ns = 300;
  ci.bytes = 4096;
  p.collectives = {ci};
  CollectiveSite site;
  site.rank = 1;
  site.device = 1;
  site.kind = "all_reduce";
  site.named_by = "nccl:all_reduce";
  site.bytes = 4096;
  site.ordinal = 0;
  site.kernel = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  site.durations = {2, 900, 300, 600, 450, 300};
  site.wait_ns = 300;
  site.exposed_ns = 700;
  p.collective_sites = {site};
  p.collective_summary.kinds = {{"all_reduce", 1, 900, 700, 900, 300}};
  p.collective_summary.sites = p.collective_summary.repeated_sites = 1;
  p.collective_summary.time_ns = p.collective_summary.repeated_ns = 900;
  p.collective_summary.exposed_ns = 700;
  p.collective_summary.wait_ns = 300;
  p.collective_summary.widest = site;
  p.collective_summary.renamed_sites = 1;
  p.stragglers = {{1, "rank1.json", 300, 1, 1, 0}, {0, "rank0.json", 0, 0, 0, 300}};
  p.job_steps = {{3, 1, 300}};
  p.left_out = {{"rank2.json", "not a trace"}, {"", "1 of the job's 4 ranks have no file (rank 3)"}};
  p.syncs.count = 4;
  p.memcpys.bytes = 1 << 20;
  p.memcpys.groups = {{"HtoD", false, "pageable", 2, 1 << 20, 900, 1}};
  p.syncs.copies = 1;
  p.syncs.gpu_idle_after_copies_ns = 40;
  p.syncs.mid_step = 2;
  p.syncs.mid_step_sites = {{"train.py(12): step", "aten::item", "## sparse ##", 2, 30}};
  p.syncs.step_parts = {{"## forward ##", 40, 0}, {"## sparse ##", 3, 2}};
  Finding f;
  f.id = "padding-hotspot";
  f.severity = Severity::critical;
  f.title = "40.0% of kernel time is in padding kernels";
  f.evidence = "Top kernels: …";
  f.recommendation = "Let the convolution do the padding.";
  f.saving_ns = 2'000;
  f.metric = 0.4;
  f.threshold = 0.05;
  f.ranges = {{1'200, 1'900}, {3'200, 3'800}};
  f.saving_source = SavingSource::simulated;
  f.fix = "--remove padding";
  f.predicted_step_ns = 2'500;
  f.kernels = {h.name, h2.name};
  Finding g = f;
  g.id = "low-utilization";
  g.device = 1;
  p.findings = {f, g};
  Finding m = g;
  m.id = "sync-memcpy";
  m.variant = "";
  m.share = 0.004;
  p.minor_findings = {m};
  HelpAnswer yes;
  yes.id = "data-layout";
  yes.question = "a different data layout?";
  yes.verdict = Verdict::yes;
  yes.reason = "41.0% of kernel time is layout overhead (padding 21.0%, broadcast 20.0%)";
  yes.findings = {"padding-hotspot", "broadcast-hotspot"};
  yes.fix = "--remove padding";
  yes.predicted_step_ns = 4'000;
  HelpAnswer unknown = yes;
  unknown.id = "input-workers";
  unknown.verdict = Verdict::unknown;
  unknown.findings = {"gpu-idle-gaps"};
  unknown.fix.clear();
  unknown.predicted_step_ns = 0;
  p.helps = {yes, unknown};
  IdleCharge charged;
  charged.cause = "input-wait";
  charged.ns = 10;
  charged.finding = "input-bound";
  IdleCharge unclaimed = charged;
  unclaimed.cause = "other";
  unclaimed.finding.clear();
  unclaimed.note = "no finding";
  p.idle_charges = {charged, unclaimed};
  HostWhere where;
  where.cause = "input-wait";
  where.samples = 420;
  where.threads = 1;
  where.thread = "python (pid 4505, tid 4505)";
  where.path = {"train.py(40): train", "dataloader.py(631): __next__", "Image.py(3236): open"};
  where.path_samples = 298;
  where.path_depth = 7;
  where.path_from_root = true;
  where.leaves = {{"Image.py(3236): open", 250}, {"decoder.py(12): decode", 48}};
  where.note = "the rank with most samples of 2 ranks with samples";
  p.host_while_idle = {where};
  p.trace_stats = {{"capture.dropped_records", 0}, {"import.skipped.bad_event", 2}};
  FileQuality q;
  q.file = "rank1.json";
  q.damage.truncated = true;
  q.damage.file_bytes = 4'096;
  q.damage.intact_bytes = 3'000;
  q.damage.bytes_lost = 1'096;
  q.damage.damaged_sections = 1;
  q.damage.tables[static_cast<int>(TableId::kernels)] = {12, 4, LossCount::exact};
  q.damage.tables[static_cast<int>(TableId::ranges)] = {3, 1, LossCount::at_least};
  q.damage.problems = {"section 9 (kernels) at byte 3000: truncated: 2000 payload bytes declared, 1056 present"};
  q.devices.declared = {0, 1};
  q.devices.with_data = {1};
  q.dropped_records = 5;
  p.trace_quality.files = {q};
  p.critical_path.steps = 2;
  p.critical_path.length_ns = 6'000;
  p.critical_path.gpu_compute_ns = 4'000;
  p.critical_path.input_wait_ns = 2'000;
  p.critical_path.categories = {{KernelCategory::convolution, 4'000}};
  p.critical_path.ops = {{"conv", KernelCategory::convolution, 4'000, 2}};
  p.simulation.status = "simulated";
  p.simulation.scope = "all 2 steps";
  p.simulation.steps = 2;
  p.simulation.replayed_step_ns = 3'000;
  p.simulation.replay_error = 0.01;
  p.simulation.replay_error_worst = 0.02;
  p.simulation.predictions = {{"--no-input-wait", 2'000, 1.5}};
  p.simulation.together = {"--no-input-wait", 2'000, 1.5};
  return p;
}

// [SECTION] The doc follows the table ---------------------------------------------------

TEST(ReportSchemaDoc, KeyTablesAreTheFieldTable) {
  const std::string doc = read_file(kDocPath);
  ASSERT_FALSE(doc.empty()) << kDocPath;
  const auto begin = doc.find(kBegin), end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << kDocPath << " lacks the line " << kBegin;
  ASSERT_NE(end, std::string::npos) << kDocPath << " lacks the line " << kEnd;
  ASSERT_LT(begin, end);
  const std::size_t from = begin + kBegin.size();
  const std::string documented = doc.substr(from, end - from), generated = report_schema_markdown();
  if (documented == generated) return;
  if (std::getenv("GPUSCOPE_UPDATE_DOCS")) {
    const std::string tmp = kDocPath + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary);
      out << doc.substr(0, from) << generated << doc.substr(end);
      ASSERT_TRUE(out.good()) << tmp;
    }
    std::filesystem::rename(tmp, kDocPath);
    std::cout << "rewrote the key tables of " << kDocPath << "\n";
    return;
  }
  ADD_FAILURE() << kDocPath
                << ": the key tables differ from src/export/report_fields.cpp; run `cmake --build build --target "
                   "update-docs` (or set GPUSCOPE_UPDATE_DOCS=1 for this test). Expected:\n"
                << generated;
}

// [SECTION] The writer makes what the doc says -------------------------------------------------

struct Row {
  std::string key, type;
};

// The doc's key tables: "" for the top level, else the name of each `### ` heading.
std::map<std::string, std::vector<Row>> documented_tables() {
  const std::string doc = read_file(kDocPath);
  std::map<std::string, std::vector<Row>> tables;
  const auto begin = doc.find(kBegin), end = doc.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos) return tables;
  std::istringstream in(doc.substr(begin, end - begin));
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.starts_with("### `")) current = line.substr(5, line.find('`', 5) - 5);
    if (!line.starts_with("| `")) continue;
    // | `key` | type | unit | meaning |
    const auto key_end = line.find('`', 3);
    const auto type_begin = line.find("| ", key_end) + 2;
    const auto type_end = line.find(" |", type_begin);
    tables[current].push_back({line.substr(3, key_end - 3), line.substr(type_begin, type_end - type_begin)});
  }
  return tables;
}

// Checks a written document against the doc's tables, descending into the
// objects they name; remembers which tables it used.
struct DocChecker {
  std::map<std::string, std::vector<Row>> tables = documented_tables();
  std::set<std::string> used;

  void object(const ordered_json& o, const std::string& table, const std::string& path) {
    ASSERT_TRUE(o.is_object()) << path;
    const auto it = tables.find(table);
    ASSERT_NE(it, tables.end()) << "no key table for `" << table << "` (" << path << ")";
    used.insert(table);
    std::vector<std::string> written, documented;
    for (auto i = o.begin(); i != o.end(); ++i) written.push_back(i.key());
    for (const Row& row : it->second) documented.push_back(row.key);
    ASSERT_EQ(written, documented) << path << " (table `" << table << "`)";
    for (const Row& row : it->second) value(o[row.key], row.type, path + "." + row.key);
  }

  void value(const ordered_json& v, const std::string& type, const std::string& path) {
    if (type == "int") {
      EXPECT_TRUE(v.is_number_integer()) << path;
    } else if (type == "number") {
      EXPECT_TRUE(v.is_number()) << path;
    } else if (type == "string") {
      EXPECT_TRUE(v.is_string()) << path;
    } else if (type == "bool") {
      EXPECT_TRUE(v.is_boolean()) << path;
    } else if (type == "int or null") {
      EXPECT_TRUE(v.is_number_integer() || v.is_null()) << path;
    } else if (type == "number or null") {
      EXPECT_TRUE(v.is_number() || v.is_null()) << path;
    } else if (type == "{string: int}") {
      ASSERT_TRUE(v.is_object()) << path;
      for (const auto& item : v.items()) EXPECT_TRUE(item.value().is_number_integer()) << path << "." << item.key();
    } else if (type.starts_with("[") && type.ends_with("]")) {
      ASSERT_TRUE(v.is_array()) << path;
      ASSERT_FALSE(v.empty()) << path << ": the sample should fill every list";
      for (std::size_t i = 0; i < v.size(); ++i)
        value(v[i], type.substr(1, type.size() - 2), path + "[" + std::to_string(i) + "]");
    } else {
      object(v, type, path);
    }
  }
};

TEST(ReportFields, EveryObjectHasExactlyItsDocumentedKeysInOrder) {
  DocChecker check;
  ASSERT_TRUE(check.tables.count("")) << "no top-level table in " << kDocPath;
  const ordered_json j = ordered_json::parse(report_json(full_profile()));
  check.object(j, "", "report");
  EXPECT_EQ(j["schema"], "gpuscope.report/1");
  for (const auto& [name, rows] : check.tables) EXPECT_TRUE(check.used.count(name)) << "table `" << name << "` unused";
}

TEST(ReportFields, EveryTableHasUniqueKeys) {
  for (const auto& [name, rows] : documented_tables())
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t k = i + 1; k < rows.size(); ++k) EXPECT_NE(rows[i].key, rows[k].key) << "table `" << name << "`";
}

// [SECTION] The reader reads back what the writer wrote -------------------------------------

TEST(ReportFields, RoundTripKeepsEveryField) {
  const Profile p = full_profile();
  const std::string text = report_json(p);
  const Profile back = parse_report_json(text, "saved.json");
  EXPECT_EQ(report_json(back), text);
  ReportJsonOptions compact;
  compact.pretty = false;
  EXPECT_EQ(report_json(parse_report_json(report_json(p, compact), "compact.json"), compact), report_json(p, compact));
  // Values the text alone would not show lost: null GPUs, negative delays, enums.
  EXPECT_EQ(back.hotspots[0].device, kNoDevice);
  EXPECT_EQ(back.hotspots[1].device, 1u);
  EXPECT_EQ(back.steps.steps[0].device, kNoDevice);
  EXPECT_EQ(back.steps.steps[2].range, p.steps.steps[2].range);
  EXPECT_EQ(back.launches.launch_delay.total, -50);
  EXPECT_EQ(back.source, TraceSource::chrome_json);
  EXPECT_EQ(back.steps.source, StepSource::nvtx);
  EXPECT_EQ(back.findings[0].severity, Severity::critical);
  EXPECT_EQ(back.findings[1].ranges, p.findings[1].ranges);
  EXPECT_EQ(back.trace_stats, p.trace_stats);
  ASSERT_EQ(back.trace_quality.files.size(), 1u);
  EXPECT_EQ(back.trace_quality.files[0].damage, p.trace_quality.files[0].damage);
  EXPECT_EQ(back.trace_quality.files[0].devices.declared, p.trace_quality.files[0].devices.declared);
  EXPECT_EQ(back.trace_quality.files[0].devices.with_data, p.trace_quality.files[0].devices.with_data);
  EXPECT_EQ(back.trace_quality.files[0].dropped_records, 5u);
  // Unknown roofline figures read back as unknown, known ones as written.
  EXPECT_FALSE(back.ops[1].flops);
  EXPECT_FALSE(back.ops[1].achieved_tflops);
  ASSERT_TRUE(back.ops[0].flops);
  EXPECT_DOUBLE_EQ(*back.ops[0].flops, 1048576);
  ASSERT_TRUE(back.devices[0].achieved_tflops);
}

// Every member of every record, each with a value of its own (walked
// through the records' lists in analysis/profile_fields.h), reads back as
// written, one line or indented: a member its list gives the report that
// the report drops or reads into another fails here, named by its path.
TEST(ReportFields, EveryMemberOfEveryRecordRoundTrips) {
  const Profile p = members::filled_profile();
  for (const bool pretty : {true, false}) {
    ReportJsonOptions options;
    options.pretty = pretty;
    const Profile back = parse_report_json(report_json(p, options), "filled.json");
    members::expect_same(p, back, members::Members::in_report);
  }
}

// The text nlohmann gives for the same document: parsed and dumped again, in
// the layout every gpuscope JSON output keeps (trace/json_writer.h).
std::string redumped(const std::string& text, bool pretty) {
  return nlohmann::ordered_json::parse(text).dump(pretty ? 2 : -1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace);
}

// report_json() writes the document key by key and its lists an item at a
// time (detail::write_report_text), never as a tree: the bytes are those
// nlohmann's dump gives for the document, one line or indented, with lists
// cut short, empty, and strings that are not valid UTF-8 (replaced).
TEST(ReportFields, StreamedTextIsTheDocumentsDump) {
  Profile odd = full_profile();
  odd.findings[0].title = "bad \xff byte, \"quoted\", tab\t, newline\n, é";
  odd.collectives.clear();
  // Numbers and strings at the edges of the text writer's own formatting
  // (the lists are written without a tree): not finite, negative zero,
  // exponents, integers as doubles; DEL, control bytes, a lone backslash.
  Profile edges = full_profile();
  const double numbers[] = {std::nan(""), INFINITY, -0.0, 1e-7, 1e300, 123456789.125, 3.0, -2.5e-12, 0.1};
  edges.hotspots.insert(edges.hotspots.end(), 8, edges.hotspots.front());
  for (std::size_t i = 0; i < edges.hotspots.size(); ++i) {
    edges.hotspots[i].share = numbers[i % std::size(numbers)];
    edges.hotspots[i].name = i % 2 ? "del \x7f, bell \a, back\\slash" : "\x01\x1f";
  }
  for (std::size_t i = 0; i < edges.findings.size(); ++i)
    edges.findings[i].metric = numbers[(i + 3) % std::size(numbers)];
  for (const Profile& p : {full_profile(), odd, edges, Profile{}})
    for (bool pretty : {true, false})
      for (std::size_t limit : {std::size_t{0}, std::size_t{1}}) {
        ReportJsonOptions o;
        o.pretty = pretty;
        o.top = o.max_steps = limit;
        const std::string text = detail::write_report_text(p, o);
        EXPECT_EQ(text, redumped(text, pretty)) << "pretty " << pretty << ", limit " << limit;
        EXPECT_EQ(report_json(p, o), text + "\n");
      }
}

// The lists are formatted in ranges of items, on several threads, each range
// into its own part: whatever the range size, the number of threads and the
// limits, the parts in order are the document written in one piece, and
// report_json_parts() are report_json() cut up.
TEST(ReportFields, ListsFormattedInRangesOnSeveralThreadsAreTheWholeDocument) {
  Profile p = full_profile();
  const std::vector<Step> three = p.steps.steps;
  for (int copy = 1; copy < 4; ++copy)
    for (Step s : three) {
      s.index = static_cast<int>(p.steps.steps.size());
      s.name = "step " + std::to_string(s.index);
      p.steps.steps.push_back(s);
    }
  ASSERT_EQ(p.steps.steps.size(), 12u);
  p.hotspots.insert(p.hotspots.end(), p.hotspots.begin(), p.hotspots.end());
  for (bool pretty : {true, false})
    for (std::size_t limit : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      ReportJsonOptions o;
      o.pretty = pretty;
      o.top = o.max_steps = limit;
      const std::string tree = detail::write_report_text(p, o, 1000);  // a range per list
      EXPECT_EQ(tree, redumped(tree, pretty));
      for (unsigned jobs : {1u, 2u, 4u}) {
        o.jobs = jobs;
        for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{12}, std::size_t{64}}) {
          const std::vector<std::string> parts = detail::write_report_parts(p, o, chunk);
          std::string joined;
          for (const std::string& part : parts) joined += part;
          EXPECT_EQ(joined, tree) << "pretty " << pretty << ", limit " << limit << ", jobs " << jobs << ", chunk "
                                  << chunk;
          EXPECT_EQ(detail::write_report_text(p, o, chunk), tree);
          // Ranges of one item: a part per item at least (12 steps or `limit` of them).
          if (chunk == 1) {
            EXPECT_GE(parts.size(), limit ? limit : 12);
          }
        }
        std::string joined;
        for (const std::string& part : report_json_parts(p, o)) joined += part;
        EXPECT_EQ(joined, report_json(p, o));
        EXPECT_EQ(joined, tree + "\n");
      }
    }
}

TEST(ReportFields, ListsKeepTheRequestedNumberAndTheSummaryCountsAll) {
  ReportJsonOptions o;
  o.top = 1;
  o.max_steps = 2;
  const ordered_json j = ordered_json::parse(report_json(full_profile(), o));
  EXPECT_EQ(j["hotspots"].size(), 1u);
  EXPECT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["step_summary"]["count"], 3);
  EXPECT_EQ(j["steps"][1]["duration_ns"], 1'500);
  EXPECT_EQ(j["steps"][0]["device"], nullptr);
  EXPECT_EQ(j["categories"][0]["name"], "padding");
}

void expect_input_error(const ordered_json& document, const std::string& what) {
  try {
    parse_report_json(document.dump(), "bad.json");
    ADD_FAILURE() << "accepted; wanted: " << what;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ReportFields, ReaderNamesThePathOfWhatIsWrong) {
  const ordered_json good = ordered_json::parse(report_json(full_profile()));
  ordered_json j = good;
  j["hotspots"][1]["stats"].erase("median_ns");
  expect_input_error(j, "\"hotspots[1].stats.median_ns\": missing");
  j = good;
  j["steps"][2]["end_ns"] = 0;
  expect_input_error(j, "\"steps[2]\": ends before it starts");
  j = good;
  j["steps"][0]["start_ns"] = "early";
  expect_input_error(j, "\"steps[0].start_ns\": expected an integer");
  j = good;
  j["files"][1] = 7;
  expect_input_error(j, "\"files[1]\": expected a string");
  j = good;
  j["findings"][1]["kernels"][0] = nullptr;
  expect_input_error(j, "\"findings[1].kernels[0]\": expected a string");
  j = good;
  j["trace_stats"] = ordered_json::array();
  expect_input_error(j, "\"trace_stats\": expected an object");
  j = good;
  j["trace_stats"]["import.skipped.bad_event"] = -2;
  expect_input_error(j, "\"trace_stats.import.skipped.bad_event\": expected a non-negative integer");
  j = good;
  j["hotspots"][0]["device"] = "GPU 0";
  expect_input_error(j, "\"hotspots[0].device\": expected an integer");
  j = good;
  j["idle"][0]["device"] = nullptr;  // a stream is always on some GPU
  expect_input_error(j, "\"idle[0].device\": expected an integer");
  j = good;
  j["devices"][0]["window"] = 3;
  expect_input_error(j, "\"devices[0].window\": expected an object");
  j = good;
  j["findings"][0]["severity"] = "dire";
  expect_input_error(j, "\"findings[0].severity\": unknown value \"dire\"");
  j = good;
  j["launches"]["max_queue_depth"] = std::int64_t{1} << 40;
  expect_input_error(j, "\"launches.max_queue_depth\": out of range");
  j = good;
  j["skew"]["busy_spread"] = true;
  expect_input_error(j, "\"skew.busy_spread\": expected a number");
  j = good;
  j["hotspots"][0]["tensor_cores"] = 1;
  expect_input_error(j, "\"hotspots[0].tensor_cores\": expected true or false");
  j = good;
  j["devices"][0]["peak_reserved_bytes"] = -5;
  expect_input_error(j, "\"devices[0].peak_reserved_bytes\": expected a non-negative integer");
}

// Memory a trace does not state is null, never 0; what it states round-trips.
TEST(ReportFields, UnknownMemoryIsNull) {
  const Profile p = full_profile();
  const ordered_json j = ordered_json::parse(report_json(p));
  EXPECT_EQ(j["devices"][0]["memory_bytes"], 150'000'000'000u);
  EXPECT_EQ(j["devices"][0]["peak_allocated_bytes"], 0u);
  EXPECT_TRUE(j["devices"][0]["peak_reserved_bytes"].is_null());
  EXPECT_TRUE(j["steps"][0]["peak_allocated_bytes"].is_null());
  EXPECT_EQ(j["steps"][2]["peak_allocated_bytes"], 7'000'000'000u);
  EXPECT_EQ(j["steps"][2]["min_allocated_bytes"], 1'000'000'000u);
  const Profile back = parse_report_json(j.dump(), "saved.json");
  EXPECT_EQ(back.devices[0].peak_allocated_bytes, std::optional<std::uint64_t>(0));
  EXPECT_FALSE(back.devices[0].peak_reserved_bytes);
  EXPECT_EQ(back.steps.steps[2].peak_allocated_bytes, std::optional<std::uint64_t>(7'000'000'000));
  EXPECT_FALSE(back.steps.steps[1].peak_allocated_bytes);
}

TEST(ReportFields, ReaderToleratesWhatOlderOrNewerWritersDo) {
  const ordered_json good = ordered_json::parse(report_json(full_profile()));
  ordered_json j = good;
  j.erase("source");  // older reports had no source
  EXPECT_EQ(parse_report_json(j.dump(), "old.json").source, TraceSource::unknown);
  j = good;
  j["source"] = "a future profiler";
  EXPECT_EQ(parse_report_json(j.dump(), "new.json").source, TraceSource::unknown);
  j = good;
  j["devices"][0]["dram_bandwidth"] = 0.5;  // keys a newer writer adds
  j["memory"] = ordered_json::object();
  EXPECT_EQ(report_json(parse_report_json(j.dump(), "new.json")), report_json(full_profile()));
  j = good;
  for (const char* key : {"memory_bytes", "peak_allocated_bytes", "peak_reserved_bytes"})
    j["devices"][0].erase(key);  // reports from before memory: unknown, not 0
  const Profile old = parse_report_json(j.dump(), "old.json");
  EXPECT_FALSE(old.devices[0].memory_bytes);
  EXPECT_FALSE(old.devices[0].peak_allocated_bytes);
  j = good;
  j["steps"][0]["duration_ns"] = -1;  // derived keys are recomputed, not read
  EXPECT_EQ(report_json(parse_report_json(j.dump(), "edited.json")), report_json(full_profile()));
}

}  // namespace
}  // namespace gpuscope
