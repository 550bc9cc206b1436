// The trainer's GPU plumbing: one error check per library, RAII for every
// CUDA / cuDNN / cuBLAS handle, NVTX ranges, and the arena that holds all of
// a GPU's memory (one allocation at setup; nothing is allocated in the step).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuscope::resnet {

// A failure of the GPU runtime or a GPU library while running (exit status 1).
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_gpu_error(const char* lib, const char* expr, const std::string& what, const char* file,
                                  int line);

#define CUDA_CHECK(expr)                                                                                      \
  do {                                                                                                        \
    const cudaError_t gs_status_ = (expr);                                                                    \
    if (gs_status_ != cudaSuccess)                                                                            \
      ::gpuscope::resnet::throw_gpu_error("CUDA", #expr, cudaGetErrorString(gs_status_), __FILE__, __LINE__); \
  } while (0)
#define CUDNN_CHECK(expr)                                                                                       \
  do {                                                                                                          \
    const cudnnStatus_t gs_status_ = (expr);                                                                    \
    if (gs_status_ != CUDNN_STATUS_SUCCESS)                                                                     \
      ::gpuscope::resnet::throw_gpu_error("cuDNN", #expr, cudnnGetErrorString(gs_status_), __FILE__, __LINE__); \
  } while (0)
#define CUBLAS_CHECK(expr)                                                                                         \
  do {                                                                                                             \
    const cublasStatus_t gs_status_ = (expr);                                                                      \
    if (gs_status_ != CUBLAS_STATUS_SUCCESS)                                                                       \
      ::gpuscope::resnet::throw_gpu_error("cuBLAS", #expr, cublasGetStatusString(gs_status_), __FILE__, __LINE__); \
  } while (0)
#define NCCL_CHECK(expr)                                                                                      \
  do {                                                                                                        \
    const ncclResult_t gs_status_ = (expr);                                                                   \
    if (gs_status_ != ncclSuccess)                                                                            \
      ::gpuscope::resnet::throw_gpu_error("NCCL", #expr, ncclGetErrorString(gs_status_), __FILE__, __LINE__); \
  } while (0)

// Visible GPUs, or -1 with a reason (no driver, no device, CUDA_VISIBLE_DEVICES…).
int visible_gpus(std::string* why);

// ---- RAII handles --------------------------------------------------------------
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(bool timing = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  operator cudaEvent_t() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class CudnnHandle {
 public:
  CudnnHandle();
  ~CudnnHandle();
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return h_; }

 private:
  cudnnHandle_t h_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec();
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  void reset(cudaGraph_t graph);  // instantiates; takes ownership of graph
  bool ready() const { return exec_ != nullptr; }
  void launch(cudaStream_t s) const;
  std::size_t nodes() const { return nodes_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;
};

// Pinned host memory (loader slots, readbacks).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

// ---- the arena -------------------------------------------------------------------
// Buffers are requested by address of the pointer that will hold them, then
// committed with one cudaMalloc; every buffer starts on a 256-byte boundary
// (cuDNN, cuBLAS and the 16-byte packs of the pointwise kernels need less).
class Arena {
 public:
  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  template <class T>
  void request(T*& slot, std::size_t count) {
    request_bytes(reinterpret_cast<void*&>(slot), count * sizeof(T));
  }
  void request_bytes(void*& slot, std::size_t bytes);
  // Allocates everything requested since the last commit; returns the bytes.
  std::size_t commit(const char* what);
  std::size_t total_bytes() const { return total_; }

 private:
  struct Request {
    void** slot;
    std::size_t bytes;
  };
  std::vector<Request> pending_;
  std::vector<void*> blocks_;
  std::size_t total_ = 0;
};

// ---- NVTX ------------------------------------------------------------------------
class NvtxRange {
 public:
  explicit NvtxRange(const char* name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace gpuscope::resnet
