// make_hostile_files DIR: writes the hostile files of docs/robustness.md into
// DIR, to measure by hand (each command there names its file):
//   kernels-20m.gscope   20,000,000 identical kernels (~64 KB)
//   names-2000.gscope    2,000 kernels named with 100,000 characters each (~44 KB)
//   expands.json.gz      3,000,000 kernel events (~1 MB, ~300 MB of JSON)
//   span.json            kernels at ts ±9e15 µs and one at 100 µs
//   long-name.json       a kernel named with 50,000 characters, and its launch
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "support/hostile_files.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_hostile_files DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  using namespace gpuscope::testing;
  write_identical_kernels_gscope((dir / "kernels-20m.gscope").string(), 20'000'000);
  write_long_names_gscope((dir / "names-2000.gscope").string(), 2000, 100'000);
  write_kernel_events_json_gz((dir / "expands.json.gz").string(), 3'000'000);
  const std::string kernel = R"("pid":0,"tid":7,"args":{"device":0,"stream":7,"correlation":1}})";
  std::ofstream(dir / "span.json") << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":9e15,"dur":1,)"
                                   << kernel << R"(,{"ph":"X","cat":"kernel","name":"b","ts":-9e15,"dur":1,)" << kernel
                                   << R"(,{"ph":"X","cat":"kernel","name":"c","ts":100,"dur":5,)" << kernel << "]}";
  std::ofstream(dir / "long-name.json")
      << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":")" << std::string(49'990, 'x')
      << R"(gemm_k","ts":10,"dur":5,)" << kernel
      << R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":0,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}}]})";
  std::cout << "wrote the hostile files into " << dir.string() << "\n";
  return 0;
}
