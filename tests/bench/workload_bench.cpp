// Host-side costs of resnet-train (the GPU side is measured by
// tests/gpu/workload_check.sh):
//   HostLoader       images/s the CPU loader threads deliver into the slot
//                    ring (--data host|cifar): must exceed what the GPUs eat
//   SyntheticRecords start-up cost of --data host / --make-cifar
//   ReferenceStep    the CPU reference step --verify runs (full-size network)
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "kernels/reference/data.h"
#include "workloads/resnet/cifar.h"
#include "workloads/resnet/loader.h"
#include "workloads/resnet/net.h"
#include "workloads/resnet/reference_net.h"

namespace gpuscope::resnet {
namespace {

void BM_HostLoader(benchmark::State& state) {
  static const CifarDataset data = synthetic_dataset(1, 50000);
  HostLoader::Config cfg;
  cfg.batch = 128;
  cfg.threads = static_cast<int>(state.range(0));
  cfg.slots = 4;
  HostLoader loader(data, cfg, SlotMemory{[](std::size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); }});
  std::int64_t step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(loader.acquire(step));
    loader.release(step++);
  }
  state.SetItemsProcessed(step * cfg.batch);
  state.counters["stalls"] = static_cast<double>(loader.stalls());
}
BENCHMARK(BM_HostLoader)->Arg(1)->Arg(2)->Arg(4)->UseRealTime();

void BM_SyntheticRecords(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(synthetic_records(1, 0, 10000));
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_SyntheticRecords)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReferenceStep(benchmark::State& state) {
  NetConfig cfg;
  const NetSpec net = build_net(cfg);
  const auto p = init_params(net, 1);
  const std::vector<double> params(p.begin(), p.end());
  const int batch = static_cast<int>(state.range(0));
  const CifarDataset data = synthetic_dataset(1, batch);
  kernels::ref::AugmentArgs args;
  args.batch = batch;
  std::vector<double> images;
  std::vector<int> labels;
  kernels::ref::augment<double>(data.records, {}, args, images, labels);
  for (auto _ : state) benchmark::DoNotOptimize(reference_forward_backward<double>(net, params, images, labels).loss);
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_ReferenceStep)->Arg(8)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace gpuscope::resnet
BENCHMARK_MAIN();
