// The kernel references against closed forms, adjoint identities and finite
// differences. These are what the GPU kernels are checked against
// (workload_kernel_check on the GPU machine), so they must be right first.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernels/data.h"
#include "kernels/reference/batchnorm.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/data.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/linear.h"
#include "kernels/reference/pad.h"
#include "kernels/reference/pool.h"
#include "kernels/reference/sgd.h"
#include "kernels/reference/softmax_xent.h"
#include "kernels/reference/transpose.h"
#include "tests/workload/test_util.h"

namespace gpuscope::kernels {
namespace {

using testing::dot;
using testing::expect_gradient;
using testing::random_vector;
using V = std::vector<double>;

constexpr Layout kLayouts[] = {Layout::nchw, Layout::nhwc};

TEST(Layout, OffsetAndChannelAgree) {
  const Shape s{2, 3, 4, 5};
  for (Layout l : kLayouts) {
    std::set<std::int64_t> seen;
    for (int n = 0; n < s.n; ++n)
      for (int c = 0; c < s.c; ++c)
        for (int h = 0; h < s.h; ++h)
          for (int w = 0; w < s.w; ++w) {
            const std::int64_t i = offset(s, l, n, c, h, w);
            EXPECT_EQ(channel_of(i, s, l), c);
            seen.insert(i);
          }
    EXPECT_EQ(static_cast<std::int64_t>(seen.size()), s.count());
    EXPECT_EQ(*seen.rbegin(), s.count() - 1);
    for (int c = 0; c < s.c; ++c)
      for (std::int64_t j = 0; j < s.per_channel(); ++j) EXPECT_EQ(channel_of(channel_element(s, l, c, j), s, l), c);
  }
}

TEST(PadReference, ForwardPlacesInteriorAndZeroBorder) {
  const Shape s{2, 3, 4, 5};
  const Padding2d p{0, 1, 2, 1};  // asymmetric, like TensorFlow's SAME for stride 2
  for (Layout l : kLayouts) {
    const V x = random_vector(s.count(), 1);
    const V xp = ref::pad_forward<double>(x, s, l, p);
    const Shape ps = padded(s, p);
    ASSERT_EQ(ps.h, 5);
    ASSERT_EQ(ps.w, 8);
    double border = 0;
    for (int n = 0; n < s.n; ++n)
      for (int c = 0; c < s.c; ++c)
        for (int h = 0; h < ps.h; ++h)
          for (int w = 0; w < ps.w; ++w) {
            const bool inside = h >= p.top && h < p.top + s.h && w >= p.left && w < p.left + s.w;
            const double v = xp[offset(ps, l, n, c, h, w)];
            if (inside)
              EXPECT_EQ(v, x[offset(s, l, n, c, h - p.top, w - p.left)]);
            else
              border += std::abs(v);
          }
    EXPECT_EQ(border, 0.0);
  }
}

TEST(PadReference, BackwardIsTheAdjointAndAccumulates) {
  const Shape s{2, 3, 4, 4};
  const Padding2d p{1, 1, 1, 1};
  for (Layout l : kLayouts) {
    const V x = random_vector(s.count(), 2);
    const V y = random_vector(padded(s, p).count(), 3);
    V dx(s.count(), 0.0);
    ref::pad_backward<double>(y, s, l, p, dx, false);
    // <pad(x), y> == <x, pad^T(y)>: the backward is exactly the gradient.
    EXPECT_NEAR(dot(ref::pad_forward<double>(x, s, l, p), y), dot(x, dx), 1e-12);
    V acc = x;
    ref::pad_backward<double>(y, s, l, p, acc, true);
    for (std::size_t i = 0; i < acc.size(); ++i) EXPECT_DOUBLE_EQ(acc[i], x[i] + dx[i]);
  }
}

TEST(ElementwiseReference, BroadcastChannelFollowsLayout) {
  const Shape s{2, 3, 2, 2};
  const V v{10, 20, 30};
  for (Layout l : kLayouts) {
    const V out = ref::broadcast_channel<double>(v, s, l);
    for (int n = 0; n < s.n; ++n)
      for (int c = 0; c < s.c; ++c)
        for (int h = 0; h < s.h; ++h)
          for (int w = 0; w < s.w; ++w) EXPECT_EQ(out[offset(s, l, n, c, h, w)], v[c]);
  }
  const V b = ref::broadcast_bias<double>(V{1, 2}, 3);
  EXPECT_EQ(b, (V{1, 2, 1, 2, 1, 2}));
}

TEST(ElementwiseReference, ReluAndResidual) {
  const V x{-2, -0.5, 0, 0.5, 3};
  const V y = ref::relu_forward<double>(x);
  EXPECT_EQ(y, (V{0, 0, 0, 0.5, 3}));
  const V dy{1, 2, 3, 4, 5};
  EXPECT_EQ(ref::relu_backward<double>(dy, y), (V{0, 0, 0, 4, 5}));
  EXPECT_EQ(ref::residual_add<double>(x, dy), (V{-1, 1.5, 3, 4.5, 8}));
  EXPECT_EQ(ref::elementwise_mul<double>(x, dy), (V{-2, -1, 0, 2, 15}));
}

TEST(TransposeReference, RoundTripAndPlacement) {
  const Shape s{2, 3, 4, 5};
  const V x = random_vector(s.count(), 4);
  const V t = ref::transpose_nchw_to_nhwc<double>(x, s);
  EXPECT_EQ(ref::transpose_nhwc_to_nchw<double>(t, s), x);
  EXPECT_EQ(t[offset(s, Layout::nhwc, 1, 2, 3, 4)], x[offset(s, Layout::nchw, 1, 2, 3, 4)]);
  EXPECT_EQ(t[1], x[s.hw()]);  // NHWC element 1 is channel 1 of pixel 0
}

TEST(BatchNormReference, ForwardNormalisesEachChannel) {
  const Shape s{4, 3, 5, 5};
  for (Layout l : kLayouts) {
    V x = random_vector(s.count(), 5, -3, 7);
    const V gamma{1.5, 0.5, 2.0}, beta{0.1, -0.2, 0.3};
    const auto st = ref::bn_stats<double>(x, s, l);
    V a, b;
    ref::bn_forward_coefficients<double>(st, gamma, beta, a, b);
    const V y = ref::bn_forward_apply<double>(x, s, l, a, b, {}, false);
    for (int c = 0; c < s.c; ++c) {
      double sum = 0, sumsq = 0;
      for (std::int64_t j = 0; j < s.per_channel(); ++j) {
        const double v = y[channel_element(s, l, c, j)];
        sum += v;
        sumsq += v * v;
      }
      const double mean = sum / s.per_channel();
      const double var = sumsq / s.per_channel() - mean * mean;
      EXPECT_NEAR(mean, beta[c], 1e-9);
      // Normalised variance is gamma^2 * var / (var + eps).
      EXPECT_NEAR(var, gamma[c] * gamma[c], 1e-3 * gamma[c] * gamma[c]);
    }
  }
}

// The full backward (with the optional ReLU and residual) against finite
// differences of a random linear functional of the output.
void check_bn_backward(Layout l, bool relu, bool residual) {
  const Shape s{3, 2, 3, 3};
  V x = random_vector(s.count(), 6, -2, 2);
  V gamma{1.3, 0.7}, beta{0.2, -0.1};
  V res = residual ? random_vector(s.count(), 7) : V{};
  const V w = random_vector(s.count(), 8);
  auto forward = [&] {
    const auto st = ref::bn_stats<double>(x, s, l);
    V a, b;
    ref::bn_forward_coefficients<double>(st, gamma, beta, a, b);
    return ref::bn_forward_apply<double>(x, s, l, a, b, res, relu);
  };
  auto loss = [&] { return dot(forward(), w); };
  const V y = forward();
  const auto st = ref::bn_stats<double>(x, s, l);
  const auto bb = ref::bn_backward<double>(w, y, x, s, l, st, gamma, relu);
  const std::string tag =
      std::string(l == Layout::nchw ? "nchw" : "nhwc") + (relu ? "+relu" : "") + (residual ? "+residual" : "");
  expect_gradient(x, loss, bb.dx, 1e-6, ("dx " + tag).c_str());
  expect_gradient(gamma, loss, bb.dgamma, 1e-6, ("dgamma " + tag).c_str());
  expect_gradient(beta, loss, bb.dbeta, 1e-6, ("dbeta " + tag).c_str());
  if (residual) expect_gradient(res, loss, bb.g, 1e-6, ("dresidual " + tag).c_str());
}

TEST(BatchNormReference, BackwardMatchesFiniteDifferences) {
  for (Layout l : kLayouts)
    for (bool relu : {false, true})
      for (bool residual : {false, true}) check_bn_backward(l, relu, residual);
}

TEST(PoolReference, AverageAndAdjoint) {
  const Shape s{2, 3, 4, 4};
  for (Layout l : kLayouts) {
    const V x = random_vector(s.count(), 9);
    const V y = ref::avgpool_forward<double>(x, s, l);
    double sum = 0;
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 4; ++w) sum += x[offset(s, l, 1, 2, h, w)];
    EXPECT_NEAR(y[1 * 3 + 2], sum / 16, 1e-12);
    const V dy = random_vector(y.size(), 10);
    EXPECT_NEAR(dot(y, dy), dot(x, ref::avgpool_backward<double>(dy, s, l)), 1e-12);
  }
}

TEST(SoftmaxXentReference, UniformLogitsAndGradient) {
  const int rows = 4, k = 10;
  const std::vector<int> labels{0, 3, 9, 3};
  const auto uniform = ref::softmax_xent<double>(V(rows * k, 0.25), {}, labels, k);
  EXPECT_NEAR(uniform.loss, std::log(10.0), 1e-12);
  V logits = random_vector(rows * k, 11, -3, 3);
  V bias = random_vector(k, 12);
  const auto r = ref::softmax_xent<double>(logits, bias, labels, k);
  auto loss = [&] { return ref::softmax_xent<double>(logits, bias, labels, k).loss; };
  expect_gradient(logits, loss, r.dlogits, 1e-7, "dlogits");
  // The bias gradient is the column sum of dlogits.
  expect_gradient(bias, loss, ref::column_sums<double>(r.dlogits, rows, k), 1e-7, "dbias");
  // Rows of dlogits sum to zero (softmax minus one-hot).
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (int j = 0; j < k; ++j) s += r.dlogits[i * k + j];
    EXPECT_NEAR(s, 0.0, 1e-12);
  }
}

