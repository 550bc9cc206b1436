// The bundled workload's network as a synthetic step program
// (SyntheticOptions::workload_shape): what resnet-train launches each step,
// with its kernel names and NVTX ranges, in the order its trainer issues them
// (workloads/resnet/trainer.cpp, docs/workload.md). The switches map to the
// options: a planted padding share is --padding explicit, a broadcast share
// --bias broadcast (with --bn naive), a transpose share --bn transpose,
// overlap_communication --allreduce bucketed, overlap_weight_update --update
// overlap; pageable_input and the host times are the report's job, not the
// workload's (it has no Python).
//
// [SECTION] Names and launch shapes
// [SECTION] The network
// [SECTION] The step program
// [SECTION] Entry point
#include <algorithm>
#include <string>
#include <vector>

#include "import/synthetic_program.h"

namespace gpuscope::detail::synth {

namespace {

// [SECTION] Names and launch shapes -------------------------------------------------------------

// As the CUDA 13 toolchain demangles them (tests/workload/kernel_names_test.cpp).
namespace wname {
#define GPUSCOPE_K "gpuscope::kernels::"
#define GPUSCOPE_SHAPE GPUSCOPE_K "Shape"
#define GPUSCOPE_LAYOUT GPUSCOPE_K "Layout"
constexpr const char* kPad =
    "void " GPUSCOPE_K "pad_nchw_kernel<float>(float const*, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_K "Padding2d)";
constexpr const char* kPadBackward =
    "void " GPUSCOPE_K "pad_nchw_backward_kernel<float>(float const*, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_K
    "Padding2d, bool)";
constexpr const char* kBroadcast =
    "void " GPUSCOPE_K "broadcast_channel_kernel<float>(float const*, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ")";
constexpr const char* kBroadcastBias = GPUSCOPE_K "broadcast_bias_kernel(float const*, float*, int, int)";
constexpr const char* kMul =
    "void " GPUSCOPE_K "elementwise_mul_kernel<float>(float const*, float const*, float*, long)";
constexpr const char* kAdd =
    "void " GPUSCOPE_K "elementwise_add_kernel<float>(float const*, float const*, float*, long)";
constexpr const char* kRelu = "void " GPUSCOPE_K "relu_forward_kernel<float>(float const*, float*, long)";
constexpr const char* kReluBackward =
    "void " GPUSCOPE_K "relu_backward_kernel<float>(float const*, float const*, float*, long)";
constexpr const char* kResidual =
    "void " GPUSCOPE_K "residual_add_kernel<float>(float const*, float const*, float*, long)";
constexpr const char* kToNhwc =
    "void " GPUSCOPE_K "transpose_nchw_to_nhwc_kernel<float>(float const*, float*, int, int)";
constexpr const char* kToNchw =
    "void " GPUSCOPE_K "transpose_nhwc_to_nchw_kernel<float>(float const*, float*, int, int)";
constexpr const char* kStatsNaive =
    "void " GPUSCOPE_K "bn_forward_naive_stats_kernel<float>(float const*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT
    ", double*)";
constexpr const char* kStatsNhwc =
    "void " GPUSCOPE_K "bn_forward_stats_nhwc_kernel<float>(float const*, " GPUSCOPE_SHAPE ", double*)";
constexpr const char* kStatsFinalize = "void " GPUSCOPE_K
                                       "bn_forward_finalize_kernel<float>(double const*, int, "
                                       "float const*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT
                                       ", float const*, float const*, float*, float*, float*, float*)";
constexpr const char* kApply = "void " GPUSCOPE_K
                               "bn_forward_apply_kernel<float>(float const*, float const*, "
                               "float const*, float const*, bool, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ")";
constexpr const char* kReduceNaive =
    "void " GPUSCOPE_K
    "bn_backward_naive_reduce_kernel<float>(float const*, "
    "float const*, float const*, float const*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ", double*)";
constexpr const char* kReduceNhwc = "void " GPUSCOPE_K
                                    "bn_backward_reduce_nhwc_kernel<float>(float const*, "
                                    "float const*, float const*, float const*, " GPUSCOPE_SHAPE ", double*)";
