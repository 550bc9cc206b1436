// Collectives as the framework named them, and their call sites
// (collectives.h; docs/metrics.md, "Collective sites").
//
// A communication kernel's name says less than it seems: NCCL runs an
// all-to-all, a DDP gradient all-reduce or an all-gather as SendRecv kernels
// where it sees fit, and one kernel name covers every message size. The ops
// around its launch say what it is: PyTorch's nccl:all_reduce and
// record_param_comms (with Kineto's collective arguments since 2.1), c10d::
// ops, NCCL's own NVTX ranges, TensorFlow's collective ops. A site is one
// kind and size at one place in the step; the same site is the same
// collective in every step, so its instances differ only by how long they
// waited.
//
// [SECTION] What an annotation says
// [SECTION] Communication kernels and their collectives
// [SECTION] Sites
#include "analysis/passes/collectives.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "analysis/job/job.h"
#include "analysis/util/intervals.h"
#include "analysis/util/search.h"
#include "analysis/util/stats.h"

namespace gpuscope::detail {

// [SECTION] What an annotation says ---------------------------------------------------------

namespace {

// Lower case, without the separators names put between words ("_", "-",
// ":", " ", "."): "nccl:_all_gather_base" -> "ncclallgatherbase".
std::string squeezed(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '_' || c == '-' || c == ':' || c == ' ' || c == '.') continue;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

// The ops a framework or NCCL opens around a collective's launch.
bool communication_annotation(std::string_view n) {
  return n.starts_with("nccl") || n.starts_with("rccl") || n.starts_with("c10d::") || n == "record_param_comms" ||
         n.starts_with("Nccl") || n.starts_with("Collective") ||  // TensorFlow: NcclAllReduce, CollectiveReduceV2
         n.starts_with("all-reduce") || n.starts_with("all-gather") || n.starts_with("reduce-scatter") ||  // XLA
         n.starts_with("all-to-all") || n.starts_with("collective-permute");
}

// The kind a squeezed collective name says; 0: none known.
int kind_of_words(std::string_view s) {
  if (s.find("barrier") != std::string_view::npos) return 0;  // an all-reduce of one element, to wait
  // Most specific first: "reducescatter" holds "reduce", TensorFlow's
  // CollectiveReduce is an all-reduce.
  constexpr std::pair<std::string_view, int> kWords[] = {{"collectivereduce", 1},
                                                         {"collectivegather", 2},
                                                         {"collectivebcast", 4},
                                                         {"allreduce", 1},
                                                         {"allgather", 2},
                                                         {"reducescatter", 3},
                                                         {"alltoall", 7},
                                                         {"broadcast", 4},
                                                         {"bcast", 4},
                                                         {"collectivepermute", 6},
                                                         {"sendrecv", 6},
                                                         {"send", 6},
                                                         {"recv", 6},
                                                         {"reduce", 5}};
  for (const auto& [word, kind] : kWords)
    if (s.find(word) != std::string_view::npos) return kind;
  return 0;
}

// The raw value of `key` in a compact JSON object ("{"a":1,"b":"x"}"): a
// number's text, or a string's contents without its quotes; empty when absent.
std::string_view json_field(std::string_view text, std::string_view key) {
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (at == 0 || text[at - 1] != '"') continue;
    std::size_t v = at + key.size();
    if (v + 1 >= text.size() || text[v] != '"' || text[v + 1] != ':') continue;
    v += 2;
    if (text[v] == '"') {
      const std::size_t close = text.find('"', v + 1);
      return close == std::string_view::npos ? std::string_view{} : text.substr(v + 1, close - v - 1);
    }
    const std::size_t stop = text.find_first_of(",}", v);
    return text.substr(v, stop == std::string_view::npos ? std::string_view::npos : stop - v);
  }
  return {};
}

std::uint64_t to_count(std::string_view token) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec == std::errc() && end == token.data() + token.size()) return v;
  double d = 0;  // "1024.0"
  const auto [dend, dec] = std::from_chars(token.data(), token.data() + token.size(), d);
  return dec == std::errc() && dend == token.data() + token.size() && d >= 0 && d < 1.8e19 ? std::uint64_t(d) : 0;
}

// Bytes per element of a dtype as PyTorch writes it ("Float", "c10::BFloat16",
// "unsigned char", "long int"); 0: unknown (TensorList, Scalar, …).
std::uint64_t dtype_bytes(std::string_view dtype) {
  std::string s = squeezed(dtype);
  if (s.starts_with("c10")) s.erase(0, 3);
  if (s.starts_with("float8")) return 1;
  constexpr std::pair<std::string_view, std::uint64_t> kSizes[] = {
      {"bool", 1},        {"char", 1},   {"signedchar", 1},   {"unsignedchar", 1},  {"byte", 1},    {"int8", 1},
      {"uint8", 1},       {"half", 2},   {"float16", 2},      {"bfloat16", 2},      {"short", 2},   {"shortint", 2},
      {"int16", 2},       {"float", 4},  {"float32", 4},      {"int", 4},           {"int32", 4},   {"uint32", 4},
      {"complexhalf", 4}, {"double", 8}, {"float64", 8},      {"long", 8},          {"longint", 8}, {"longlong", 8},
      {"int64", 8},       {"uint64", 8}, {"complexfloat", 8}, {"complexdouble", 16}};
  for (const auto& [name, bytes] : kSizes)
    if (s == name) return bytes;
  return 0;
}

std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? 0 : r;
}

}  // namespace

int annotation_kind(std::string_view name, std::string_view collective_args) {
  if (const std::string_view said = json_field(collective_args, "Collective name"); !said.empty())
    return kind_of_words(squeezed(said));
  if (!communication_annotation(name)) return -1;
  return kind_of_words(squeezed(name));
}

std::uint64_t collective_args_bytes(std::string_view args) {
  const std::uint64_t size = dtype_bytes(json_field(args, "dtype"));
  const std::uint64_t in = to_count(json_field(args, "In msg nelems"));
  const std::uint64_t out = to_count(json_field(args, "Out msg nelems"));
  return times(std::max(in, out), size);
}

std::uint64_t input_bytes(std::string_view dims, std::string_view types) {
  // dims: [[19618307],[],…]; types: ["float","Scalar",…] (compact JSON text).
  if (!dims.starts_with("[[") || !types.starts_with("[\"")) return 0;
  const std::size_t type_end = types.find('"', 2);
  if (type_end == std::string_view::npos) return 0;
  std::uint64_t n = dtype_bytes(types.substr(2, type_end - 2));
  const std::size_t close = dims.find(']', 2);
  if (n == 0 || close == std::string_view::npos) return 0;
  std::string_view list = dims.substr(2, close - 2);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::uint64_t d = to_count(list.substr(0, comma));
    if (d == 0) return 0;
    n = times(n, d);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return n;
}

// [SECTION] Communication kernels and their collectives -----------------------------------------

namespace {

// What the ops around a kernel's launch say of its collective: the kind of the
// innermost that names one, the bytes of the innermost that gives them, and
// the optimizer's step around it (a sharded optimizer's own exchange).
// `memo` holds annotation_kind() per range name (ranges without arguments).
void describe(const Trace& t, std::vector<std::int8_t>& memo, CollectiveCall& c) {
  const RangeTable& rg = t.ranges();
  bool named = false;
  RowIndex r = t.launching_op(OpRef{OpTable::kernel, c.kernel});
  for (int depth = 0; r != kNoRow && depth < 32 && !(named && c.bytes && c.optimizer != kNoRow);
       ++depth, r = t.parent_op(r)) {
    if (c.optimizer == kNoRow && is_optimizer_step(t.str(rg.name[r]))) c.optimizer = r;
    if (named && c.bytes) continue;
    const StringId args = rg.collective_at(r);
    int kind = 0;
    if (args) {
      kind = annotation_kind(t.str(rg.name[r]), t.str(args));
    } else {
      std::int8_t& m = memo[rg.name[r]];
      if (m == -2) m = static_cast<std::int8_t>(annotation_kind(t.str(rg.name[r])));
      kind = m;
    }
    if (kind < 0) continue;
    if (!named && kind > 0) c.kind = static_cast<std::uint8_t>(kind), c.annotation = r, named = true;
    if (!c.bytes && args) c.bytes = collective_args_bytes(t.str(args));
    if (!c.bytes && rg.input_dims_at(r)) c.bytes = input_bytes(t.str(rg.input_dims_at(r)), t.str(rg.input_types_at(r)));
  }
}

}  // namespace

std::vector<CollectiveCall> collective_calls(const Trace& t, std::uint32_t device) {
  const KernelTable& k = t.kernels();
  // f(track, row) for each communication kernel on the analysed GPUs.
  auto each = [&](auto&& f) {
    const auto comm = static_cast<std::uint8_t>(KernelCategory::communication);
    for (TrackId tr = 0; tr < t.tracks().size(); ++tr) {
      if (!on_device(t, tr, device)) continue;
      const RowRange rows = t.rows_of(TableId::kernels, tr);
      for (RowIndex i = first_with_byte(k.category.data(), rows.begin, rows.end, comm); i < rows.end;
           i = first_with_byte(k.category.data(), i + 1, rows.end, comm))
        f(tr, i);
    }
  };
  // Counted first (a scan of the category column): the calls' memory is
  // taken once, not grown and copied (10^5 calls, fresh pages each time).
  std::size_t n = 0;
  each([&](TrackId, RowIndex) { ++n; });
  std::vector<CollectiveCall> calls;
  if (n == 0) return calls;
  calls.reserve(n);
  std::vector<std::int8_t> memo(t.strings().size(), -2);
  std::vector<std::int16_t> kernel_kind(t.strings().size(), -1);  // collective_kind() per kernel name (-1: not yet)
  each([&](TrackId tr, RowIndex i) {
    CollectiveCall c;
    c.kernel = i;
    c.device = t.tracks()[tr].device;
    c.start = k.start[i];
    c.end = k.end[i];
    std::int16_t& kind = kernel_kind[k.name[i]];
    if (kind < 0) kind = static_cast<std::int16_t>(collective_kind(t.str(k.name[i])));
    c.kind = static_cast<std::uint8_t>(kind);
    describe(t, memo, c);
    calls.push_back(c);
  });
  // A device's communication kernels are mostly on one stream, already in
  // start order: then there is nothing to sort.
  const auto earlier = [](const CollectiveCall& a, const CollectiveCall& b) {
    return std::tie(a.device, a.start, a.end) < std::tie(b.device, b.start, b.end);
  };
  if (!std::is_sorted(calls.begin(), calls.end(), earlier)) std::stable_sort(calls.begin(), calls.end(), earlier);
  return calls;
}

void place_in_steps(std::vector<CollectiveCall>& calls, const std::vector<Step>& steps) {
  // Steps are per device in time order (find_steps), not overlapping, and
  // the calls are by device and start: one step's calls come together, so
  // the count of each (kind, size) restarts with each step.
  struct KindSize {
    std::uint8_t kind;
    std::uint64_t bytes;
    bool operator==(const KindSize&) const = default;
  };
  struct Hash {
    std::size_t operator()(const KindSize& k) const { return std::hash<std::uint64_t>{}(k.bytes * 31 + k.kind); }
  };
  std::unordered_map<KindSize, std::int32_t, Hash> next;
  std::uint32_t at_device = kNoDevice;
  std::int32_t at_step = -1;
  // The device's steps [first, last), last past every step that starts at or
  // before the call: searched when the device changes (or a call comes out
  // of order), else moved forward from the previous call's.
  using It = std::vector<Step>::const_iterator;
  It first = steps.begin(), last = steps.begin();
  const CollectiveCall* previous = nullptr;
  for (CollectiveCall& c : calls) {
    const auto later = [&](TimeNs v, const Step& s) { return s.device != c.device || v < s.range.start; };
    if (!previous || previous->device != c.device || c.start < previous->start) {
      first = std::lower_bound(steps.begin(), steps.end(), c.device,
                               [](const Step& s, std::uint32_t d) { return s.device < d; });
      last = std::upper_bound(first, steps.end(), c.start, later);
    } else {
      while (last != steps.end() && !later(c.start, *last)) ++last;
    }
    previous = &c;
    c.step = c.ordinal = -1;
    if (last == first) continue;
    const Step& s = *(last - 1);
    if (s.device != c.device || c.start >= s.range.end) continue;
    c.step = s.index;
    if (c.device != at_device || c.step != at_step) next.clear(), at_device = c.device, at_step = c.step;
    c.ordinal = next[{c.kind, c.bytes}]++;
  }
}

// [SECTION] Sites ------------------------------------------------------------------------------

namespace {

// Σ (instance − fastest instance): the time beyond the transfer. Without a
// place in a step or a known size, a site holds calls of any size anywhere:
// not comparable with each other, so no waiting is said (0).
TimeNs site_wait(const CollectiveSite& s) {
  if (s.ordinal < 0 && s.bytes == 0) return 0;
  return s.durations.total - static_cast<TimeNs>(s.durations.count) * s.durations.min;
}

// What a site's instances took beyond what their bytes could need on any
// link a GPU job runs on: twice the message (a ring all-reduce moves
// 2(n-1)/n of it per rank; an all-to-all, broadcast or send its size) at
// 100 MB/s, slower than PCIe, InfiniBand or even 1 GbE (125 MB/s), plus
// 2 ms of latency (an
// all-to-all over hundreds of ranks). Its fastest instance's excess, per
// instance: waiting, whatever the link. Gathers and scatters move the
// message times the ranks, which the trace may not give: none said.
constexpr TimeNs kSlowLinkLatencyNs = 2'000'000;

TimeNs size_wait(const CollectiveSite& s) {
  if (s.bytes == 0 || s.durations.count == 0) return 0;
  if (s.kind != "all_reduce" && s.kind != "all_to_all" && s.kind != "broadcast" && s.kind != "reduce" &&
      s.kind != "send_recv")
    return 0;
  const TimeNs need = static_cast<TimeNs>(std::min<std::uint64_t>(s.bytes, std::uint64_t(1) << 46)) * 2 * 10 +
                      kSlowLinkLatencyNs;  // 100 MB/s: a byte in 10 ns
  return std::max<TimeNs>(0, s.durations.min - need) * static_cast<TimeNs>(s.durations.count);
}

}  // namespace

CollectiveSummary summarize_sites(const std::vector<CollectiveSite>& sites) {
  CollectiveSummary out;
  // Pooled by call site: the same site of every GPU and rank.
  std::map<std::tuple<std::string_view, std::uint64_t, std::int32_t>, CollectiveSite> pooled;
  for (const CollectiveSite& s : sites) {
    if (s.durations.count == 0) continue;
    auto [it, added] = pooled.try_emplace({s.kind, s.bytes, s.ordinal}, s);
    if (added) continue;
    CollectiveSite& p = it->second;
    if (p.rank != s.rank) p.rank = -1;
    if (p.device != s.device) p.device = kNoDevice;
    p.durations = merge_approx(p.durations, s.durations);
    p.exposed_ns += s.exposed_ns;
  }
  std::map<std::string_view, CollectiveKind> kinds;
  for (auto& [key, p] : pooled) {
    p.wait_ns = site_wait(p);
    if (const TimeNs w = size_wait(p); w > 0) {
      out.size_wait_ns += w;
      if (w > size_wait(out.size_widest)) out.size_widest = p;
    }
    CollectiveKind& k = kinds[p.kind];
    k.kind = p.kind;
    ++k.sites;
    k.time_ns += p.durations.total;
    k.exposed_ns += p.exposed_ns;
    if (!p.optimizer.empty()) {
      k.optimizer_exposed_ns += p.exposed_ns;
      if (k.optimizer.empty()) k.optimizer = p.optimizer;
    }
    // Without a place in a step or a known size, a site holds every call of
    // its kind (any size, anywhere): not comparable with itself.
    if (p.durations.count >= 2 && (p.ordinal >= 0 || p.bytes > 0)) {
      k.repeated_ns += p.durations.total;
      k.wait_ns += p.wait_ns;
      ++out.repeated_sites;
      if (p.wait_ns > out.widest.wait_ns || out.widest.durations.count == 0) out.widest = p;
    }
  }
  for (const CollectiveSite& s : sites)
    if (s.named_by != "kernel name" && collective_kind_name(collective_kind(s.kernel)) != s.kind) ++out.renamed_sites;
  for (auto& [name, k] : kinds) {
    out.sites += k.sites;
    out.time_ns += k.time_ns, out.exposed_ns += k.exposed_ns, out.repeated_ns += k.repeated_ns;
    out.wait_ns += k.wait_ns;
    out.kinds.push_back(std::move(k));
  }
  std::stable_sort(out.kinds.begin(), out.kinds.end(), [](const CollectiveKind& a, const CollectiveKind& b) {
    return a.exposed_ns != b.exposed_ns ? a.exposed_ns > b.exposed_ns : a.time_ns > b.time_ns;
  });
  return out;
}

void collective_pass(const RankedTrace& rt, const AnalysisOptions& opt, const std::vector<Step>& steps,
                     const ExposedCommunication& exposed_comm, Profile* p) {
  const Trace& t = *rt.trace;
  std::vector<CollectiveCall> calls = collective_calls(t, opt.device);
  if (calls.empty()) return;
  place_in_steps(calls, steps);
  struct Group {
    std::vector<TimeNs> durations;
    TimeNs exposed = 0;
    const CollectiveCall* first = nullptr;
  };
  std::map<std::tuple<std::uint32_t, std::uint8_t, std::uint64_t, std::int32_t>, Group> sites;
  // A call's exposed time: its part of the device's exposed communication
  // (the device pass's pieces with communication and no compute kernel).
  // Calls come by device and start: the exposed pieces are walked forward,
  // one device after the other.
  static const intervals::IntervalSet kNone;
  std::optional<intervals::ForwardLength> exposed;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CollectiveCall& c = calls[i];
    if (i == 0 || c.device != calls[i - 1].device) {
      const auto found = exposed_comm.find(c.device);
      exposed.emplace(found == exposed_comm.end() ? kNone : found->second);
    }
    Group& g = sites[{c.device, c.kind, c.bytes, c.ordinal}];
    if (!g.first) g.first = &c;
    g.durations.push_back(c.end - c.start);
    g.exposed += exposed->length(c.start, c.end);
  }
  const std::size_t before = p->collective_sites.size();
  for (auto& [key, g] : sites) {
    CollectiveSite s;
    s.rank = rt.rank;
    s.device = g.first->device;
    s.kind = std::string(collective_kind_name(g.first->kind));
    s.named_by =
        g.first->annotation == kNoRow ? "kernel name" : std::string(t.str(t.ranges().name[g.first->annotation]));
    s.bytes = g.first->bytes;
    s.ordinal = g.first->ordinal;
    s.kernel = std::string(t.str(t.kernels().name[g.first->kernel]));
    if (g.first->optimizer != kNoRow) s.optimizer = std::string(t.str(t.ranges().name[g.first->optimizer]));
    s.durations = summarize(g.durations);
    s.wait_ns = site_wait(s);
    s.exposed_ns = g.exposed;
    p->collective_sites.push_back(std::move(s));
  }
  std::stable_sort(
      p->collective_sites.begin() + static_cast<std::ptrdiff_t>(before), p->collective_sites.end(),
      [](const CollectiveSite& a, const CollectiveSite& b) { return a.durations.total > b.durations.total; });
  p->collective_summary = summarize_sites(p->collective_sites);
}

}  // namespace gpuscope::detail