TEST(SoftmaxXentReference, CountsCorrectPredictions) {
  V logits(2 * 3, 0.0);
  logits[0 * 3 + 2] = 5;  // row 0 predicts 2
  logits[1 * 3 + 0] = 5;  // row 1 predicts 0
  const std::vector<int> labels{2, 1};
  EXPECT_EQ(ref::softmax_xent<double>(logits, {}, labels, 3).correct, 1);
}

TEST(LinearReference, GradientsMatchFiniteDifferences) {
  const int rows = 3, in = 4, out = 5;
  V x = random_vector(rows * in, 13), w = random_vector(out * in, 14), b = random_vector(out, 15);
  const V wy = random_vector(rows * out, 16);
  auto loss = [&] { return dot(ref::linear_forward<double>(x, w, b, rows, in, out), wy); };
  V dx, dw, db;
  ref::linear_backward<double>(wy, x, w, rows, in, out, dx, dw, db);
  expect_gradient(x, loss, dx, 1e-8, "linear dx");
  expect_gradient(w, loss, dw, 1e-8, "linear dw");
  expect_gradient(b, loss, db, 1e-8, "linear db");
}

TEST(ConvReference, HandComputedCase) {
  // 1 image, 1 channel 3x3, one 2x2 filter of ones, stride 1, no padding:
  // each output is the sum of a 2x2 window.
  ref::ConvGeometry g;
  g.in = Shape{1, 1, 3, 3};
  g.out_c = 1;
  g.k = 2;
  const V x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const V y = ref::conv_forward<double>(x, V{1, 1, 1, 1}, g);
  EXPECT_EQ(y, (V{12, 16, 24, 28}));
  // 4x4 input 1..16, 3x3 ones, stride 2, TensorFlow-SAME padding (0 before,
  // 1 after): windows start at rows/cols 0 and 2, the second one hanging over
  // the zero border.
  g.in = Shape{1, 1, 4, 4};
  g.k = 3;
  g.stride = 2;
  g.pad = Padding2d{0, 1, 0, 1};
  EXPECT_EQ(g.out().h, 2);
  V x4(16);
  for (int i = 0; i < 16; ++i) x4[i] = i + 1;
  const V y2 = ref::conv_forward<double>(x4, V(9, 1.0), g);
  EXPECT_EQ(y2, (V{54, 45, 72, 54}));
}

