// The network description and the whole-network CPU reference: geometry and
// parameter count of the report's net, gradients against finite differences,
// and a few training steps on the synthetic dataset that must lower the loss.
#include <gtest/gtest.h>

#include <numeric>

#include "kernels/reference/data.h"
#include "kernels/reference/sgd.h"
#include "tests/workload/test_util.h"
#include "workloads/resnet/cifar.h"
#include "workloads/resnet/net.h"
#include "workloads/resnet/reference_net.h"

namespace gpuscope::resnet {
namespace {

TEST(NetSpec, TheReportsNetwork) {
  const NetSpec net = build_net(NetConfig{});
  // Stem + 8 blocks x 2 convs + 3 projections = 20 convolutions.
  int convs = 0, bns = 0;
  for (const ParamTensor& p : net.params) {
    convs += p.kind == ParamKind::conv_weight;
    bns += p.kind == ParamKind::bn_gamma;
  }
  EXPECT_EQ(convs, 20);
  EXPECT_EQ(bns, 20);
  EXPECT_EQ(net.blocks.size(), 8u);
  EXPECT_EQ(net.blocks.back().conv2.out_hw, 4);
  EXPECT_EQ(net.fc_in, 128);
  // ~0.70 M parameters and ~70 MFLOP per image forward (research notes).
  EXPECT_NEAR(static_cast<double>(net.parameter_count), 0.70e6, 0.02e6);
  // Exactly PyTorch's count of the same network (tests/gpu/pytorch_baseline.py
  // prints it; tests/gpu/workload_check.sh insists on this number).
  EXPECT_EQ(net.parameter_count, 701466);
  EXPECT_NEAR(net.forward_flops_per_image(), 70.1e6, 1.5e6);
  EXPECT_EQ(net.flat_size % 64, 0);
}

TEST(NetSpec, BucketsTileTheFlatBufferInStageOrder) {
  const NetSpec net = build_net(NetConfig{});
  ASSERT_EQ(net.buckets.size(), 4u);
  EXPECT_EQ(net.buckets.front().begin, 0);
  EXPECT_EQ(net.buckets.back().end, net.flat_size);
  for (std::size_t b = 1; b < net.buckets.size(); ++b) EXPECT_EQ(net.buckets[b].begin, net.buckets[b - 1].end);
  for (std::size_t i = 0; i < net.params.size(); ++i) {
    const ParamTensor& p = net.params[i];
    const Bucket& u = net.buckets[p.bucket];
    EXPECT_GE(p.offset, u.begin) << p.name;
    EXPECT_LE(p.offset + p.count, u.end) << p.name;
    EXPECT_EQ(p.offset % 64, 0) << p.name;
    if (i > 0) {
      EXPECT_GE(p.offset, net.params[i - 1].offset + net.params[i - 1].count);
    }
  }
  EXPECT_EQ(net.params[net.fc_weight].bucket, 3);
  EXPECT_EQ(net.params[net.stem.weight].bucket, 0);
}

TEST(NetSpec, InitIsDeterministicAndPadsInputChannelsWithZeros) {
  NetConfig cfg;
  cfg.in_channels = 8;
  const NetSpec net = build_net(cfg);
  const auto a = init_params(net, 3), b = init_params(net, 3), c = init_params(net, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const ParamTensor& stem = net.params[net.stem.weight];
  double padded = 0, real = 0;
  for (int k = 0; k < stem.k; ++k)
    for (int ch = 0; ch < stem.c; ++ch)
      for (int r = 0; r < 9; ++r) (ch < 3 ? real : padded) += std::abs(a[stem.offset + (k * stem.c + ch) * 9 + r]);
  EXPECT_EQ(padded, 0.0);
  EXPECT_GT(real, 0.0);
  // He init: std of a conv layer ~ sqrt(2 / fan_in).
  const ParamTensor& w = net.params[net.blocks[7].conv2.weight];
  double sq = 0;
  for (std::int64_t i = 0; i < w.count; ++i) sq += a[w.offset + i] * a[w.offset + i];
  EXPECT_NEAR(std::sqrt(sq / w.count), std::sqrt(2.0 / (128 * 9)), 0.005);
}

TEST(NetSpec, LayoutPermutationRoundTrips) {
  const NetSpec net = build_net(NetConfig{});
  const auto p = init_params(net, 1);
  const auto nhwc = params_to_layout(net, p, Layout::nhwc);
  EXPECT_NE(nhwc, p);
  EXPECT_EQ(params_from_layout(net, nhwc, Layout::nhwc), p);
  // Element (k=1, c=2, r=0, s=1) of the stem in KRSC.
  const ParamTensor& st = net.params[net.stem.weight];
  EXPECT_EQ(nhwc[st.offset + ((1 * 3 + 0) * 3 + 1) * st.c + 2], p[st.offset + ((1 * st.c + 2) * 3 + 0) * 3 + 1]);
}

NetConfig tiny_config() {
  NetConfig cfg;
  cfg.widths[0] = 2, cfg.widths[1] = 3, cfg.widths[2] = 4, cfg.widths[3] = 4;
  cfg.image = 16;
  return cfg;
}

TEST(ReferenceNet, GradientsMatchFiniteDifferences) {
  for (int in_channels : {3, 4}) {
    NetConfig cfg = tiny_config();
    cfg.in_channels = in_channels;
    const NetSpec net = build_net(cfg);
    const int batch = 3;
    const auto p32 = init_params(net, 11);
    std::vector<double> params(p32.begin(), p32.end());
    // Perturb gamma/beta/bias away from their neat initial values.
    auto noise = testing::random_vector(params.size(), 12, -0.2, 0.2);
    for (std::size_t i = 0; i < params.size(); ++i) params[i] += noise[i];
    const auto images = testing::random_vector(static_cast<std::size_t>(batch) * in_channels * 16 * 16, 13);
    const std::vector<int> labels{1, 7, 3};
    const auto step = reference_forward_backward<double>(net, params, images, labels);
    EXPECT_GT(step.loss, 0.0);
    // A handful of coordinates of every tensor.
    std::vector<std::size_t> probe;
    for (const ParamTensor& t : net.params)
      for (std::int64_t i : {std::int64_t{0}, t.count / 2, t.count - 1}) probe.push_back(t.offset + i);
    std::sort(probe.begin(), probe.end());
    probe.erase(std::unique(probe.begin(), probe.end()), probe.end());
    auto loss = [&] { return reference_loss<double>(net, params, images, labels); };
    testing::expect_gradient(params, loss, step.grads, 2e-6, "network gradient", probe, 1e-5);
    // Alignment gaps in the flat buffer get no gradient.
    for (std::size_t i = 0; i + 1 < net.params.size(); ++i)
      for (std::int64_t j = net.params[i].offset + net.params[i].count; j < net.params[i + 1].offset; ++j)
        ASSERT_EQ(step.grads[j], 0.0);
  }
}

TEST(ReferenceNet, FloatAndDoubleAgree) {
  const NetSpec net = build_net(tiny_config());
  const auto p = init_params(net, 5);
  const auto img = testing::random_vector(2 * 3 * 16 * 16, 6);
  const std::vector<int> labels{4, 9};
  const auto d = reference_forward_backward<double>(net, std::vector<double>(p.begin(), p.end()), img, labels);
  const auto f = reference_forward_backward<float>(net, p, std::vector<float>(img.begin(), img.end()), labels);
  EXPECT_NEAR(f.loss, d.loss, 1e-5 * d.loss);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < d.grads.size(); ++i) {
    num += (f.grads[i] - d.grads[i]) * (f.grads[i] - d.grads[i]);
    den += d.grads[i] * d.grads[i];
  }
  EXPECT_LT(std::sqrt(num / den), 1e-4);
}

TEST(ReferenceNet, TrainingOnTheSyntheticDatasetLowersTheLoss) {
  NetConfig cfg;
  cfg.widths[0] = 4, cfg.widths[1] = 8, cfg.widths[2] = 16, cfg.widths[3] = 16;
  const NetSpec net = build_net(cfg);
  std::vector<float> params = init_params(net, 1), momentum(net.flat_size, 0.0f);
  const CifarDataset data = synthetic_dataset(1, 1024);
  // Batches as the trainer draws them (GPU-resident sampling + augmentation);
  // the loss is measured on one fixed held-out batch so batch-to-batch noise
  // cannot fake or hide progress.
  auto batch_of = [&](std::uint32_t seed, std::uint32_t step, int batch, std::vector<float>& images,
                      std::vector<int>& labels) {
    std::vector<std::uint32_t> idx(batch);
    for (int i = 0; i < batch; ++i)
      idx[i] =
          kernels::sample_index(seed, step, 0, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(data.count));
    kernels::ref::AugmentArgs args;
    args.seed = seed, args.step = step, args.batch = batch;
    kernels::ref::augment<float>(data.records, idx, args, images, labels);
  };
  std::vector<float> eval_images;
  std::vector<int> eval_labels;
  batch_of(99, 0, 64, eval_images, eval_labels);
  const double before = reference_loss<float>(net, params, eval_images, eval_labels);
  const int batch = 32, steps = 12;
  for (int step = 0; step < steps; ++step) {
    std::vector<float> images;
    std::vector<int> labels;
    batch_of(1, static_cast<std::uint32_t>(step), batch, images, labels);
    const auto r = reference_forward_backward<float>(net, params, images, labels);
    ASSERT_TRUE(std::isfinite(r.loss));
    kernels::ref::sgd_momentum<float>(params, momentum, r.grads, kernels::ref::SgdConfig{0.1f, 0.9f, 5e-4f});
  }
  const double after = reference_loss<float>(net, params, eval_images, eval_labels);
  EXPECT_NEAR(before, std::log(10.0), 0.7);
  EXPECT_LT(after, 0.85 * before) << "held-out loss " << before << " -> " << after;
}

}  // namespace
}  // namespace gpuscope::resnet
