// gpuscope synth: write a synthetic trace (import/synthetic.h) for tests and
// benchmarks. Every trace it writes says it is synthetic.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "analysis/util/parallel.h"
#include "cli/command.h"
#include "cli/output.h"
#include "export/chrome_trace.h"
#include "import/synthetic.h"
#include "import/synthetic_job.h"
#include "store/gscope.h"

namespace gpuscope::cli {
namespace {

struct SynthArgs {
  std::string out, format = "auto";
  std::string preset = "clean";
  std::uint64_t kernels = 0;
  SyntheticOptions o;  // knobs, applied over the preset when given
  double input_wait_us = 0, loop_host_us = 0;
  bool no_overlap = false, sync_update = false, no_prefetch = false, no_sync = false, ops = false, pageable = false;
  bool hw = false, tensor_cores = false;
  double hw_interval_us = 100;
  // A job of many ranks (--ranks): one file per rank in the output folder.
  std::uint32_t ranks = 0;
  std::int32_t slow_rank = -1;
  double slowdown = 1.3;
  double clock_offset_s = 2.0;
  unsigned jobs = 0;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --ranks N: a job, one .gscope per rank in the folder a.out.
void run_job(const SynthArgs& a, const CLI::App& cmd, const Context& ctx) {
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  for (const char* single : {"--hw", "--hw-interval-us", "--tensor-cores", "--throttle-share", "--loop-host-us",
                             "--pageable-input", "--format"})
    if (given(single)) throw Error(std::string(single) + " is for a single trace, not with --ranks");
  if (is_stdout(a.out)) throw Error("-: --ranks writes a folder of rank files, not standard output");
  SyntheticJobOptions o;
  o.ranks = a.ranks;
  o.kernels = a.kernels;
  o.seed = a.o.seed;
  if (given("--kernels-per-step")) o.kernels_per_step = a.o.kernels_per_step;
  if (given("--buckets")) o.buckets = a.o.allreduce_buckets;
  if (given("--jitter")) o.jitter = a.o.jitter;
  o.framework_ops = a.ops;
  o.slow_rank = a.slow_rank;
  o.slowdown = a.slowdown;
  o.max_clock_offset_ns = static_cast<TimeNs>(a.clock_offset_s * 1e9);
  o.command_line = ctx.command_line;
  std::unique_ptr<SyntheticJob> job;
  try {
    job = std::make_unique<SyntheticJob>(o);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a.out, ec) && !fs::is_directory(a.out, ec))
    throw Error(a.out + ": --ranks writes a folder of rank files, and this is a file");
  if (fs::is_directory(a.out, ec) && !fs::is_empty(a.out, ec))
    throw Error(a.out + ": not empty (--ranks writes a new job's files into an empty or new folder)");
  fs::create_directories(a.out, ec);
  if (ec) throw Error(a.out + ": cannot create the folder: " + ec.message());
  const std::size_t width = std::max<std::size_t>(5, std::to_string(o.ranks - 1).size());
  parallel_for(o.ranks, a.jobs, [&](std::size_t r) {
    std::string name = std::to_string(r);
    name.insert(0, width - name.size(), '0');
    write_gscope(job->rank_trace(static_cast<std::uint32_t>(r)),
                 (fs::path(a.out) / ("rank-" + name + ".gscope")).string());
  });
  status(
      "wrote %s: synthetic job (not a measurement), %u ranks of %llu kernels (%llu steps), clocks off by up to %g s, "
      "slow rank %d, seed %llu",
      a.out.c_str(), o.ranks, static_cast<unsigned long long>(job->steps() * o.kernels_per_step),
      static_cast<unsigned long long>(job->steps()), a.clock_offset_s, o.slow_rank,
      static_cast<unsigned long long>(o.seed));
}

void run(const SynthArgs& a, const CLI::App& cmd, const Context& ctx) {
  if (a.ranks > 0) return run_job(a, cmd, ctx);
  for (const char* job_only : {"--slow-rank", "--slowdown", "--clock-offset"})
    if (cmd.get_option(job_only)->count() > 0) throw Error(std::string(job_only) + " needs --ranks");
  SyntheticOptions o = a.preset == "report"  ? SyntheticOptions::report_job()
                       : a.preset == "tuned" ? SyntheticOptions::tuned_job()
                                             : SyntheticOptions{};
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  if (o.workload_shape)
    for (const char* tf_only : {"--layers", "--kernels-per-step", "--buckets", "--streams", "--ops"})
      if (given(tf_only))
        throw Error(std::string(tf_only) + " is for the default network; --preset " + a.preset +
                    " is the bundled workload's, whose layers, buckets and streams are its own");
  o.kernels = a.kernels;
  o.seed = a.o.seed;
  if (given("--gpus")) o.gpus = a.o.gpus;
  if (given("--layers")) o.layers = a.o.layers;
  if (given("--kernels-per-step")) o.kernels_per_step = a.o.kernels_per_step;
  if (given("--streams")) o.compute_streams = a.o.compute_streams;
  if (given("--buckets")) o.allreduce_buckets = a.o.allreduce_buckets;
  if (given("--padding-share")) o.padding_share = a.o.padding_share;
  if (given("--broadcast-share")) o.broadcast_share = a.o.broadcast_share;
  if (given("--transpose-share")) o.transpose_share = a.o.transpose_share;
  if (given("--bn-slowdown")) o.normalization_slowdown = a.o.normalization_slowdown;
  if (given("--straggler")) o.straggler_gpu = a.o.straggler_gpu;
  if (given("--straggler-slowdown")) o.straggler_slowdown = a.o.straggler_slowdown;
  if (given("--jitter")) o.jitter = a.o.jitter;
  if (given("--input-wait-us")) o.input_wait_ns = static_cast<std::int64_t>(a.input_wait_us * 1000.0);
  if (given("--loop-host-us")) o.loop_host_ns = static_cast<std::int64_t>(a.loop_host_us * 1000.0);
  if (a.no_overlap) o.overlap_communication = false;
  if (a.sync_update) o.overlap_weight_update = false;
  if (a.no_prefetch || a.pageable) o.prefetch_input = false;
  if (a.pageable) o.pageable_input = true;
  if (a.no_sync) o.sync_every_step = false;
  if (a.ops) o.framework_ops = true;
  if (a.hw) o.hardware_metrics = true;
  if (a.tensor_cores) o.tensor_cores = true;
  if (given("--throttle-share")) o.throttle_share = a.o.throttle_share;
  if (given("--hw-interval-us")) o.hw_interval_ns = static_cast<std::int64_t>(std::llround(a.hw_interval_us * 1000.0));
  for (const char* hw_only : {"--tensor-cores", "--hw-interval-us"})
    if (cmd.get_option(hw_only)->count() > 0 && !a.hw) throw Error(std::string(hw_only) + " needs --hw");
  o.command_line = ctx.command_line;
  if (o.straggler_gpu >= 0 && !given("--straggler-slowdown") && o.straggler_slowdown == 1) o.straggler_slowdown = 1.3;

  std::string format = a.format;
  if (format == "auto") {
    format = ends_with(a.out, ".json") ? "json" : ends_with(a.out, ".json.gz") ? "json.gz" : "gscope";
    if (is_stdout(a.out))
      throw Error("-: standard output has no name to tell the format by (give --format gscope, json or json.gz)");
    if (!ends_with(a.out, ".gscope") && format == "gscope")
      throw Error(a.out + ": cannot tell the format from the name (use .gscope, .json or .json.gz, or --format)");
  }
  const bool json = format == "json", json_gz = format == "json.gz";

  Trace trace;
  std::uint32_t per_step = 0;
  try {
    per_step = synthetic_kernels_per_step(o);
    trace = make_synthetic_trace(o);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  if (json || json_gz) {
    ChromeExportOptions eo;
    eo.gzip = json_gz;
    write_chrome_trace_file(trace, a.out, eo);
  } else {
    write_gscope(trace, a.out);
  }
  // The busiest GPU (kernels split as evenly as possible) has the most steps.
  const std::uint64_t busiest = (o.kernels + o.gpus - 1) / o.gpus;
  const std::uint64_t steps = (busiest + per_step - 1) / per_step;
  status(
      "wrote %s: synthetic trace (not a measurement), %llu kernels on %u GPUs, %llu steps of %u kernels, "
      "seed %llu",
      output_name(a.out).c_str(), static_cast<unsigned long long>(trace.kernels().size()), o.gpus,
      static_cast<unsigned long long>(steps), per_step, static_cast<unsigned long long>(o.seed));
}

void add(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<SynthArgs>();
  CLI::App* cmd = app.add_subcommand(
      "synth",
      "Write a synthetic trace of a data-parallel CNN training job (deterministic, any size) for tests and "
      "benchmarks. It is marked synthetic wherever it is shown: it is not a measurement.");
  cmd->add_option("-o,--output", args->out,
                  "Output: OUT.gscope, OUT.json or OUT.json.gz, - for standard output (with --format); with --ranks: "
                  "a folder")
      ->required()
      ->check(output_path());
  cmd->add_option("--format", args->format, "auto (default: from the output's name), gscope, json or json.gz")
      ->check(CLI::IsMember({"auto", "gscope", "json", "json.gz"}));
  cmd->add_option("--kernels", args->kernels, "Kernels in the whole trace, over all GPUs (exactly)")
      ->required()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1'000'000'000}));
  cmd->add_option("--gpus", args->o.gpus, "GPUs, one host thread each (default 4; 1 = no all-reduce)");
  cmd->add_option("--seed", args->o.seed, "Seed of the timing noise (default 1); same seed, same trace");
  cmd->add_option("--preset", args->preset,
                  "clean (default): a TensorFlow-like CNN, 2 compute streams, bucketed all-reduce overlapping "
                  "backward, prefetched input; report: the 2016 report's job on the bundled workload's network "
                  "(21.4% padding, 20% broadcast, one stream, all-reduce and weight update after backward, Python "
                  "between steps, each batch prepared in the step and copied from pageable memory: ~35% "
                  "utilization); tuned: that job without them (docs/synthetic.md)")
      ->check(CLI::IsMember({"clean", "report", "tuned"}));
  cmd->add_option("--layers", args->o.layers, "Convolution layers of the network (default 18)");
  cmd->add_option("--kernels-per-step", args->o.kernels_per_step,
                  "Kernels per GPU per step, exactly (overrides --layers; elementwise kernels fill up)");
  cmd->add_option("--streams", args->o.compute_streams, "Compute streams per GPU, 1..8 (default 2)");
  cmd->add_option("--buckets", args->o.allreduce_buckets, "Gradient buckets = NCCL all-reduces per step (default 4)");
  cmd->add_flag("--no-overlap", args->no_overlap, "All-reduce after backward instead of during it");
  cmd->add_flag("--sync-update", args->sync_update, "Weight update waits for the whole all-reduce");
  cmd->add_flag("--no-prefetch", args->no_prefetch, "Copy each batch at the start of its step");
  cmd->add_flag("--no-sync", args->no_sync, "No cudaStreamSynchronize at the end of each step");
  cmd->add_flag("--ops", args->ops,
                "A PyTorch cpu_op range (aten::conv2d, aten::addmm, ...) with recorded input shapes around every "
                "launch, as record_shapes=True gives: an op table with FLOPs and roofline figures (with --ranks: "
                "aten::conv2d, aten::mm, aten::cudnn_batch_norm, aten::add around each compute kernel)");
  cmd->add_option("--padding-share", args->o.padding_share, "Share of kernel time in explicit padding kernels");
  cmd->add_option("--broadcast-share", args->o.broadcast_share, "Share of kernel time in broadcast kernels");
  cmd->add_option("--transpose-share", args->o.transpose_share, "Share of kernel time in layout transposes");
  cmd->add_option("--bn-slowdown", args->o.normalization_slowdown, "Batch-norm kernels take this many times longer");
  cmd->add_option("--input-wait-us", args->input_wait_us,
                  "Host time loading each step's batch (µs): before the step (default network) or in its data range "
                  "(--preset report, tuned)");
  cmd->add_option("--loop-host-us", args->loop_host_us, "Host time between steps, in no range (Python; µs)");
  cmd->add_flag("--pageable-input", args->pageable,
                "Copy each batch from pageable memory with cudaMemcpy on the compute stream (blocks the host)");
  cmd->add_option("--straggler", args->o.straggler_gpu, "This GPU computes slower (the others wait in NCCL)");
  cmd->add_option("--straggler-slowdown", args->o.straggler_slowdown, "How much slower the straggler is (default 1.3)");
  cmd->add_option("--jitter", args->o.jitter, "Relative noise on durations, 0..0.5 (default 0.05)");
  cmd->add_flag("--hw", args->hw,
                "Hardware counter series as a capture records them (hw.* every 100 µs, nvml.* every 1 ms), "
                "following the kernels that run");
  cmd->add_option("--hw-interval-us", args->hw_interval_us, "With --hw: µs between hw.* samples (default 100)");
  cmd->add_flag("--tensor-cores", args->tensor_cores, "With --hw: convolutions and GEMMs keep the tensor pipes busy");
  cmd->add_option("--throttle-share", args->o.throttle_share,
                  "The last share of the steps (0..1) runs with clocks throttled (thermal): kernels slower, and with "
                  "--hw the SM clock and NVML's throttle reasons show it");
  cmd->add_option("--ranks", args->ranks,
                  "Write a job of N ranks instead: one trace per rank, each on its own clock, into the folder -o "
                  "(--kernels per rank; docs/scale.md)")
      ->check(CLI::Range(2u, 1'000'000u));
  cmd->add_option("--slow-rank", args->slow_rank, "With --ranks: this rank computes slower");
  cmd->add_option("--slowdown", args->slowdown, "With --ranks: how much slower the slow rank is (default 1.3)");
  cmd->add_option("--clock-offset", args->clock_offset_s,
                  "With --ranks: each rank's clock is off by up to this many seconds (default 2)");
  cmd->add_option("-j,--jobs", args->jobs, "With --ranks: rank files written at once (default: every core)")
      ->check(CLI::Range(1, 4096));
  add_examples(*cmd, {"gpuscope synth --kernels 100000 -o sample.gscope",
                      "gpuscope synth --kernels 20000 --preset report -o report-job.json.gz",
                      "gpuscope synth --kernels 5000 --ranks 8 --slow-rank 3 -o job/"});
  cmd->callback([args, cmd, &ctx] { run(*args, *cmd, ctx); });
}

const CommandRegistration registration(60, add);

}  // namespace
}  // namespace gpuscope::cli
