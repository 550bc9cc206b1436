// The Kineto-like trace of kineto_like.h.
#include "support/kineto_like.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace gpuscope::testing {

namespace {

void append_us(std::string& out, std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  out += buf;
}

const char* kKernelNames[] = {
    "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, float, float, float, "
    "float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*, float const*, float*, float, float*, float "
    "const*, float const*, float)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
    "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float, float, float, int>("
    "at::GenericPackedTensorAccessor<float const, 3ul, at::RestrictPtrTraits, int>, float, float, "
    "at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, int>)",
    "ampere_sgemm_128x64_nn",
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::"
    "Tensor<float, 4, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorPaddingOp<Eigen::array<Eigen::IndexPair<long>, "
    "4ul> const, Eigen::TensorMap<Eigen::Tensor<float const, 4, 1, long>, 16, Eigen::MakePointer> const> const> "
    "const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<...>, long)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};
const char* kOps[] = {"aten::conv2d", "aten::add_", "aten::batch_norm", "aten::addmm", "aten::pad", "nccl:all_reduce"};

// Ops on the profiled thread follow each other (each cpu_op, with the
// cudaLaunchKernel inside it, ends before the next starts) and each
// ProfilerStep spans its ops, as on a real thread. (Until 2026-11-30 ops
// lasted 45 µs but started every ~1.2 µs, and each ProfilerStep lasted 2 s
// while steps were ~8 ms apart: hundreds of ranges overlapped on one thread,
// which no profiler writes, and TraceBuilder::freeze()'s depth assignment
// took ~0.03 s of the import there.)
constexpr std::uint64_t kOpGapNs = 20000;  // from one cpu_op's start to the next one's (plus up to 444 ns)
constexpr std::uint64_t kOpNs = 18123;     // a cpu_op's duration; its cudaLaunchKernel: +10.123 µs, 7.412 µs long

}  // namespace

std::uint64_t write_kineto_like(const std::string& path, std::uint64_t target_bytes) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot create the file");
  std::string out;
  out.reserve(1 << 22);
  out +=
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA H200\", "
      "\"totalGlobalMem\": 150754820096,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      "
      "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, "
      "\"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, "
      "\"sharedMemPerMultiprocessor\": 233472,\n      \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }\n  "
      "],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8},\n  \"traceEvents\": [\n";
  std::uint64_t written = 0, t = 1712195495000000000ull % 1000000000000000000ull, gpu = 0, corr = 100000, ext = 1;
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (std::uint64_t step = 0; written + out.size() < target_bytes; ++step) {
    // The step's range ends after its last op (a dry run of the op loop's clock).
    std::uint64_t last_op = t;
    for (int op = 0; op < 400; ++op) last_op += kOpGapNs + static_cast<std::uint64_t>(op % 13) * 37;
    sep();
    out += "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(step) +
           "\", \"pid\": 1102, \"tid\": 1102,\n    \"ts\": ";
    append_us(out, t);
    out += ", \"dur\": ";
    append_us(out, last_op + kOpNs + 1000 - t);
    out += ",\n    \"args\": {\n      \"External id\": " + std::to_string(ext++) +
           ", \"Record function id\": 0, \"Ev Idx\": 0\n    }\n  }";
    for (int op = 0; op < 400 && written + out.size() < target_bytes; ++op) {
      const int k = (op * 7 + static_cast<int>(step)) % 6;
      const bool copy = op % 20 == 19;
      t += kOpGapNs + static_cast<std::uint64_t>(op % 13) * 37;
      sep();
      out += "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"";
      out += kOps[k];
      out += "\", \"pid\": 1102, \"tid\": 1102,\n    \"ts\": ";
      append_us(out, t);
      out += ", \"dur\": ";
      append_us(out, kOpNs);
      out += ",\n    \"args\": {\n      \"External id\": " + std::to_string(ext) +
             ", \"Record function id\": 0, \"Sequence number\": " + std::to_string(ext * 3) +
             ", \"Fwd thread id\": 0, \"Ev Idx\": " + std::to_string(op) + "\n    }\n  }";
      ++corr;
      const std::uint64_t launch = t + 10123;
      sep();
      out += "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"";
      out += copy ? "cudaMemcpyAsync" : "cudaLaunchKernel";
      out += "\", \"pid\": 1102, \"tid\": 1102,\n    \"ts\": ";
      append_us(out, launch);
      out += ", \"dur\": 7.412,\n    \"args\": {\n      \"External id\": " + std::to_string(ext) +
             ", \"cbid\": 211, \"correlation\": " + std::to_string(corr) + "\n    }\n  }";
      sep();
      out += "  {\n    \"ph\": \"s\", \"id\": " + std::to_string(corr) + ", \"pid\": 1102, \"tid\": 1102, \"ts\": ";
      append_us(out, launch);
      out += ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }";
      gpu = std::max(gpu, launch + 5000);
      const std::uint64_t dur = 3000 + static_cast<std::uint64_t>((op * 131) % 9000);
      sep();
      if (copy) {
        out +=
            "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
            "\"pid\": 0, \"tid\": 7,\n    \"ts\": ";
        append_us(out, gpu);
        out += ", \"dur\": ";
        append_us(out, dur);
        out += ",\n    \"args\": {\n      \"External id\": " + std::to_string(ext) +
               ",      \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": " + std::to_string(corr) +
               ",      \"bytes\": 6422528, \"memory bandwidth (GB/s)\": 11.342\n    }\n  }";
      } else {
        out += "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"";
        out += kKernelNames[k];
        out += "\", \"pid\": 0, \"tid\": 7,\n    \"ts\": ";
        append_us(out, gpu);
        out += ", \"dur\": ";
        append_us(out, dur);
        out += ",\n    \"args\": {\n      \"External id\": " + std::to_string(ext) +
               ",      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": " +
               std::to_string(corr) +
               ",      \"registers per thread\": 64,      \"shared memory\": 8192,      \"blocks per SM\": "
               "3.878788,      \"warps per SM\": 31.030304,      \"grid\": [512, 1, 1],      \"block\": [256, 1, "
               "1],      \"est. achieved occupancy %\": 48\n    }\n  }";
      }
      sep();
      out += "  {\n    \"ph\": \"f\", \"id\": " + std::to_string(corr) + ", \"pid\": 0, \"tid\": 7, \"ts\": ";
      append_us(out, gpu);
      out += ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }";
      gpu += dur;
      ++ext;
      if (out.size() > (1u << 22)) {
        f.write(out.data(), static_cast<std::streamsize>(out.size()));
        written += out.size();
        out.clear();
      }
    }
    t = std::max(t + kOpGapNs, gpu) + 2000;  // after the step's last op has ended
  }
  out +=
      "\n  ],\n  \"traceName\": \"bench\", \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": "
      "1000000000000000000\n}\n";
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  written += out.size();
  f.close();
  if (!f) throw std::runtime_error(path + ": write failed");
  return written;
}

}  // namespace gpuscope::testing