constexpr const char* kReduceFinalize =
    "void " GPUSCOPE_K "bn_backward_finalize_kernel<float>(double const*, int, " GPUSCOPE_SHAPE
    ", float const*, float const*, float const*, float*, float*, float*, float*, float*)";
constexpr const char* kApplyBackward =
    "void " GPUSCOPE_K
    "bn_backward_apply_kernel<float>(float const*, "
    "float const*, float const*, float const*, float const*, float const*, float*, float*, " GPUSCOPE_SHAPE
    ", " GPUSCOPE_LAYOUT ")";
constexpr const char* kPool =
    "void " GPUSCOPE_K "avgpool_forward_kernel<float>(float const*, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ")";
constexpr const char* kPoolBackward =
    "void " GPUSCOPE_K "avgpool_backward_kernel<float>(float const*, float*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ")";
constexpr const char* kLoss = "void " GPUSCOPE_K
                              "softmax_xent_kernel<float>(float const*, float const*, "
                              "int const*, int, int, float*, float*, int*)";
constexpr const char* kBiasGrad =
    "void " GPUSCOPE_K "fc_bias_grad_reduce_kernel<float>(float const*, int, int, float*)";
constexpr const char* kSgd = "void " GPUSCOPE_K
                             "sgd_momentum_kernel<float>(float*, float*, float const*, "
                             "__nv_bfloat16*, long, " GPUSCOPE_K "SgdHyper)";
constexpr const char* kSgdFlat = "void " GPUSCOPE_K
                                 "sgd_momentum_flat_kernel<float>(float*, float*, float const*, "
                                 "__nv_bfloat16*, long, " GPUSCOPE_K "SgdHyper)";
constexpr const char* kAugment =
    "void " GPUSCOPE_K
    "augment_crop_flip_kernel<float>(unsigned char const*, "
    "unsigned int, unsigned int, unsigned int, unsigned int, float*, int*, " GPUSCOPE_SHAPE ", " GPUSCOPE_LAYOUT ")";
#undef GPUSCOPE_LAYOUT
#undef GPUSCOPE_SHAPE
#undef GPUSCOPE_K
}  // namespace wname

constexpr LaunchShape kElementShape{{2048, 1, 1}, {256, 1, 1}, 16, 0, 0};
constexpr LaunchShape kChannelShape{{64, 1, 1}, {1024, 1, 1}, 40, 256, 0};  // naive: one block per channel
constexpr LaunchShape kChunkShape{{2, 256, 1}, {32, 8, 1}, 32, 2048, 0};    // NHWC: blocks per channel chunk
constexpr LaunchShape kSmallShape{{16, 1, 1}, {256, 1, 1}, 24, 0, 0};
constexpr LaunchShape kSgdShape{{256, 1, 1}, {256, 1, 1}, 32, 0, 0};

// [SECTION] The network -------------------------------------------------------------------------

// workloads/resnet/net.h: stem, 4 stages of 2 basic blocks (16, 32, 64, 128
// filters at 32, 16, 8, 4 px), the first block of stages 2-4 strided with a
// 1x1 projection; one all-reduce bucket per stage (the stem in the first,
// the classifier in the last).
struct Param {
  std::string name;
  std::int64_t count = 0;
  int stage = 0;
};
struct Conv {
  std::string name;
  int stage = 0;
  int k = 3;              // 3x3, or the 1x1 projection
  double work = 1;        // against a stride-1 3x3 convolution of its stage
  bool data_grad = true;  // the stem's input needs no gradient
};
struct Bn {
  std::string name;
  int stage = 0;
};
struct Block {
  std::string name;
  int stage = 0;
  Conv conv1, conv2, proj;
  Bn bn1, bn2, bn_proj;
  bool projection = false;
};
struct Net {
  Conv stem;
  Bn stem_bn;
  std::vector<Block> blocks;
  std::vector<Param> params;  // forward order, as the flat buffer holds them
};

