// The real profiler traces in tests/data/traces (where they come from and
// their licenses: tests/data/traces/README.md), as the tests name them.
//
// Tests that run on every trace take real_trace_files(), never a directory
// listing: a suite over them is never empty, and a missing file fails the
// tests that need it, naming the file. TestData.FolderHoldsExactlyTheListedFiles
// (tests/support/test_data_test.cpp) keeps this list and the folder in step.
// Needs the compile definition GPUSCOPE_TRACES_DIR (gpuscope_add_test sets it).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::testing {

// Every Chrome/Kineto JSON trace of tests/data/traces, sorted.
inline const std::vector<std::string>& real_trace_files() {
  static const std::vector<std::string> files = {
      "hta-alexnet.json.gz",
      "hta-event-sync-multistream.json.gz",
      "hta-event-sync.json.gz",
      "hta-ns-resolution-v100.json.gz",
      "hta-sampled-rank0.json.gz",
      "hta-sampled-rank1.json.gz",
      "hta-triton.json.gz",
      "kineto-resnet50-v100-workers0.json.gz",
      "kineto-resnet50-v100-workers4.json.gz",
      "tracelens-bert-small-h100.json.gz",
      "tracelens-timesformer-h100.json.gz",
  };
  return files;
}

// The Nsight Systems SQLite exports, relative to tests/data/traces.
inline const std::vector<std::string>& real_nsys_files() {
  static const std::vector<std::string> files = {
      "nsys/nsys2022-saxpy-mpi-openacc.sqlite",
      "nsys/nsys2024-cloverleaf-a100-mpi.sqlite",
  };
  return files;
}

// Real traces kept for the findings' review (review/, relative to
// tests/data/traces): not in the every-trace suites (no HTA reference or
// golden counts), but their findings are written down and checked.
inline const std::vector<std::string>& real_review_files() {
  static const std::vector<std::string> files = {
      "review/hta-cupti-range-profiler.json.gz", "review/hta-dlrm-compiled-a100.json.gz",
      "review/tracelens-qwen-h100.json.gz", "review/tracelens-vllm-gptoss-b200.json.gz",
      "review/tracelens-mi210-gpu-only.json.gz"};
  return files;
}

inline std::filesystem::path real_traces_dir() { return GPUSCOPE_TRACES_DIR; }

// The path of `file` in tests/data/traces. A missing file throws, so the test
// that needs it fails with a message naming it (never a skip).
inline std::string real_trace(std::string_view file) {
  const std::filesystem::path p = real_traces_dir() / file;
  if (!std::filesystem::is_regular_file(p))
    throw std::runtime_error("missing test data: " + p.string() + " (see tests/data/traces/README.md)");
  return p.string();
}

// "hta-ns-resolution-v100.json.gz" -> "hta_ns_resolution_v100": a trace's name in test names.
inline std::string trace_test_name(std::string_view file) {
  std::string s(file.substr(0, file.find('.')));
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// The name generator of a suite parameterised by trace file name.
struct TraceFileName {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const {
    return trace_test_name(info.param);
  }
};

}  // namespace gpuscope::testing
