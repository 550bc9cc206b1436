// One rank of resnet-train: everything a GPU does in a training step.
//
// Index
//   [SECTION] buffers and layers     the tensors of one unit (conv + BN), of a block
//   [SECTION] setup                  arena, cuDNN plans and algorithm search, parameters
//   [SECTION] data                   GPU-resident sampling or the host loader path
//   [SECTION] batch norm             one conv's BN (+ residual) (+ ReLU), every variant
//   [SECTION] forward / backward     the network, in the order of net.h
//   [SECTION] all-reduce, optimizer  end-of-step vs. bucketed, sync vs. overlapped
//   [SECTION] the step               eager or as one CUDA graph
//   [SECTION] run and verify         timing windows, summary, --verify
//
// Streams: `main_` runs the network. Bucketed all-reduce runs on `comm_`, each
// stage's bucket as soon as its gradients are final (event grads_ready_[s]);
// the overlapped update runs per bucket on `update_` (event updated_[s]) and
// the next step's forward waits for a stage's update only when it reaches
// that stage. The seed path keeps everything on `main_` with device syncs
// around the per-tensor all-reduce, as the report's job did.
#include "workloads/resnet/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/data.h"
#include "kernels/kernels.h"
#include "kernels/reference/tensor.h"
#include "workloads/resnet/conv.h"
#include "workloads/resnet/gpu_runtime.h"
#include "workloads/resnet/loader.h"
#include "workloads/resnet/net.h"
#include "workloads/resnet/reference_net.h"

#if defined(GPUSCOPE_HAVE_CAPTURE)
#include <gpuscope/capture.h>
#endif

namespace gpuscope::resnet {

namespace {

using kernels::BnReduction;
using kernels::DeviceTensor;
using kernels::DType;
using kernels::Padding2d;
using kernels::Shape;

constexpr std::uint32_t kSyntheticImages = 50000;  // GPU-resident dataset size (CIFAR-10's)
constexpr std::size_t kFindWorkspace = std::size_t{256} << 20;
constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;

// ---- [SECTION] buffers and layers ------------------------------------------------

struct Conv {
  const ConvSpec* spec = nullptr;
  ConvPlan plan;
  bool explicit_pad = false;  // --padding explicit and the layer pads
  Padding2d pad;
  DeviceTensor padded;       // explicit: padded copy of the input, kept for backward-filter
  DeviceTensor padded_grad;  // explicit: gradient of the padded copy
  bool need_data_grad = true;
  std::string backward_range;  // "<layer>.backward" (NVTX; made once, not per step)
};

struct Bn {
  const BnSpec* spec = nullptr;
  float *mean = nullptr, *invstd = nullptr, *a = nullptr, *b = nullptr;
  float *ka = nullptr, *kb = nullptr, *kc = nullptr;
  std::string backward_range;
};

// conv -> BN (+ residual) (+ ReLU)
struct Unit {
  Conv conv;
  Bn bn;
  DeviceTensor conv_out, out, d_conv_out;
};

struct Block {
  const BlockSpec* spec = nullptr;
  Unit u1, u2, up;  // up: projection shortcut (if any)
  DeviceTensor g;   // gradient after u2's ReLU mask = gradient of the shortcut
  DeviceTensor dh;  // gradient of u1's output
  DeviceTensor dx;  // gradient of the block's input
  std::string backward_range;
};

std::uint64_t fnv1a(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

double host_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

class Trainer {
 public:
  Trainer(const Options& opt, const RankContext& ctx);
  ~Trainer();
  int train();
  int verify();

 private:
  // setup
  DeviceTensor tensor(Shape s);
  void plan_unit(Unit& u, const ConvSpec& c, const BnSpec& b, bool need_data_grad);
  void setup();
  void choose_algorithms();
  void init_parameters();
  // data
  void start_data();
  void data_phase(std::int64_t step);
  void prefetch(std::int64_t step);
  // network
  const void* weight(int param) const;
  void* grad(int param) const;
  const float* param32(int param) const { return params32_ + net_.params[param].offset; }
  void conv_forward(Conv& c, const DeviceTensor& x, const DeviceTensor& y);
  void conv_backward(Conv& c, const DeviceTensor& x, const DeviceTensor& dy, const DeviceTensor* dx, bool accumulate);
  void bn_forward(Bn& bn, const DeviceTensor& x, const DeviceTensor& y, const void* residual, bool relu);
  void bn_backward(Bn& bn, const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x, const DeviceTensor& dx,
                   void* g_out);
  void forward();
  void backward();
  void wait_stage_update(int stage);
  // all-reduce and optimizer
  void bucket_ready(int bucket);
  void finish_step();
  void sgd_bucket(int bucket, cudaStream_t s);
  // step
  void step_body();
  void capture_graph();
  void run_step(std::int64_t step);
  // readback
  std::vector<float> download_params_canonical();
  std::vector<float> download_grads_canonical();
  float read_loss(int* correct = nullptr);
  bool grads_in_sync();
  bool start_profile();
  void stop_profile();
  void print(const char* fmt, ...) const;

  const Options& opt_;
  RankContext ctx_;
  NetSpec net_;
  DType dt_;
  Layout layout_;
  bool fused_act_;  // BN apply folds residual + ReLU (--bn fused with --bias fused)
  bool bf16_;

  CudnnHandle cudnn_;
  CublasHandle cublas_;
  Stream main_, comm_, update_, copy_;
  std::vector<std::unique_ptr<Event>> grads_ready_, reduced_, updated_;
  std::unique_ptr<Event> copied_[2], consumed_[2];
  Arena arena_;
  GraphExec graph_;
  bool capturing_ = false;

  // parameters (flat, net_.params offsets)
  float* params32_ = nullptr;
  float* momentum_ = nullptr;
  void* grads_ = nullptr;   // dtype dt_
  void* shadow_ = nullptr;  // bf16 copy of the weights (bf16 runs)

  // activations and gradients
  DeviceTensor images_;
  int* labels_ = nullptr;
  Unit stem_;
  std::vector<Block> blocks_;
  DeviceTensor d_last_;  // gradient of the last block's output
  void* pooled_ = nullptr;
  void* d_pooled_ = nullptr;
  float* logits_ = nullptr;
  float* bias_full_ = nullptr;  // --bias broadcast: the classifier bias as a [batch x classes] tensor
  void* dlogits_ = nullptr;
  float* loss_ = nullptr;
  int* correct_ = nullptr;
  // scratch
  DeviceTensor tmp1_, tmp2_, gmask_, tr0_, tr1_, tr2_;
  double* bn_partials_ = nullptr;
  void* cudnn_ws_ = nullptr;
  void* cublas_ws_ = nullptr;
  // data
  std::uint8_t* dataset_ = nullptr;  // --data synthetic: kSyntheticImages records on the GPU
  std::uint8_t* staging_[2] = {nullptr, nullptr};
  std::vector<std::unique_ptr<PinnedBuffer>> slot_memory_;  // before loader_: outlives its threads
  std::unique_ptr<HostLoader> loader_;
  PinnedBuffer readback_{64};
  std::vector<unsigned char> grad_bytes_;  // --check-sync: this rank's all-reduced gradients
  std::size_t activation_bytes_ = 0, workspace_bytes_ = 0;
  std::int64_t prefetched_ = -1;
  // NVTX range names of the per-tensor and per-bucket loops (net.h), made once.
  std::vector<std::string> optimizer_tensor_ranges_, allreduce_tensor_ranges_;
  std::vector<std::string> optimizer_bucket_ranges_, allreduce_bucket_ranges_;
};

// ---- [SECTION] setup --------------------------------------------------------------

Trainer::Trainer(const Options& opt, const RankContext& ctx)
    : opt_(opt),
      ctx_(ctx),
      dt_(opt.precision == Precision::bf16 ? DType::bf16 : DType::f32),
      layout_(opt.layout),
      fused_act_(opt.bn == BnMode::fused && opt.bias == BiasMode::fused),
      bf16_(opt.precision == Precision::bf16) {
  NetConfig cfg;
  cfg.batch = opt.batch;
  // Tensor-core NHWC kernels want the channel count a multiple of 8: the
  // stem's 3 input channels are stored as 8, the extra ones zero.
  cfg.in_channels = layout_ == Layout::nhwc ? 8 : 3;
  net_ = build_net(cfg);
  for (int s = 0; s < 4; ++s) {
    grads_ready_.push_back(std::make_unique<Event>());
    reduced_.push_back(std::make_unique<Event>());
    updated_.push_back(std::make_unique<Event>());
  }
  for (int i = 0; i < 2; ++i) copied_[i] = std::make_unique<Event>(), consumed_[i] = std::make_unique<Event>();
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), main_));
  CUBLAS_CHECK(cublasSetStream(cublas_.get(), main_));
  setup();
}