Net resnet() {
  Net n;
  auto conv = [&](std::string name, int stage, int in_c, int out_c, int k, double work) {
    n.params.push_back({name + ".weight", std::int64_t{in_c} * out_c * k * k, stage});
    return Conv{std::move(name), stage, k, work, true};
  };
  auto bn = [&](std::string name, int stage, int c) {
    n.params.push_back({name + ".gamma", c, stage});
    n.params.push_back({name + ".beta", c, stage});
    return Bn{std::move(name), stage};
  };
  n.stem = conv("stem.conv", 0, 3, 16, 3, 3.0 / 16.0);
  n.stem.data_grad = false;
  n.stem_bn = bn("stem.bn", 0, 16);
  int in_c = 16;
  for (int stage = 0; stage < 4; ++stage)
    for (int i = 0; i < 2; ++i) {
      Block b;
      b.name = "stage" + std::to_string(stage + 1) + ".block" + std::to_string(i);
      b.stage = stage;
      const int out_c = 16 << stage;
      b.projection = stage > 0 && i == 0;
      b.conv1 = conv(b.name + ".conv1", stage, in_c, out_c, 3, b.projection ? 0.5 : 1.0);
      b.bn1 = bn(b.name + ".bn1", stage, out_c);
      b.conv2 = conv(b.name + ".conv2", stage, out_c, out_c, 3, 1.0);
      b.bn2 = bn(b.name + ".bn2", stage, out_c);
      if (b.projection) {
        b.proj = conv(b.name + ".proj", stage, in_c, out_c, 1, 1.0 / 18.0);
        b.bn_proj = bn(b.name + ".bn_proj", stage, out_c);
      }
      n.blocks.push_back(std::move(b));
      in_c = out_c;
    }
  n.params.push_back({"fc.weight", 10 * 128, 3});
  n.params.push_back({"fc.bias", 10, 3});
  return n;
}

// [SECTION] The step program --------------------------------------------------------------------

// Activations halve with each stage (channels double, pixels quarter), and
// so does the time of a memory-bound kernel.
double mem(int stage) { return 1.0 / static_cast<double>(1 << stage); }

