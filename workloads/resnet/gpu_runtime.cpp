#include "workloads/resnet/gpu_runtime.h"

#include <nvtx3/nvToolsExt.h>

namespace gpuscope::resnet {

void throw_gpu_error(const char* lib, const char* expr, const std::string& what, const char* file, int line) {
  throw GpuError(std::string(lib) + " error: " + what + " (" + expr + " at " + file + ":" + std::to_string(line) + ")");
}

int visible_gpus(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
    return -1;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device is visible";
    return -1;
  }
  return n;
}

// ---- RAII handles --------------------------------------------------------------
Stream::Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}

Event::Event(bool timing) {
  CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}

CudnnHandle::CudnnHandle() { CUDNN_CHECK(cudnnCreate(&h_)); }
CudnnHandle::~CudnnHandle() {
  if (h_) cudnnDestroy(h_);
}

CublasHandle::CublasHandle() { CUBLAS_CHECK(cublasCreate(&h_)); }
CublasHandle::~CublasHandle() {
  if (h_) cublasDestroy(h_);
}

GraphExec::~GraphExec() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void GraphExec::reset(cudaGraph_t graph) {
  if (exec_) cudaGraphExecDestroy(exec_), exec_ = nullptr;
  if (graph_) cudaGraphDestroy(graph_);
  graph_ = graph;
  CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &nodes_));
  CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

void GraphExec::launch(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

PinnedBuffer::PinnedBuffer(std::size_t bytes) { CUDA_CHECK(cudaMallocHost(&p_, bytes)); }
PinnedBuffer::~PinnedBuffer() {
  if (p_) cudaFreeHost(p_);
}

// ---- the arena -------------------------------------------------------------------
Arena::~Arena() {
  for (void* b : blocks_) cudaFree(b);
}

void Arena::request_bytes(void*& slot, std::size_t bytes) { pending_.push_back({&slot, bytes}); }

std::size_t Arena::commit(const char* what) {
  constexpr std::size_t kAlign = 256;
  std::size_t size = 0;
  for (const Request& r : pending_) size += (r.bytes + kAlign - 1) / kAlign * kAlign;
  if (size == 0) return 0;
  void* base = nullptr;
  const cudaError_t e = cudaMalloc(&base, size);
  if (e != cudaSuccess)
    throw GpuError(std::string("cannot allocate ") + std::to_string(size >> 20) + " MiB of GPU memory for " + what +
                   ": " + cudaGetErrorString(e));
  // Zero once: alignment gaps of the flat gradient buffer are all-reduced and
  // must stay finite, and nothing reads uninitialised memory by accident.
  CUDA_CHECK(cudaMemset(base, 0, size));
  blocks_.push_back(base);
  std::size_t off = 0;
  for (const Request& r : pending_) {
    *r.slot = static_cast<char*>(base) + off;
    off += (r.bytes + kAlign - 1) / kAlign * kAlign;
  }
  pending_.clear();
  total_ += size;
  return size;
}

// ---- NVTX ------------------------------------------------------------------------
NvtxRange::NvtxRange(const char* name) { nvtxRangePushA(name); }
NvtxRange::~NvtxRange() { nvtxRangePop(); }

}  // namespace gpuscope::resnet
