// Framework ops: matrix, convolution and attention ops far below their roofline,
// ops whose launch calls take longer than their GPU work.
// Each rule: rules.h; its row in registry.cpp and docs/findings.md.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "analysis/findings/rules.h"

namespace gpuscope::detail::rules {

namespace {

std::string op_words(const OpRow& r) {
  std::string shapes = r.shapes;
  if (shapes.size() > 60) shapes = shapes.substr(0, 57) + "...";
  return r.name + (shapes.empty() ? "" : " " + shapes) + (r.math.empty() ? "" : " (" + r.math + ")");
}

// The part of an op's time above what reaching roofline_min_fraction of its
// roofline would take (0 at or above it).
double share_above_threshold(double fraction, const FindingThresholds& th) {
  return std::clamp(1 - fraction / th.roofline_min_fraction, 0.0, 1.0);
}

// The rows of ops that launched kernels themselves (not the ops around them,
// which would count the same time twice), heaviest first.
template <class F>
void for_each_launching_op(const Profile& p, F&& f) {
  for (const OpRow& r : p.ops)
    if (r.gpu_self_ns > 0 && r.calls > 0) f(r);
}
}  // namespace

SlowProducts attention_products_below_roofline(const Profile& p, const FindingThresholds& th) {
  SlowProducts out;
  TimeNs top = 0;
  for_each_launching_op(p, [&](const OpRow& r) {
    if (!attention_shaped(r) || !r.roofline_fraction || *r.roofline_fraction >= th.roofline_min_fraction) return;
    const auto above = static_cast<TimeNs>(double(r.gpu_self_ns) * share_above_threshold(*r.roofline_fraction, th));
    out.ns += above;
    if (above > top) top = above, out.top = &r, out.top_words = op_words(r);
  });
  return out;
}

// FlashAttention-2's kernels (flash_fwd_kernel, flash_bwd_…), which use no
// Hopper-only tensor-core instructions; FlashAttention-3's carry "Sm90".
bool flash_attention_2(std::string_view kernel) {
  return (contains_nocase(kernel, "flash_fwd") || contains_nocase(kernel, "flash_bwd")) &&
         !contains_nocase(kernel, "sm90");
}

// A dimension of the cost formula's "M=… N=… K=… batch=…" (0: absent).
double dim_of(std::string_view dims, std::string_view key) {
  const std::string k = std::string(key) + "=";
  for (std::size_t at = dims.find(k); at != std::string_view::npos; at = dims.find(k, at + 1))
    if (at == 0 || dims[at - 1] == ' ') return std::atof(std::string(dims.substr(at + k.size())).c_str());
  return 0;
}

// The sequence may be shorter than the head's width (attention over a
// video's 8 frames); a product whose three sides are equal is told from
// neither.
bool attention_shaped(const OpRow& r) {
  if (r.family != "gemm" || dim_of(r.dims, "batch") < 2) return false;
  const double m = dim_of(r.dims, "M"), n = dim_of(r.dims, "N"), k = dim_of(r.dims, "K");
  constexpr double kHeadWidth = 256;
  return m > 0 && ((m == n && k <= kHeadWidth && k != m) || (m == k && n <= kHeadWidth && n != m));
}

// What would bring an op that fills the GPU nearer its roofline: only the
// changes its shapes, precision and kernel leave open, never one it has made.
std::string roofline_fix(const OpRow& r, bool fp32_on_recent, bool small_many, const OpKernel* main,
                         const std::vector<DeviceSummary>& devices, bool pytorch) {
  std::string fix;
  if (r.family == "gemm" && !r.aligned8)
    fix += " Pad the dimensions to multiples of 8 (16 for fp8): tensor cores need it.";
  if (fp32_on_recent)
    fix +=
        " Compute in bf16 or fp16 (torch.autocast), or let fp32 products use TF32 "
        "(torch.backends.cuda.matmul.allow_tf32 = True).";
  if (small_many) fix += " Batch the small products into one (torch.bmm, grouped GEMMs).";
  bool hopper = !devices.empty();  // NVIDIA's compute capability 9 (ROCm gives gfx942 as 9.4)
  for (const DeviceSummary& d : devices)
    hopper = hopper && d.compute_major == 9 && nvidia_gpu(d.name, d.compute_major, d.compute_minor);
  if (r.family == "attention" && main && hopper && flash_attention_2(main->name))
    fix +=
        " Its kernel is FlashAttention-2's, which uses none of Hopper's warpgroup tensor-core instructions "
        "(FlashAttention-2 reaches about 35% of an H100's peak, the FlashAttention-3 paper): an attention "
        "kernel written for Hopper runs it faster: cuDNN's fused attention (PyTorch 2.5 and later: "
        "torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION)) or FlashAttention-3.";
  bool volta = false;  // fp16 tensor cores, no TF32 or bf16
  for (const DeviceSummary& d : devices) volta = volta || d.compute_major == 7;
  if (r.math == "fp32" && !fp32_on_recent && volta)
    fix += " Compute in fp16 (torch.autocast): this GPU's tensor cores run fp16 products, not fp32 ones.";
  if (!fix.empty()) return fix.substr(1);
  // Nothing in the shapes or precision is left to change: the kernel chosen
  // for this shape, or the amount of work per call, is.
  std::string done = r.math.empty() || r.math == "fp32" ? "" : "Its precision is " + r.math + " already; ";
  const auto said = [&done](std::string rest) {
    if (done.empty()) rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
    return done + rest;
  };
  if (r.family == "convolution")
    return said(std::string("what is left is cuDNN's choice of kernel: let it time the candidates "
                            "(torch.backends.cudnn.benchmark = True, if the run does not set it)") +
                (main && contains_nocase(main->name, "nhwc")
                     ? "."
                     : " and give it channels_last (NHWC) tensors, the layout its tensor-core kernels use."));
  if (r.family == "attention") {
    // Which other attention kernel runs this shape faster the trace cannot
    // tell (it shows the one that ran, not the candidates the installed
    // libraries hold); a call not yet compute-bound may also lack work.
    bool nvidia = true;
    for (const DeviceSummary& d : devices) nvidia = nvidia && nvidia_gpu(d.name, d.compute_major, d.compute_minor);
    return said(std::string("what is left is the attention kernel itself; whether another one runs this shape "
                            "faster on this GPU the trace cannot tell: time the others (") +
                (pytorch ? "PyTorch's SDPA backends, torch.nn.attention.sdpa_kernel; " : "") +
                (nvidia ? "cuDNN's fused attention, FlashAttention-3 on Hopper"
                        : "the GPU vendor's own, such as ROCm's Composable Kernel or AITER flash attention") +
                ")" +
                (r.bound == "compute" ? "."
                                      : "; a call this far from its compute bound may also lack work: more "
                                        "sequences in a batch raise its rate where its grid leaves the GPU's "
                                        "units idle."));
  }
  return said(std::string(r.family == "gemm" ? "its dimensions are multiples of 8; " : "") +
              "what is left is the kernel chosen for this shape: torch.compile(mode=\"max-autotune\") times other "
              "kernels for it, and a larger product (a larger batch, projections fused into one) runs nearer the "
              "roofline.");
}

// Matrix products, convolutions and attention far below their roofline; GEMMs
// with a dimension not a multiple of 8 named as such (tensor cores need it).
void op_below_roofline(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  int shown = 0;
  std::uint64_t sms = 0;  // the smallest GPU's (a job of one kind of GPU: all the same)
  for (const DeviceSummary& d : b.p.devices)
    if (d.sm_count) sms = sms ? std::min<std::uint64_t>(sms, d.sm_count) : d.sm_count;
  for_each_launching_op(b.p, [&](const OpRow& r) {
    if (shown == 5 || !r.roofline_fraction || *r.roofline_fraction >= th.roofline_min_fraction) return;
    if (r.family != "gemm" && r.family != "convolution" && r.family != "attention") return;
    // Eager attention's own products: its fix (a fused attention kernel) removes them.
    if (attention_shaped(r) && eager_attention_fires(b)) return;
    const double share = ratio(r.gpu_self_ns, b.t.gpu_time);
    if (share < th.op_min_share) return;
    ++shown;
    // Reaching the threshold would save this much; never more than the op's time.
    const double frac = *r.roofline_fraction;
    const TimeNs saving =
        static_cast<TimeNs>(static_cast<double>(b.t.per_device(r.gpu_self_ns)) * share_above_threshold(frac, th));
    // Critical by what reaching the threshold saves, a tenth of kernel time
    // or more, not by the op's share: an op near the threshold saves little.
    const double saved = share * share_above_threshold(frac, th);
    Finding& f = b.add(saved >= 0.1 ? Severity::critical : Severity::warning, frac, th.roofline_min_fraction, saving);
    f.title = op_words(r) + " reaches " + pct1(frac) + " of its roofline (" + fmt("%.1f", *r.achieved_tflops) +
              " TFLOP/s, " + dur(r.gpu_self_ns) + ", " + pct1(share) + " of kernel time)";
    std::string why;
    if (r.family == "gemm" && !r.aligned8)
      why = " Its dimensions (" + r.dims + ") are not all multiples of 8: tensor cores cannot run it at full rate.";
    bool recent = false;
    for (const DeviceSummary& d : b.p.devices) recent = recent || d.compute_major >= 8;
    const bool fp32_on_recent = r.math == "fp32" && recent;
    if (fp32_on_recent) why += " It computes in fp32 on a GPU where TF32 or bf16 run many times faster.";
    const bool small_many = r.family == "gemm" && r.calls >= 100 && r.intensity && *r.intensity < 50;
    if (small_many)
      why += " It is small (" + fmt("%.0f", *r.intensity) + " FLOP/B) and called " + count(r.calls) +
             " times: batched into one product it would run nearer the roofline.";
    // Fewer blocks than SMs: one wave that leaves SMs idle. No kernel choice,
    // padding or precision reaches the roofline then; more work per launch does.
    const OpKernel* main = r.top_kernels.empty() ? nullptr : &r.top_kernels.front();
    const bool too_small = main && main->blocks > 0 && sms > 0 && main->blocks < sms;
    if (too_small)
      why += " Its main kernel launches " + blocks_words(b.p, main->blocks) + " on a GPU of " + count(sms) + " " +
             std::string(sm_words(b.p)) + ": at most " + pct(double(main->blocks) / double(sms)) + " of the " +
             std::string(sm_words(b.p)) + " work, the product is too small to fill the GPU.";
    // Under the memory roof the fraction is the bandwidth its inputs and
    // outputs use, read once (a kernel that reads them again moves more);
    // under the compute roof, the share of its precision's peak.
    const std::string roof = r.bound == "memory"
                                 ? "under the memory roof at " + fmt("%.1f", r.intensity.value_or(0)) +
                                       " FLOP/B: it moves its inputs and outputs at " + pct1(frac) +
                                       " of the GPU's bandwidth, so bandwidth limits it only if it reads them several "
                                       "times over"
                                 : "under the compute roof at " + fmt("%.1f", r.intensity.value_or(0)) +
                                       " FLOP/B: its math runs at " + pct1(frac) + " of its precision's peak";
    f.evidence = "Roofline fraction " + pct1(frac) + " vs threshold " + pct1(th.roofline_min_fraction) + " (" + roof +
                 "; " + r.math + ", " + count(r.calls, "call", "calls") + "; " + r.dims + ")." + why;
    const std::string saving_words = " Estimated saving: the time above what reaching " +
                                     pct(th.roofline_min_fraction) +
                                     " of the roofline would take, at most the op's time.";
    if (too_small) {
      f.variant = "too-small-grid";
      f.title += "; its main kernel launches " + blocks_words(b.p, main->blocks) + " on a GPU of " + count(sms) + " " +
                 std::string(sm_words(b.p));
    }
    if (too_small)
      f.recommendation =
          "Give each launch more work: a larger batch (or longer sequences), the small products batched into one "
          "(torch.bmm, grouped GEMMs, one attention call over all heads and sequences), or independent ops run side "
          "by side (CUDA streams, CUDA graphs)." +
          std::string(r.family == "gemm" && !r.aligned8
                          ? " Pad the dimensions to multiples of 8 as well: tensor cores need it."
                          : " Padding and precision do not help a kernel that leaves SMs idle.") +
          saving_words;
    else
      f.recommendation =
          roofline_fix(r, fp32_on_recent, small_many, main, b.p.devices, b.p.workload.framework == "pytorch") +
          saving_words;
    for (const OpKernel& k : r.top_kernels) f.kernels.push_back(k.name);
  });
}

// Ops whose kernel launch calls take longer than the GPU work they start,
// where the GPU sat idle waiting for those launches. The time of an op's
// launch calls is a cost only where its late launches ended GPU idle time
// (OpRow::starved_ns): on a GPU kept busy, slow launches cost nothing.
// Calls that launched copies or fills are left out (they wait for the GPU or
// for host memory: sync-memcpy and pageable-memcpy have them). One finding
// per cause, the ops ranked inside it:
//  - "launch": launch overhead (a few µs per launch, more than the kernel
//    runs): fusion, CUDA graphs, more work per launch;
//  - "setup": launch calls of a millisecond or more each do one-off work
//    (lazy module loading, cuDNN autotuning, allocation): profile after
//    warm-up, no fusion advice.
void op_launch_overhead(Builder& b) {
  const FindingThresholds& th = b.opt.thresholds;
  const TimeNs run = b.p.window.duration();
  struct Charged {
    const OpRow* row;
    TimeNs launch, excess, credited;
  };
  std::vector<Charged> by_cause[2];  // 0: launch, 1: setup
  for_each_launching_op(b.p, [&](const OpRow& r) {
    if (r.calls < th.launch_overhead_min_calls) return;
    const TimeNs launch = r.launch_ns - r.copy_call_ns;
    if (launch <= r.gpu_self_ns) return;
    const TimeNs excess = launch - r.gpu_self_ns;
    const TimeNs credited = std::min(excess, r.starved_ns);
    if (credited <= 0) return;
    const bool setup = launch / static_cast<TimeNs>(r.calls) >= th.launch_setup_ns;
    by_cause[setup].push_back({&r, launch, excess, credited});
  });
  for (int setup = 0; setup < 2; ++setup) {
    // The same idle time as launch-bound's: its evidence ranks these ops.
    if (!setup && launch_bound_fires(b)) continue;
    std::vector<Charged>& ops = by_cause[setup];
    TimeNs credited = 0;
    for (const Charged& c : ops) credited += c.credited;
    // The GPU's idle time the launches caused, against the run (the GPUs' spans).
    const double share = ratio(credited, b.t.span);
    if (ops.empty() || share < th.launch_overhead_min_share) continue;
    std::stable_sort(ops.begin(), ops.end(),
                     [](const Charged& x, const Charged& y) { return x.credited > y.credited; });
    TimeNs saving = b.t.per_device(credited);
    if (run > 0) saving = std::min(saving, run);
    // One-off work is not a saving of the steady state: it is said, not counted.
    Finding& f = b.add(Severity::warning, share, th.launch_overhead_min_share, setup ? 0 : saving);
    f.variant = setup ? "setup" : "launch";
    f.share = share;
    if (setup) f.saving_note = "one-off work: a step after warm-up does not pay it";
    const Charged& top = ops.front();
    f.title = (setup ? std::string("Setup work in launch calls: ") : std::string("Launch overhead: ")) +
              count(ops.size()) + (ops.size() == 1 ? " op's" : " ops'") + " launches left the GPU idle " + dur(saving) +
              ", most of it " + op_words(*top.row) + "'s (" + dur(top.launch) + " launching " +
              dur(top.row->gpu_self_ns) + " of GPU work in " + count(top.row->calls, "call", "calls") + ")";
    std::string ranked;
    for (std::size_t i = 0; i < ops.size() && i < 5; ++i) {
      const Charged& c = ops[i];
      ranked += (i ? "; " : "") + op_words(*c.row) + ": launch calls " + dur(c.launch) + " (" +
                dur(c.launch / static_cast<TimeNs>(c.row->calls)) + " per call) for " + dur(c.row->gpu_self_ns) +
                " of GPU work, GPU idle waiting for its launches " + dur(c.row->starved_ns);
      for (const OpKernel& k : c.row->top_kernels)
        if (f.kernels.size() < 10) f.kernels.push_back(k.name);
    }
    f.evidence =
        "Ops whose kernel launch calls outlast the GPU work they start, charged only the GPU idle time "
        "their own late launches ended: " +
        dur(credited) + " = " + pct1(share) + " of the run vs a " + pct1(th.launch_overhead_min_share) +
        " threshold. Calls that launched copies are left out (the copy findings judge them). " + ranked +
        (ops.size() > 5 ? "; and " + count(ops.size() - 5) + " more." : ".");
    if (setup)
      f.recommendation =
          "The launch calls do one-off work, a millisecond or more each: cuDNN autotuning "
          "(torch.backends.cudnn.benchmark=True tries algorithms on the first call of each input shape), lazy "
          "module loading (CUDA_MODULE_LOADING=LAZY loads a kernel on its first launch) or allocation. Profile after "
          "warm-up steps (torch.profiler.schedule(wait=1, warmup=1, active=N)) and keep input shapes fixed so that "
          "autotuning runs once.";
    else
      f.recommendation =
          capture_plan(b.p).lead() + "Launch less: fuse the ops' small kernels (" + fuser(b.p) +
          "), capture the step in a CUDA graph (torch.cuda.graphs / torch.compile mode=\"reduce-overhead\"), or "
          "make each call do more work (larger batches).";
  }
}

}  // namespace gpuscope::detail::rules