TEST(ConvReference, GradientsMatchFiniteDifferences) {
  for (const Padding2d pad : {Padding2d{1, 1, 1, 1}, Padding2d{0, 1, 0, 1}, Padding2d{}}) {
    ref::ConvGeometry g;
    g.in = Shape{2, 3, 5, 5};
    g.out_c = 4;
    g.k = 3;
    g.stride = 2;
    g.pad = pad;
    V x = random_vector(g.in.count(), 17), w = random_vector(g.weight_count(), 18);
    const V wy = random_vector(g.out().count(), 19);
    auto loss = [&] { return dot(ref::conv_forward<double>(x, w, g), wy); };
    expect_gradient(x, loss, ref::conv_backward_data<double>(wy, w, g), 1e-8, "conv dx");
    expect_gradient(w, loss, ref::conv_backward_filter<double>(x, wy, g), 1e-8, "conv dw");
  }
}

TEST(SgdReference, TwoStepsClosedForm) {
  V w{1.0}, v{0.0};
  const V g{0.5};
  const ref::SgdConfig cfg{0.1f, 0.9f, 0.01f};
  ref::sgd_momentum<double>(w, v, g, cfg);
  const double lr = cfg.lr, mu = cfg.momentum, wd = cfg.weight_decay;
  const double v1 = 0.5 + wd * 1.0, w1 = 1.0 - lr * v1;
  EXPECT_NEAR(v[0], v1, 1e-12);
  EXPECT_NEAR(w[0], w1, 1e-12);
  ref::sgd_momentum<double>(w, v, g, cfg);
  const double v2 = mu * v1 + 0.5 + wd * w1;
  EXPECT_NEAR(v[0], v2, 1e-12);
  EXPECT_NEAR(w[0], w1 - lr * v2, 1e-12);
}

