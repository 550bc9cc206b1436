// A Kineto-like trace of any size, as JSON text in a file: the large trace of
// the import benchmark and of the cost guard (tests/cost/).
//
// It mimics the current Kineto schema as PyTorch writes it (indented, one
// field group per line, µs with 3 decimals, ac2g flows): per step a
// ProfilerStep range, then per op a cpu_op, its cudaLaunchKernel with a flow
// start, the kernel with full args and its flow end; every 20th op is a
// cudaMemcpyAsync with its gpu_memcpy instead. The same size gives the same
// bytes.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::testing {

// Writes about `target_bytes` of JSON to `path` (whole events; the closing
// brackets after the last); returns the size written. Throws
// std::runtime_error when the file cannot be written.
std::uint64_t write_kineto_like(const std::string& path, std::uint64_t target_bytes);

}  // namespace gpuscope::testing
