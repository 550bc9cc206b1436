// resnet-train's flags: presets, overrides in any order, and one clear error
// for every kind of bad input.
#include <gtest/gtest.h>

#include <vector>

#include "workloads/resnet/options.h"

namespace gpuscope::resnet {
namespace {

Options parse(std::vector<const char*> args) { return parse_options(args); }

std::string error_of(std::vector<const char*> args) {
  try {
    parse(args);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Options, DefaultIsTuned) {
  const Options o = parse({});
  EXPECT_EQ(o.preset, "tuned");
  EXPECT_EQ(o.layout, Layout::nhwc);
  EXPECT_EQ(o.padding, PaddingMode::fused);
  EXPECT_EQ(o.bias, BiasMode::fused);
  EXPECT_EQ(o.bn, BnMode::fused);
  EXPECT_EQ(o.update, UpdateMode::overlap);
  EXPECT_EQ(o.allreduce, AllReduceMode::bucketed);
  EXPECT_EQ(o.data, DataMode::synthetic);
  EXPECT_EQ(o.precision, Precision::bf16);
  EXPECT_TRUE(o.graphs);
  EXPECT_EQ(o.batch, 128);
  EXPECT_EQ(o.gpus, 0);
}

TEST(Options, SeedPresetIsTheReportsProfile) {
  const Options o = parse({"--preset", "seed"});
  EXPECT_EQ(o.layout, Layout::nchw);
  EXPECT_EQ(o.padding, PaddingMode::explicit_pad);
  EXPECT_EQ(o.bias, BiasMode::broadcast);
  EXPECT_EQ(o.bn, BnMode::naive);
  EXPECT_EQ(o.update, UpdateMode::sync);
  EXPECT_EQ(o.allreduce, AllReduceMode::end);
  EXPECT_EQ(o.data, DataMode::host);
  EXPECT_EQ(o.precision, Precision::fp32);
  EXPECT_FALSE(o.graphs);
}

TEST(Options, FlagsOverrideThePresetInAnyOrder) {
  for (auto args : {std::vector<const char*>{"--bn", "transpose", "--preset", "seed", "--graphs=on"},
                    std::vector<const char*>{"--preset=seed", "--graphs", "on", "--bn=transpose"}}) {
    const Options o = parse(args);
    EXPECT_EQ(o.preset, "seed");
    EXPECT_EQ(o.bn, BnMode::transpose);
    EXPECT_TRUE(o.graphs);
    EXPECT_EQ(o.padding, PaddingMode::explicit_pad);  // untouched preset value
  }
}

TEST(Options, EverySwitchParses) {
  const Options o = parse({"--layout",       "nchw",
                           "--padding",      "explicit",
                           "--bias",         "broadcast",
                           "--bn",           "naive",
                           "--update",       "sync",
                           "--allreduce",    "end",
                           "--data",         "cifar:/tmp/c10",
                           "--precision",    "tf32",
                           "--graphs",       "off",
                           "--gpus",         "4",
                           "--batch",        "64",
                           "--steps",        "10",
                           "--warmup",       "2",
                           "--log-every",    "5",
                           "--lr",           "0.1",
                           "--momentum",     "0.8",
                           "--weight-decay", "0",
                           "--seed",         "9",
                           "--profile",      "out.gscope",
                           "--verify",       "--check-sync"});
  EXPECT_EQ(o.layout, Layout::nchw);
  EXPECT_EQ(o.data, DataMode::cifar);
  EXPECT_EQ(o.cifar_dir, "/tmp/c10");
  EXPECT_EQ(o.precision, Precision::tf32);
  EXPECT_FALSE(o.graphs);
  EXPECT_EQ(o.gpus, 4);
  EXPECT_EQ(o.batch, 64);
  EXPECT_EQ(o.steps, 10);
  EXPECT_EQ(o.warmup, 2);
  EXPECT_EQ(o.log_every, 5);
  EXPECT_FLOAT_EQ(o.lr, 0.1f);
  EXPECT_FLOAT_EQ(o.momentum, 0.8f);
  EXPECT_FLOAT_EQ(o.weight_decay, 0.0f);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.profile_path, "out.gscope");
  EXPECT_TRUE(o.verify);
  EXPECT_TRUE(o.check_sync);
  EXPECT_FALSE(parse({}).check_sync);
  EXPECT_NE(o.describe().find("data=cifar:/tmp/c10"), std::string::npos);
}

TEST(Options, Help) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
  // The usage text names every flag the parser accepts.
  const std::string u = usage();
  for (const char* f : {"--preset",    "--layout",  "--padding",    "--bias",   "--bn",         "--update",
                        "--allreduce", "--data",    "--precision",  "--graphs", "--gpus",       "--batch",
                        "--steps",     "--warmup",  "--log-every",  "--lr",     "--momentum",   "--weight-decay",
                        "--seed",      "--profile", "--make-cifar", "--verify", "--check-sync", "--help"})
    EXPECT_NE(u.find(f), std::string::npos) << f;
}

TEST(Options, ClearErrors) {
  EXPECT_EQ(error_of({"--layout", "nwhc"}), "--layout: expected nhwc or nchw, got 'nwhc'");
  EXPECT_EQ(error_of({"--bn", "fast"}), "--bn: expected naive, transpose or fused, got 'fast'");
  EXPECT_EQ(error_of({"--preset", "fast"}), "--preset: expected seed or tuned, got 'fast'");
  EXPECT_EQ(error_of({"--frobnicate"}), "unknown flag '--frobnicate' (see --help)");
  EXPECT_EQ(error_of({"stray"}), "unexpected argument 'stray' (see --help)");
  EXPECT_EQ(error_of({"--batch"}), "--batch: missing value");
  EXPECT_EQ(error_of({"--batch", "12x"}), "--batch: expected an integer, got '12x'");
  EXPECT_EQ(error_of({"--batch", "0"}), "--batch: 0 is out of range [2, 4096]");
  EXPECT_EQ(error_of({"--gpus", "-1"}), "--gpus: -1 is out of range [1, 1024]");
  EXPECT_EQ(error_of({"--lr", "fast"}), "--lr: expected a number, got 'fast'");
  EXPECT_EQ(error_of({"--lr", "nan"}), "--lr: expected a number, got 'nan'");
  EXPECT_EQ(error_of({"--steps", "5", "--steps", "6"}), "--steps: given twice");
  EXPECT_EQ(error_of({"--verify=yes"}), "--verify: takes no value");
  EXPECT_EQ(error_of({"--check-sync=1"}), "--check-sync: takes no value");
  EXPECT_EQ(error_of({"--data", "cifar"}), "--data: cifar needs a directory (cifar:DIR)");
  EXPECT_EQ(error_of({"--data", "cifar:"}), "--data: cifar: needs a directory (cifar:DIR)");
  EXPECT_EQ(error_of({"--data", "disk"}), "--data: expected synthetic, host or cifar:DIR, got 'disk'");
  EXPECT_EQ(error_of({"--bn", "transpose"}),
            "--bn transpose converts NCHW to NHWC around batch norm; it needs --layout nchw");
  EXPECT_EQ(error_of({"--profile="}), "--profile: needs an output file name");
}

}  // namespace
}  // namespace gpuscope::resnet