Trainer::~Trainer() {
  // Loader threads and pinned slots go after the GPU stopped using them.
  cudaDeviceSynchronize();
}

void Trainer::print(const char* fmt, ...) const {
  if (ctx_.rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::fflush(stdout);
}

DeviceTensor Trainer::tensor(Shape s) {
  DeviceTensor t{nullptr, dt_, layout_, s};
  return t;
}

void Trainer::plan_unit(Unit& u, const ConvSpec& c, const BnSpec& b, bool need_data_grad) {
  const int n = opt_.batch;
  u.conv.spec = &c;
  u.conv.backward_range = backward_range_name(c.name);
  u.conv.need_data_grad = need_data_grad;
  u.conv.explicit_pad = opt_.padding == PaddingMode::explicit_pad && c.pad > 0;
  u.conv.pad = Padding2d{c.pad, c.pad, c.pad, c.pad};
  const Shape in{n, c.in_c, c.in_hw, c.in_hw};
  ConvShape cs;
  cs.n = n, cs.in_c = c.in_c, cs.out_c = c.out_c, cs.k = c.k, cs.stride = c.stride;
  if (u.conv.explicit_pad) {
    u.conv.padded = tensor(kernels::padded(in, u.conv.pad));
    arena_.request_bytes(u.conv.padded.data, u.conv.padded.shape.count() * dtype_size(dt_));
    if (need_data_grad) {
      u.conv.padded_grad = tensor(u.conv.padded.shape);
      arena_.request_bytes(u.conv.padded_grad.data, u.conv.padded_grad.shape.count() * dtype_size(dt_));
    }
    cs.in_h = cs.in_w = u.conv.padded.shape.h;
    cs.pad = 0;
  } else {
    cs.in_h = cs.in_w = c.in_hw;
    cs.pad = c.pad;
  }
  const int out_hw = u.conv.plan.init(cs, dt_, layout_, opt_.precision);
  if (out_hw != c.out_hw) throw GpuError("cuDNN output size disagrees with the network description");
  const Shape out{n, c.out_c, c.out_hw, c.out_hw};
  for (DeviceTensor* t : {&u.conv_out, &u.out, &u.d_conv_out}) {
    *t = tensor(out);
    arena_.request_bytes(t->data, out.count() * dtype_size(dt_));
  }
  activation_bytes_ += 3 * out.count() * dtype_size(dt_);
  u.bn.spec = &b;
  u.bn.backward_range = backward_range_name(b.name);
  for (float** p : {&u.bn.mean, &u.bn.invstd, &u.bn.a, &u.bn.b, &u.bn.ka, &u.bn.kb, &u.bn.kc})
    arena_.request(*p, static_cast<std::size_t>(b.c));
}

void Trainer::setup() {
  const int n = opt_.batch;
  const std::size_t es = dtype_size(dt_);
  const auto flat = static_cast<std::size_t>(net_.flat_size);
  arena_.request(params32_, flat);
  arena_.request(momentum_, flat);
  arena_.request_bytes(grads_, flat * es);
  if (bf16_) arena_.request_bytes(shadow_, flat * 2);

  images_ = tensor(Shape{n, net_.cfg.in_channels, kernels::kImageSize, kernels::kImageSize});
  arena_.request_bytes(images_.data, images_.shape.count() * es);
  arena_.request(labels_, static_cast<std::size_t>(n));

  plan_unit(stem_, net_.stem, net_.stem_bn, false);
  blocks_ = std::vector<Block>(net_.blocks.size());
  std::int64_t max_count = stem_.conv_out.shape.count();
  std::size_t partials = kernels::bn_partials_bytes(stem_.conv_out.shape, layout_);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& b = blocks_[i];
    const BlockSpec& s = net_.blocks[i];
    b.spec = &s;
    b.backward_range = backward_range_name(s.name);
    plan_unit(b.u1, s.conv1, s.bn1, true);
    plan_unit(b.u2, s.conv2, s.bn2, true);
    if (s.projection) plan_unit(b.up, s.proj, s.bn_proj, true);
    const Shape out = b.u2.conv_out.shape;
    const Shape in{n, s.conv1.in_c, s.conv1.in_hw, s.conv1.in_hw};
    b.g = tensor(out);
    b.dh = tensor(b.u1.out.shape);
    b.dx = tensor(in);
    for (DeviceTensor* t : {&b.g, &b.dh, &b.dx}) arena_.request_bytes(t->data, t->shape.count() * es);
    max_count = std::max(max_count, out.count());
    partials = std::max(partials, kernels::bn_partials_bytes(out, layout_));
    partials = std::max(partials, kernels::bn_partials_bytes(out, Layout::nhwc));
  }
  partials = std::max(partials, kernels::bn_partials_bytes(stem_.conv_out.shape, Layout::nhwc));
  for (const ParamTensor& p : net_.params) {
    optimizer_tensor_ranges_.push_back(tensor_range_name("optimizer", p));
    allreduce_tensor_ranges_.push_back(tensor_range_name("all-reduce", p));
  }
  for (int bk = 0; bk < static_cast<int>(net_.buckets.size()); ++bk) {
    optimizer_bucket_ranges_.push_back(bucket_range_name("optimizer", bk));
    allreduce_bucket_ranges_.push_back(bucket_range_name("all-reduce", bk));
  }
  d_last_ = tensor(blocks_.back().u2.out.shape);
  arena_.request_bytes(d_last_.data, d_last_.shape.count() * es);

  const int classes = net_.cfg.classes;
  arena_.request_bytes(pooled_, static_cast<std::size_t>(n) * net_.fc_in * es);
  arena_.request_bytes(d_pooled_, static_cast<std::size_t>(n) * net_.fc_in * es);
  arena_.request(logits_, static_cast<std::size_t>(n) * classes);
  arena_.request(bias_full_, static_cast<std::size_t>(n) * classes);
  arena_.request_bytes(dlogits_, static_cast<std::size_t>(n) * classes * es);
  arena_.request(loss_, 1);
  arena_.request(correct_, 1);

  for (DeviceTensor* t : {&tmp1_, &tmp2_, &gmask_, &tr0_, &tr1_, &tr2_}) {
    *t = tensor(stem_.conv_out.shape);  // the largest activation; shapes are set where used
    arena_.request_bytes(t->data, static_cast<std::size_t>(max_count) * es);
  }
  arena_.request_bytes(reinterpret_cast<void*&>(bn_partials_), partials);
  arena_.request_bytes(cublas_ws_, kCublasWorkspace);

  if (opt_.data == DataMode::synthetic) {
    arena_.request(dataset_, static_cast<std::size_t>(kSyntheticImages) * kernels::kRecordBytes);
  } else {
    for (auto*& s : staging_) arena_.request(s, static_cast<std::size_t>(n) * kernels::kRecordBytes);
  }
  arena_.commit("parameters, activations and data");

  init_parameters();
  choose_algorithms();
  workspace_bytes_ = 0;
  for (const Unit* u : {&stem_}) workspace_bytes_ = std::max(workspace_bytes_, u->conv.plan.workspace_bytes());
  for (const Block& b : blocks_)
    for (const Unit* u : {&b.u1, &b.u2, &b.up})
      if (u->conv.spec) workspace_bytes_ = std::max(workspace_bytes_, u->conv.plan.workspace_bytes());
  arena_.request_bytes(cudnn_ws_, std::max<std::size_t>(workspace_bytes_, 256));
  arena_.commit("the cuDNN workspace");
  CUBLAS_CHECK(cublasSetWorkspace(cublas_.get(), cublas_ws_, kCublasWorkspace));
  if (opt_.precision == Precision::tf32) CUBLAS_CHECK(cublasSetMathMode(cublas_.get(), CUBLAS_TF32_TENSOR_OP_MATH));

  if (opt_.data == DataMode::synthetic) kernels::synthetic_dataset(dataset_, opt_.seed, 0, kSyntheticImages, main_);
  CUDA_CHECK(cudaStreamSynchronize(main_));
}