TEST(DataReference, ReflectIndex) {
  EXPECT_EQ(reflect_index(-1, 32), 1);
  EXPECT_EQ(reflect_index(-4, 32), 4);
  EXPECT_EQ(reflect_index(0, 32), 0);
  EXPECT_EQ(reflect_index(31, 32), 31);
  EXPECT_EQ(reflect_index(32, 32), 30);
  EXPECT_EQ(reflect_index(35, 32), 27);
}

TEST(DataReference, AugmentChoicesCoverTheRange) {
  std::set<int> dys, dxs;
  int flips = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const AugmentChoice a = augment_choice(7, 3, 0, static_cast<std::uint32_t>(i));
    dys.insert(a.dy);
    dxs.insert(a.dx);
    flips += a.flip;
  }
  EXPECT_EQ(dys.size(), 9u);
  EXPECT_EQ(*dys.begin(), -kCropPad);
  EXPECT_EQ(*dxs.rbegin(), kCropPad);
  EXPECT_NEAR(flips, n / 2, n / 10);
  // Different ranks see different augmentations of the same sample.
  int same = 0;
  for (int i = 0; i < 100; ++i) {
    const auto a = augment_choice(7, 3, 0, i), b = augment_choice(7, 3, 1, i);
    same += a.dx == b.dx && a.dy == b.dy && a.flip == b.flip;
  }
  EXPECT_LT(same, 10);
}

TEST(DataReference, AugmentIsACropOfTheReflectPaddedImage) {
  std::vector<std::uint8_t> rec(kRecordBytes);
  ref::synthetic_record(3, 42, rec.data());
  ref::AugmentArgs args;
  args.seed = 5;
  args.batch = 1;
  for (Layout l : kLayouts) {
    args.layout = l;
    args.channels = l == Layout::nhwc ? 8 : 3;
    std::vector<float> img;
    std::vector<int> labels;
    ref::augment<float>(rec, {}, args, img, labels);
    EXPECT_EQ(labels[0], rec[0]);
    const AugmentChoice a = augment_choice(5, 0, 0, 0);
    const Shape s{1, args.channels, 32, 32};
    for (int c = 0; c < args.channels; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) {
          float expect = 0;
          if (c < 3) {
            // Build the flipped, reflect-padded image explicitly and crop it.
            const int fx = a.flip ? 31 - x : x;
            const int sy = reflect_index(y + a.dy, 32), sx = reflect_index(fx + a.dx, 32);
            expect = normalize_pixel(rec[1 + (c * 32 + sy) * 32 + sx], c);
          }
          ASSERT_EQ(img[offset(s, l, 0, c, y, x)], expect) << c << "," << y << "," << x;
        }
  }
}

TEST(DataReference, SyntheticClassesDifferInColour) {
  // Mean red of class 0 (red) well above class 1 (green); labels uniform-ish.
  std::vector<std::uint8_t> rec(kRecordBytes);
  double red[kClasses] = {}, count[kClasses] = {};
  for (std::uint32_t i = 0; i < 2000; ++i) {
    ref::synthetic_record(1, i, rec.data());
    const int label = rec[0];
    ASSERT_LT(label, kClasses);
    double r = 0;
    for (int p = 0; p < 1024; ++p) r += rec[1 + p];
    red[label] += r / 1024;
    count[label] += 1;
  }
  for (int c = 0; c < kClasses; ++c) EXPECT_GT(count[c], 120) << c;
  EXPECT_GT(red[0] / count[0], red[1] / count[1] + 100);
}

}  // namespace
}  // namespace gpuscope::kernels
