// resnet-train: data-parallel training of the report's CIFAR ResNet.
//
// Order of checks: flags, then --help / --make-cifar (no GPU needed), then the
// dataset, then the GPUs — so every user error is one line and exit status 2
// before any GPU work starts.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "trace/error.h"
#include "workloads/resnet/cifar.h"
#include "workloads/resnet/comm.h"
#include "workloads/resnet/gpu_runtime.h"
#include "workloads/resnet/options.h"
#include "workloads/resnet/trainer.h"

using namespace gpuscope::resnet;

namespace {

constexpr std::size_t kHostSyntheticImages = 50000;

int usage_error(const std::string& message) {
  std::fprintf(stderr, "resnet-train: error: %s\n", message.c_str());
  return 2;
}

int run_threads(const Options& opt, int gpus, const gpuscope::resnet::CifarDataset* host_data) {
  LocalComms comms(gpus);
  ThreadGroup group(gpus);
  std::vector<int> status(gpus, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < gpus; ++r)
    threads.emplace_back([&, r] {
      RankContext ctx;
      ctx.rank = r;
      ctx.world = gpus;
      ctx.device = r;
      ctx.comm = comms[r];
      ctx.group = &group;
      ctx.host_data = host_data;
      try {
        status[r] = run_rank(opt, ctx);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "resnet-train: error: GPU %d: %s\n", r, e.what());
        std::fflush(stderr);
        // The other ranks would wait forever in their next collective.
        if (gpus > 1) std::_Exit(1);
        status[r] = 1;
      }
    });
  for (auto& t : threads) t.join();
  int worst = 0;
  for (int s : status) worst = std::max(worst, s);
  return worst;
}

#if defined(GPUSCOPE_HAVE_MPI)
int run_mpi(const Options& opt, int* argc, char*** argv, const gpuscope::resnet::CifarDataset* cifar) {
  MpiSession mpi(argc, argv);
  std::string why;
  const int n = visible_gpus(&why);
  if (n < 0) return usage_error("no usable CUDA GPU on rank " + std::to_string(mpi.rank()) + ": " + why);
  if (opt.gpus > 1) return usage_error("under mpirun each process drives one GPU: drop --gpus or use --gpus 1");
  std::optional<gpuscope::resnet::CifarDataset> host;
  if (opt.data == DataMode::host) host = synthetic_dataset(opt.seed, kHostSyntheticImages);
  try {
    RankContext ctx;
    ctx.rank = mpi.rank();
    ctx.world = mpi.size();
    ctx.device = mpi.local_rank() % n;
    ctx.group = &mpi;
    ctx.group_per_process = true;
    ctx.host_data = host ? &*host : cifar;
    CUDA_CHECK(cudaSetDevice(ctx.device));
    ncclComm_t comm = mpi.make_comm();
    ctx.comm = comm;
    const int status = run_rank(opt, ctx);
    ncclCommDestroy(comm);
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet-train: error: rank %d: %s\n", mpi.rank(), e.what());
    std::fflush(stderr);
    std::_Exit(1);  // MPI peers would wait forever
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    opt = parse_options(std::span<const char* const>(argv + 1, static_cast<std::size_t>(argc - 1)));
  } catch (const OptionError& e) {
    return usage_error(e.what());
  }
  if (opt.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  if (!opt.make_cifar_dir.empty()) {
    try {
      write_cifar_dir(opt.make_cifar_dir, opt.seed);
    } catch (const gpuscope::InputError& e) {
      return usage_error(e.what());
    }
    std::printf("resnet-train: wrote the synthetic dataset (seed %u) as CIFAR-10 binary files to %s\n", opt.seed,
                opt.make_cifar_dir.c_str());
    return 0;
  }
#if !defined(GPUSCOPE_HAVE_CAPTURE)
  if (!opt.profile_path.empty())
    return usage_error(
        "--profile: the capture library is not available in this build (it needs gpuscope_capture; "
        "use `gpuscope capture -- resnet-train …` instead)");
#endif

  std::optional<gpuscope::resnet::CifarDataset> dataset;
  if (opt.data == DataMode::cifar) {
    try {
      dataset = load_cifar_dir(opt.cifar_dir);
    } catch (const gpuscope::InputError& e) {
      return usage_error(e.what());
    }
    if (dataset->count < static_cast<std::size_t>(opt.batch))
      return usage_error(opt.cifar_dir + ": " + std::to_string(dataset->count) + " images, fewer than one batch");
  }

#if defined(GPUSCOPE_HAVE_MPI)
  if (launched_by_mpi()) return run_mpi(opt, &argc, &argv, dataset ? &*dataset : nullptr);
#endif

  std::string why;
  const int visible = visible_gpus(&why);
  if (visible < 0) return usage_error("no usable CUDA GPU: " + why);
  int gpus = opt.gpus == 0 ? visible : opt.gpus;
  if (opt.verify && opt.gpus == 0) gpus = 1;
  if (gpus > visible)
    return usage_error("--gpus " + std::to_string(gpus) + " but only " + std::to_string(visible) + " GPU" +
                       (visible == 1 ? "" : "s") + " visible");
  if (opt.verify && gpus != 1) return usage_error("--verify runs on one GPU: use --gpus 1");
  if (opt.data == DataMode::host) dataset = synthetic_dataset(opt.seed, kHostSyntheticImages);
  try {
    return run_threads(opt, gpus, dataset ? &*dataset : nullptr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet-train: error: %s\n", e.what());
    return 1;
  }
}
