// Opening a trace from Python, and its tables as numpy columns.
//
// [SECTION] Column roles (which columns are strings, which enumerations)
// [SECTION] numpy arrays
// [SECTION] Descriptions (devices, processes, tracks, counter series)
// [SECTION] Bindings
//
// Every stored or derived column of a table becomes one 1-D array. A column
// with rows is handed over as it is (no copy); a sparse column that is empty
// becomes a fresh array of its default (0, or "no row" for a row reference);
// a compact one (a table's track, a call's callback id) an array of its rows'
// values.
// Columns that name the row's device and stream (GPU tables) or process and
// thread (CPU tables) are computed from the track, since that is how people
// select rows. Each column has a role that tells the Python side how to show
// it: a string id, an enumeration, a row of another table or an id that may
// be "none" (4294967295 in the model, pandas' NA in the DataFrame), a value.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analyze.h"
#include "export/report_json.h"
#include "python/bindings.h"
#include "trace/budget.h"
#include "trace/kernel_category.h"
#include "words/damage_text.h"

namespace gpuscope::python {

namespace {

// [SECTION] Column roles ---------------------------------------------------------------------------

struct ColumnRole {
  TableId table;
  std::string_view column;
  // "string": a StringId (the columns flagged kString, not listed here); "enum:<name>": a value of the enumeration
  // _enum_names()[name]; "row": a row of another table, kNoRow for none; "id": a device, stream or event, kNoId when
  // unknown; "plus_one": the value + 1, 0 (or below, from a damaged file) for none
  std::string_view role;
};

constexpr ColumnRole kRoles[] = {
    {TableId::kernels, "category", "enum:kernel_category"},
    {TableId::kernels, "category_rule", "enum:category_rule"},
    {TableId::kernels, "api", "row"},
    {TableId::kernels, "device", "id"},
    {TableId::kernels, "stream", "id"},
    {TableId::memcpys, "kind", "enum:copy_kind"},
    {TableId::memcpys, "src_kind", "enum:memory_kind"},
    {TableId::memcpys, "dst_kind", "enum:memory_kind"},
    {TableId::memcpys, "api", "row"},
    {TableId::memcpys, "device", "id"},
    {TableId::memcpys, "stream", "id"},
    {TableId::memsets, "mem_kind", "enum:memory_kind"},
    {TableId::memsets, "api", "row"},
    {TableId::memsets, "device", "id"},
    {TableId::memsets, "stream", "id"},
    {TableId::api_calls, "domain", "enum:api_domain"},
    {TableId::api_calls, "op_table", "enum:op_table"},
    {TableId::api_calls, "op_row", "row"},
    {TableId::api_calls, "op_range", "row"},
    {TableId::ranges, "kind", "enum:range_kind"},
    {TableId::ranges, "parent", "row"},
    {TableId::ranges, "sequence", "plus_one"},
    {TableId::syncs, "type", "enum:sync_type"},
    {TableId::syncs, "device", "id"},
    {TableId::syncs, "stream", "id"},
    {TableId::syncs, "event", "id"},
};

std::string_view role_of(TableId table, std::string_view column) {
  for (const ColumnRole& r : kRoles)
    if (r.table == table && r.column == column) return r.role;
  return "value";
}

// The names of each enumeration's values, in value order. The counts are the
// enumerations' in trace/types.h; a value beyond them (from a damaged or newer
// file) is named by the Python side, never an error.
template <class E>
py::list names_of(int count) {
  py::list out;
  for (int i = 0; i < count; ++i) out.append(text(to_string(static_cast<E>(i))));
  return out;
}

py::dict enum_names() {
  py::dict d;
  d["kernel_category"] = names_of<KernelCategory>(kKernelCategoryCount);
  d["category_rule"] = names_of<CategoryRuleKind>(kCategoryRuleKinds);
  d["copy_kind"] = names_of<CopyKind>(static_cast<int>(CopyKind::ptop) + 1);
  d["memory_kind"] = names_of<MemoryKind>(static_cast<int>(MemoryKind::managed_static) + 1);
  d["api_domain"] = names_of<ApiDomain>(static_cast<int>(ApiDomain::other) + 1);
  d["range_kind"] = names_of<RangeKind>(static_cast<int>(RangeKind::annotation) + 1);
  d["sync_type"] = names_of<SyncType>(static_cast<int>(SyncType::context) + 1);
  py::list op_tables;
  for (const char* n : {"none", "kernel", "memcpy", "memset"}) op_tables.append(n);
  d["op_table"] = op_tables;
  d["track_kind"] = py::make_tuple("gpu", "cpu");
  return d;
}

// [SECTION] numpy arrays -----------------------------------------------------------------------------

template <class T>
py::array column_array(const std::vector<T>& column, std::size_t rows, py::handle base, std::string_view role) {
  if (column.empty()) {
    py::array_t<T> filled(static_cast<py::ssize_t>(rows));
    std::fill_n(filled.mutable_data(), rows, role == "row" ? static_cast<T>(kNoRow) : T{});
    return filled;
  }
  py::array a(py::dtype::of<T>(), {column.size()}, {sizeof(T)}, column.data(), base);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

// A copy of `values`, owned by the array (read-only, as the trace's own columns).
template <class T>
py::array owned_array(const std::vector<T>& values) {
  py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  out.attr("setflags")(py::arg("write") = false);
  return out;
}

// One value of each row's track (device, stream, pid or tid); kNoId for a
// track id out of range (never from a reader that checks ids).
py::array track_field(const std::vector<TrackId>& track, const std::vector<Track>& tracks,
                      std::uint32_t Track::*field) {
  std::vector<std::uint32_t> by_track(tracks.size());
  for (std::size_t i = 0; i < tracks.size(); ++i) by_track[i] = tracks[i].*field;
  py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(track.size()));
  std::uint32_t* o = out.mutable_data();
  {
    py::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < track.size(); ++i) o[i] = track[i] < by_track.size() ? by_track[track[i]] : kNoId;
  }
  return out;
}

// The columns computed from the track, placed right after it.
std::vector<std::pair<const char*, std::uint32_t Track::*>> track_columns(TableId table) {
  switch (table) {
    case TableId::kernels:
    case TableId::memcpys:
    case TableId::memsets: return {{"device", &Track::device}, {"stream", &Track::stream}};
    case TableId::api_calls:
    case TableId::ranges:
    case TableId::syncs:
    case TableId::overheads:
    case TableId::os_calls: return {{"pid", &Track::pid}, {"tid", &Track::tid}};
    case TableId::counters:
    case TableId::memory_events:
    case TableId::count_: break;
  }
  return {};
}

bool parse_table(std::string_view name, TableId* out) {
  for (int i = 0; i < kTableCount; ++i)
    if (to_string(static_cast<TableId>(i)) == name) return *out = static_cast<TableId>(i), true;
  return false;
}

// [(name, array, role)] of one table, in the model's column order.
py::list table_columns(py::object self, const std::string& name) {
  const PyTrace& pt = self.cast<const PyTrace&>();
  const Trace& t = pt.trace();
  TableId wanted{};
  if (!parse_table(name, &wanted)) throw py::key_error("no table named '" + name + "'");
  py::list out;
  t.tables().for_each_table([&](TableId id, const auto& table) {
    if (id != wanted) return;
    const std::size_t rows = table.size();
    table.for_each_column([&](ColumnInfo info, const auto& column) {
      const std::string_view role = (info.flags & kString) ? "string" : role_of(id, info.name);
      using C = std::remove_cvref_t<decltype(column)>;
      // A compact column (trace/tables.h) becomes an array of its rows' values.
      std::vector<typename C::value_type> expanded;
      if constexpr (detail::is_compact_column<C>) {
        if (column.compacted()) detail::expand_rows(table, column, 0, rows, expanded);
      }
      using Values = std::vector<typename C::value_type>;
      const Values& values = expanded.empty() ? static_cast<const Values&>(column) : expanded;
      py::array array = expanded.empty() ? column_array(column, rows, self, role) : owned_array(expanded);
      out.append(py::make_tuple(text(info.name), std::move(array), text(role)));
      if constexpr (requires { table.track; } && std::is_same_v<Values, std::vector<TrackId>>) {
        if (info.name == "track")
          for (const auto& [derived, field] : track_columns(id))
            out.append(py::make_tuple(derived, track_field(values, t.tracks(), field), text(role_of(id, derived))));
      }
    });
  });
  return out;
}

// [SECTION] Descriptions -----------------------------------------------------------------------------

// Small tables (a few rows) as {column: [values]}, for pandas. The columns
// are there even without rows (taken from a default row, then emptied).
void add(py::dict& d, const char* key, py::object value) {
  if (!d.contains(key)) d[key] = py::list();
  d[key].cast<py::list>().append(std::move(value));
}

template <class Row, class F>
py::dict records(const std::vector<Row>& rows, F&& fill) {
  py::dict d;
  for (const Row& r : rows) fill(d, r);
  if (rows.empty()) {
    fill(d, Row{});
    for (auto item : d) d[item.first] = py::list();
  }
  return d;
}

py::dict devices(const PyTrace& pt) {
  return records(pt.trace().devices(), [](py::dict& d, const Device& x) {
    add(d, "id", py::int_(x.id));
    add(d, "name", text(x.name));
    add(d, "uuid", text(x.uuid));
    add(d, "compute_major", py::int_(x.compute_major));
    add(d, "compute_minor", py::int_(x.compute_minor));
    add(d, "sm_count", py::int_(x.sm_count));
    add(d, "memory_bytes", py::int_(x.memory_bytes));
    add(d, "core_clock_khz", py::int_(x.core_clock_khz));
    add(d, "memory_clock_khz", py::int_(x.memory_clock_khz));
    add(d, "memory_bus_width_bits", py::int_(x.memory_bus_width_bits));
    add(d, "max_threads_per_sm", py::int_(x.max_threads_per_sm));
    add(d, "max_blocks_per_sm", py::int_(x.max_blocks_per_sm));
    add(d, "max_threads_per_block", py::int_(x.max_threads_per_block));
    add(d, "registers_per_sm", py::int_(x.registers_per_sm));
    add(d, "shared_memory_per_sm", py::int_(x.shared_memory_per_sm));
    add(d, "warp_size", py::int_(x.warp_size));
    add(d, "peak_fp32_flops", py::float_(x.peak_fp32_flops));
    add(d, "peak_tensor_flops", py::float_(x.peak_tensor_flops));
    add(d, "peak_memory_bandwidth", py::float_(x.peak_memory_bandwidth));
  });
}

py::dict processes(const PyTrace& pt) {
  return records(pt.trace().processes(), [](py::dict& d, const Process& x) {
    add(d, "pid", py::int_(x.pid));
    add(d, "name", text(x.name));
    add(d, "rank", py::int_(x.rank));
  });
}

py::dict tracks(const PyTrace& pt) {
  return records(pt.trace().tracks(), [](py::dict& d, const Track& x) {
    add(d, "kind", py::str(x.kind == TrackKind::gpu ? "gpu" : "cpu"));
    add(d, "device", py::int_(x.device));
    add(d, "stream", py::int_(x.stream));
    add(d, "pid", py::int_(x.pid));
    add(d, "tid", py::int_(x.tid));
    add(d, "name", text(x.name));
  });
}

py::dict counter_series(const PyTrace& pt) {
  return records(pt.trace().counter_series(), [](py::dict& d, const CounterSeries& x) {
    add(d, "name", text(x.name));
    add(d, "device", py::int_(x.device));
    add(d, "unit", text(x.unit));
  });
}

py::list strings(const PyTrace& pt) {
  const StringTable& s = pt.trace().strings();
  py::list out(s.size());
  for (StringId i = 0; i < s.size(); ++i) out[i] = text(s.get(i));
  return out;
}

// [SECTION] Bindings ---------------------------------------------------------------------------------

std::unique_ptr<PyTrace> open(const std::string& path, std::uint64_t max_memory) {
  // A NUL would end the path early: another file would be opened than the one named.
  if (path.find('\0') != std::string::npos) throw py::value_error("path contains a NUL character: cannot open it");
  auto pt = std::make_unique<PyTrace>();
  pt->path = path;
  {
    py::gil_scoped_release unlocked;
    const ScopedMemoryBudget budget(max_memory);
    pt->file = open_trace_file(path);
  }
  return pt;
}

// What the file lost in storage, in damage_headline()'s words with the rows
// lost per table; empty for an intact file.
std::string damage_text(const PyTrace& pt) {
  const FileDamage& d = pt.trace().meta().damage;
  if (!d.any()) return {};
  return damage_headline(d, device_coverage(pt.trace())) + " (rows lost: " + rows_lost_text(d) + ")";
}

}  // namespace

