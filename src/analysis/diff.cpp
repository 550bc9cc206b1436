// diff_profiles(): before/after, normalised per step when both runs have
// steps, with the findings matched by id. Phases: the headline numbers, the
// categories, the kernels, the findings, then the summary lines.
#include "analysis/diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <type_traits>

#include "words/damage_text.h"
#include "words/format.h"

namespace gpuscope {

std::string_view to_string(FindingChange c) {
  switch (c) {
    case FindingChange::resolved: return "resolved";
    case FindingChange::appeared: return "new";
    case FindingChange::better: return "better";
    case FindingChange::worse: return "worse";
    case FindingChange::unchanged: break;
  }
  return "unchanged";
}

bool parse_finding_change(std::string_view s, FindingChange* out) {
  for (FindingChange c : {FindingChange::resolved, FindingChange::appeared, FindingChange::better, FindingChange::worse,
                          FindingChange::unchanged})
    if (to_string(c) == s) return *out = c, true;
  return false;
}

namespace {

struct Side {
  std::uint64_t steps_per_gpu = 0;
  TimeNs step_mean = 0;
  double divisor = 1;  // steps per GPU when comparing per step
};

Side side_of(const Profile& p) {
  Side s;
  const std::size_t gpus = std::max<std::size_t>(1, p.devices.size());
  s.steps_per_gpu = p.steps.steps.size() / gpus;
  s.step_mean = p.steps.step_time.mean;
  return s;
}

double mean_of(const Profile& p, double DeviceSummary::*field) {
  if (p.devices.empty()) return 0;
  double sum = 0;
  for (const DeviceSummary& d : p.devices) sum += d.*field;
  return sum / static_cast<double>(p.devices.size());
}

TimeNs per(TimeNs v, double divisor) { return static_cast<TimeNs>(std::llround(static_cast<double>(v) / divisor)); }

// Whether a finding got better or worse: its metric moved away from or
// towards its threshold. Most metrics are "higher is worse"; for the few
// "lower is worse" ones the threshold sits above the metric.
FindingChange direction(const Finding& a, const Finding& b) {
  const bool lower_is_worse = a.metric < a.threshold;  // e.g. utilization, concurrency, overlap
  const double da = a.metric, db = b.metric;
  const double tolerance = 0.01 * std::max(std::abs(da), std::abs(a.threshold));
  if (std::abs(db - da) <= tolerance) return FindingChange::unchanged;
  const bool worse = lower_is_worse ? db < da : db > da;
  return worse ? FindingChange::worse : FindingChange::better;
}

std::string metric_text(double v) { return format::percent1(v); }

// What one side's times are divided by: its steps per GPU when comparing
// per step (else 1), times its GPUs (kernel time is summed over GPUs).
struct Scale {
  double before = 1, after = 1;
};

// The largest of the GPUs' peaks; nothing when no GPU's is known.
std::optional<std::uint64_t> largest(const Profile& p, std::optional<std::uint64_t> DeviceSummary::*peak) {
  std::optional<std::uint64_t> out;
  for (const DeviceSummary& g : p.devices)
    if (const auto& v = g.*peak) out = std::max(out.value_or(0), *v);
  return out;
}

void compare_memory(const Profile& before, const Profile& after, ProfileDiff& d) {
  d.before_peak_allocated = largest(before, &DeviceSummary::peak_allocated_bytes);
  d.after_peak_allocated = largest(after, &DeviceSummary::peak_allocated_bytes);
  d.before_peak_reserved = largest(before, &DeviceSummary::peak_reserved_bytes);
  d.after_peak_reserved = largest(after, &DeviceSummary::peak_reserved_bytes);
}

// Step counts and times, kernel time, utilization, concurrency, idle share, memory peaks.
Scale compare_headline(const Profile& before, const Profile& after, ProfileDiff& d) {
  if (!before.files.empty()) d.before_label = before.files.front();
  if (!after.files.empty()) d.after_label = after.files.front();
  Side a = side_of(before), b = side_of(after);
  d.per_step = a.steps_per_gpu > 0 && b.steps_per_gpu > 0;
  if (d.per_step) {
    a.divisor = static_cast<double>(a.steps_per_gpu);
    b.divisor = static_cast<double>(b.steps_per_gpu);
  }
  d.before_steps = a.steps_per_gpu;
  d.after_steps = b.steps_per_gpu;
  d.before_step_ns = a.step_mean;
  d.after_step_ns = b.step_mean;
  // Kernel time is summed over GPUs: per GPU and per step.
  const double gpus_a = std::max<double>(1, static_cast<double>(before.devices.size()));
  const double gpus_b = std::max<double>(1, static_cast<double>(after.devices.size()));
  const Scale scale{a.divisor * gpus_a, b.divisor * gpus_b};
  d.before_kernel_ns = per(before.kernel_time_ns, scale.before);
  d.after_kernel_ns = per(after.kernel_time_ns, scale.after);
  d.before_utilization = mean_of(before, &DeviceSummary::utilization);
  d.after_utilization = mean_of(after, &DeviceSummary::utilization);
  d.before_concurrency = mean_of(before, &DeviceSummary::kernel_concurrency);
  d.after_concurrency = mean_of(after, &DeviceSummary::kernel_concurrency);
  auto idle = [](const Profile& p) {
    double s = 0;
    for (const TemporalBreakdown& t : p.temporal_breakdown) s += t.idle_share;
    return p.temporal_breakdown.empty() ? 0.0 : s / static_cast<double>(p.temporal_breakdown.size());
  };
  d.before_idle_share = idle(before);
  d.after_idle_share = idle(after);
  compare_memory(before, after, d);
  return scale;
}

// Each hardware series' sample-weighted mean over the GPUs, both sides.
void compare_hardware(const Profile& before, const Profile& after, ProfileDiff& d) {
  struct Side {
    double sum = 0;
    std::uint64_t samples = 0;
  };
  std::map<std::string, std::pair<std::string, std::array<Side, 2>>> by_name;
  for (int side = 0; side < 2; ++side)
    for (const DeviceSummary& dev : (side == 0 ? before : after).devices)
      for (const HwMetric& m : dev.hw.metrics) {
        if (m.name.ends_with("throttle_reasons")) continue;  // a bit mask, not a level
        auto& slot = by_name[m.name];
        slot.first = m.unit;
        slot.second[side].sum += m.mean * static_cast<double>(m.samples);
        slot.second[side].samples += m.samples;
      }
  for (const auto& [name, v] : by_name) {
    HwDelta x{name, v.first, std::nullopt, std::nullopt, v.second[0].samples, v.second[1].samples};
    if (v.second[0].samples) x.before = v.second[0].sum / static_cast<double>(v.second[0].samples);
    if (v.second[1].samples) x.after = v.second[1].sum / static_cast<double>(v.second[1].samples);
    d.hardware.push_back(std::move(x));
  }
}

// The rows of both runs matched by key, in key order: fill(delta, row, after)
// fills the side of the delta that `row` belongs to (after: the after run's).
template <class Delta, class Row, class Key, class Fill>
std::vector<Delta> match_rows(const std::vector<Row>& before, const std::vector<Row>& after, Key key, Fill fill) {
  std::map<std::invoke_result_t<Key&, const Row&>, Delta> by_key;
  for (const Row& r : before) fill(by_key[key(r)], r, false);
  for (const Row& r : after) fill(by_key[key(r)], r, true);
  std::vector<Delta> out;
  for (auto& [k, x] : by_key) out.push_back(std::move(x));
  return out;
}

// Largest change of time first (key order among equal changes), the first `top`.
template <class Delta>
void largest_change_first(std::vector<Delta>& v, std::size_t top = std::numeric_limits<std::size_t>::max()) {
  std::stable_sort(v.begin(), v.end(), [](const Delta& x, const Delta& y) {
    return std::abs(x.after_ns - x.before_ns) > std::abs(y.after_ns - y.before_ns);
  });
  if (v.size() > top) v.resize(top);
}

// Kernel time per category, largest change first.
void compare_categories(const Profile& before, const Profile& after, Scale scale, ProfileDiff& d) {
  d.categories = match_rows<CategoryDelta>(
      before.categories, after.categories, [](const CategoryTime& c) { return c.category; },
      [&](CategoryDelta& x, const CategoryTime& c, bool a) {
        x.category = c.category;
        (a ? x.after_ns : x.before_ns) = per(c.time_ns, a ? scale.after : scale.before);
        (a ? x.after_share : x.before_share) = c.share;
      });
  largest_change_first(d.categories);
}

// Kernel time per kernel name, largest change first, the first top_kernels.
void compare_kernels(const Profile& before, const Profile& after, Scale scale, std::size_t top_kernels,
                     ProfileDiff& d) {
  d.kernels = match_rows<KernelDelta>(
      before.hotspots, after.hotspots, [](const Hotspot& h) { return h.name; },
      [&](KernelDelta& x, const Hotspot& h, bool a) {
        x.name = h.name;
        x.category = h.category;
        (a ? x.after_ns : x.before_ns) = per(h.stats.total, a ? scale.after : scale.before);
        (a ? x.after_count : x.before_count) = h.stats.count;
      });
  largest_change_first(d.kernels, top_kernels);
}

// GPU time per framework op (name × shapes × types), largest change first.
void compare_ops(const Profile& before, const Profile& after, Scale scale, std::size_t top, ProfileDiff& d) {
  d.ops = match_rows<OpDelta>(
      before.ops, after.ops, [](const OpRow& r) { return std::make_tuple(r.name, r.shapes, r.dtypes); },
      [&](OpDelta& x, const OpRow& r, bool a) {
        x.name = r.name, x.shapes = r.shapes, x.dtypes = r.dtypes;
        (a ? x.after_ns : x.before_ns) = per(r.gpu_total_ns, a ? scale.after : scale.before);
        (a ? x.after_calls : x.before_calls) = r.calls;
      });
  largest_change_first(d.ops, top);
}

// Findings matched by id: resolved, appeared, worse, better, unchanged; the
// largest saving first within each.
void compare_findings(const Profile& before, const Profile& after, ProfileDiff& d) {
  std::map<std::string, FindingDelta> fs;
  std::map<std::string, const Finding*> fa, fb;
  for (const Finding& f : before.findings) fa.emplace(f.id, &f);
  for (const Finding& f : after.findings) fb.emplace(f.id, &f);
  auto fill = [&](const std::string& id, const Finding& f, bool a) {
    FindingDelta& x = fs[id];
    x.id = id;
    (a ? x.in_after : x.in_before) = true;
    (a ? x.after_severity : x.before_severity) = f.severity;
    (a ? x.after_metric : x.before_metric) = f.metric;
    x.threshold = f.threshold;
    (a ? x.after_saving_ns : x.before_saving_ns) = f.saving_ns;
    (a ? x.after_title : x.before_title) = f.title;
  };
  for (const auto& [id, f] : fa) fill(id, *f, false);
  for (const auto& [id, f] : fb) fill(id, *f, true);
  for (auto& [id, x] : fs) {
    x.change = !x.in_after    ? FindingChange::resolved
               : !x.in_before ? FindingChange::appeared
                              : direction(*fa[id], *fb[id]);
    d.findings.push_back(std::move(x));
  }
  auto rank = [](FindingChange c) { return static_cast<int>(c); };
  std::stable_sort(d.findings.begin(), d.findings.end(), [&](const FindingDelta& x, const FindingDelta& y) {
    if (rank(x.change) != rank(y.change)) return rank(x.change) < rank(y.change);
    return std::max(x.before_saving_ns, x.after_saving_ns) > std::max(y.before_saving_ns, y.after_saving_ns);
  });
}

// The idle time by cause on both sides, in the order the report lists causes.
void compare_idle(const Profile& before, const Profile& after, Scale scale, ProfileDiff& d) {
  static constexpr std::string_view kOrder[] = {
      "input-wait",      "host-sync",  "blocking-copy",     "pageable-staging", "late-launch",
      "late-launch-gap", "queued-gap", "comm-gap",          "unlaunched-gap",   "unrecorded-gap",
      "warm-up",         "other",      "input-before-start"};
  auto row = [&](const std::string& cause) -> IdleDelta& {
    for (IdleDelta& x : d.idle)
      if (x.cause == cause) return x;
    d.idle.push_back({cause, 0, 0, {}, {}});
    return d.idle.back();
  };
  for (const IdleCharge& c : after.idle_charges) {
    IdleDelta& x = row(c.cause);
    x.after_ns = per(c.ns, scale.after);
    x.after_finding = c.finding;
  }
  for (const IdleCharge& c : before.idle_charges) {
    IdleDelta& x = row(c.cause);
    x.before_ns = per(c.ns, scale.before);
    x.before_finding = c.finding;
  }
  auto rank = [](const std::string& cause) {
    return std::find(std::begin(kOrder), std::end(kOrder), cause) - std::begin(kOrder);
  };
  std::stable_sort(d.idle.begin(), d.idle.end(),
                   [&](const IdleDelta& a, const IdleDelta& b) { return rank(a.cause) < rank(b.cause); });
}

// The answers whose verdict changed (or that one side does not ask), in the
// after run's order, then those only the before run asked.
void compare_helps(const Profile& before, const Profile& after, ProfileDiff& d) {
  auto find = [](const Profile& p, const std::string& id) -> const HelpAnswer* {
    for (const HelpAnswer& a : p.helps)
      if (a.id == id) return &a;
    return nullptr;
  };
  auto add = [&](const HelpAnswer* b, const HelpAnswer* a) {
    if (b && a && b->verdict == a->verdict) return;
    HelpDelta x;
    x.id = (a ? a : b)->id;
    x.question = (a ? a : b)->question;
    x.in_before = b != nullptr, x.in_after = a != nullptr;
    if (b) x.before = b->verdict, x.before_reason = b->reason;
    if (a) x.after = a->verdict, x.after_reason = a->reason;
    d.helps.push_back(std::move(x));
  };
  for (const HelpAnswer& a : after.helps) add(find(before, a.id), &a);
  for (const HelpAnswer& b : before.helps)
    if (!find(after, b.id)) add(&b, nullptr);
}

// What to say first (after storage damage): the step time, then the
// findings that moved, then where kernel time moved most.
void summarize(ProfileDiff& d) {
  using namespace format;
  auto change = [](double from, double to) {
    return from == 0 ? std::string() : " (" + std::string(to >= from ? "+" : "") + percent1((to - from) / from) + ")";
  };
  if (d.before_step_ns && d.after_step_ns)
    d.summary.push_back("Step time " + duration(d.before_step_ns) + " -> " + duration(d.after_step_ns) +
                        change(double(d.before_step_ns), double(d.after_step_ns)));
  d.summary.push_back("GPU utilization " + percent1(d.before_utilization) + " -> " + percent1(d.after_utilization) +
                      ", kernel time" + (d.per_step ? " per step " : " ") + duration(d.before_kernel_ns) + " -> " +
                      duration(d.after_kernel_ns));
  if (d.before_peak_allocated && d.after_peak_allocated && *d.before_peak_allocated != *d.after_peak_allocated)
    d.summary.push_back("Peak memory allocated " + bytes(*d.before_peak_allocated) + " -> " +
                        bytes(*d.after_peak_allocated) +
                        change(double(*d.before_peak_allocated), double(*d.after_peak_allocated)) +
                        (d.before_peak_reserved && d.after_peak_reserved
                             ? ", reserved " + bytes(*d.before_peak_reserved) + " -> " + bytes(*d.after_peak_reserved)
                             : ""));
  else if (d.before_peak_allocated.has_value() != d.after_peak_allocated.has_value())
    d.summary.push_back("Peak memory allocated known on one side only: " +
                        (d.before_peak_allocated ? bytes(*d.before_peak_allocated) : std::string("?")) + " -> " +
                        (d.after_peak_allocated ? bytes(*d.after_peak_allocated) : std::string("?")));
  for (const FindingDelta& x : d.findings) {
    switch (x.change) {
      case FindingChange::resolved:
        d.summary.push_back("Resolved " + x.id + ": " + metric_text(x.before_metric) + " -> below the " +
                            metric_text(x.threshold) + " threshold (was: " + x.before_title + ")");
        break;
      case FindingChange::appeared: d.summary.push_back("New " + x.id + ": " + x.after_title); break;
      case FindingChange::better:
      case FindingChange::worse:
        d.summary.push_back(std::string(x.change == FindingChange::better ? "Better " : "Worse ") + x.id + ": " +
                            metric_text(x.before_metric) + " -> " + metric_text(x.after_metric) + " (" +
                            std::string(to_string(x.before_severity)) + " -> " +
                            std::string(to_string(x.after_severity)) + ")");
        break;
      case FindingChange::unchanged: break;
    }
  }
  for (const HelpDelta& x : d.helps) {
    if (!x.in_before || !x.in_after) continue;
    d.summary.push_back("Answer changed, " + x.question + " " + std::string(to_string(x.before)) + " -> " +
                        std::string(to_string(x.after)) + ": " + x.after_reason);
  }
  if (!d.categories.empty() && d.categories.front().after_ns != d.categories.front().before_ns) {
    const CategoryDelta& c = d.categories.front();
    d.summary.push_back("Largest kernel-time change: " + std::string(to_string(c.category)) + " " +
                        duration(c.before_ns) + " -> " + duration(c.after_ns) + (d.per_step ? " per step" : ""));
  }
}

// Storage damage on either side comes before anything compared: those
// numbers cover only what survived.
void state_damage(const Profile& p, const char* side, ProfileDiff& d) {
  for (const FileQuality& q : p.trace_quality.files)
    if (q.damage.any())
      d.summary.push_back(std::string(side) + (q.file.empty() ? "" : " (" + q.file + ")") + ": " +
                          damage_headline(q.damage, q.devices) + "; its numbers cover only what survived");
}

}  // namespace

ProfileDiff diff_profiles(const Profile& before, const Profile& after, std::size_t top_kernels) {
  ProfileDiff d;
  const Scale scale = compare_headline(before, after, d);
  compare_categories(before, after, scale, d);
  compare_kernels(before, after, scale, top_kernels, d);
  compare_ops(before, after, scale, top_kernels, d);
  compare_hardware(before, after, d);
  compare_findings(before, after, d);
  compare_helps(before, after, d);
  compare_idle(before, after, scale, d);
  state_damage(before, "Before", d);
  state_damage(after, "After", d);
  summarize(d);
  return d;
}

}  // namespace gpuscope