void Trainer::init_parameters() {
  const std::vector<float> canonical = init_params(net_, opt_.seed);
  const std::vector<float> stored = params_to_layout(net_, canonical, layout_);
  CUDA_CHECK(cudaMemcpy(params32_, stored.data(), stored.size() * sizeof(float), cudaMemcpyHostToDevice));
  if (bf16_) kernels::cast_f32_to_bf16(params32_, shadow_, net_.flat_size, main_);
  CUDA_CHECK(cudaStreamSynchronize(main_));
}

const void* Trainer::weight(int param) const {
  const std::int64_t off = net_.params[param].offset;
  return bf16_ ? static_cast<const void*>(static_cast<const std::uint16_t*>(shadow_) + off)
               : static_cast<const void*>(params32_ + off);
}

void* Trainer::grad(int param) const {
  return static_cast<char*>(grads_) + net_.params[param].offset * static_cast<std::int64_t>(dtype_size(dt_));
}

void Trainer::choose_algorithms() {
  // Measured once on the real buffers, with a temporary workspace that is
  // freed before training; the kept workspace is the largest chosen need.
  void* ws = nullptr;
  CUDA_CHECK(cudaMalloc(&ws, kFindWorkspace));
  auto choose = [&](Unit& u, const DeviceTensor& x, const DeviceTensor* dx) {
    Conv& c = u.conv;
    void* in = c.explicit_pad ? c.padded.data : x.data;
    void* din = !c.need_data_grad ? nullptr : (c.explicit_pad ? c.padded_grad.data : dx->data);
    c.plan.choose_algorithms(cudnn_.get(), in, const_cast<void*>(weight(c.spec->weight)), u.conv_out.data, din,
                             grad(c.spec->weight), c.need_data_grad, ws, kFindWorkspace);
  };
  try {
    choose(stem_, images_, nullptr);
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      Block& b = blocks_[i];
      const DeviceTensor& in = i == 0 ? stem_.out : blocks_[i - 1].u2.out;
      choose(b.u1, in, &b.dx);
      choose(b.u2, b.u1.out, &b.dh);
      if (b.spec->projection) choose(b.up, in, &b.dx);
    }
  } catch (...) {
    cudaFree(ws);
    throw;
  }
  CUDA_CHECK(cudaFree(ws));
  // The search wrote garbage into activations and gradients; parameters are
  // only read by it. Gradients are fully rewritten every step.
}

// ---- [SECTION] data ----------------------------------------------------------------

void Trainer::start_data() {
  if (opt_.data == DataMode::synthetic) return;
  HostLoader::Config cfg;
  cfg.batch = opt_.batch;
  cfg.rank = ctx_.rank;
  cfg.world = ctx_.world;
  cfg.seed = opt_.seed;
  cfg.slots = 4;
  cfg.threads = 2;
  // Pinned slots so the copies are true async DMA (pageable copies are
  // staged through a driver buffer and can synchronise).
  SlotMemory mem{[this](std::size_t bytes) {
                   slot_memory_.push_back(std::make_unique<PinnedBuffer>(bytes));
                   return slot_memory_.back()->get();
                 },
                 [](void*) {}};
  loader_ = std::make_unique<HostLoader>(*ctx_.host_data, cfg, std::move(mem));
  prefetch(0);
}