void bind_trace(py::module_& m) {
  py::class_<PyTrace>(m, "_Trace", "An opened trace (the C++ object; gpuscope.Trace wraps it).")
      .def_readonly("path", &PyTrace::path)
      .def("columns", &table_columns, py::arg("table"),
           "[(column, array, role)] of a table; arrays share the trace's memory and keep it alive")
      .def("rows",
           [](const PyTrace& pt, const std::string& table) {
             TableId id{};
             if (!parse_table(table, &id)) throw py::key_error("no table named '" + table + "'");
             return pt.trace().tables().rows(id);
           })
      .def("strings", &strings, "The string table: string id -> str")
      .def("devices", &devices)
      .def("processes", &processes)
      .def("tracks", &tracks)
      .def("counter_series", &counter_series)
      .def("info_json",
           [](const PyTrace& pt) {
             const FileQuality quality = file_quality(pt.file.trace, pt.path);
             const OpSummary ops = op_summary(pt.file.trace);
             const InfoParts parts{[&](json::Writer& out) { write_file_quality_json(out, quality); },
                                   [&](json::Writer& out) { write_op_summary_json(out, ops); }};
             return trace_info_json(pt.path, pt.file, false, parts);
           })
      .def_property_readonly("memory_bytes", [](const PyTrace& pt) { return pt.trace().memory_bytes(); })
      .def_property_readonly(
          "damage", [](const PyTrace& pt) { return text(damage_text(pt)); },
          "What the file lost in storage, or '' for an intact file");
  m.def("_open", &open, py::arg("path"), py::arg("max_memory") = 0,
        "Opens any trace file gpuscope reads (chosen by content), within max_memory bytes (0: the process budget)");
  m.def(
      "_parse_memory_size",
      [](const std::string& text) -> std::uint64_t {
        const std::optional<std::uint64_t> b = parse_memory_size(text);
        if (!b) throw py::value_error("'" + text + "' is not a size (e.g. 512M, 4G, 1.5GiB, 25%)");
        return *b;
      },
      py::arg("text"));
  m.def("_enum_names", &enum_names, "The names of each enumeration's values, by value");
  m.def("_tables", [] {
    py::list out;
    for (int i = 0; i < kTableCount; ++i) out.append(text(to_string(static_cast<TableId>(i))));
    return out;
  });
}

}  // namespace gpuscope::python
