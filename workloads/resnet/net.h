// The network of the report, described once as data: layer geometry,
// parameter tensors and their places in one flat parameter buffer, and the
// all-reduce buckets. The GPU trainer and the CPU reference both walk this.
//
//   stem   3x3 conv (in -> w0), BN, ReLU                         32 x 32
//   4 stages of basic blocks, widths w0..w3, 2 blocks each:      32, 16, 8, 4 px
//     y = relu( bn2(conv2( relu(bn1(conv1(x))) )) + shortcut(x) )
//     the first block of stages 2-4 has stride 2 and a 1x1 projection
//     shortcut (conv + BN); the others an identity shortcut
//   global average pool, fully connected -> 10 classes
//
// Every 3x3 convolution pads 1 on each side, stride 1 or 2 (PyTorch's
// convention): all switches compute the same function, and the PyTorch
// baseline is the same network. Convolutions have no bias (batch norm follows).
//
// The flat buffer keeps parameters in forward order, each tensor starting on a
// 64-element boundary, so every stage's parameters (and gradients) form one
// contiguous range: a bucket all-reduced as soon as that stage's backward ends.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/common.h"

namespace gpuscope::resnet {

using kernels::Layout;

struct NetConfig {
  int widths[4] = {16, 32, 64, 128};
  int blocks_per_stage = 2;
  int image = 32;       // input height = width
  int in_channels = 3;  // stored input channels; channels >= 3 are zero (tensor-core padding)
  int classes = 10;
  int batch = 128;  // per GPU
};

enum class ParamKind : std::uint8_t { conv_weight, bn_gamma, bn_beta, fc_weight, fc_bias };

struct ParamTensor {
  std::string name;  // "stage2.block0.conv1.weight", …
  ParamKind kind = ParamKind::conv_weight;
  std::int64_t offset = 0;  // in the flat buffer (elements)
  std::int64_t count = 0;
  int k = 0, c = 0, r = 1, s = 1;  // conv: KCRS; fc weight: k = out, c = in; bn/bias: k = channels
  int bucket = 0;
};

struct ConvSpec {
  std::string name;  // its layer ("stage2.block0.conv1"): the NVTX range around it, its weight's prefix
  int in_c = 0, out_c = 0, k = 3, stride = 1, pad = 1;
  int in_hw = 0, out_hw = 0;
  int weight = -1;  // index into NetSpec::params
};

struct BnSpec {
  std::string name;  // "stage2.block0.bn1"
  int c = 0, hw = 0;
  int gamma = -1, beta = -1;
};

struct BlockSpec {
  std::string name;  // "stage2.block0"
  int stage = 0;
  ConvSpec conv1, conv2;
  BnSpec bn1, bn2;
  bool projection = false;
  ConvSpec proj;  // 1x1, stride 2 (projection blocks only)
  BnSpec bn_proj;
};

struct Bucket {
  std::int64_t begin = 0, end = 0;      // flat range
  int first_param = 0, last_param = 0;  // inclusive param indices
};

struct NetSpec {
  NetConfig cfg;
  ConvSpec stem;
  BnSpec stem_bn;
  std::vector<BlockSpec> blocks;
  int fc_in = 0, fc_weight = -1, fc_bias = -1;
  std::vector<ParamTensor> params;
  std::int64_t flat_size = 0;        // elements, including alignment gaps
  std::int64_t parameter_count = 0;  // real parameters
  std::vector<Bucket> buckets;       // one per stage; stem joins stage 1, the classifier stage 4

  // 2 x multiply-adds of convolutions and classifier for one image's forward
  // pass; a training step costs about 3x this.
  double forward_flops_per_image() const;
};

NetSpec build_net(const NetConfig& cfg);

// ---- NVTX ranges of the layers ------------------------------------------------------
// The trainer marks every layer with an NVTX range named after it, so a
// capture's op table (docs/ops.md) has one row per layer. Forward, inside
// `forward`: "stem.conv", "stem.bn", each block ("stage1.block0") around its
// "….conv1", "….bn1", "….conv2", "….bn2" ("….proj", "….bn_proj" in projection
// blocks), then "avgpool", "fc", "loss". Backward, inside `backward`: the
// same names with ".backward" (the loss kernel writes its gradient in the
// forward pass: no "loss.backward"). The optimizer's and all-reduce's loops
// get one range per tensor or bucket inside theirs (optimizer_range_name).
inline constexpr const char* kBackwardSuffix = ".backward";
std::string backward_range_name(const std::string& layer);
// "optimizer.stage1.block0.conv1.weight" (a tensor) or "optimizer.stage1"
// (a bucket), and "all-reduce.…" alike: `what` is "optimizer" or "all-reduce".
std::string tensor_range_name(const std::string& what, const ParamTensor& p);
std::string bucket_range_name(const std::string& what, int bucket);
// Every layer range of a training step, forward then backward, each once.
std::vector<std::string> layer_range_names(const NetSpec& net);

// Deterministic initial parameters in the canonical layout (conv KCRS):
// He-normal convolutions, batch norm gamma 1 / beta 0, PyTorch's uniform
// classifier init; input channels >= 3 of the stem get zero weights.
std::vector<float> init_params(const NetSpec& net, std::uint32_t seed);

// Conv weights are KCRS in the canonical flat buffer; the NHWC trainer keeps
// them KRSC (cuDNN's NHWC filter format). Everything else is unchanged.
std::vector<float> params_to_layout(const NetSpec& net, std::span<const float> canonical, Layout layout);
std::vector<float> params_from_layout(const NetSpec& net, std::span<const float> stored, Layout layout);

}  // namespace gpuscope::resnet