// Starts the copy of step's batch into staging_[step % 2] on the copy stream.
void Trainer::prefetch(std::int64_t step) {
  const int k = static_cast<int>(step % 2);
  const std::uint8_t* slot = loader_->acquire(step);
  // The staging buffer must be free: the augment kernel of step - 2 read it.
  CUDA_CHECK(cudaStreamWaitEvent(copy_, *consumed_[k], 0));
  CUDA_CHECK(cudaMemcpyAsync(staging_[k], slot, static_cast<std::size_t>(opt_.batch) * kernels::kRecordBytes,
                             cudaMemcpyHostToDevice, copy_));
  CUDA_CHECK(cudaEventRecord(*copied_[k], copy_));
  prefetched_ = step;
}

void Trainer::data_phase(std::int64_t step) {
  NvtxRange range("data");
  const auto s32 = static_cast<std::uint32_t>(step);
  if (opt_.data == DataMode::synthetic) {
    kernels::augment(dataset_, kSyntheticImages, opt_.seed, s32, static_cast<std::uint32_t>(ctx_.rank), images_,
                     labels_, main_);
    return;
  }
  const int k = static_cast<int>(step % 2);
  CUDA_CHECK(cudaStreamWaitEvent(main_, *copied_[k], 0));
  kernels::augment(staging_[k], 0, opt_.seed, s32, static_cast<std::uint32_t>(ctx_.rank), images_, labels_, main_);
  CUDA_CHECK(cudaEventRecord(*consumed_[k], main_));
  // The copy finished long ago (it was issued a step earlier); the slot can
  // go back to the loaders, then the next batch starts copying.
  CUDA_CHECK(cudaEventSynchronize(*copied_[k]));
  loader_->release(step);
  prefetch(step + 1);
}

// ---- [SECTION] batch norm ------------------------------------------------------------
// One BN layer in every variant (see options.h):
//   statistics  naive: one block per channel; transpose: NCHW -> NHWC, parallel
//               reduction, apply in NHWC, back to NCHW; fused: parallel reduction
//   apply       broadcast: per-channel vectors materialised, then elementwise
//               kernels; fused: one kernel (with residual + ReLU if --bn fused)

void Trainer::bn_forward(Bn& bn, const DeviceTensor& x, const DeviceTensor& y, const void* residual, bool relu) {
  NvtxRange range(bn.spec->name.c_str());  // its transposes, broadcasts, residual add and ReLU included
  const Shape s = x.shape;
  const bool transpose = opt_.bn == BnMode::transpose;
  DeviceTensor src = x, dst = y;
  if (transpose) {
    src = DeviceTensor{tr0_.data, dt_, Layout::nhwc, s};
    dst = DeviceTensor{tr1_.data, dt_, Layout::nhwc, s};
    kernels::transpose_nchw_to_nhwc(dt_, x.data, src.data, s, main_);
  }
  const BnReduction r = opt_.bn == BnMode::naive ? BnReduction::naive : BnReduction::parallel;
  kernels::bn_forward_stats(r, src, param32(bn.spec->gamma), param32(bn.spec->beta), bn.mean, bn.invstd, bn.a, bn.b,
                            bn_partials_, main_);
  if (opt_.bias == BiasMode::broadcast) {
    const DeviceTensor full{tmp1_.data, dt_, src.layout, s};
    kernels::broadcast_channel(bn.a, full, main_);
    kernels::elementwise_mul(dt_, src.data, full.data, dst.data, s.count(), main_);
    kernels::broadcast_channel(bn.b, full, main_);
    kernels::elementwise_add(dt_, dst.data, full.data, dst.data, s.count(), main_);
  } else if (fused_act_) {
    kernels::bn_forward_apply(src, bn.a, bn.b, residual, relu, dst, main_);
  } else {
    kernels::bn_forward_apply(src, bn.a, bn.b, nullptr, false, dst, main_);
  }
  if (transpose) kernels::transpose_nhwc_to_nchw(dt_, dst.data, y.data, s, main_);
  if (!fused_act_) {
    if (residual) kernels::residual_add(dt_, y.data, residual, y.data, s.count(), main_);
    if (relu) kernels::relu_forward(dt_, y.data, y.data, s.count(), main_);
  }
}

// dy: gradient of the unit's output; relu_y: the output if the unit ends in a
// ReLU (else null); x: BN's input. Writes dx and, if g_out is non-null, the
// ReLU-masked gradient there (the shortcut's gradient).
void Trainer::bn_backward(Bn& bn, const DeviceTensor& dy, const void* relu_y, const DeviceTensor& x,
                          const DeviceTensor& dx, void* g_out) {
  NvtxRange range(bn.backward_range.c_str());
  const Shape s = x.shape;
  DeviceTensor g = dy;
  const void* mask = relu_y;
  if (relu_y && !fused_act_) {
    // Unfused: the ReLU's backward is its own kernel.
    g = DeviceTensor{g_out ? g_out : gmask_.data, dt_, layout_, s};
    kernels::relu_backward(dt_, dy.data, relu_y, g.data, s.count(), main_);
    mask = nullptr;
  }
  const bool transpose = opt_.bn == BnMode::transpose;
  DeviceTensor gs = g, xs = x, dxs = dx;
  if (transpose) {
    gs = DeviceTensor{tr0_.data, dt_, Layout::nhwc, s};
    xs = DeviceTensor{tr1_.data, dt_, Layout::nhwc, s};
    dxs = DeviceTensor{tr2_.data, dt_, Layout::nhwc, s};
    kernels::transpose_nchw_to_nhwc(dt_, g.data, gs.data, s, main_);
    kernels::transpose_nchw_to_nhwc(dt_, x.data, xs.data, s, main_);
  }
  const BnReduction r = opt_.bn == BnMode::naive ? BnReduction::naive : BnReduction::parallel;
  kernels::bn_backward_reduce(r, gs, mask, xs, bn.mean, bn.invstd, param32(bn.spec->gamma), dt_, grad(bn.spec->gamma),
                              grad(bn.spec->beta), bn.ka, bn.kb, bn.kc, bn_partials_, main_);
  if (opt_.bias == BiasMode::broadcast) {
    // dx = ka * g + kb * x + kc, one broadcast tensor per coefficient.
    const DeviceTensor full{tmp1_.data, dt_, xs.layout, s};
    kernels::broadcast_channel(bn.ka, full, main_);
    kernels::elementwise_mul(dt_, gs.data, full.data, dxs.data, s.count(), main_);
    kernels::broadcast_channel(bn.kb, full, main_);
    kernels::elementwise_mul(dt_, xs.data, full.data, tmp2_.data, s.count(), main_);
    kernels::elementwise_add(dt_, dxs.data, tmp2_.data, dxs.data, s.count(), main_);
    kernels::broadcast_channel(bn.kc, full, main_);
    kernels::elementwise_add(dt_, dxs.data, full.data, dxs.data, s.count(), main_);
  } else {
    kernels::bn_backward_apply(gs, mask, xs, bn.ka, bn.kb, bn.kc, dxs, fused_act_ ? g_out : nullptr, main_);
  }
  if (transpose) kernels::transpose_nhwc_to_nchw(dt_, dxs.data, dx.data, s, main_);
}

