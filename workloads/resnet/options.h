// Command line of `resnet-train`: every switch, the two presets, and the
// parser (a library so tests can check it without a GPU).
//
// Presets fill every switch; flags given on the command line override the
// preset whatever their order. Without --preset the defaults are `tuned`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kernels/common.h"

namespace gpuscope::resnet {

using kernels::Layout;

enum class PaddingMode : std::uint8_t { explicit_pad, fused };  // separate pad kernel vs. cuDNN pads
enum class BiasMode : std::uint8_t { broadcast, fused };        // broadcast + elementwise vs. one fused kernel
enum class BnMode : std::uint8_t { naive, transpose, fused };   // batch-norm statistics / fusion variant
enum class UpdateMode : std::uint8_t { sync, overlap };     // optimizer after everything vs. per bucket, side stream
enum class AllReduceMode : std::uint8_t { end, bucketed };  // per tensor after backward vs. per stage, comm stream
enum class DataMode : std::uint8_t { synthetic, host, cifar };  // GPU-resident vs. CPU loader (generated / files)
enum class Precision : std::uint8_t { fp32, tf32, bf16 };

std::string_view to_string(Layout v);
std::string_view to_string(PaddingMode v);
std::string_view to_string(BiasMode v);
std::string_view to_string(BnMode v);
std::string_view to_string(UpdateMode v);
std::string_view to_string(AllReduceMode v);
std::string_view to_string(DataMode v);
std::string_view to_string(Precision v);

struct Options {
  // switches
  Layout layout = Layout::nhwc;
  PaddingMode padding = PaddingMode::fused;
  BiasMode bias = BiasMode::fused;
  BnMode bn = BnMode::fused;
  UpdateMode update = UpdateMode::overlap;
  AllReduceMode allreduce = AllReduceMode::bucketed;
  DataMode data = DataMode::synthetic;
  std::string cifar_dir;  // data == cifar
  Precision precision = Precision::bf16;
  bool graphs = true;
  // run shape
  int gpus = 0;  // 0: every visible GPU
  int batch = 128;
  int steps = 200;
  int warmup = 20;
  int log_every = 50;
  // optimizer and data
  float lr = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
  std::uint32_t seed = 1;
  // actions
  std::string preset = "tuned";
  std::string profile_path;    // --profile OUT.gscope
  std::string make_cifar_dir;  // --make-cifar DIR: write the dataset, then exit
  bool verify = false;         // --verify: one step against the CPU reference
  bool check_sync = false;     // --check-sync: gradients bit-identical across ranks after every step
  bool help = false;

  // One line naming every switch, printed at start so logs say what ran.
  std::string describe() const;
};

// A usage error: main prints "resnet-train: error: " + what() and exits 2.
class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Applies a preset ("seed" or "tuned") to every switch.
void apply_preset(Options& o, std::string_view name);

// Parses argv[1..]; throws OptionError. Accepts "--flag value" and "--flag=value".
Options parse_options(std::span<const char* const> args);

std::string usage();

}  // namespace gpuscope::resnet
