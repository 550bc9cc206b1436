// gpuscope.report/1 and gpuscope.diff/1 JSON, written and read.
//
// [SECTION] Writing
// [SECTION] Reading (untrusted input: every key and type checked)
// [SECTION] Diff
//
// Keys are spelt like the Profile's fields, with the unit suffixed to times
// (_ns); docs/report-schema.md lists them. Readers ignore keys they do not
// know, so adding a key never breaks an older reader; renaming one would.
#include "export/report_json.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "trace/error.h"
#include "trace/kernel_category.h"

namespace gpuscope {

namespace {

using Json = nlohmann::ordered_json;

// [SECTION] Writing ------------------------------------------------------------------------------

Json device_or_null(std::uint32_t device) { return device == kNoDevice ? Json(nullptr) : Json(device); }

Json stats_json(const DurationStats& s) {
  return Json{{"count", s.count}, {"total_ns", s.total}, {"min_ns", s.min},
              {"max_ns", s.max},  {"mean_ns", s.mean},   {"median_ns", s.median}};
}

Json range_json(const TimeRange& r) { return Json{{"start_ns", r.start}, {"end_ns", r.end}}; }

Json device_json(const DeviceSummary& d) {
  return Json{{"id", d.id},
              {"name", d.name},
              {"rank", d.rank},
              {"compute_major", d.compute_major},
              {"compute_minor", d.compute_minor},
              {"sm_count", d.sm_count},
              {"window", range_json(d.window)},
              {"span_ns", d.span_ns},
              {"busy_ns", d.busy_ns},
              {"utilization", d.utilization},
              {"kernel_busy_ns", d.kernel_busy_ns},
              {"kernel_concurrency", d.kernel_concurrency},
              {"mean_kernels_in_flight", d.mean_kernels_in_flight},
              {"memcpy_ns", d.memcpy_ns},
              {"memcpy_compute_overlap", d.memcpy_compute_overlap},
              {"communication_ns", d.communication_ns},
              {"communication_compute_overlap", d.communication_compute_overlap},
              {"compute_ns", d.compute_ns},
              {"exposed_communication_ns", d.exposed_communication_ns},
              {"memcpy_exposed_ns", d.memcpy_exposed_ns},
              {"kernel_time_ns", d.kernel_time_ns},
              {"idle_ns", d.idle_ns},
              {"idle_host_wait_ns", d.idle_host_wait_ns},
              {"idle_kernel_wait_ns", d.idle_kernel_wait_ns},
              {"idle_other_ns", d.idle_other_ns},
              {"kernels", d.kernels},
              {"memcpys", d.memcpys},
              {"memsets", d.memsets},
              {"streams", d.streams},
              {"sm_efficiency", d.sm_efficiency},
              {"achieved_tflops", d.achieved_tflops}};
}

Json step_json(const Step& s) {
  return Json{{"index", s.index},
              {"name", s.name},
              {"device", device_or_null(s.device)},
              {"rank", s.rank},
              {"start_ns", s.range.start},
              {"end_ns", s.range.end},
              {"duration_ns", s.range.duration()},
              {"compute_ns", s.compute_ns},
              {"communication_ns", s.communication_ns},
              {"memcpy_ns", s.memcpy_ns},
              {"idle_ns", s.idle_ns},
              {"input_wait_ns", s.input_wait_ns},
              {"host_wait_ns", s.host_wait_ns}};
}

Json finding_json(const Finding& f) {
  Json ranges = Json::array();
  for (const TimeRange& r : f.ranges) ranges.push_back(range_json(r));
  return Json{{"id", f.id},
              {"severity", to_string(f.severity)},
              {"title", f.title},
              {"evidence", f.evidence},
              {"recommendation", f.recommendation},
              {"saving_ns", f.saving_ns},
              {"metric", f.metric},
              {"threshold", f.threshold},
              {"device", device_or_null(f.device)},
              {"ranges", ranges},
              {"kernels", f.kernels}};
}

// [SECTION] Reading ---------------------------------------------------------------------------------

// Typed access to an untrusted document: every miss names the key's path.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(file_, (path.empty() ? std::string("the document") : "\"" + path + "\"") + ": " + what);
  }
  const Json& member(const Json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  const Json* optional(const Json& obj, const char* key) const {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  // Integers stay within ±2^62 so that differences and sums of two of them
  // (diff, the text report) cannot overflow; no real trace comes close.
  static constexpr std::int64_t kLimit = std::int64_t{1} << 62;
  std::int64_t i64(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    std::int64_t x = 0;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(kLimit))
      x = v.get<std::int64_t>();
    else if (v.is_number_integer() && !v.is_number_unsigned())
      x = v.get<std::int64_t>();
    else
      fail(join(path, key), "expected an integer");
    if (x > kLimit || x < -kLimit) fail(join(path, key), "out of range");
    return x;
  }
  std::uint64_t u64(const Json& obj, const char* key, const std::string& path) const {
    const std::int64_t x = i64(obj, key, path);
    if (x < 0) fail(join(path, key), "expected a non-negative integer");
    return static_cast<std::uint64_t>(x);
  }
  std::uint32_t u32(const Json& obj, const char* key, const std::string& path) const {
    const std::uint64_t v = u64(obj, key, path);
    if (v > 0xffffffffu) fail(join(path, key), "out of range");
    return static_cast<std::uint32_t>(v);
  }
  std::int32_t i32(const Json& obj, const char* key, const std::string& path) const {
    const std::int64_t v = i64(obj, key, path);
    if (v < INT32_MIN || v > INT32_MAX) fail(join(path, key), "out of range");
    return static_cast<std::int32_t>(v);
  }
  double f64(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_number()) fail(join(path, key), "expected a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || x > 1e15 || x < -1e15) fail(join(path, key), "out of range");
    return x;
  }
  bool boolean(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_boolean()) fail(join(path, key), "expected true or false");
    return v.get<bool>();
  }
  std::string str(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_string()) fail(join(path, key), "expected a string");
    return v.get<std::string>();
  }
  std::uint32_t device(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    return v.is_null() ? kNoDevice : u32(obj, key, path);
  }
  const Json& array(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = member(obj, key, path);
    if (!v.is_array()) fail(join(path, key), "expected an array");
    return v;
  }
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  DurationStats stats(const Json& obj, const char* key, const std::string& path) const {
    const Json& s = member(obj, key, path);
    const std::string p = join(path, key);
    DurationStats d;
    d.count = u64(s, "count", p);
    d.total = i64(s, "total_ns", p);
    d.min = i64(s, "min_ns", p);
    d.max = i64(s, "max_ns", p);
    d.mean = i64(s, "mean_ns", p);
    d.median = i64(s, "median_ns", p);
    return d;
  }
  TimeRange range(const Json& obj, const std::string& path) const {
    TimeRange r{i64(obj, "start_ns", path), i64(obj, "end_ns", path)};
    if (r.end < r.start) fail(path, "ends before it starts");
    return r;
  }

 private:
  const std::string& file_;
};