// ---- [SECTION] forward / backward ----------------------------------------------------

void Trainer::conv_forward(Conv& c, const DeviceTensor& x, const DeviceTensor& y) {
  NvtxRange range(c.spec->name.c_str());  // with its explicit padding copy, if any
  const void* in = x.data;
  if (c.explicit_pad) {
    kernels::pad_forward(x, c.padded, c.pad, main_);
    in = c.padded.data;
  }
  c.plan.forward(cudnn_.get(), in, weight(c.spec->weight), y.data, cudnn_ws_);
}

// Weight gradient, and the input gradient into dx (added to it when
// accumulate) unless dx is null.
void Trainer::conv_backward(Conv& c, const DeviceTensor& x, const DeviceTensor& dy, const DeviceTensor* dx,
                            bool accumulate) {
  NvtxRange range(c.backward_range.c_str());
  c.plan.backward_filter(cudnn_.get(), c.explicit_pad ? c.padded.data : x.data, dy.data, grad(c.spec->weight),
                         cudnn_ws_);
  if (!dx) return;
  if (c.explicit_pad) {
    c.plan.backward_data(cudnn_.get(), dy.data, weight(c.spec->weight), c.padded_grad.data, false, cudnn_ws_);
    kernels::pad_backward(c.padded_grad, *dx, c.pad, accumulate, main_);
  } else {
    c.plan.backward_data(cudnn_.get(), dy.data, weight(c.spec->weight), dx->data, accumulate, cudnn_ws_);
  }
}

void Trainer::wait_stage_update(int stage) {
  // Overlapped update, eager mode: this stage's weights must be updated by the
  // previous step before they are read. (A graph replays whole steps in
  // order, and its capture joins every stream, so it needs no wait.)
  if (opt_.update == UpdateMode::overlap && !capturing_ && !graph_.ready())
    CUDA_CHECK(cudaStreamWaitEvent(main_, *updated_[stage], 0));
}

void Trainer::forward() {
  NvtxRange range("forward");
  wait_stage_update(0);
  conv_forward(stem_.conv, images_, stem_.conv_out);
  bn_forward(stem_.bn, stem_.conv_out, stem_.out, nullptr, true);
  const DeviceTensor* x = &stem_.out;
  for (Block& b : blocks_) {
    if (b.spec->stage > 0 && b.spec->projection) wait_stage_update(b.spec->stage);
    NvtxRange block_range(b.spec->name.c_str());
    conv_forward(b.u1.conv, *x, b.u1.conv_out);
    bn_forward(b.u1.bn, b.u1.conv_out, b.u1.out, nullptr, true);
    const void* shortcut = x->data;
    if (b.spec->projection) {
      conv_forward(b.up.conv, *x, b.up.conv_out);
      bn_forward(b.up.bn, b.up.conv_out, b.up.out, nullptr, false);
      shortcut = b.up.out.data;
    }
    conv_forward(b.u2.conv, b.u1.out, b.u2.conv_out);
    bn_forward(b.u2.bn, b.u2.conv_out, b.u2.out, shortcut, true);
    x = &b.u2.out;
  }
  // Classifier: pooled [n x c] times W^T [c x classes] (row-major), by cuBLAS
  // in column-major terms logits^T = W^T' * pooled^T.
  const int n = opt_.batch, c = net_.fc_in, k = net_.cfg.classes;
  {
    NvtxRange range_pool("avgpool");
    kernels::avgpool_forward(*x, pooled_, main_);
  }
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t t = bf16_ ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t ct = opt_.precision == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float* bias = param32(net_.fc_bias);
  {
    NvtxRange range_fc("fc");
    CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, k, n, c, &one, weight(net_.fc_weight), t, c,
                              pooled_, t, c, &zero, logits_, CUDA_R_32F, k, ct, CUBLAS_GEMM_DEFAULT));
    if (opt_.bias == BiasMode::broadcast) {
      kernels::broadcast_bias(bias, bias_full_, n, k, main_);
      kernels::elementwise_add(DType::f32, logits_, bias_full_, logits_, std::int64_t{n} * k, main_);
      bias = nullptr;
    }
  }
  // The loss kernel also writes the logits' gradient: there is no loss.backward.
  NvtxRange range_loss("loss");
  kernels::softmax_xent(logits_, bias, labels_, n, k, dt_, dlogits_, loss_, correct_, main_);
}

