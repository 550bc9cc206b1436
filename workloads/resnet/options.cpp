#include "workloads/resnet/options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace gpuscope::resnet {

// ---- names -----------------------------------------------------------------
std::string_view to_string(Layout v) { return v == Layout::nchw ? "nchw" : "nhwc"; }
std::string_view to_string(PaddingMode v) { return v == PaddingMode::explicit_pad ? "explicit" : "fused"; }
std::string_view to_string(BiasMode v) { return v == BiasMode::broadcast ? "broadcast" : "fused"; }
std::string_view to_string(BnMode v) {
  return v == BnMode::naive ? "naive" : (v == BnMode::transpose ? "transpose" : "fused");
}
std::string_view to_string(UpdateMode v) { return v == UpdateMode::sync ? "sync" : "overlap"; }
std::string_view to_string(AllReduceMode v) { return v == AllReduceMode::end ? "end" : "bucketed"; }
std::string_view to_string(DataMode v) {
  return v == DataMode::synthetic ? "synthetic" : (v == DataMode::host ? "host" : "cifar");
}
std::string_view to_string(Precision v) {
  return v == Precision::fp32 ? "fp32" : (v == Precision::tf32 ? "tf32" : "bf16");
}

std::string Options::describe() const {
  std::ostringstream s;
  s << "preset=" << preset << " layout=" << to_string(layout) << " padding=" << to_string(padding)
    << " bias=" << to_string(bias) << " bn=" << to_string(bn) << " update=" << to_string(update)
    << " allreduce=" << to_string(allreduce) << " data=" << to_string(data);
  if (data == DataMode::cifar) s << ":" << cifar_dir;
  s << " precision=" << to_string(precision) << " graphs=" << (graphs ? "on" : "off") << " batch=" << batch
    << " steps=" << steps << " warmup=" << warmup;
  return s.str();
}

// ---- presets ------------------------------------------------------------------
void apply_preset(Options& o, std::string_view name) {
  if (name == "seed") {
    // The report's profile: TensorFlow-2016 habits on every axis.
    o.layout = Layout::nchw;
    o.padding = PaddingMode::explicit_pad;
    o.bias = BiasMode::broadcast;
    o.bn = BnMode::naive;
    o.update = UpdateMode::sync;
    o.allreduce = AllReduceMode::end;
    o.data = DataMode::host;
    o.precision = Precision::fp32;
    o.graphs = false;
  } else if (name == "tuned") {
    o.layout = Layout::nhwc;
    o.padding = PaddingMode::fused;
    o.bias = BiasMode::fused;
    o.bn = BnMode::fused;
    o.update = UpdateMode::overlap;
    o.allreduce = AllReduceMode::bucketed;
    o.data = DataMode::synthetic;
    o.precision = Precision::bf16;
    o.graphs = true;
  } else {
    throw OptionError("--preset: expected seed or tuned, got '" + std::string(name) + "'");
  }
  o.preset = std::string(name);
}

// ---- parsing ------------------------------------------------------------------
namespace {

template <class E>
E pick(std::string_view flag, std::string_view value, std::initializer_list<std::pair<std::string_view, E>> choices) {
  std::string expected;
  std::size_t i = 0;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    expected += (i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ")) + std::string(name);
    ++i;
  }
  throw OptionError(std::string(flag) + ": expected " + expected + ", got '" + std::string(value) + "'");
}

int parse_int(std::string_view flag, std::string_view value, int lo, int hi) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size())
    throw OptionError(std::string(flag) + ": expected an integer, got '" + std::string(value) + "'");
  if (v < lo || v > hi)
    throw OptionError(std::string(flag) + ": " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return v;
}