// Nesting deeper than any report has is refused before parsing (the parser
// recurses on nothing, but a document of a million '[' is not a report).
void check_depth(std::string_view text, const Reader& r) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > 32) r.fail("", "nested more than 32 levels deep: not a gpuscope report");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

template <class Enum, class Parse>
Enum parse_enum(const Reader& r, const Json& obj, const char* key, const std::string& path, Parse parse) {
  Enum out{};
  const std::string s = r.str(obj, key, path);
  if (!parse(s, &out)) r.fail(Reader::join(path, key), "unknown value \"" + s + "\"");
  return out;
}

}  // namespace

std::string report_json(const Profile& p, const ReportJsonOptions& o) {
  Json j;
  j["schema"] = Profile::kSchema;
  j["source"] = to_string(p.source);
  j["producer"] = p.producer;
  j["files"] = p.files;
  j["clock_alignment"] = p.clock_alignment;
  j["window"] = range_json(p.window);
  j["kernel_time_ns"] = p.kernel_time_ns;

  Json devices = Json::array();
  for (const DeviceSummary& d : p.devices) devices.push_back(device_json(d));
  j["devices"] = std::move(devices);

  Json categories = Json::array();
  for (const CategoryTime& c : p.categories)
    categories.push_back(Json{{"name", to_string(c.category)},
                              {"time_ns", c.time_ns},
                              {"share", c.share},
                              {"count", c.count},
                              {"stats", stats_json(c.stats)}});
  j["categories"] = std::move(categories);

  Json hotspots = Json::array();
  for (const Hotspot& h : p.hotspots) {
    if (o.top && hotspots.size() >= o.top) break;
    hotspots.push_back(Json{{"name", h.name},
                            {"category", to_string(h.category)},
                            {"share", h.share},
                            {"device", device_or_null(h.device)},
                            {"tensor_cores", h.tensor_cores},
                            {"stats", stats_json(h.stats)}});
  }
  j["hotspots"] = std::move(hotspots);

  Json steps = Json::array();
  for (const Step& s : p.steps.steps) {
    if (o.max_steps && steps.size() >= o.max_steps) break;
    steps.push_back(step_json(s));
  }
  j["steps"] = std::move(steps);
  const StepSummary& ss = p.steps;
  j["step_summary"] =
      Json{{"source", to_string(ss.source)}, {"count", ss.steps.size()},    {"step_time", stats_json(ss.step_time)},
           {"total_ns", ss.total_ns},        {"compute_ns", ss.compute_ns}, {"communication_ns", ss.communication_ns},
           {"memcpy_ns", ss.memcpy_ns},      {"idle_ns", ss.idle_ns},       {"input_wait_ns", ss.input_wait_ns}};

  Json idle = Json::array();
  for (const IdleByCause& i : p.idle)
    idle.push_back(Json{{"rank", i.rank},
                        {"device", i.device},
                        {"stream", i.stream},
                        {"host_wait_ns", i.host_wait_ns},
                        {"kernel_wait_ns", i.kernel_wait_ns},
                        {"other_ns", i.other_ns}});
  j["idle"] = std::move(idle);

  const LaunchStats& l = p.launches;
  j["launches"] = Json{{"launches", l.launches},
                       {"cpu_launch", stats_json(l.cpu_launch)},
                       {"gpu_duration", stats_json(l.gpu_duration)},
                       {"launch_delay", stats_json(l.launch_delay)},
                       {"short_kernels", l.short_kernels},
                       {"short_kernel_share", l.short_kernel_share},
                       {"max_queue_depth", l.max_queue_depth},
                       {"runtime_outliers", l.runtime_outliers},
                       {"launch_delay_outliers", l.launch_delay_outliers}};

  Json tb = Json::array();
  for (const TemporalBreakdown& t : p.temporal_breakdown)
    tb.push_back(Json{{"rank", t.rank},
                      {"device", device_or_null(t.device)},
                      {"span_ns", t.span_ns},
                      {"idle_ns", t.idle_ns},
                      {"compute_ns", t.compute_ns},
                      {"non_compute_ns", t.non_compute_ns},
                      {"idle_share", t.idle_share},
                      {"compute_share", t.compute_share},
                      {"non_compute_share", t.non_compute_share}});
  j["temporal_breakdown"] = std::move(tb);

  Json ranks = Json::array();
  for (const RankSummary& r : p.ranks)
    ranks.push_back(Json{{"rank", r.rank},
                         {"device", device_or_null(r.device)},
                         {"source_file", r.source_file},
                         {"clock_offset_ns", r.clock_offset_ns},
                         {"step_time_mean_ns", r.step_time_mean},
                         {"communication_ns", r.communication_ns},
                         {"utilization", r.utilization},
                         {"compute_ns", r.compute_ns},
                         {"exposed_communication_ns", r.exposed_communication_ns},
                         {"compute_per_step_ns", r.compute_per_step_ns}});
  j["ranks"] = std::move(ranks);
  const Skew& k = p.skew;
  j["skew"] = Json{{"participants", k.participants},     {"busy_spread", k.busy_spread},
                   {"compute_spread", k.compute_spread}, {"step_time_spread", k.step_time_spread},
                   {"slowest_rank", k.slowest_rank},     {"slowest_device", device_or_null(k.slowest_device)}};

  const SyncStats& y = p.syncs;
  j["syncs"] = Json{{"count", y.count},
                    {"total_ns", y.total_ns},
                    {"device_syncs", y.device_syncs},
                    {"stream_syncs", y.stream_syncs},
                    {"event_syncs", y.event_syncs},
                    {"gpu_idle_after_ns", y.gpu_idle_after_ns}};
  const MemcpyStats& m = p.memcpys;
  j["memcpys"] = Json{{"count", m.count},
                      {"bytes", m.bytes},
                      {"time_ns", m.time_ns},
                      {"htod", m.htod},
                      {"dtoh", m.dtoh},
                      {"dtod", m.dtod},
                      {"other", m.other},
                      {"pageable", m.pageable},
                      {"pageable_ns", m.pageable_ns},
                      {"pageable_bytes", m.pageable_bytes},
                      {"synchronous", m.synchronous},
                      {"synchronous_ns", m.synchronous_ns},
                      {"memsets", m.memsets},
                      {"memset_ns", m.memset_ns}};

  Json findings = Json::array();
  for (const Finding& f : p.findings) findings.push_back(finding_json(f));
  j["findings"] = std::move(findings);

  Json stats = Json::object();
  for (const auto& [key, value] : p.trace_stats) stats[key] = value;
  j["trace_stats"] = std::move(stats);
  return j.dump(o.pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool looks_like_report_json(std::string_view head) {
  const std::size_t brace = head.find_first_not_of(" \t\r\n");
  if (brace == std::string_view::npos || head[brace] != '{') return false;
  const std::size_t key = head.find("\"schema\"", brace);
  return key != std::string_view::npos && key < brace + 64 &&
         head.find("\"gpuscope.report/", key) != std::string_view::npos;
}

Profile parse_report_json(std::string_view text, const std::string& file) {
  const Reader r(file);
  check_depth(text, r);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError(file, std::string("not valid JSON: ") + e.what(), e.byte ? e.byte - 1 : 0);
  } catch (const Json::exception& e) {  // e.g. a number too large for any C++ type
    throw InputError(file, std::string("not a usable JSON document: ") + e.what());
  }
  const std::string schema = r.str(j, "schema", "");
  if (schema != Profile::kSchema)
    r.fail("schema", "\"" + schema + "\" is not " + Profile::kSchema + " (made by another gpuscope version?)");

  Profile p;
  if (const Json* v = r.optional(j, "source"); v && v->is_string()) {
    const std::string s = v->get<std::string>();
    for (TraceSource t :
         {TraceSource::cupti, TraceSource::chrome_json, TraceSource::synthetic, TraceSource::nsys_sqlite})
      if (to_string(t) == s) p.source = t;
  }
  p.producer = r.str(j, "producer", "");
  for (std::size_t i = 0; const Json& f : r.array(j, "files", "")) {
    if (!f.is_string()) r.fail(Reader::at("files", i), "expected a string");
    p.files.push_back(f.get<std::string>());
    ++i;
  }
  p.clock_alignment = r.str(j, "clock_alignment", "");
  p.window = r.range(r.member(j, "window", ""), "window");
  p.kernel_time_ns = r.i64(j, "kernel_time_ns", "");

  const Json& devices = r.array(j, "devices", "");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Json& x = devices[i];
    const std::string at = Reader::at("devices", i);
    DeviceSummary d;
    d.id = r.u32(x, "id", at);
    d.name = r.str(x, "name", at);
    d.rank = r.i32(x, "rank", at);
    d.compute_major = r.i32(x, "compute_major", at);
    d.compute_minor = r.i32(x, "compute_minor", at);
    d.sm_count = r.u32(x, "sm_count", at);
    d.window = r.range(r.member(x, "window", at), at + ".window");
    d.span_ns = r.i64(x, "span_ns", at);
    d.busy_ns = r.i64(x, "busy_ns", at);
    d.utilization = r.f64(x, "utilization", at);
    d.kernel_busy_ns = r.i64(x, "kernel_busy_ns", at);
    d.kernel_concurrency = r.f64(x, "kernel_concurrency", at);
    d.mean_kernels_in_flight = r.f64(x, "mean_kernels_in_flight", at);
    d.memcpy_ns = r.i64(x, "memcpy_ns", at);
    d.memcpy_compute_overlap = r.f64(x, "memcpy_compute_overlap", at);
    d.communication_ns = r.i64(x, "communication_ns", at);
    d.communication_compute_overlap = r.f64(x, "communication_compute_overlap", at);
    d.compute_ns = r.i64(x, "compute_ns", at);
    d.exposed_communication_ns = r.i64(x, "exposed_communication_ns", at);
    d.memcpy_exposed_ns = r.i64(x, "memcpy_exposed_ns", at);
    d.kernel_time_ns = r.i64(x, "kernel_time_ns", at);
    d.idle_ns = r.i64(x, "idle_ns", at);
    d.idle_host_wait_ns = r.i64(x, "idle_host_wait_ns", at);
    d.idle_kernel_wait_ns = r.i64(x, "idle_kernel_wait_ns", at);
    d.idle_other_ns = r.i64(x, "idle_other_ns", at);
    d.kernels = r.u64(x, "kernels", at);
    d.memcpys = r.u64(x, "memcpys", at);
    d.memsets = r.u64(x, "memsets", at);
    d.streams = r.u32(x, "streams", at);
    d.sm_efficiency = r.f64(x, "sm_efficiency", at);
    d.achieved_tflops = r.f64(x, "achieved_tflops", at);
    p.devices.push_back(std::move(d));
  }

  const Json& categories = r.array(j, "categories", "");
  for (std::size_t i = 0; i < categories.size(); ++i) {
    const Json& x = categories[i];
    const std::string at = Reader::at("categories", i);
    CategoryTime c;
    c.category = parse_enum<KernelCategory>(r, x, "name", at, parse_category);
    c.time_ns = r.i64(x, "time_ns", at);
    c.share = r.f64(x, "share", at);
    c.count = r.u64(x, "count", at);
    c.stats = r.stats(x, "stats", at);
    p.categories.push_back(c);
  }

  const Json& hotspots = r.array(j, "hotspots", "");
  for (std::size_t i = 0; i < hotspots.size(); ++i) {
    const Json& x = hotspots[i];
    const std::string at = Reader::at("hotspots", i);
    Hotspot h;
    h.name = r.str(x, "name", at);
    h.category = parse_enum<KernelCategory>(r, x, "category", at, parse_category);
    h.share = r.f64(x, "share", at);
    h.device = r.device(x, "device", at);
    h.tensor_cores = r.boolean(x, "tensor_cores", at);
    h.stats = r.stats(x, "stats", at);
    p.hotspots.push_back(std::move(h));
  }

  const Json& steps = r.array(j, "steps", "");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Json& x = steps[i];
    const std::string at = Reader::at("steps", i);
    Step s;
    s.index = r.i32(x, "index", at);
    s.name = r.str(x, "name", at);
    s.device = r.device(x, "device", at);
    s.rank = r.i32(x, "rank", at);
    s.range = r.range(x, at);
    s.compute_ns = r.i64(x, "compute_ns", at);
    s.communication_ns = r.i64(x, "communication_ns", at);
    s.memcpy_ns = r.i64(x, "memcpy_ns", at);
    s.idle_ns = r.i64(x, "idle_ns", at);
    s.input_wait_ns = r.i64(x, "input_wait_ns", at);
    s.host_wait_ns = r.i64(x, "host_wait_ns", at);
    p.steps.steps.push_back(std::move(s));
  }
  {
    const Json& x = r.member(j, "step_summary", "");
    StepSummary& s = p.steps;
    s.source = parse_enum<StepSource>(r, x, "source", "step_summary", parse_step_source);
    s.step_time = r.stats(x, "step_time", "step_summary");
    s.total_ns = r.i64(x, "total_ns", "step_summary");
    s.compute_ns = r.i64(x, "compute_ns", "step_summary");
    s.communication_ns = r.i64(x, "communication_ns", "step_summary");
    s.memcpy_ns = r.i64(x, "memcpy_ns", "step_summary");
    s.idle_ns = r.i64(x, "idle_ns", "step_summary");
    s.input_wait_ns = r.i64(x, "input_wait_ns", "step_summary");
  }

  const Json& idle = r.array(j, "idle", "");
  for (std::size_t i = 0; i < idle.size(); ++i) {
    const Json& x = idle[i];
    const std::string at = Reader::at("idle", i);
    IdleByCause c;
    c.rank = r.i32(x, "rank", at);
    c.device = r.u32(x, "device", at);
    c.stream = r.u32(x, "stream", at);
    c.host_wait_ns = r.i64(x, "host_wait_ns", at);
    c.kernel_wait_ns = r.i64(x, "kernel_wait_ns", at);
    c.other_ns = r.i64(x, "other_ns", at);
    p.idle.push_back(c);
  }

  {
    const Json& x = r.member(j, "launches", "");
    LaunchStats& l = p.launches;
    l.launches = r.u64(x, "launches", "launches");
    l.cpu_launch = r.stats(x, "cpu_launch", "launches");
    l.gpu_duration = r.stats(x, "gpu_duration", "launches");
    l.launch_delay = r.stats(x, "launch_delay", "launches");
    l.short_kernels = r.u64(x, "short_kernels", "launches");
    l.short_kernel_share = r.f64(x, "short_kernel_share", "launches");
    l.max_queue_depth = r.u32(x, "max_queue_depth", "launches");
    l.runtime_outliers = r.u64(x, "runtime_outliers", "launches");
    l.launch_delay_outliers = r.u64(x, "launch_delay_outliers", "launches");
  }

  const Json& tb = r.array(j, "temporal_breakdown", "");
  for (std::size_t i = 0; i < tb.size(); ++i) {
    const Json& x = tb[i];
    const std::string at = Reader::at("temporal_breakdown", i);
    TemporalBreakdown t;
    t.rank = r.i32(x, "rank", at);
    t.device = r.device(x, "device", at);
    t.span_ns = r.i64(x, "span_ns", at);
    t.idle_ns = r.i64(x, "idle_ns", at);
    t.compute_ns = r.i64(x, "compute_ns", at);
    t.non_compute_ns = r.i64(x, "non_compute_ns", at);
    t.idle_share = r.f64(x, "idle_share", at);
    t.compute_share = r.f64(x, "compute_share", at);
    t.non_compute_share = r.f64(x, "non_compute_share", at);
    p.temporal_breakdown.push_back(t);
  }

  const Json& ranks = r.array(j, "ranks", "");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const Json& x = ranks[i];
    const std::string at = Reader::at("ranks", i);
    RankSummary k;
    k.rank = r.i32(x, "rank", at);
    k.device = r.device(x, "device", at);
    k.source_file = r.str(x, "source_file", at);
    k.clock_offset_ns = r.i64(x, "clock_offset_ns", at);
    k.step_time_mean = r.i64(x, "step_time_mean_ns", at);
    k.communication_ns = r.i64(x, "communication_ns", at);
    k.utilization = r.f64(x, "utilization", at);
    k.compute_ns = r.i64(x, "compute_ns", at);
    k.exposed_communication_ns = r.i64(x, "exposed_communication_ns", at);
    k.compute_per_step_ns = r.i64(x, "compute_per_step_ns", at);
    p.ranks.push_back(std::move(k));
  }
  {
    const Json& x = r.member(j, "skew", "");
    Skew& k = p.skew;
    k.participants = r.u32(x, "participants", "skew");
    k.busy_spread = r.f64(x, "busy_spread", "skew");
    k.compute_spread = r.f64(x, "compute_spread", "skew");
    k.step_time_spread = r.f64(x, "step_time_spread", "skew");
    k.slowest_rank = r.i32(x, "slowest_rank", "skew");
    k.slowest_device = r.device(x, "slowest_device", "skew");
  }
  {
    const Json& x = r.member(j, "syncs", "");
    SyncStats& y = p.syncs;
    y.count = r.u64(x, "count", "syncs");
    y.total_ns = r.i64(x, "total_ns", "syncs");
    y.device_syncs = r.u64(x, "device_syncs", "syncs");
    y.stream_syncs = r.u64(x, "stream_syncs", "syncs");
    y.event_syncs = r.u64(x, "event_syncs", "syncs");
    y.gpu_idle_after_ns = r.i64(x, "gpu_idle_after_ns", "syncs");
  }
  {
    const Json& x = r.member(j, "memcpys", "");
    MemcpyStats& m = p.memcpys;
    m.count = r.u64(x, "count", "memcpys");
    m.bytes = r.u64(x, "bytes", "memcpys");
    m.time_ns = r.i64(x, "time_ns", "memcpys");
    m.htod = r.u64(x, "htod", "memcpys");
    m.dtoh = r.u64(x, "dtoh", "memcpys");
    m.dtod = r.u64(x, "dtod", "memcpys");
    m.other = r.u64(x, "other", "memcpys");
    m.pageable = r.u64(x, "pageable", "memcpys");
    m.pageable_ns = r.i64(x, "pageable_ns", "memcpys");
    m.pageable_bytes = r.u64(x, "pageable_bytes", "memcpys");
    m.synchronous = r.u64(x, "synchronous", "memcpys");
    m.synchronous_ns = r.i64(x, "synchronous_ns", "memcpys");
    m.memsets = r.u64(x, "memsets", "memcpys");
    m.memset_ns = r.i64(x, "memset_ns", "memcpys");
  }

  const Json& findings = r.array(j, "findings", "");
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Json& x = findings[i];
    const std::string at = Reader::at("findings", i);
    Finding f;
    f.id = r.str(x, "id", at);
    f.severity = parse_enum<Severity>(r, x, "severity", at, parse_severity);
    f.title = r.str(x, "title", at);
    f.evidence = r.str(x, "evidence", at);
    f.recommendation = r.str(x, "recommendation", at);
    f.saving_ns = r.i64(x, "saving_ns", at);
    f.metric = r.f64(x, "metric", at);
    f.threshold = r.f64(x, "threshold", at);
    f.device = r.device(x, "device", at);
    const Json& ranges = r.array(x, "ranges", at);
    for (std::size_t k = 0; k < ranges.size(); ++k)
      f.ranges.push_back(r.range(ranges[k], Reader::at(at + ".ranges", k)));
    const Json& kernels = r.array(x, "kernels", at);
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      if (!kernels[k].is_string()) r.fail(Reader::at(at + ".kernels", k), "expected a string");
      f.kernels.push_back(kernels[k].get<std::string>());
    }
    p.findings.push_back(std::move(f));
  }

  const Json& stats = r.member(j, "trace_stats", "");
  if (!stats.is_object()) r.fail("trace_stats", "expected an object");
  for (const auto& item : stats.items())
    p.trace_stats.emplace_back(item.key(), r.u64(stats, item.key().c_str(), "trace_stats"));
  return p;
}

