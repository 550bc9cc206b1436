#include "workloads/resnet/reference_net.h"

#include "kernels/reference/batchnorm.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/linear.h"
#include "kernels/reference/pool.h"
#include "kernels/reference/softmax_xent.h"

namespace gpuscope::resnet {

namespace {

namespace ref = kernels::ref;
using kernels::Padding2d;
using kernels::Shape;
constexpr Layout kL = Layout::nchw;

template <class S>
struct Net {
  const NetSpec& spec;
  std::span<const S> params;
  int batch;

  std::span<const S> param(int index) const {
    const ParamTensor& p = spec.params[index];
    return params.subspan(p.offset, p.count);
  }
  ref::ConvGeometry geometry(const ConvSpec& c) const {
    ref::ConvGeometry g;
    g.in = Shape{batch, c.in_c, c.in_hw, c.in_hw};
    g.out_c = c.out_c;
    g.k = c.k;
    g.stride = c.stride;
    g.pad = Padding2d{c.pad, c.pad, c.pad, c.pad};
    return g;
  }
  Shape out_shape(const ConvSpec& c) const { return Shape{batch, c.out_c, c.out_hw, c.out_hw}; }
};

// Saved activations of one conv + BN (+ residual) (+ ReLU) unit.
template <class S>
struct Unit {
  std::vector<S> conv_out;  // BN input
  ref::BnStats<S> stats;
  std::vector<S> out;  // after BN (+ residual) (+ ReLU)
};

template <class S>
Unit<S> unit_forward(const Net<S>& net, const ConvSpec& c, const BnSpec& b, std::span<const S> x,
                     std::span<const S> residual, bool relu) {
  Unit<S> u;
  u.conv_out = ref::conv_forward<S>(x, net.param(c.weight), net.geometry(c));
  const Shape s = net.out_shape(c);
  u.stats = ref::bn_stats<S>(u.conv_out, s, kL);
  std::vector<S> a, bb;
  ref::bn_forward_coefficients<S>(u.stats, net.param(b.gamma), net.param(b.beta), a, bb);
  u.out = ref::bn_forward_apply<S>(u.conv_out, s, kL, a, bb, residual, relu);
  return u;
}

// Backward through BN (+ ReLU) and the conv. Writes parameter gradients into
// grads; returns the gradient of the unit's input x (empty if !need_dx) and,
// through g, the gradient after the ReLU mask (the residual input's gradient).
template <class S>
std::vector<S> unit_backward(const Net<S>& net, const ConvSpec& c, const BnSpec& b, std::span<const S> x,
                             const Unit<S>& u, std::span<const S> dy, bool relu, std::vector<S>& grads,
                             std::vector<S>* g, bool need_dx) {
  const Shape s = net.out_shape(c);
  ref::BnBackward<S> bb = ref::bn_backward<S>(dy, u.out, u.conv_out, s, kL, u.stats, net.param(b.gamma), relu);
  auto put = [&](int index, const std::vector<S>& v) {
    const ParamTensor& p = net.spec.params[index];
    for (std::int64_t i = 0; i < p.count; ++i) grads[p.offset + i] += v[i];
  };
  put(b.gamma, bb.dgamma);
  put(b.beta, bb.dbeta);
  put(c.weight, ref::conv_backward_filter<S>(x, bb.dx, net.geometry(c)));
  if (g) *g = bb.g;
  if (!need_dx) return {};
  return ref::conv_backward_data<S>(bb.dx, net.param(c.weight), net.geometry(c));
}

template <class S>
struct BlockActs {
  std::vector<S> input;
  Unit<S> u1, u2, up;
};

}  // namespace

template <class S>
ReferenceStep<S> reference_forward_backward(const NetSpec& spec, std::span<const S> params, std::span<const S> images,
                                            std::span<const int> labels) {
  const int batch = static_cast<int>(labels.size());
  ref::require(static_cast<std::int64_t>(params.size()) == spec.flat_size, "reference net: params size");
  ref::require(static_cast<std::int64_t>(images.size()) ==
                   std::int64_t{batch} * spec.cfg.in_channels * spec.cfg.image * spec.cfg.image,
               "reference net: images size");
  Net<S> net{spec, params, batch};

  // ---- forward
  Unit<S> stem = unit_forward<S>(net, spec.stem, spec.stem_bn, images, {}, true);
  std::vector<BlockActs<S>> acts(spec.blocks.size());
  std::span<const S> x = stem.out;
  for (std::size_t i = 0; i < spec.blocks.size(); ++i) {
    const BlockSpec& blk = spec.blocks[i];
    BlockActs<S>& a = acts[i];
    a.input.assign(x.begin(), x.end());
    a.u1 = unit_forward<S>(net, blk.conv1, blk.bn1, a.input, {}, true);
    std::span<const S> shortcut = a.input;
    if (blk.projection) {
      a.up = unit_forward<S>(net, blk.proj, blk.bn_proj, a.input, {}, false);
      shortcut = a.up.out;
    }
    a.u2 = unit_forward<S>(net, blk.conv2, blk.bn2, a.u1.out, shortcut, true);
    x = a.u2.out;
  }
  const ConvSpec& last = spec.blocks.back().conv2;
  const Shape last_shape{batch, last.out_c, last.out_hw, last.out_hw};
  std::vector<S> pooled = ref::avgpool_forward<S>(x, last_shape, kL);
  std::vector<S> logits =
      ref::linear_forward<S>(pooled, net.param(spec.fc_weight), {}, batch, spec.fc_in, spec.cfg.classes);
  ref::XentResult<S> xent = ref::softmax_xent<S>(logits, net.param(spec.fc_bias), labels, spec.cfg.classes);

  // ---- backward
  ReferenceStep<S> step;
  step.loss = xent.loss;
  step.correct = xent.correct;
  step.grads.assign(spec.flat_size, S(0));
  std::vector<S> dpooled, dw, db;
  ref::linear_backward<S>(xent.dlogits, pooled, net.param(spec.fc_weight), batch, spec.fc_in, spec.cfg.classes, dpooled,
                          dw, db);
  auto put = [&](int index, const std::vector<S>& v) {
    const ParamTensor& p = spec.params[index];
    for (std::int64_t i = 0; i < p.count; ++i) step.grads[p.offset + i] += v[i];
  };
  put(spec.fc_weight, dw);
  put(spec.fc_bias, db);
  std::vector<S> dx = ref::avgpool_backward<S>(dpooled, last_shape, kL);
  for (std::size_t i = spec.blocks.size(); i-- > 0;) {
    const BlockSpec& blk = spec.blocks[i];
    const BlockActs<S>& a = acts[i];
    std::vector<S> g;  // gradient of bn2's input sum = gradient of the shortcut output
    std::vector<S> dh = unit_backward<S>(net, blk.conv2, blk.bn2, a.u1.out, a.u2, dx, true, step.grads, &g, true);
    std::vector<S> din = unit_backward<S>(net, blk.conv1, blk.bn1, a.input, a.u1, dh, true, step.grads, nullptr, true);
    if (blk.projection) {
      std::vector<S> dproj =
          unit_backward<S>(net, blk.proj, blk.bn_proj, a.input, a.up, g, false, step.grads, nullptr, true);
      for (std::size_t j = 0; j < din.size(); ++j) din[j] += dproj[j];
    } else {
      for (std::size_t j = 0; j < din.size(); ++j) din[j] += g[j];
    }
    dx = std::move(din);
  }
  unit_backward<S>(net, spec.stem, spec.stem_bn, images, stem, dx, true, step.grads, nullptr, false);
  return step;
}

template <class S>
double reference_loss(const NetSpec& spec, std::span<const S> params, std::span<const S> images,
                      std::span<const int> labels) {
  // The forward pass is a prefix of the full step; reuse it rather than keep a
  // second copy of the wiring in sync.
  return reference_forward_backward<S>(spec, params, images, labels).loss;
}

template ReferenceStep<float> reference_forward_backward<float>(const NetSpec&, std::span<const float>,
                                                                std::span<const float>, std::span<const int>);
template ReferenceStep<double> reference_forward_backward<double>(const NetSpec&, std::span<const double>,
                                                                  std::span<const double>, std::span<const int>);
template double reference_loss<float>(const NetSpec&, std::span<const float>, std::span<const float>,
                                      std::span<const int>);
template double reference_loss<double>(const NetSpec&, std::span<const double>, std::span<const double>,
                                       std::span<const int>);

}  // namespace gpuscope::resnet