float parse_float(std::string_view flag, std::string_view value, float lo, float hi) {
  const std::string s(value);
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    throw OptionError(std::string(flag) + ": expected a number, got '" + s + "'");
  if (v < lo || v > hi)
    throw OptionError(std::string(flag) + ": " + s + " is out of range [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
  return v;
}

// Flags that take a value, and flags that do not.
const std::string_view kValueFlags[] = {
    "--preset",    "--layout",    "--padding",  "--bias",         "--bn",    "--update",  "--allreduce",
    "--data",      "--precision", "--graphs",   "--gpus",         "--batch", "--steps",   "--warmup",
    "--log-every", "--lr",        "--momentum", "--weight-decay", "--seed",  "--profile", "--make-cifar"};
const std::string_view kBoolFlags[] = {"--verify", "--check-sync", "--help", "-h"};

bool is_one_of(std::string_view f, std::span<const std::string_view> list) {
  for (std::string_view x : list)
    if (x == f) return true;
  return false;
}

// The flags given, by name (-h as --help), each once; values checked later.
std::map<std::string, std::string, std::less<>> given_flags(std::span<const char* const> args) {
  std::map<std::string, std::string, std::less<>> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    std::string_view value;
    bool has_value = false;
    if (const auto eq = a.find('='); a.starts_with("--") && eq != std::string_view::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    if (is_one_of(a, kBoolFlags)) {
      if (has_value) throw OptionError(std::string(a) + ": takes no value");
      given[a == "-h" ? "--help" : std::string(a)] = "";
      continue;
    }
    if (!is_one_of(a, kValueFlags)) {
      if (a.starts_with("-")) throw OptionError("unknown flag '" + std::string(a) + "' (see --help)");
      throw OptionError("unexpected argument '" + std::string(a) + "' (see --help)");
    }
    if (!has_value) {
      if (i + 1 >= args.size()) throw OptionError(std::string(a) + ": missing value");
      value = args[++i];
    }
    if (given.count(a)) throw OptionError(std::string(a) + ": given twice");
    given.emplace(std::string(a), std::string(value));
  }
  return given;
}

// Sets the option flag `f` names to `v`, or says why it cannot.
void apply_flag(Options& o, std::string_view f, const std::string& v) {
  if (f == "--layout")
    o.layout = pick<Layout>(f, v, {{"nhwc", Layout::nhwc}, {"nchw", Layout::nchw}});
  else if (f == "--padding")
    o.padding = pick<PaddingMode>(f, v, {{"explicit", PaddingMode::explicit_pad}, {"fused", PaddingMode::fused}});
  else if (f == "--bias")
    o.bias = pick<BiasMode>(f, v, {{"broadcast", BiasMode::broadcast}, {"fused", BiasMode::fused}});
  else if (f == "--bn")
    o.bn = pick<BnMode>(f, v, {{"naive", BnMode::naive}, {"transpose", BnMode::transpose}, {"fused", BnMode::fused}});
  else if (f == "--update")
    o.update = pick<UpdateMode>(f, v, {{"sync", UpdateMode::sync}, {"overlap", UpdateMode::overlap}});
  else if (f == "--allreduce")
    o.allreduce = pick<AllReduceMode>(f, v, {{"end", AllReduceMode::end}, {"bucketed", AllReduceMode::bucketed}});
  else if (f == "--data") {
    if (v.starts_with("cifar:")) {
      o.data = DataMode::cifar;
      o.cifar_dir = v.substr(6);
      if (o.cifar_dir.empty()) throw OptionError("--data: cifar: needs a directory (cifar:DIR)");
    } else if (v == "synthetic" || v == "host") {
      o.data = v == "synthetic" ? DataMode::synthetic : DataMode::host;
    } else if (v == "cifar") {
      throw OptionError("--data: cifar needs a directory (cifar:DIR)");
    } else {
      throw OptionError("--data: expected synthetic, host or cifar:DIR, got '" + v + "'");
    }
  } else if (f == "--precision")
    o.precision =
        pick<Precision>(f, v, {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"bf16", Precision::bf16}});
  else if (f == "--graphs")
    o.graphs = pick<bool>(f, v, {{"on", true}, {"off", false}});
  else if (f == "--gpus")
    o.gpus = parse_int(f, v, 1, 1024);
  else if (f == "--batch")
    o.batch = parse_int(f, v, 2, 4096);
  else if (f == "--steps")
    o.steps = parse_int(f, v, 1, 100000000);
  else if (f == "--warmup")
    o.warmup = parse_int(f, v, 0, 100000000);
  else if (f == "--log-every")
    o.log_every = parse_int(f, v, 1, 100000000);
  else if (f == "--lr")
    o.lr = parse_float(f, v, 0.0f, 10.0f);
  else if (f == "--momentum")
    o.momentum = parse_float(f, v, 0.0f, 0.999f);
  else if (f == "--weight-decay")
    o.weight_decay = parse_float(f, v, 0.0f, 1.0f);
  else if (f == "--seed")
    o.seed = static_cast<std::uint32_t>(parse_int(f, v, 0, 2147483647));
  else if (f == "--profile") {
    if (v.empty()) throw OptionError("--profile: needs an output file name");
    o.profile_path = v;
  } else if (f == "--make-cifar") {
    if (v.empty()) throw OptionError("--make-cifar: needs a directory");
    o.make_cifar_dir = v;
  } else if (f == "--verify")
    o.verify = true;
  else if (f == "--check-sync")
    o.check_sync = true;
}

}  // namespace

