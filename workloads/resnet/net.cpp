#include "workloads/resnet/net.h"

#include <cmath>
#include <stdexcept>

#include "kernels/data.h"

namespace gpuscope::resnet {

namespace {

constexpr std::int64_t kAlign = 64;

class Builder {
 public:
  explicit Builder(NetSpec& net) : net_(net) {}

  int add(std::string name, ParamKind kind, int k, int c, int r, int s, int bucket) {
    ParamTensor p;
    p.name = std::move(name);
    p.kind = kind;
    p.k = k, p.c = c, p.r = r, p.s = s;
    p.count = std::int64_t{k} * c * r * s;
    p.offset = (net_.flat_size + kAlign - 1) / kAlign * kAlign;
    p.bucket = bucket;
    net_.flat_size = p.offset + p.count;
    net_.parameter_count += p.count;
    net_.params.push_back(std::move(p));
    return static_cast<int>(net_.params.size()) - 1;
  }

  ConvSpec conv(const std::string& name, int in_c, int out_c, int k, int stride, int in_hw, int bucket) {
    ConvSpec c;
    c.name = name;
    c.in_c = in_c, c.out_c = out_c, c.k = k, c.stride = stride, c.pad = k / 2;
    c.in_hw = in_hw;
    c.out_hw = (in_hw + 2 * c.pad - k) / stride + 1;
    c.weight = add(name + ".weight", ParamKind::conv_weight, out_c, in_c, k, k, bucket);
    return c;
  }

  BnSpec bn(const std::string& name, int c, int hw, int bucket) {
    BnSpec b;
    b.name = name;
    b.c = c, b.hw = hw;
    b.gamma = add(name + ".gamma", ParamKind::bn_gamma, c, 1, 1, 1, bucket);
    b.beta = add(name + ".beta", ParamKind::bn_beta, c, 1, 1, 1, bucket);
    return b;
  }

 private:
  NetSpec& net_;
};

}  // namespace

NetSpec build_net(const NetConfig& cfg) {
  if (cfg.image < 16 || cfg.image % 8 != 0)
    throw std::invalid_argument("net: image size must be a multiple of 8, >= 16");
  if (cfg.in_channels < 1 || cfg.classes < 2 || cfg.batch < 1 || cfg.blocks_per_stage < 1)
    throw std::invalid_argument("net: bad configuration");
  NetSpec net;
  net.cfg = cfg;
  Builder b(net);
  int hw = cfg.image;
  net.stem = b.conv("stem.conv", cfg.in_channels, cfg.widths[0], 3, 1, hw, 0);
  net.stem_bn = b.bn("stem.bn", cfg.widths[0], hw, 0);
  int in_c = cfg.widths[0];
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < cfg.blocks_per_stage; ++i) {
      const std::string name = "stage" + std::to_string(stage + 1) + ".block" + std::to_string(i);
      const int stride = (stage > 0 && i == 0) ? 2 : 1;
      const int out_c = cfg.widths[stage];
      BlockSpec blk;
      blk.name = name;
      blk.stage = stage;
      blk.conv1 = b.conv(name + ".conv1", in_c, out_c, 3, stride, hw, stage);
      const int out_hw = blk.conv1.out_hw;
      blk.bn1 = b.bn(name + ".bn1", out_c, out_hw, stage);
      blk.conv2 = b.conv(name + ".conv2", out_c, out_c, 3, 1, out_hw, stage);
      blk.bn2 = b.bn(name + ".bn2", out_c, out_hw, stage);
      blk.projection = stride != 1 || in_c != out_c;
      if (blk.projection) {
        blk.proj = b.conv(name + ".proj", in_c, out_c, 1, stride, hw, stage);
        blk.bn_proj = b.bn(name + ".bn_proj", out_c, out_hw, stage);
      }
      net.blocks.push_back(blk);
      in_c = out_c;
      hw = out_hw;
    }
  }
  net.fc_in = in_c;
  net.fc_weight = b.add("fc.weight", ParamKind::fc_weight, cfg.classes, in_c, 1, 1, 3);
  net.fc_bias = b.add("fc.bias", ParamKind::fc_bias, cfg.classes, 1, 1, 1, 3);
  net.flat_size = (net.flat_size + kAlign - 1) / kAlign * kAlign;

  net.buckets.resize(4);
  for (int bk = 0; bk < 4; ++bk) {
    Bucket& u = net.buckets[bk];
    u.first_param = -1;
    for (int i = 0; i < static_cast<int>(net.params.size()); ++i) {
      if (net.params[i].bucket != bk) continue;
      if (u.first_param < 0) u.first_param = i, u.begin = net.params[i].offset;
      u.last_param = i;
      u.end = net.params[i].offset + net.params[i].count;
    }
  }
  // Buckets tile the flat buffer so that all-reducing them all covers every
  // gradient, alignment gaps included.
  for (int bk = 0; bk < 4; ++bk) net.buckets[bk].end = bk + 1 < 4 ? net.buckets[bk + 1].begin : net.flat_size;
  net.buckets[0].begin = 0;
  return net;
}

std::string backward_range_name(const std::string& layer) { return layer + kBackwardSuffix; }