class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(const SyntheticOptions& o) : o_(o), net_(resnet()) {
    pad_ = o.padding_share > 0;
    broadcast_ = o.broadcast_share > 0;
    transpose_ = o.transpose_share > 0;
    naive_ = broadcast_ && !transpose_;  // --preset seed's --bn naive; the tuned one reduces in parallel
    comm_ = o.gpus > 1;
    bucketed_ = comm_ && o.overlap_communication;
    streams();
  }

  Program build() {
    push(nullptr);  // "step"
    data();
    forward();
    backward();
    after_backward();
    p_.sync_index = p_.ops.size();
    if (o_.sync_every_step) {  // the host reads the loss
      Op s;
      s.kind = OpKind::sync;
      p_.ops.push_back(s);
    }
    pop();
    if (!p_.first_deferred) p_.first_deferred = p_.sync_index;
    p_.host_split = p_.sync_index;
    p_.layers = 20;
    p_.numbered_steps = false;
    p_.finish();
    return std::move(p_);
  }

 private:
  // Compute stream 7; the overlapped update's stream 8; pinned copies on 21,
  // bucketed all-reduces on 22 (only the streams this program uses).
  void streams() {
    auto add = [&](std::uint32_t id, const char* what) {
      p_.stream_ids.push_back(id);
      p_.stream_what.push_back(what);
      return static_cast<std::uint32_t>(p_.stream_ids.size() - 1);
    };
    add(kComputeStreamId0, "compute");
    p_.compute_streams = 1;
    update_stream_ = o_.overlap_weight_update ? add(kComputeStreamId0 + 1, "weight update") : 0;
    p_.copy_stream = o_.pageable_input ? 0 : add(kCopyStreamId, "H2D copies");
    p_.comm_stream = bucketed_ ? add(kCommStreamId, "NCCL") : 0;
    p_.streams = static_cast<std::uint32_t>(p_.stream_ids.size());
    p_.buckets = !comm_ ? 0 : bucketed_ ? 4 : static_cast<std::uint32_t>(net_.params.size());
  }

  // The batch: prepared on the host (input_wait_ns), then copied — pageable
  // and blocking on the compute stream, pinned on the copy stream, or (prefetch)
  // the next step's while this one runs — and augmented on the GPU.
  void data() {
    push("data");
    if (o_.input_wait_ns) host(o_.input_wait_ns);
    Op c;
    c.kind = o_.prefetch_input ? OpKind::prefetch_copy : OpKind::input_copy;
    c.blocking = o_.pageable_input;
    c.stream = static_cast<std::uint8_t>(p_.copy_stream);
    if (!o_.prefetch_input) p_.ops.push_back(c);
    kernel(wname::kAugment, kElementShape, us(15), kNotPlanted, 0, o_.pageable_input ? Wait::nothing : Wait::input);
    if (o_.prefetch_input) p_.ops.push_back(c);
    pop();
  }

  void forward() {
    push("forward");
    conv_forward(net_.stem, o_.overlap_weight_update ? 0 : -1);
    bn_forward(net_.stem_bn, false, true);
    for (const Block& b : net_.blocks) {
      push(b.name);
      conv_forward(b.conv1, b.projection && o_.overlap_weight_update ? b.stage : -1);
      bn_forward(b.bn1, false, true);
      if (b.projection) {
        conv_forward(b.proj);
        bn_forward(b.bn_proj, false, false);
      }
      conv_forward(b.conv2);
      bn_forward(b.bn2, true, true);
      pop();
    }
    push("avgpool");
    kernel(wname::kPool, kSmallShape, us(5));
    pop();
    push("fc");
    kernel(kname::kGemmForward, kGemmShape, us(6));
    if (broadcast_) {
      kernel(wname::kBroadcastBias, kSmallShape, us(3), kBroadcast);
      kernel(wname::kAdd, kSmallShape, us(3));
    }
    pop();
    push("loss");
    kernel(wname::kLoss, kSmallShape, us(4));
    pop();
    pop();
  }

  void backward() {
    push("backward");
    push("fc.backward");
    kernel(wname::kBiasGrad, kSmallShape, us(3));
    kernel(kname::kGemmBackwardWeight, kGemmShape, us(7)).feeds_bucket = bucketed_ ? 3 : -1;
    kernel(kname::kGemmBackwardData, kGemmShape, us(7));
    pop();
    push("avgpool.backward");
    kernel(wname::kPoolBackward, kSmallShape, us(6));
    pop();
    for (auto b = net_.blocks.rbegin(); b != net_.blocks.rend(); ++b) {
      push(b->name + ".backward");
      bn_backward(b->bn2, true);
      conv_backward(b->conv2);
      bn_backward(b->bn1, true);
      if (b->projection) {
        bn_backward(b->bn_proj, false);
        conv_backward(b->proj);
      }
      conv_backward(b->conv1);
      if (!b->projection && broadcast_) kernel(wname::kResidual, kElementShape, us(24 * mem(b->stage)));
      pop();
      if (b->projection) stage_done(b->stage);
    }
    bn_backward(net_.stem_bn, true);
    conv_backward(net_.stem);
    stage_done(0);
    pop();
  }

  // --allreduce bucketed: a stage's gradients are final, its all-reduce runs on
  // the NCCL stream; --update overlap: its weights are updated on their own
  // stream as soon as that all-reduce ends.
  void stage_done(int stage) {
    if (bucketed_) {
      push("all-reduce");
      push("all-reduce.stage" + std::to_string(stage + 1));
      comm(stage, p_.comm_stream, Wait::main_stream, stage_params(stage));
      pop();
      pop();
    }
    if (!o_.overlap_weight_update) return;
    push("optimizer");
    push("optimizer.stage" + std::to_string(stage + 1));
    Op& u = kernel(wname::kSgdFlat, kSgdShape, sgd_ns(stage_params(stage)), kNotPlanted,
                   static_cast<std::uint8_t>(update_stream_), comm_ ? Wait::bucket : Wait::main_stream);
    u.bucket = static_cast<std::int16_t>(comm_ ? stage : -1);
    u.updates = static_cast<std::int16_t>(stage);
    pop();
    pop();
  }

  // --allreduce end: wait for the GPU, one all-reduce per tensor on the compute
  // stream; --update sync: then one SGD kernel per tensor, behind the whole
  // all-reduce (everything from its range on waits for the all-reduce).
  void after_backward() {
    if (comm_ && !bucketed_) {
      Op s;
      s.kind = OpKind::sync;
      s.device_wide = true;
      p_.ops.push_back(s);
      push("all-reduce");
      for (std::size_t i = 0; i < net_.params.size(); ++i) {
        push("all-reduce." + net_.params[i].name);
        comm(static_cast<int>(i), 0, Wait::nothing, net_.params[i].count);
        pop();
      }
      pop();
    }
    if (o_.overlap_weight_update) return;
    p_.first_deferred = p_.ops.size();
    push("optimizer");
    for (std::size_t i = 0; i < net_.params.size(); ++i) {
      push("optimizer." + net_.params[i].name);
      kernel(wname::kSgd, kSgdShape, sgd_ns(net_.params[i].count), kNotPlanted, 0,
             i == 0 && bucketed_ ? Wait::all_buckets : Wait::nothing);
      pop();
    }
    pop();
  }

  // [pad] convolution (cuDNN); `stage_update`: the previous step's update of
  // that stage must be done first (--update overlap).
  void conv_forward(const Conv& c, int stage_update = -1) {
    push(c.name);
    const std::size_t first = p_.ops.size();
    if (pad_ && c.k == 3) kernel(wname::kPad, kElementShape, us(18 * mem(c.stage)), kPadding);
    const char* name = c.name == "stem.conv" ? kname::kConvFirst : kname::kFprop[std::min(2, c.stage)];
    kernel(name, kConvShape, us(c.k == 1 ? 12 : 110 * c.work));
    if (stage_update >= 0) {
      p_.ops[first].wait = Wait::updated;
      p_.ops[first].bucket = static_cast<std::int16_t>(stage_update);
    }
    pop();
  }

  // Weight gradient, data gradient [and the crop of the padded one].
  void conv_backward(const Conv& c) {
    push(c.name + ".backward");
    const int k = std::min(2, c.stage);
    const double w = c.k == 1 ? 1.0 / 9.0 : c.work;
    kernel(kname::kWgrad[k], kConvShape, us(140 * w)).feeds_bucket =
        static_cast<std::int16_t>(bucketed_ ? c.stage : -1);
    if (c.data_grad) {
      kernel(kname::kDgrad[k], kConvShape, us(120 * w));
      if (pad_ && c.k == 3) kernel(wname::kPadBackward, kElementShape, us(18 * mem(c.stage)), kPadding);
    }
    pop();
  }

  // Batch norm's per-channel reduction (the statistics forward, the gradient
  // sums backward): the naive or the NHWC kernel, then its finalize kernel.
  void channel_reduction(const char* naive, const char* nhwc, const char* finalize, int naive_us, int nhwc_us,
                         double m) {
    kernel(naive_ ? naive : nhwc, naive_ ? kChannelShape : kChunkShape,
           us((naive_ ? naive_us : nhwc_us) * m * o_.normalization_slowdown));
    kernel(finalize, kSmallShape, us(3));
  }

  // A per-channel tensor materialised by a broadcast kernel, then the
  // elementwise kernel `op` that reads it (--bias broadcast).
  void broadcast_then(const char* op, double m) {
    kernel(wname::kBroadcast, kElementShape, us(20 * m), kBroadcast);
    kernel(op, kElementShape, us(22 * m));
  }

  // Statistics, then scale and shift: by materialised per-channel tensors and
  // elementwise kernels (--bias broadcast), or one apply kernel with the
  // residual add and ReLU folded in; with --bn transpose, in NHWC between
  // two transposes.
  void bn_forward(const Bn& bn, bool residual, bool relu) {
    push(bn.name);
    const double m = mem(bn.stage), slow = o_.normalization_slowdown;
    if (transpose_) kernel(wname::kToNhwc, kElementShape, us(20 * m), kTranspose);
    channel_reduction(wname::kStatsNaive, wname::kStatsNhwc, wname::kStatsFinalize, 40, 18, m);
    if (broadcast_) {
      broadcast_then(wname::kMul, m);
      broadcast_then(wname::kAdd, m);
    } else {
      kernel(wname::kApply, kElementShape, us(25 * m * slow));
    }
    if (transpose_) kernel(wname::kToNchw, kElementShape, us(20 * m), kTranspose);
    if (broadcast_ && residual) kernel(wname::kResidual, kElementShape, us(24 * m));
    if (broadcast_ && relu) kernel(wname::kRelu, kElementShape, us(22 * m));
    pop();
  }

  void bn_backward(const Bn& bn, bool relu) {
    push(bn.name + ".backward");
    const double m = mem(bn.stage), slow = o_.normalization_slowdown;
    if (relu && broadcast_) kernel(wname::kReluBackward, kElementShape, us(26 * m));
    if (transpose_) {
      kernel(wname::kToNhwc, kElementShape, us(20 * m), kTranspose);
      kernel(wname::kToNhwc, kElementShape, us(20 * m), kTranspose);
    }
    channel_reduction(wname::kReduceNaive, wname::kReduceNhwc, wname::kReduceFinalize, 50, 25, m);
    if (broadcast_) {  // dx = ka * g + kb * x + kc
      broadcast_then(wname::kMul, m);
      broadcast_then(wname::kMul, m);
      kernel(wname::kAdd, kElementShape, us(22 * m));
      broadcast_then(wname::kAdd, m);
    } else {
      kernel(wname::kApplyBackward, kElementShape, us(30 * m * slow));
    }
    if (transpose_) kernel(wname::kToNchw, kElementShape, us(20 * m), kTranspose);
    pop();
  }

  // A ring all-reduce of `elements` fp32 gradients over a PCIe-class
  // interconnect: 15 µs of latency plus 2 (G-1)/G of the bytes at 20 GB/s.
  void comm(int bucket, std::uint32_t stream, Wait wait, std::int64_t elements) {
    Op c;
    c.kind = OpKind::comm;
    c.stream = static_cast<std::uint8_t>(stream);
    c.bucket = static_cast<std::int16_t>(bucket);
    c.wait = wait;
    c.name = kname::kAllReduce;
    c.shape = &kNcclShape;
    const double g = o_.gpus;
    c.base_ns = us(15) + static_cast<TimeNs>(static_cast<double>(elements) * 4.0 * 2.0 * (g - 1) / g / 20.0);
    p_.ops.push_back(c);
  }
  // SGD with momentum reads weight, gradient and momentum and writes two of them.
  static TimeNs sgd_ns(std::int64_t elements) { return us(5) + elements * 2 / 3; }
  std::int64_t stage_params(int stage) const {
    std::int64_t n = 0;
    for (const Param& p : net_.params) n += p.stage == stage ? p.count : 0;
    return n;
  }

  Op& kernel(const char* name, const LaunchShape& shape, TimeNs ns, Planted planted = kNotPlanted,
             std::uint8_t stream = 0, Wait wait = Wait::nothing) {
    return p_.ops.emplace_back(kernel_op(name, shape, ns, stream, planted, wait));
  }
  void host(TimeNs ns) {
    Op op;
    op.kind = OpKind::host;
    op.base_ns = ns;
    p_.ops.push_back(op);
  }
  void push(const char* name) {
    Op op;
    op.kind = OpKind::push;
    op.name = name;
    p_.ops.push_back(op);
  }
  void push(std::string name) { push(p_.keep(std::move(name))); }
  void pop() {
    Op op;
    op.kind = OpKind::pop;
    p_.ops.push_back(op);
  }

  const SyntheticOptions& o_;
  const Net net_;
  Program p_;
  std::uint32_t update_stream_ = 0;
  bool pad_ = false, broadcast_ = false, transpose_ = false, naive_ = false, comm_ = false, bucketed_ = false;
};

}  // namespace

// [SECTION] Entry point -------------------------------------------------------------------------

Program build_workload_program(const SyntheticOptions& o) { return WorkloadBuilder(o).build(); }

}  // namespace gpuscope::detail::synth