Options parse_options(std::span<const char* const> args) {
  std::map<std::string, std::string, std::less<>> given = given_flags(args);
  Options o;
  if (given.count("--help")) {
    o.help = true;
    return o;
  }
  apply_preset(o, given.count("--preset") ? std::string_view(given["--preset"]) : "tuned");
  for (const auto& [flag, v] : given) apply_flag(o, flag, v);
  if (o.bn == BnMode::transpose && o.layout != Layout::nchw)
    throw OptionError("--bn transpose converts NCHW to NHWC around batch norm; it needs --layout nchw");
  if (o.data != DataMode::cifar && !o.cifar_dir.empty()) o.cifar_dir.clear();
  return o;
}

std::string usage() {
  return R"(usage: resnet-train [flags]
Data-parallel training of the report's CIFAR ResNet (widths 16/32/64/128, [2,2,2,2]
basic blocks, batch norm, SGD with momentum) on one or more GPUs, one thread per GPU
(or one process per GPU under mpirun). Prints images/s, step time and loss per window.

presets (flags override them, in any order; default: tuned)
  --preset seed|tuned       seed = the report's profile (nchw, explicit padding,
                            broadcast, naive batch norm, sync update, all-reduce at
                            end, host data path, fp32, no graphs); tuned = fastest
switches
  --layout nhwc|nchw        activation layout
  --padding explicit|fused  explicit: a pad kernel then an unpadded convolution
  --bias broadcast|fused    broadcast: batch-norm scale/shift and classifier bias as
                            broadcast + elementwise kernels; fused: one kernel
  --bn naive|transpose|fused
                            naive: per-channel reductions with one block per channel;
                            transpose: NCHW->NHWC around batch norm (needs nchw);
                            fused: parallel reductions, ReLU and residual add fused
  --update sync|overlap     optimizer per tensor after the all-reduce, or per bucket
                            on a side stream overlapping the rest of the step
  --allreduce end|bucketed  per tensor after the whole backward with a device sync,
                            or one bucket per stage on a communication stream
  --data synthetic|host|cifar:DIR
                            synthetic: dataset generated and kept on the GPU;
                            host: the same dataset generated on the host and fed by
                            CPU loader threads through pinned buffers; cifar:DIR:
                            CIFAR-10 binary files (data_batch_1.bin, ...) from DIR
  --precision fp32|tf32|bf16
  --graphs on|off           capture the step (forward, backward, all-reduce,
                            optimizer) as one CUDA graph
run
  --gpus N                  GPUs to use (default: all visible)
  --batch B                 images per GPU per step (default 128)
  --steps S                 timed steps (default 200)
  --warmup W                untimed steps first (default 20)
  --log-every K             steps per printed window (default 50)
  --lr X --momentum X --weight-decay X   SGD (defaults 0.05, 0.9, 5e-4)
  --seed N                  seed of parameters, data and augmentation (default 1)
actions
  --profile OUT.gscope      capture the timed steps with gpuscope's in-process capture
  --make-cifar DIR          write the synthetic dataset as CIFAR-10 binary files to DIR
                            (data_batch_1..5.bin, test_batch.bin) and exit
  --verify                  run one step on one GPU and compare loss and every
                            gradient with the CPU reference; exit 1 on mismatch
  --check-sync              after every step, check that the all-reduced gradients
                            are bit-identical on every rank (a device sync and a
                            gradient download per step: slow); exit 1 if not
  --help                    this text
exit status: 0 ok, 1 failure while running or --verify mismatch, 2 bad usage,
bad dataset, or no usable GPU
)";
}

}  // namespace gpuscope::resnet