// [SECTION] Diff -------------------------------------------------------------------------------------

std::string diff_json(const ProfileDiff& d, bool pretty) {
  auto pair = [](auto before, auto after) { return Json{{"before", before}, {"after", after}}; };
  Json j;
  j["schema"] = ProfileDiff::kSchema;
  j["before"] = d.before_label;
  j["after"] = d.after_label;
  j["per_step"] = d.per_step;
  j["steps_per_gpu"] = pair(d.before_steps, d.after_steps);
  j["step_time_ns"] = pair(d.before_step_ns, d.after_step_ns);
  j["kernel_time_ns"] = pair(d.before_kernel_ns, d.after_kernel_ns);
  j["utilization"] = pair(d.before_utilization, d.after_utilization);
  j["kernel_concurrency"] = pair(d.before_concurrency, d.after_concurrency);
  j["idle_share"] = pair(d.before_idle_share, d.after_idle_share);
  Json cats = Json::array();
  for (const CategoryDelta& c : d.categories)
    cats.push_back(Json{{"name", to_string(c.category)},
                        {"before_ns", c.before_ns},
                        {"after_ns", c.after_ns},
                        {"before_share", c.before_share},
                        {"after_share", c.after_share}});
  j["categories"] = std::move(cats);
  Json kernels = Json::array();
  for (const KernelDelta& k : d.kernels)
    kernels.push_back(Json{{"name", k.name},
                           {"category", to_string(k.category)},
                           {"before_ns", k.before_ns},
                           {"after_ns", k.after_ns},
                           {"before_count", k.before_count},
                           {"after_count", k.after_count}});
  j["kernels"] = std::move(kernels);
  Json findings = Json::array();
  for (const FindingDelta& f : d.findings) {
    auto side = [](bool present, Severity s, double metric, TimeNs saving, const std::string& title) {
      if (!present) return Json(nullptr);
      return Json{{"severity", to_string(s)}, {"metric", metric}, {"saving_ns", saving}, {"title", title}};
    };
    findings.push_back(
        Json{{"id", f.id},
             {"change", to_string(f.change)},
             {"threshold", f.threshold},
             {"before", side(f.in_before, f.before_severity, f.before_metric, f.before_saving_ns, f.before_title)},
             {"after", side(f.in_after, f.after_severity, f.after_metric, f.after_saving_ns, f.after_title)}});
  }
  j["findings"] = std::move(findings);
  j["summary"] = d.summary;
  return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuscope
