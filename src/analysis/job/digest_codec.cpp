// encode_digest() / decode_digest(): a RankDigest as versioned bytes.
//
// [SECTION] Field lists (one per type, shared by both directions)
// [SECTION] Writing
// [SECTION] Reading (with every length and enum checked)
// [SECTION] Entry points
//
// Each type's fields are listed once, in fields(io, x), and the writer and
// the reader walk the same list: a field cannot be written and then read
// back into another. The sketches and kept ranges, whose state is private,
// go through their state()/from_state() pairs, which refuse states no
// sketch could have had. The static_asserts after the lists fail when a type
// listed here has more members than its list names: add the new field to
// its list, and raise kDigestFormatVersion.
#include "analysis/job/digest_codec.h"

#include <bit>
#include <concepts>
#include <cstring>
#include <type_traits>
#include <utility>

#include "analysis/detail/context.h"
#include "analysis/util/member_count.h"
#include "analysis/util/stats.h"

namespace gpuscope {

namespace {

constexpr char kMagic[8] = {'G', 'S', 'D', 'I', 'G', 'E', 'S', 'T'};

// [SECTION] Field lists ---------------------------------------------------------------------

// The largest value each enum may take.
template <class E>
constexpr std::uint64_t enum_max();
template <>
constexpr std::uint64_t enum_max<KernelCategory>() {
  return kKernelCategoryCount - 1;
}
template <>
constexpr std::uint64_t enum_max<Severity>() {
  return static_cast<std::uint64_t>(Severity::critical);
}
template <>
constexpr std::uint64_t enum_max<StepSource>() {
  return static_cast<std::uint64_t>(StepSource::bursts);
}
template <>
constexpr std::uint64_t enum_max<Verdict>() {
  return static_cast<std::uint64_t>(Verdict::not_applicable);
}
template <>
constexpr std::uint64_t enum_max<SavingSource>() {
  return static_cast<std::uint64_t>(SavingSource::simulated);
}
template <>
constexpr std::uint64_t enum_max<TraceSource>() {
  return static_cast<std::uint64_t>(TraceSource::nsys_sqlite);
}
template <>
constexpr std::uint64_t enum_max<LossCount>() {
  return static_cast<std::uint64_t>(LossCount::estimate);
}

// fields(io, x) for x of type T, const (writing) or not (reading); it returns
// what io(…) returns (for FieldCount below: how many fields it lists).
#define GPUSCOPE_FIELDS(T)                         \
  template <class IO, class S>                     \
  requires std::same_as<std::remove_const_t<S>, T> \
  auto fields(IO& io, S& x)

GPUSCOPE_FIELDS(TimeRange) { return io(x.start, x.end); }
GPUSCOPE_FIELDS(DurationStats) { return io(x.count, x.total, x.min, x.max, x.mean, x.median); }
GPUSCOPE_FIELDS(HwMetric) { return io(x.name, x.unit, x.samples, x.mean, x.min, x.max); }
GPUSCOPE_FIELDS(HwCategory) {
  return io(x.category, x.samples, x.sm_active, x.tensor_active, x.sm_issue, x.dram_bytes_per_s, x.dram_share,
            x.issue_samples, x.dram_samples);
}
GPUSCOPE_FIELDS(DeviceHw) {
  return io(x.metrics, x.by_category, x.busy_samples, x.low_busy_samples, x.busy_sm_active, x.low_kernels,
            x.throttle_samples, x.throttle_mask, x.throttled_steps, x.other_steps, x.throttled_step_mean_ns,
            x.other_step_mean_ns, x.sm_clock_max_mhz, x.throttled_sm_clock_mhz);
}
GPUSCOPE_FIELDS(DeviceSummary) {
  return io(x.id, x.name, x.compute_major, x.compute_minor, x.sm_count, x.rank, x.window, x.span_ns, x.busy_ns,
            x.utilization, x.kernel_busy_ns, x.kernel_concurrency, x.mean_kernels_in_flight, x.memcpy_ns,
            x.memcpy_compute_overlap, x.communication_ns, x.communication_compute_overlap, x.idle_ns, x.compute_ns,
            x.exposed_communication_ns, x.memcpy_exposed_ns, x.kernel_time_ns, x.idle_host_wait_ns,
            x.idle_kernel_wait_ns, x.idle_other_ns, x.kernels, x.memcpys, x.memsets, x.streams, x.sm_efficiency,
            x.achieved_tflops, x.peaks_source, x.memory_bytes, x.peak_allocated_bytes, x.peak_reserved_bytes, x.hw,
            x.occupancy);
}
GPUSCOPE_FIELDS(DeviceOccupancy) {
  return io(x.limits, x.known_kernels, x.unknown_kernels, x.known_ns, x.known_share, x.theoretical, x.block_size_ns,
            x.blocks_per_sm_ns, x.registers_ns, x.shared_memory_ns, x.gpu_fill, x.side_work_ns, x.side_work_shared_ns);
}
GPUSCOPE_FIELDS(CategoryTime) { return io(x.category, x.time_ns, x.share, x.count, x.stats); }
GPUSCOPE_FIELDS(Hotspot) { return io(x.name, x.category, x.stats, x.share, x.device, x.tensor_cores, x.category_rule); }
GPUSCOPE_FIELDS(StepHw) {
  return io(x.sm_active, x.sm_occupancy, x.tensor_active, x.dram_bytes_per_s, x.sm_clock_mhz, x.power_w,
            x.temperature_c, x.throttled);
}
GPUSCOPE_FIELDS(Step) {
  return io(x.index, x.name, x.range, x.compute_ns, x.communication_ns, x.memcpy_ns, x.idle_ns, x.device, x.rank,
            x.input_wait_ns, x.host_wait_ns, x.host_tail_ns, x.peak_allocated_bytes, x.min_allocated_bytes, x.hw);
}
GPUSCOPE_FIELDS(HostRange) { return io(x.name, x.ns, x.count); }
GPUSCOPE_FIELDS(StepSummary) {
  return io(x.source, x.steps, x.step_time, x.total_ns, x.compute_ns, x.communication_ns, x.memcpy_ns, x.idle_ns,
            x.input_wait_ns, x.host_tail_ns, x.not_steps, x.outside_gpu_ns, x.before_gpu_ns, x.outside_ranges,
            x.source_evidence);
}
GPUSCOPE_FIELDS(IdleByCause) { return io(x.rank, x.device, x.stream, x.host_wait_ns, x.kernel_wait_ns, x.other_ns); }
GPUSCOPE_FIELDS(LaunchStats) {
  return io(x.launches, x.cpu_launch, x.gpu_duration, x.launch_delay, x.short_kernels, x.short_kernel_share,
            x.max_queue_depth, x.runtime_outliers, x.launch_delay_outliers, x.late_launch_idle_ns);
}
GPUSCOPE_FIELDS(RankSummary) {
  return io(x.rank, x.source_file, x.clock_offset_ns, x.step_time_mean, x.communication_ns, x.utilization, x.device,
            x.compute_ns, x.exposed_communication_ns, x.compute_per_step_ns, x.clock_residual_ns, x.waited_ns,
            x.wait_caused_ns, x.last_arrivals);
}
GPUSCOPE_FIELDS(CollectiveSite) {
  return io(x.rank, x.device, x.kind, x.named_by, x.bytes, x.ordinal, x.kernel, x.durations, x.wait_ns, x.exposed_ns);
}
GPUSCOPE_FIELDS(CollectiveKind) { return io(x.kind, x.sites, x.time_ns, x.exposed_ns, x.repeated_ns, x.wait_ns); }
GPUSCOPE_FIELDS(CollectiveSummary) {
  return io(x.kinds, x.sites, x.repeated_sites, x.time_ns, x.exposed_ns, x.repeated_ns, x.wait_ns, x.widest,
            x.renamed_sites);
}
GPUSCOPE_FIELDS(CollectiveInstance) {
  return io(x.index, x.kind, x.step, x.range, x.first_arrival_ns, x.last_arrival_ns, x.last_rank, x.wait_ns, x.bytes);
}
GPUSCOPE_FIELDS(Straggler) {
  return io(x.rank, x.source_file, x.wait_caused_ns, x.last_arrivals, x.critical_steps, x.waited_ns);
}
GPUSCOPE_FIELDS(JobStep) { return io(x.index, x.critical_rank, x.wait_ns); }
GPUSCOPE_FIELDS(LeftOut) { return io(x.file, x.problem); }
GPUSCOPE_FIELDS(Skew) {
  return io(x.participants, x.busy_spread, x.compute_spread, x.step_time_spread, x.slowest_rank, x.slowest_device);
}
GPUSCOPE_FIELDS(SyncStats) {
  return io(x.count, x.total_ns, x.device_syncs, x.stream_syncs, x.event_syncs, x.gpu_idle_after_ns, x.copies,
            x.copy_ns, x.gpu_idle_after_copies_ns);
}
GPUSCOPE_FIELDS(CopyGroup) { return io(x.direction, x.own_stream, x.memory, x.count, x.bytes, x.time_ns, x.blocking); }
GPUSCOPE_FIELDS(MemcpyStats) {
  return io(x.count, x.bytes, x.time_ns, x.htod, x.dtoh, x.dtod, x.other, x.pageable, x.pageable_ns, x.pageable_bytes,
            x.synchronous, x.synchronous_ns, x.memsets, x.memset_ns, x.groups);
}
GPUSCOPE_FIELDS(TemporalBreakdown) {
  return io(x.rank, x.device, x.span_ns, x.idle_ns, x.compute_ns, x.non_compute_ns, x.idle_share, x.compute_share,
            x.non_compute_share, x.non_compute_note);
}
GPUSCOPE_FIELDS(OpKernel) { return io(x.name, x.category, x.count, x.time_ns, x.blocks); }
GPUSCOPE_FIELDS(OpRow) {
  return io(x.name, x.shapes, x.dtypes, x.path, x.calls, x.cpu_self_ns, x.cpu_total_ns, x.gpu_self_ns, x.gpu_total_ns,
            x.kernels, x.kernels_total, x.launch_ns, x.copy_call_ns, x.starved_ns, x.starved_total_ns, x.family,
            x.flops, x.bytes, x.achieved_tflops, x.achieved_tbps, x.intensity, x.roofline_fraction, x.bound, x.math,
            x.dims, x.aligned8, x.top_kernels, x.gpu_calls, x.nested_calls);
}
GPUSCOPE_FIELDS(OpSummary) {
  return io(x.op_calls, x.gpu_ops, x.attributed, x.unattributed, x.unattributed_ns, x.no_correlation,
            x.unmatched_correlation, x.with_shapes, x.malformed_shapes, x.overlapping, x.shapes_recorded);
}
GPUSCOPE_FIELDS(ModuleTime) { return io(x.name, x.forward_gpu_ns, x.backward_gpu_ns, x.backward_ops); }
GPUSCOPE_FIELDS(ModuleSplit) {
  return io(x.known, x.backward_ops, x.linked, x.unlinked, x.backward_gpu_ns, x.unlinked_gpu_ns, x.modules);
}
GPUSCOPE_FIELDS(Finding) {
  return io(x.id, x.severity, x.title, x.evidence, x.recommendation, x.saving_ns, x.metric, x.threshold, x.device,
            x.ranges, x.kernels, x.saving_source, x.fix, x.predicted_step_ns, x.saving_note, x.variant, x.share);
}
GPUSCOPE_FIELDS(HelpAnswer) {
  return io(x.id, x.question, x.verdict, x.reason, x.findings, x.fix, x.predicted_step_ns);
}
GPUSCOPE_FIELDS(IdleCharge) { return io(x.cause, x.ns, x.finding, x.note); }
GPUSCOPE_FIELDS(HostFrame) { return io(x.frame, x.samples); }
GPUSCOPE_FIELDS(HostWhere) {
  return io(x.cause, x.samples, x.threads, x.thread, x.path, x.path_samples, x.path_depth, x.path_from_root, x.leaves,
            x.input_samples, x.python_samples, x.note);
}
GPUSCOPE_FIELDS(PathCategory) { return io(x.category, x.ns); }
GPUSCOPE_FIELDS(PathOp) { return io(x.name, x.category, x.ns, x.count); }
GPUSCOPE_FIELDS(CriticalPath) {
  return io(x.steps, x.length_ns, x.gpu_compute_ns, x.communication_ns, x.copy_ns, x.cpu_launch_ns, x.cpu_other_ns,
            x.input_wait_ns, x.sync_wait_ns, x.categories, x.ops);
}
GPUSCOPE_FIELDS(Prediction) { return io(x.change, x.step_ns, x.speedup); }
GPUSCOPE_FIELDS(Simulation) {
  return io(x.status, x.scope, x.steps, x.replayed_step_ns, x.replay_error, x.replay_error_worst, x.predictions,
            x.together, x.together_note);
}
GPUSCOPE_FIELDS(TableLoss) { return io(x.loaded, x.lost, x.count); }
GPUSCOPE_FIELDS(FileDamage) {
  return io(x.truncated, x.file_bytes, x.intact_bytes, x.bytes_lost, x.damaged_sections, x.tables, x.problems);
}
GPUSCOPE_FIELDS(DeviceCoverage) { return io(x.declared, x.with_data); }
GPUSCOPE_FIELDS(FileQuality) { return io(x.file, x.damage, x.devices, x.dropped_records); }
GPUSCOPE_FIELDS(TraceQuality) { return io(x.files); }
GPUSCOPE_FIELDS(WorkloadKind) {
  return io(x.phase, x.phase_evidence, x.execution, x.execution_evidence, x.graph_kernels, x.ranks, x.bundled,
            x.framework, x.framework_evidence, x.data_parallel, x.data_parallel_evidence, x.graph_launches,
            x.data_loading_recorded, x.run, x.run_evidence, x.kernel_window, x.setup_ns, x.teardown_ns);
}
GPUSCOPE_FIELDS(Profile) {
  return io(x.source, x.producer, x.files, x.workload, x.clock_alignment, x.window, x.devices, x.categories, x.hotspots,
            x.op_names, x.ops, x.op_summary, x.module_split, x.steps, x.idle, x.launches, x.collective_sites,
            x.collective_summary, x.temporal_breakdown, x.ranks, x.skew, x.collectives, x.stragglers, x.job_steps,
            x.left_out, x.syncs, x.memcpys, x.kernel_time_ns, x.findings, x.minor_findings, x.helps, x.idle_charges,
            x.host_while_idle, x.trace_stats, x.trace_quality, x.critical_path, x.simulation);
}
GPUSCOPE_FIELDS(CollectivePart) { return io(x.start, x.end, x.bytes, x.kind, x.step, x.ordinal); }
GPUSCOPE_FIELDS(detail::Evidence) {
  return io(x.ops_by_category, x.idle_gaps, x.idle_gaps_explained_ns, x.exposed_comm, x.memcpy_exposed, x.launch_gaps,
            x.input_wait, x.sync_idle, x.pageable, x.sync_memcpy, x.optimizer, x.has_input_ranges, x.optimizer_ns,
            x.optimizer_overlapped_ns, x.optimizer_kernels, x.steps_with_optimizer, x.allocator_calls,
            x.allocator_call_ns, x.allocator, x.idle_gaps_sync_ns, x.idle_gaps_warmup_ns, x.idle_gaps_launch_ns,
            x.idle_gaps_queued_ns, x.idle_gaps_warmup, x.optimizer_kernel_ns, x.optimizer_op_kernels,
            x.optimizer_op_named_kernels, x.optimizer_op_kernel_ns, x.attention_chains, x.attention_chain_ns,
            x.attention_chain_gemm_ns, x.input_wait_before_start_ns);
}
GPUSCOPE_FIELDS(detail::RankParts::Name) { return io(x.name, x.category, x.durations); }
GPUSCOPE_FIELDS(detail::RankParts) { return io(x.evidence, x.names, x.launch); }
// RankDigest::parts goes separately (a shared pointer).
GPUSCOPE_FIELDS(RankDigest) {
  return io(x.file, x.own_rank, x.world_size, x.host, x.command_line, x.gpus, x.profile, x.collectives);
}

#undef GPUSCOPE_FIELDS

// Every type listed above names all its members: fields() of a FieldCount
// returns how many it lists, member_count() how many the struct has (the same
// on every compiler and platform). A type that grew has a field its list
// lacks.
struct FieldCount {
  template <class... F>
  std::integral_constant<std::size_t, sizeof...(F)> operator()(const F&...) const {
    return {};
  }
};
template <class T>
constexpr std::size_t listed_fields() {
  return decltype(fields(std::declval<FieldCount&>(), std::declval<const T&>()))::value;
}
// `apart`: members encoded outside the list (RankDigest::parts).
#define GPUSCOPE_LISTED(T, apart)                                          \
  static_assert(detail::member_count<T>() == listed_fields<T>() + (apart), \
                "digest_codec.cpp: " #T                                    \
                " has a member its fields() does not list: "               \
                "list it and raise kDigestFormatVersion")
GPUSCOPE_LISTED(TimeRange, 0);
GPUSCOPE_LISTED(DurationStats, 0);
GPUSCOPE_LISTED(HwMetric, 0);
GPUSCOPE_LISTED(HwCategory, 0);
GPUSCOPE_LISTED(DeviceHw, 0);
GPUSCOPE_LISTED(DeviceOccupancy, 0);
GPUSCOPE_LISTED(DeviceSummary, 0);
GPUSCOPE_LISTED(CategoryTime, 0);
GPUSCOPE_LISTED(Hotspot, 0);
GPUSCOPE_LISTED(StepHw, 0);
GPUSCOPE_LISTED(Step, 0);
GPUSCOPE_LISTED(HostRange, 0);
GPUSCOPE_LISTED(StepSummary, 0);
GPUSCOPE_LISTED(IdleByCause, 0);
GPUSCOPE_LISTED(LaunchStats, 0);
GPUSCOPE_LISTED(RankSummary, 0);
GPUSCOPE_LISTED(CollectiveSite, 0);
GPUSCOPE_LISTED(CollectiveKind, 0);
GPUSCOPE_LISTED(CollectiveSummary, 0);
GPUSCOPE_LISTED(CollectiveInstance, 0);
GPUSCOPE_LISTED(Straggler, 0);
GPUSCOPE_LISTED(JobStep, 0);
GPUSCOPE_LISTED(LeftOut, 0);
GPUSCOPE_LISTED(Skew, 0);
GPUSCOPE_LISTED(SyncStats, 0);
GPUSCOPE_LISTED(CopyGroup, 0);
GPUSCOPE_LISTED(MemcpyStats, 0);
GPUSCOPE_LISTED(TemporalBreakdown, 0);
GPUSCOPE_LISTED(OpKernel, 0);
GPUSCOPE_LISTED(OpRow, 0);
GPUSCOPE_LISTED(OpSummary, 0);
GPUSCOPE_LISTED(ModuleTime, 0);
GPUSCOPE_LISTED(ModuleSplit, 0);
GPUSCOPE_LISTED(Finding, 0);
GPUSCOPE_LISTED(HelpAnswer, 0);
GPUSCOPE_LISTED(IdleCharge, 0);
GPUSCOPE_LISTED(HostFrame, 0);
GPUSCOPE_LISTED(HostWhere, 0);
GPUSCOPE_LISTED(PathCategory, 0);
GPUSCOPE_LISTED(PathOp, 0);
GPUSCOPE_LISTED(CriticalPath, 0);
GPUSCOPE_LISTED(Prediction, 0);
GPUSCOPE_LISTED(Simulation, 0);
GPUSCOPE_LISTED(TableLoss, 0);
GPUSCOPE_LISTED(FileDamage, 0);
GPUSCOPE_LISTED(DeviceCoverage, 0);
GPUSCOPE_LISTED(FileQuality, 0);
GPUSCOPE_LISTED(TraceQuality, 0);
GPUSCOPE_LISTED(WorkloadKind, 0);
GPUSCOPE_LISTED(Profile, 0);
GPUSCOPE_LISTED(CollectivePart, 0);
// Evidence has a constructor (how many ranges to keep), so it is no
// aggregate; its members are those of the aggregate EvidenceFields.
static_assert(detail::member_count<detail::EvidenceFields>() == listed_fields<detail::Evidence>(),
              "digest_codec.cpp: detail::Evidence has a member its fields() does not list: "
              "list it and raise kDigestFormatVersion");
GPUSCOPE_LISTED(detail::RankParts::Name, 0);
GPUSCOPE_LISTED(detail::RankParts, 0);
GPUSCOPE_LISTED(RankDigest, 1);
#undef GPUSCOPE_LISTED

// [SECTION] Writing ---------------------------------------------------------------------------

class Writer {
 public:
  std::string out;

  template <class... T>
  void operator()(const T&... v) {
    (put(v), ...);
  }

 private:
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      out.push_back(v ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::endian::native == std::endian::little) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out.append(b, sizeof(T));
      } else {
        std::uint64_t u = static_cast<std::make_unsigned_t<T>>(v);
        for (std::size_t i = 0; i < sizeof(T); ++i, u >>= 8) out.push_back(static_cast<char>(u & 0xff));
      }
    } else if constexpr (std::is_same_v<T, double>) {
      put(std::bit_cast<std::uint64_t>(v));
    } else {
      fields(*this, v);
    }
  }
  void put(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    out.append(s);
  }
  template <class T>
  void put(const std::optional<T>& v) {
    put(v.has_value());
    if (v) put(*v);
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (const T& x : v) put(x);
  }
  template <class T, std::size_t N>
  void put(const std::array<T, N>& v) {
    for (const T& x : v) put(x);
  }
  template <class A, class B>
  void put(const std::pair<A, B>& v) {
    put(v.first), put(v.second);
  }
  void put(const DurationSketch& d) {
    const DurationSketch::State s = d.state();
    (*this)(s.items, s.exact, s.count, s.total, s.min, s.max);
  }
  void put(const detail::TopRanges& t) {
    (*this)(static_cast<std::uint64_t>(t.keep()), t.items(), t.total(), t.count());
  }
};

// [SECTION] Reading ---------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  template <class... T>
  void operator()(T&... v) {
    (get(v), ...);
  }
  std::size_t left() const { return in_.size() - pos_; }
  std::size_t pos() const { return pos_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw DigestError("digest: " + what + " at byte " + std::to_string(pos_));
  }

 private:
  template <class T>
  void get(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::uint8_t b = byte();
      if (b > 1) fail("a flag of value " + std::to_string(b));
      v = b != 0;
    } else if constexpr (std::is_enum_v<T>) {
      std::uint64_t u = 0;
      get(u);
      if (u > enum_max<T>())
        fail("an enum value " + std::to_string(u) + " past its largest, " + std::to_string(enum_max<T>()));
      v = static_cast<T>(u);
    } else if constexpr (std::is_integral_v<T>) {
      need(sizeof(T), "an integer");
      if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, in_.data() + pos_, sizeof(T));
      } else {
        std::uint64_t u = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
          u |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << 8 * i;
        v = static_cast<T>(static_cast<std::make_unsigned_t<T>>(u));
      }
      pos_ += sizeof(T);
    } else if constexpr (std::is_same_v<T, double>) {
      std::uint64_t u = 0;
      get(u);
      v = std::bit_cast<double>(u);
    } else {
      fields(*this, v);
    }
  }
  void get(std::string& s) {
    const std::size_t n = count(1, "a string");
    s.assign(in_.substr(pos_, n));
    pos_ += n;
  }
  template <class T>
  void get(std::optional<T>& v) {
    bool has = false;
    get(has);
    v.reset();
    if (has) get(v.emplace());
  }
  template <class T>
  void get(std::vector<T>& v) {
    // Every element takes at least one byte: a count past the bytes left is refused before any allocation.
    const std::size_t n = count(1, "a list");
    v.clear();
    v.resize(n);
    for (T& x : v) get(x);
  }
  template <class T, std::size_t N>
  void get(std::array<T, N>& v) {
    for (T& x : v) get(x);
  }
  template <class A, class B>
  void get(std::pair<A, B>& v) {
    get(v.first), get(v.second);
  }
  void get(DurationSketch& d) {
    DurationSketch::State s;
    (*this)(s.items, s.exact, s.count, s.total, s.min, s.max);
    std::optional<DurationSketch> r = DurationSketch::from_state(std::move(s));
    if (!r) fail("a duration sketch whose values are not ascending or whose counts do not add up");
    d = std::move(*r);
  }
  void get(detail::TopRanges& t) {
    std::uint64_t keep = 0, count = 0;
    std::vector<detail::TopRanges::Item> items;
    TimeNs total = 0;
    (*this)(keep, items, total, count);
    std::optional<detail::TopRanges> r = detail::TopRanges::restore(keep, std::move(items), total, count);
    if (!r) fail("a list of kept ranges that is not a heap of at most " + std::to_string(keep));
    t = std::move(*r);
  }

  std::uint8_t byte() {
    need(1, "a flag");
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  void need(std::size_t n, const char* what) const {
    if (left() < n)
      fail(std::string("cut short (") + what + " needs " + std::to_string(n) + " bytes, " + std::to_string(left()) +
           " left)");
  }
  // A count of things of at least `size` bytes each, checked against the bytes left.
  std::size_t count(std::size_t size, const char* what) {
    std::uint64_t n = 0;
    get(n);
    if (n > left() / size)
      fail(std::string("cut short (") + what + " of " + std::to_string(n) + " where " + std::to_string(left()) +
           " bytes are left)");
    return static_cast<std::size_t>(n);
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

}  // namespace

// [SECTION] Entry points ------------------------------------------------------------------------

std::string encode_digest(const RankDigest& d) {
  Writer w;
  w.out.reserve(std::size_t{1} << 20);
  w.out.append(kMagic, sizeof kMagic);
  w(kDigestFormatVersion, std::uint64_t{0});
  const std::size_t head = w.out.size();
  static const detail::RankParts kNoParts;
  w(d, d.parts ? *d.parts : kNoParts);
  // The payload's length, in the place kept for it.
  Writer length;
  length(static_cast<std::uint64_t>(w.out.size() - head));
  w.out.replace(head - length.out.size(), length.out.size(), length.out);
  return std::move(w.out);
}

RankDigest decode_digest(std::string_view bytes) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw DigestError("digest: not a digest (no GSDIGEST mark)");
  Reader r(bytes.substr(sizeof kMagic));
  std::uint32_t version = 0;
  std::uint64_t length = 0;
  r(version);
  if (version != kDigestFormatVersion)
    throw DigestError("digest: format version " + std::to_string(version) + ", this gpuscope reads version " +
                      std::to_string(kDigestFormatVersion) + " (run one gpuscope build on every process)");
  r(length);
  if (length != r.left())
    throw DigestError("digest: says " + std::to_string(length) + " bytes follow, " + std::to_string(r.left()) + " do");
  RankDigest d;
  auto parts = std::make_shared<detail::RankParts>();
  r(d, *parts);
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " bytes after the digest's end");
  d.parts = std::move(parts);
  return d;
}

}  // namespace gpuscope