void Trainer::backward() {
  NvtxRange range("backward");
  const int n = opt_.batch, c = net_.fc_in, k = net_.cfg.classes;
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t t = bf16_ ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t ct = opt_.precision == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  {
    NvtxRange range_fc("fc.backward");
    kernels::column_sums(dt_, dlogits_, n, k, grad(net_.fc_bias), main_);
    // dW^T [c x k] = pooled^T [c x n] * dlogits [n x k]
    CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, c, k, n, &one, pooled_, t, c, dlogits_, t, k,
                              &zero, grad(net_.fc_weight), t, c, ct, CUBLAS_GEMM_DEFAULT));
    // dpooled^T [c x n] = W^T [c x k] * dlogits^T [k x n]
    CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, c, n, k, &one, weight(net_.fc_weight), t, c,
                              dlogits_, t, k, &zero, d_pooled_, t, c, ct, CUBLAS_GEMM_DEFAULT));
  }
  {
    NvtxRange range_pool("avgpool.backward");
    kernels::avgpool_backward(d_pooled_, d_last_, main_);
  }

  for (std::size_t i = blocks_.size(); i-- > 0;) {
    Block& b = blocks_[i];
    const DeviceTensor& in = i == 0 ? stem_.out : blocks_[i - 1].u2.out;
    const DeviceTensor& dy = i + 1 < blocks_.size() ? blocks_[i + 1].dx : d_last_;
    const bool identity = !b.spec->projection;
    {
      NvtxRange block_range(b.backward_range.c_str());
      // u2: y = relu(bn2(c2) + shortcut). g (the masked gradient) is also the
      // shortcut's gradient: for an identity shortcut, fused kernels write it
      // straight into dx and conv1's data gradient is added on top.
      void* g_out = (identity && fused_act_) ? b.dx.data : b.g.data;
      bn_backward(b.u2.bn, dy, b.u2.out.data, b.u2.conv_out, b.u2.d_conv_out, g_out);
      conv_backward(b.u2.conv, b.u1.out, b.u2.d_conv_out, &b.dh, false);
      bn_backward(b.u1.bn, b.dh, b.u1.out.data, b.u1.conv_out, b.u1.d_conv_out, nullptr);
      if (identity) {
        conv_backward(b.u1.conv, in, b.u1.d_conv_out, &b.dx, fused_act_);
        if (!fused_act_) kernels::residual_add(dt_, b.dx.data, b.g.data, b.dx.data, b.dx.shape.count(), main_);
      } else {
        const DeviceTensor g{b.g.data, dt_, layout_, b.u2.conv_out.shape};
        bn_backward(b.up.bn, g, nullptr, b.up.conv_out, b.up.d_conv_out, nullptr);
        conv_backward(b.up.conv, in, b.up.d_conv_out, &b.dx, false);
        conv_backward(b.u1.conv, in, b.u1.d_conv_out, &b.dx, true);
      }
    }
    // The first block of a stage closes that stage's gradients (the
    // classifier's belong to the last stage's bucket).
    if (b.spec->stage > 0 && b.spec->projection) bucket_ready(b.spec->stage);
  }
  bn_backward(stem_.bn, blocks_.front().dx, stem_.out.data, stem_.conv_out, stem_.d_conv_out, nullptr);
  conv_backward(stem_.conv, images_, stem_.d_conv_out, nullptr, false);
  bucket_ready(0);
}

// ---- [SECTION] all-reduce, optimizer ------------------------------------------------

void Trainer::sgd_bucket(int bucket, cudaStream_t s) {
  const Bucket& u = net_.buckets[bucket];
  const kernels::SgdHyper h{opt_.lr, opt_.momentum, opt_.weight_decay};
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt_));
  kernels::sgd_momentum(params32_ + u.begin, momentum_ + u.begin, dt_, static_cast<char*>(grads_) + u.begin * es,
                        bf16_ ? static_cast<std::uint16_t*>(shadow_) + u.begin : nullptr, u.end - u.begin, h, true, s);
}

// A stage's gradients are final on main_.
void Trainer::bucket_ready(int bucket) {
  if (opt_.allreduce != AllReduceMode::bucketed) return;
  const Bucket& u = net_.buckets[bucket];
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt_));
  void* data = static_cast<char*>(grads_) + u.begin * es;
  {
    NvtxRange range("all-reduce");
    NvtxRange bucket_range(allreduce_bucket_ranges_[bucket].c_str());
    CUDA_CHECK(cudaEventRecord(*grads_ready_[bucket], main_));
    CUDA_CHECK(cudaStreamWaitEvent(comm_, *grads_ready_[bucket], 0));
    NCCL_CHECK(ncclAllReduce(data, data, static_cast<std::size_t>(u.end - u.begin), bf16_ ? ncclBfloat16 : ncclFloat32,
                             ncclAvg, ctx_.comm, comm_));
    CUDA_CHECK(cudaEventRecord(*reduced_[bucket], comm_));
  }
  if (opt_.update == UpdateMode::overlap) {
    NvtxRange range("optimizer");
    NvtxRange bucket_range(optimizer_bucket_ranges_[bucket].c_str());
    CUDA_CHECK(cudaStreamWaitEvent(update_, *reduced_[bucket], 0));
    sgd_bucket(bucket, update_);
    CUDA_CHECK(cudaEventRecord(*updated_[bucket], update_));
  }
}

void Trainer::finish_step() {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(dt_));
  if (opt_.allreduce == AllReduceMode::end) {
    // The report's pattern: wait for everything, then one all-reduce per
    // tensor on the compute stream, then wait again. (Inside a graph capture
    // host syncs are impossible; the stream order is kept.)
    if (!capturing_) CUDA_CHECK(cudaDeviceSynchronize());
    {
      NvtxRange range("all-reduce");
      for (std::size_t i = 0; i < net_.params.size(); ++i) {
        const ParamTensor& p = net_.params[i];
        NvtxRange tensor_range(allreduce_tensor_ranges_[i].c_str());
        void* data = static_cast<char*>(grads_) + p.offset * es;
        NCCL_CHECK(ncclAllReduce(data, data, static_cast<std::size_t>(p.count), bf16_ ? ncclBfloat16 : ncclFloat32,
                                 ncclAvg, ctx_.comm, main_));
      }
    }
    if (!capturing_) CUDA_CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < 4; ++s) CUDA_CHECK(cudaEventRecord(*reduced_[s], main_));
    if (opt_.update == UpdateMode::overlap)
      for (int s = 3; s >= 0; --s) {
        NvtxRange range("optimizer");
        NvtxRange bucket_range(optimizer_bucket_ranges_[s].c_str());
        CUDA_CHECK(cudaStreamWaitEvent(update_, *reduced_[s], 0));
        sgd_bucket(s, update_);
        CUDA_CHECK(cudaEventRecord(*updated_[s], update_));
      }
  }
  if (opt_.update == UpdateMode::sync) {
    if (opt_.allreduce == AllReduceMode::bucketed)
      for (int s = 0; s < 4; ++s) CUDA_CHECK(cudaStreamWaitEvent(main_, *reduced_[s], 0));
    NvtxRange range("optimizer");
    // One launch per tensor, as a framework's per-variable optimizer does.
    const kernels::SgdHyper h{opt_.lr, opt_.momentum, opt_.weight_decay};
    for (std::size_t i = 0; i < net_.params.size(); ++i) {
      const ParamTensor& p = net_.params[i];
      NvtxRange tensor_range(optimizer_tensor_ranges_[i].c_str());
      kernels::sgd_momentum(params32_ + p.offset, momentum_ + p.offset, dt_, static_cast<char*>(grads_) + p.offset * es,
                            bf16_ ? static_cast<std::uint16_t*>(shadow_) + p.offset : nullptr, p.count, h, false,
                            main_);
    }
  } else if (capturing_) {
    // A capture must end with every forked stream joined back.
    for (int s = 0; s < 4; ++s) CUDA_CHECK(cudaStreamWaitEvent(main_, *updated_[s], 0));
  }
}