std::string tensor_range_name(const std::string& what, const ParamTensor& p) { return what + "." + p.name; }

std::string bucket_range_name(const std::string& what, int bucket) {
  return what + ".stage" + std::to_string(bucket + 1);
}

std::vector<std::string> layer_range_names(const NetSpec& net) {
  std::vector<std::string> forward{net.stem.name, net.stem_bn.name};
  for (const BlockSpec& b : net.blocks) {
    forward.push_back(b.name);
    for (const std::string* n : {&b.conv1.name, &b.bn1.name, &b.conv2.name, &b.bn2.name}) forward.push_back(*n);
    if (b.projection) {
      forward.push_back(b.proj.name);
      forward.push_back(b.bn_proj.name);
    }
  }
  for (const char* n : {"avgpool", "fc", "loss"}) forward.emplace_back(n);
  std::vector<std::string> names = forward;
  for (const std::string& n : forward)
    if (n != "loss") names.push_back(backward_range_name(n));
  return names;
}

double NetSpec::forward_flops_per_image() const {
  auto conv_flops = [](const ConvSpec& c) { return 2.0 * c.out_hw * c.out_hw * c.out_c * c.in_c * c.k * c.k; };
  double f = conv_flops(stem);
  for (const BlockSpec& b : blocks) {
    f += conv_flops(b.conv1) + conv_flops(b.conv2);
    if (b.projection) f += conv_flops(b.proj);
  }
  return f + 2.0 * fc_in * cfg.classes;
}

std::vector<float> init_params(const NetSpec& net, std::uint32_t seed) {
  using kernels::hash4;
  std::vector<float> p(net.flat_size, 0.0f);
  // Uniform in (0, 1] from the counter hash; Box-Muller for normals.
  auto uniform = [&](std::uint32_t tensor, std::uint32_t i, std::uint32_t salt) {
    return (static_cast<double>(hash4(seed, tensor, i, salt)) + 1.0) / 4294967296.0;
  };
  for (std::size_t t = 0; t < net.params.size(); ++t) {
    const ParamTensor& pt = net.params[t];
    float* out = p.data() + pt.offset;
    const auto tid = static_cast<std::uint32_t>(t);
    switch (pt.kind) {
      case ParamKind::conv_weight: {
        const int real_c = &pt == &net.params[net.stem.weight] ? std::min(pt.c, kernels::kImageChannels) : pt.c;
        const double std_dev = std::sqrt(2.0 / (real_c * pt.r * pt.s));
        for (std::int64_t i = 0; i < pt.count; ++i) {
          const int c = static_cast<int>((i / (pt.r * pt.s)) % pt.c);
          if (c >= real_c) continue;  // padded input channels stay zero
          const auto ui = static_cast<std::uint32_t>(i);
          const double z =
              std::sqrt(-2.0 * std::log(uniform(tid, ui, 1))) * std::cos(6.283185307179586 * uniform(tid, ui, 2));
          out[i] = static_cast<float>(z * std_dev);
        }
        break;
      }
      case ParamKind::bn_gamma:
        for (std::int64_t i = 0; i < pt.count; ++i) out[i] = 1.0f;
        break;
      case ParamKind::bn_beta: break;
      case ParamKind::fc_weight:
      case ParamKind::fc_bias: {
        const double bound = 1.0 / std::sqrt(static_cast<double>(net.fc_in));
        for (std::int64_t i = 0; i < pt.count; ++i)
          out[i] = static_cast<float>((2.0 * uniform(tid, static_cast<std::uint32_t>(i), 3) - 1.0) * bound);
        break;
      }
    }
  }
  return p;
}

namespace {
std::vector<float> permute_convs(const NetSpec& net, std::span<const float> in, bool to_krsc) {
  if (static_cast<std::int64_t>(in.size()) != net.flat_size) throw std::invalid_argument("params: flat size mismatch");
  std::vector<float> out(in.begin(), in.end());
  for (const ParamTensor& pt : net.params) {
    if (pt.kind != ParamKind::conv_weight) continue;
    for (int k = 0; k < pt.k; ++k)
      for (int c = 0; c < pt.c; ++c)
        for (int r = 0; r < pt.r; ++r)
          for (int s = 0; s < pt.s; ++s) {
            const std::int64_t kcrs = ((std::int64_t{k} * pt.c + c) * pt.r + r) * pt.s + s;
            const std::int64_t krsc = ((std::int64_t{k} * pt.r + r) * pt.s + s) * pt.c + c;
            if (to_krsc)
              out[pt.offset + krsc] = in[pt.offset + kcrs];
            else
              out[pt.offset + kcrs] = in[pt.offset + krsc];
          }
  }
  return out;
}
}  // namespace

std::vector<float> params_to_layout(const NetSpec& net, std::span<const float> canonical, Layout layout) {
  return layout == Layout::nchw ? std::vector<float>(canonical.begin(), canonical.end())
                                : permute_convs(net, canonical, true);
}

std::vector<float> params_from_layout(const NetSpec& net, std::span<const float> stored, Layout layout) {
  return layout == Layout::nchw ? std::vector<float>(stored.begin(), stored.end()) : permute_convs(net, stored, false);
}

}  // namespace gpuscope::resnet