// ---- [SECTION] the step ------------------------------------------------------------

void Trainer::step_body() {
  forward();
  backward();
  finish_step();
}

void Trainer::capture_graph() {
  // After an eager step: lazy module loading, cuBLAS/cuDNN initialisation and
  // NCCL's connection setup have happened, none of which may run in a capture.
  CUDA_CHECK(cudaDeviceSynchronize());
  ctx_.group->barrier();
  capturing_ = true;
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(main_, cudaStreamCaptureModeThreadLocal));
  try {
    step_body();
  } catch (...) {
    cudaStreamEndCapture(main_, &graph);
    if (graph) cudaGraphDestroy(graph);
    capturing_ = false;
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(main_, &graph));
  capturing_ = false;
  graph_.reset(graph);
  ctx_.group->barrier();
  print("cuda graph: one step = %zu nodes\n", graph_.nodes());
}

void Trainer::run_step(std::int64_t step) {
  NvtxRange range("step");
  data_phase(step);
  if (graph_.ready()) {
    graph_.launch(main_);
  } else {
    step_body();
  }
}

std::vector<float> Trainer::download_params_canonical() {
  std::vector<float> stored(net_.flat_size);
  CUDA_CHECK(cudaMemcpy(stored.data(), params32_, stored.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return params_from_layout(net_, stored, layout_);
}

std::vector<float> Trainer::download_grads_canonical() {
  std::vector<float> stored(net_.flat_size);
  if (bf16_) {
    std::vector<std::uint16_t> raw(net_.flat_size);
    CUDA_CHECK(cudaMemcpy(raw.data(), grads_, raw.size() * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < raw.size(); ++i) stored[i] = kernels::ref::bf16_to_float(raw[i]);
  } else {
    CUDA_CHECK(cudaMemcpy(stored.data(), grads_, stored.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return params_from_layout(net_, stored, layout_);
}

float Trainer::read_loss(int* correct) {
  auto* host = static_cast<char*>(readback_.get());
  CUDA_CHECK(cudaMemcpyAsync(host, loss_, sizeof(float), cudaMemcpyDeviceToHost, main_));
  CUDA_CHECK(cudaMemcpyAsync(host + 8, correct_, sizeof(int), cudaMemcpyDeviceToHost, main_));
  CUDA_CHECK(cudaStreamSynchronize(main_));
  float loss;
  std::memcpy(&loss, host, sizeof(float));
  if (correct) std::memcpy(correct, host + 8, sizeof(int));
  return loss;
}

// --check-sync: the all-reduced gradients of the step just run, hashed on
// every rank and compared. All-reduce must leave the very same bits
// everywhere (NCCL computes each element once and copies it), or the ranks'
// parameters drift apart. Every rank calls this after every step.
bool Trainer::grads_in_sync() {
  CUDA_CHECK(cudaDeviceSynchronize());
  grad_bytes_.resize(static_cast<std::size_t>(net_.flat_size) * dtype_size(dt_));
  CUDA_CHECK(cudaMemcpy(grad_bytes_.data(), grads_, grad_bytes_.size(), cudaMemcpyDeviceToHost));
  return ctx_.group->all_equal(fnv1a(grad_bytes_.data(), grad_bytes_.size()));
}

// ---- [SECTION] run and verify --------------------------------------------------------

// --profile: the timed steps only (warmup, algorithm search and graph capture
// stay out of the trace). CUPTI has one subscriber per process, so with one
// thread per GPU rank 0 starts and stops it for all; under mpirun every
// process writes its own file (the capture library expands %r to the rank).
bool Trainer::start_profile() {
#if defined(GPUSCOPE_HAVE_CAPTURE)
  bool ok = true;
  if (ctx_.rank == 0 || ctx_.group_per_process) {
    capture::Options copt;
    copt.output = opt_.profile_path;
    const capture::Summary s = capture::start(copt);
    ok = s.ok;
    if (!ok) std::fprintf(stderr, "resnet-train: error: --profile: %s\n", s.message.c_str());
  }
  // Every rank learns whether rank 0 (or every process) managed to start.
  return ctx_.group->all_equal(ok ? 1 : 0) && ok;
#else
  return false;
#endif
}

void Trainer::stop_profile() {
#if defined(GPUSCOPE_HAVE_CAPTURE)
  ctx_.group->barrier();
  if (ctx_.rank == 0 || ctx_.group_per_process) {
    const capture::Summary s = capture::stop();
    std::printf("profile: %s (%s; %llu kernels, %llu dropped records)\n", s.output.c_str(), s.message.c_str(),
                static_cast<unsigned long long>(s.kernels), static_cast<unsigned long long>(s.dropped_records));
    std::fflush(stdout);
  }
#endif
}

int Trainer::train() {
  using Clock = std::chrono::steady_clock;
  const double per_image_flops = 3.0 * net_.forward_flops_per_image();
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx_.device));
  print("resnet-train: %s\n", opt_.describe().c_str());
  print("gpus: %d x %s; network: %lld parameters, %.1f MFLOP/image forward; cuDNN %zu, NCCL %d\n", ctx_.world,
        prop.name, static_cast<long long>(net_.parameter_count), net_.forward_flops_per_image() / 1e6,
        cudnnGetVersion(), NCCL_VERSION_CODE);
  start_data();

  const std::int64_t total = std::int64_t{opt_.warmup} + opt_.steps;
  float first_loss = 0, last_loss = 0;
  int last_correct = 0;
  std::int64_t sync_checked = 0, sync_mismatch_step = -1;  // --check-sync
  Clock::time_point t0{}, window_start{};
  double timed_seconds = 0;
  std::int64_t window_steps = 0;
  for (std::int64_t step = 0; step < total; ++step) {
    if (step == opt_.warmup) {
      CUDA_CHECK(cudaDeviceSynchronize());
      if (!opt_.profile_path.empty() && !start_profile()) return 2;
      ctx_.group->barrier();
      t0 = window_start = Clock::now();
    }
    run_step(step);
    if (opt_.check_sync && !grads_in_sync()) {
      if (sync_mismatch_step < 0) sync_mismatch_step = step;
    } else if (opt_.check_sync) {
      ++sync_checked;
    }
    if (step == 0) {
      first_loss = read_loss();
      print("step 0: loss %.4f\n", first_loss);
      if (opt_.graphs) capture_graph();
    }
    if (step >= opt_.warmup) {
      ++window_steps;
      const bool last = step + 1 == total;
      if (window_steps == opt_.log_every || last) {
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto now = Clock::now();
        const double secs = std::chrono::duration<double>(now - window_start).count();
        last_loss = read_loss(&last_correct);
        const double per_gpu = static_cast<double>(window_steps) * opt_.batch / secs;
        print("step %lld: %.0f img/s per GPU, %.0f img/s total, %.3f ms/step, loss %.4f, accuracy %.3f\n",
              static_cast<long long>(step + 1), per_gpu, per_gpu * ctx_.world, 1e3 * secs / window_steps, last_loss,
              static_cast<double>(last_correct) / opt_.batch);
        window_start = now;
        window_steps = 0;
      }
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  timed_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!opt_.profile_path.empty()) stop_profile();

  // Every rank must hold the same parameters after the same all-reduced steps.
  std::vector<float> params(net_.flat_size);
  CUDA_CHECK(cudaMemcpy(params.data(), params32_, params.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const bool in_sync = ctx_.group->all_equal(fnv1a(params.data(), params.size() * sizeof(float)));

  const double per_gpu = static_cast<double>(opt_.steps) * opt_.batch / timed_seconds;
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  print(
      "memory: GPU arena %.1f MiB (activations %.1f, cuDNN workspace %.1f), device in use %.1f MiB; host RSS %.1f "
      "MiB\n",
      arena_.total_bytes() / 1048576.0, activation_bytes_ / 1048576.0, workspace_bytes_ / 1048576.0,
      (total_b - free_b) / 1048576.0, host_rss_mib());
  if (loader_)
    print("input pipeline: %lld of %lld batches were not ready when needed\n",
          static_cast<long long>(loader_->stalls()), static_cast<long long>(total));
  print("ranks in sync: %s\n", in_sync ? "yes" : "NO");
  if (opt_.check_sync) {
    if (sync_mismatch_step < 0)
      print("gradients bit-identical across %d rank%s after every step: yes (%lld steps checked)\n", ctx_.world,
            ctx_.world == 1 ? "" : "s", static_cast<long long>(sync_checked));
    else
      print("gradients bit-identical across %d ranks after every step: NO (first difference after step %lld)\n",
            ctx_.world, static_cast<long long>(sync_mismatch_step));
  }
  print(
      "summary: preset=%s gpus=%d batch=%d steps=%d img/s per GPU=%.0f total=%.0f step ms=%.3f "
      "model TFLOP/s per GPU=%.2f loss %.4f -> %.4f\n",
      opt_.preset.c_str(), ctx_.world, opt_.batch, opt_.steps, per_gpu, per_gpu * ctx_.world,
      1e3 * timed_seconds / opt_.steps, per_gpu * per_image_flops / 1e12, first_loss, last_loss);
  if (!std::isfinite(last_loss)) {
    print("resnet-train: error: the loss is not finite\n");
    return 1;
  }
  return in_sync && sync_mismatch_step < 0 ? 0 : 1;
}

int Trainer::verify() {
  if (ctx_.world != 1) throw GpuError("--verify runs on one GPU: use --gpus 1");
  print("resnet-train --verify: %s\n", opt_.describe().c_str());
  start_data();
  // Step 0 eagerly (it also updates the parameters once), then — with graphs —
  // step 1 through the captured graph, checked against the CPU reference at
  // the parameters and on the batch step 1 actually used.
  run_step(0);
  if (opt_.graphs) capture_graph();
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> params = download_params_canonical();
  data_phase(1);
  CUDA_CHECK(cudaStreamSynchronize(main_));
  const Shape is = images_.shape;
  std::vector<float> images(is.count());
  if (bf16_) {
    std::vector<std::uint16_t> raw(is.count());
    CUDA_CHECK(cudaMemcpy(raw.data(), images_.data, raw.size() * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < raw.size(); ++i) images[i] = kernels::ref::bf16_to_float(raw[i]);
  } else {
    CUDA_CHECK(cudaMemcpy(images.data(), images_.data, images.size() * 4, cudaMemcpyDeviceToHost));
  }
  images = kernels::ref::relayout<float>(images, is, layout_, Layout::nchw);
  std::vector<int> labels(opt_.batch);
  CUDA_CHECK(cudaMemcpy(labels.data(), labels_, labels.size() * sizeof(int), cudaMemcpyDeviceToHost));
  if (graph_.ready())
    graph_.launch(main_);
  else
    step_body();
  CUDA_CHECK(cudaDeviceSynchronize());
  const float loss = read_loss();
  const std::vector<float> grads = download_grads_canonical();

  const auto ref = reference_forward_backward<double>(net_, std::vector<double>(params.begin(), params.end()),
                                                      std::vector<double>(images.begin(), images.end()), labels);
  // Tolerances: fp32 differs from the fp64 reference only by cuDNN's
  // algorithms' rounding; TF32 keeps 10 mantissa bits, bf16 8, through 20
  // layers of batch norm.
  const double tol_loss = opt_.precision == Precision::fp32 ? 1e-4 : (opt_.precision == Precision::tf32 ? 1e-2 : 3e-2);
  const double tol_grad = opt_.precision == Precision::fp32 ? 2e-3 : (opt_.precision == Precision::tf32 ? 5e-2 : 1e-1);
  const double loss_err = std::abs(loss - ref.loss) / std::abs(ref.loss);
  bool ok = loss_err <= tol_loss;
  print("loss: GPU %.6f, reference %.6f, relative error %.2e (tolerance %.0e)\n", loss, ref.loss, loss_err, tol_loss);
  double worst = 0;
  std::string worst_name;
  for (const ParamTensor& p : net_.params) {
    double num = 0, den = 0;
    for (std::int64_t i = p.offset; i < p.offset + p.count; ++i) {
      const double d = grads[i] - ref.grads[i];
      num += d * d;
      den += ref.grads[i] * ref.grads[i];
    }
    const double err = std::sqrt(num) / (std::sqrt(den) + 1e-12);
    if (err > worst) worst = err, worst_name = p.name;
    const bool bad = !(err <= tol_grad);
    ok = ok && !bad;
    print("  %-32s relative L2 error %.2e%s\n", p.name.c_str(), err, bad ? "  <-- exceeds tolerance" : "");
  }
  print("verify: %s (worst gradient %s %.2e, tolerance %.0e)\n", ok ? "PASS" : "FAIL", worst_name.c_str(), worst,
        tol_grad);
  return ok ? 0 : 1;
}

}  // namespace

int run_rank(const Options& opt, const RankContext& ctx) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  Trainer trainer(opt, ctx);
  return opt.verify ? trainer.verify() : trainer.train();
}

}  // namespace gpuscope::resnet
