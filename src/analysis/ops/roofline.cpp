// FLOPs and bytes from shapes; device peaks.
//
// [SECTION] Parsing the recorded inputs
// [SECTION] Shapes and element sizes
// [SECTION] Families
// [SECTION] Parsing and classification
// [SECTION] Device peaks
#include "analysis/ops/roofline.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace gpuscope {

namespace {

// [SECTION] Parsing the recorded inputs --------------------------------------------------------

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool done() {
    ws();
    return i_ == s_.size();
  }
  bool integer(std::int64_t* v) {
    ws();
    const auto [p, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), *v);
    if (ec != std::errc()) return false;
    i_ = static_cast<std::size_t>(p - s_.data());
    return true;
  }
  bool string(std::string* out) {
    if (!eat('"')) return false;
    out->clear();
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        if (++i_ == s_.size()) return false;
      }
      out->push_back(s_[i_++]);
    }
    return i_ < s_.size() && s_[i_++] == '"';
  }
  // [item, item, …] with `item` reading one element.
  template <class F>
  bool list(F&& item) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!item()) return false;
    } while (eat(','));
    return eat(']');
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

// One input's dims: a list of integers (a tensor), or a list of such lists
// (a tensor list, as aten::cat takes): kept as no shape.
bool parse_shape(Cursor& c, std::vector<std::int64_t>* shape, int depth = 0) {
  if (depth > 8) return false;
  bool nested = false;
  const bool ok = c.list([&] {
    std::int64_t v = 0;
    if (c.integer(&v)) {
      if (v < 0 || nested) return false;
      shape->push_back(v);
      return true;
    }
    if (!shape->empty()) return false;
    nested = true;
    std::vector<std::int64_t> inner;
    return parse_shape(c, &inner, depth + 1);
  });
  if (nested) shape->clear();
  return ok;
}

bool parse_dims(std::string_view text, std::vector<std::vector<std::int64_t>>* out) {
  Cursor c(text);
  const bool ok = c.list([&] { return parse_shape(c, &out->emplace_back()); });
  return ok && c.done();
}

bool parse_strings(std::string_view text, std::vector<std::string>* out) {
  Cursor c(text);
  const bool ok = c.list([&] { return c.string(&out->emplace_back()); });
  return ok && c.done();
}

// "[16, 16]" -> {16, 16}; "1" -> {1}.
bool parse_ints(std::string_view text, std::vector<std::int64_t>* out) {
  out->clear();
  Cursor c(text);
  std::int64_t v = 0;
  if (c.integer(&v)) {
    out->push_back(v);
    return c.done();
  }
  Cursor l(text);
  const bool ok = l.list([&] {
    std::int64_t x = 0;
    if (!l.integer(&x)) return false;
    out->push_back(x);
    return true;
  });
  return ok && l.done();
}

// [SECTION] Shapes and element sizes -----------------------------------------------------------

double numel(const std::vector<std::int64_t>& shape) {
  double n = 1;
  for (std::int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

double element_bytes(MathType m) {
  switch (m) {
    case MathType::fp64: return 8;
    case MathType::fp32:
    case MathType::tf32: return 4;
    case MathType::fp16:
    case MathType::bf16: return 2;
    case MathType::fp8: return 1;
    case MathType::unknown: break;
  }
  return 0;
}

// Element size of a torch type name, including integer types (0 if unknown).
double type_bytes(std::string_view t) {
  const MathType m = math_type_of(t);
  if (m != MathType::unknown) return element_bytes(m);
  if (t == "long int" || t == "long" || t == "int64_t" || t == "unsigned long") return 8;
  if (t == "int" || t == "unsigned int") return 4;
  if (t == "short int" || t == "short") return 2;
  if (t == "bool" || t == "signed char" || t == "unsigned char" || t == "c10::qint8" || t == "c10::quint8") return 1;
  return 0;
}

struct Tensor {
  const std::vector<std::int64_t>* shape = nullptr;
  double bytes_per_element = 0;
};

// Input i as a tensor: a non-empty shape and a known element type.
std::optional<Tensor> tensor(const OpInputs& in, std::size_t i) {
  if (i >= in.dims.size() || in.dims[i].empty()) return std::nullopt;
  const double es = i < in.types.size() ? type_bytes(in.types[i]) : 0;
  if (es == 0) return std::nullopt;
  return Tensor{&in.dims[i], es};
}

MathType math_of(const OpInputs& in, std::size_t i) {
  return i < in.types.size() ? math_type_of(in.types[i]) : MathType::unknown;
}

std::optional<std::vector<std::int64_t>> concrete_ints(const OpInputs& in, std::size_t i) {
  if (i >= in.concrete.size() || in.concrete[i].empty()) return std::nullopt;
  std::vector<std::int64_t> v;
  if (!parse_ints(in.concrete[i], &v)) return std::nullopt;
  return v;
}

std::optional<bool> concrete_bool(const OpInputs& in, std::size_t i) {
  if (i >= in.concrete.size()) return std::nullopt;
  if (in.concrete[i] == "True" || in.concrete[i] == "true") return true;
  if (in.concrete[i] == "False" || in.concrete[i] == "false") return false;
  return std::nullopt;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

bool aligned(double v) { return std::fmod(v, 8.0) == 0; }

// A convolution's channels as tensor cores want them: input channels per
// group and output channels multiples of 8, but for an image's own 3 or 4
// input channels (the stem), which cuDNN pads itself.
bool channels_aligned(double c_per_group, double k) { return (c_per_group <= 4 || aligned(c_per_group)) && aligned(k); }

// [SECTION] Families ---------------------------------------------------------------------------

// C[batch, M, N] = A[batch, M, K] · B[batch, K, N] (+ bias).
OpCost gemm_cost(double batch, double m, double n, double k, double extra_bytes, MathType math, double es) {
  OpCost c;
  c.family = OpFamily::gemm;
  c.math = math;
  c.flops = 2 * batch * m * n * k;
  c.bytes = batch * (m * k + k * n + m * n) * es + extra_bytes;
  c.dims = "M=" + fmt(m) + " N=" + fmt(n) + " K=" + fmt(k) + " batch=" + fmt(batch);
  c.aligned8 = aligned(m) && aligned(n) && aligned(k);
  return c;
}

OpCost gemm(std::string_view op, const OpInputs& in) {
  OpCost none;
  none.family = OpFamily::gemm;
  const bool bias_first = op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm";
  const std::size_t a_i = bias_first ? 1 : 0, b_i = a_i + 1;
  if (op == "aten::linear") {
    // input [..., K], weight [N, K] (used transposed), bias [N]
    const auto x = tensor(in, 0), w = tensor(in, 1);
    if (!x || !w || w->shape->size() != 2 || x->shape->back() != (*w->shape)[1]) return none;
    const double k = static_cast<double>(x->shape->back()), n = static_cast<double>((*w->shape)[0]);
    const double m = numel(*x->shape) / k;
    const auto bias = tensor(in, 2);
    return gemm_cost(1, m, n, k, bias ? numel(*bias->shape) * bias->bytes_per_element : 0, math_of(in, 0),
                     x->bytes_per_element);
  }
  const auto a = tensor(in, a_i), b = tensor(in, b_i);
  if (!a || !b) return none;
  const auto& as = *a->shape;
  const auto& bs = *b->shape;
  double extra = 0;
  if (bias_first)
    if (const auto bias = tensor(in, 0)) extra = numel(*bias->shape) * bias->bytes_per_element;
  if (op == "aten::mm" || op == "aten::addmm") {
    if (as.size() != 2 || bs.size() != 2 || as[1] != bs[0]) return none;
    return gemm_cost(1, double(as[0]), double(bs[1]), double(as[1]), extra, math_of(in, a_i), a->bytes_per_element);
  }
  if (op == "aten::bmm" || op == "aten::baddbmm") {
    if (as.size() != 3 || bs.size() != 3 || as[0] != bs[0] || as[2] != bs[1]) return none;
    return gemm_cost(double(as[0]), double(as[1]), double(bs[2]), double(as[2]), extra, math_of(in, a_i),
                     a->bytes_per_element);
  }
  // aten::matmul: 1-D operands gain a dimension; batch dimensions broadcast.
  std::vector<std::int64_t> x = as, y = bs;
  if (x.size() == 1) x.insert(x.begin(), 1);
  if (y.size() == 1) y.push_back(1);
  const double m = double(x[x.size() - 2]), k = double(x.back()), n = double(y.back());
  if (double(y[y.size() - 2]) != k) return none;
  const std::size_t bx = x.size() - 2, by = y.size() - 2, nb = std::max(bx, by);
  double batch = 1, a_batch = 1, b_batch = 1;
  for (std::size_t i = 0; i < nb; ++i) {
    const std::int64_t dx = i + bx >= nb ? x[i + bx - nb] : 1, dy = i + by >= nb ? y[i + by - nb] : 1;
    if (dx != dy && dx != 1 && dy != 1) return none;
    batch *= double(std::max(dx, dy));
    a_batch *= double(dx);
    b_batch *= double(dy);
  }
  OpCost c = gemm_cost(batch, m, n, k, 0, math_of(in, 0), a->bytes_per_element);
  c.bytes = (a_batch * m * k + b_batch * k * n + batch * m * n) * a->bytes_per_element;
  return c;
}

// Output size of a convolution along one spatial dimension.
double conv_out(double in, double kernel, double stride, double pad, double dil) {
  return std::floor((in + 2 * pad - dil * (kernel - 1) - 1) / stride) + 1;
}

// 2 · N · K · Π(output spatial) · (C / groups) · Π(kernel spatial) for one product.
OpCost conv_forward(std::string_view op, const OpInputs& in) {
  OpCost none;
  none.family = OpFamily::convolution;
  const auto x = tensor(in, 0), w = tensor(in, 1);
  if (!x || !w || x->shape->size() < 3 || x->shape->size() != w->shape->size()) return none;
  // Positions of stride, padding, dilation, transposed and groups by op.
  std::size_t stride_i = 3, pad_i = 4, dil_i = 5, groups_i = 6, transposed_i = 0;
  if (op == "aten::convolution" || op == "aten::_convolution") {
    transposed_i = 6;
    groups_i = 8;
  } else if (op == "aten::cudnn_convolution") {
    pad_i = 2, stride_i = 3, dil_i = 4, groups_i = 5;
  }
  if (transposed_i) {
    const auto t = concrete_bool(in, transposed_i);
    if (!t || *t) return none;  // transposed convolutions: not modelled
  }
  const std::size_t spatial = x->shape->size() - 2;
  const auto stride = concrete_ints(in, stride_i), pad = concrete_ints(in, pad_i), dil = concrete_ints(in, dil_i),
             groups = concrete_ints(in, groups_i);
  if (!stride || !pad || !dil || !groups || groups->size() != 1 || (*groups)[0] < 1) return none;
  auto at = [&](const std::vector<std::int64_t>& v, std::size_t i) { return double(v.size() == 1 ? v[0] : v[i]); };
  if ((stride->size() != 1 && stride->size() != spatial) || (pad->size() != 1 && pad->size() != spatial) ||
      (dil->size() != 1 && dil->size() != spatial))
    return none;
  const auto& xs = *x->shape;
  const auto& ws = *w->shape;
  const double g = double((*groups)[0]);
  if (double(xs[1]) != double(ws[1]) * g) return none;
  double out_spatial = 1, kernel_spatial = 1;
  for (std::size_t i = 0; i < spatial; ++i) {
    const double o = conv_out(double(xs[2 + i]), double(ws[2 + i]), at(*stride, i), at(*pad, i), at(*dil, i));
    if (o < 1 || at(*stride, i) < 1) return none;
    out_spatial *= o;
    kernel_spatial *= double(ws[2 + i]);
  }
  const double n = double(xs[0]), k = double(ws[0]), c_per_group = double(ws[1]);
  OpCost c;
  c.family = OpFamily::convolution;
  c.math = math_of(in, 0);
  c.flops = 2 * n * k * out_spatial * c_per_group * kernel_spatial;
  double bytes = (numel(xs) + numel(ws) + n * k * out_spatial) * x->bytes_per_element;
  if (const auto bias = tensor(in, 2); bias && op != "aten::cudnn_convolution")
    bytes += numel(*bias->shape) * bias->bytes_per_element;
  c.bytes = bytes;
  c.dims = "N=" + fmt(n) + " C=" + fmt(double(xs[1])) + " K=" + fmt(k) + " groups=" + fmt(g);
  c.aligned8 = channels_aligned(c_per_group, k);
  return c;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
// dilation, transposed, output_padding, groups, output_mask): the grad-input
// and grad-weight products each cost what the forward does.
OpCost conv_backward(const OpInputs& in) {
  OpCost none;
  none.family = OpFamily::convolution;
  const auto dy = tensor(in, 0), x = tensor(in, 1), w = tensor(in, 2);
  if (!dy || !x || !w || dy->shape->size() != x->shape->size() || x->shape->size() != w->shape->size() ||
      x->shape->size() < 3)
    return none;
  if (const auto t = concrete_bool(in, 7); t && *t) return none;
  const auto& ys = *dy->shape;
  const auto& ws = *w->shape;
  double out_spatial = 1, kernel_spatial = 1;
  for (std::size_t i = 2; i < ys.size(); ++i) out_spatial *= double(ys[i]), kernel_spatial *= double(ws[i]);
  const double forward = 2 * double(ys[0]) * double(ys[1]) * out_spatial * double(ws[1]) * kernel_spatial;
  // output_mask "[True, True, False]": which gradients were computed; both when not recorded.
  double products = 2;
  bool grad_input = true, grad_weight = true;
  if (in.concrete.size() > 10 && !in.concrete[10].empty()) {
    const std::string& m = in.concrete[10];
    std::vector<bool> mask;
    for (std::size_t p = 0; p < m.size(); ++p) {
      if (m.compare(p, 4, "True") == 0) mask.push_back(true);
      if (m.compare(p, 5, "False") == 0) mask.push_back(false);
    }
    if (mask.size() < 2) return none;
    grad_input = mask[0];
    grad_weight = mask[1];
    products = double(grad_input) + double(grad_weight);
  }
  OpCost c;
  c.family = OpFamily::convolution;
  c.math = math_of(in, 0);
  c.flops = forward * products;
  const double es = x->bytes_per_element;
  c.bytes =
      (numel(ys) + numel(*x->shape) + numel(ws) + (grad_input ? numel(*x->shape) : 0) + (grad_weight ? numel(ws) : 0)) *
      es;
  c.dims = "N=" + fmt(double(ys[0])) + " C=" + fmt(double((*x->shape)[1])) + " K=" + fmt(double(ys[1]));
  c.aligned8 = channels_aligned(double(ws[1]), double(ys[1]));
  return c;
}

// Attention: S = Q·Kᵀ (2·B·H·Lq·Lk·D) and O = P·V (2·B·H·Lq·Lk·Dv), halved
// when causal (only the lower triangle is computed); the backward pass does
// 2.5 times the forward's products (five matrix products instead of two).
OpCost attention(std::string_view op, const OpInputs& in) {
  OpCost none;
  none.family = OpFamily::attention;
  const bool backward = op.ends_with("_backward");
  const std::size_t q_i = backward ? 1 : 0;
  const auto q = tensor(in, q_i), k = tensor(in, q_i + 1), v = tensor(in, q_i + 2);
  if (!q || !k || !v || q->shape->size() != 4 || k->shape->size() != 4 || v->shape->size() != 4) return none;
  std::size_t causal_i = 5;  // aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale)
  if (backward)
    causal_i = 11;
  else if (op == "aten::_scaled_dot_product_flash_attention")
    causal_i = 4;
  else if (op == "aten::_scaled_dot_product_efficient_attention")
    causal_i = 6;
  // _flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, …)
  const bool flash_layout = op == "aten::_flash_attention_forward";
  if (flash_layout) causal_i = 8;
  const auto causal = concrete_bool(in, causal_i);
  if (!causal) return none;
  const auto& qs = *q->shape;
  const auto& ks = *k->shape;
  const auto& vs = *v->shape;
  // The SDPA ops take [batch, heads, length, dim]; the flash kernel's own op [batch, length, heads, dim].
  const bool heads_second = !flash_layout;
  const double b = double(qs[0]), h = double(qs[heads_second ? 1 : 2]), lq = double(qs[heads_second ? 2 : 1]),
               d = double(qs[3]);
  const double lk = double(ks[heads_second ? 2 : 1]), dv = double(vs[3]);
  double flops = 2 * b * h * lq * lk * d + 2 * b * h * lq * lk * dv;
  if (*causal) flops /= 2;
  if (backward) flops *= 2.5;
  OpCost c;
  c.family = OpFamily::attention;
  c.math = math_of(in, q_i);
  c.flops = flops;
  const double es = q->bytes_per_element, out = b * h * lq * dv;
  c.bytes = (numel(qs) + numel(ks) + numel(vs) + out) * es * (backward ? 2 : 1);
  c.dims = "B=" + fmt(b) + " H=" + fmt(h) + " Lq=" + fmt(lq) + " Lk=" + fmt(lk) + " D=" + fmt(d) +
           (*causal ? " causal" : "");
  return c;
}

// Bytes of the tensor inputs, and the largest input's element count (the
// output's, for the broadcasting elementwise ops).
struct Streams {
  double bytes = 0, largest = 0, largest_es = 0;
  std::size_t tensors = 0;
};
Streams input_streams(const OpInputs& in) {
  Streams s;
  for (std::size_t i = 0; i < in.dims.size(); ++i) {
    const auto t = tensor(in, i);
    if (!t) continue;
    const double n = numel(*t->shape);
    s.bytes += n * t->bytes_per_element;
    ++s.tensors;
    if (n > s.largest) s.largest = n, s.largest_es = t->bytes_per_element;
  }
  return s;
}

OpCost memory_bound(OpFamily family, std::string_view op, const OpInputs& in) {
  OpCost c;
  c.family = family;
  const Streams s = input_streams(in);
  if (s.tensors == 0) return c;
  c.math = math_of(in, 0);
  // Each input read once; the output written once: as large as the largest
  // input (elementwise, normalization; in-place ops write their first input),
  // negligible for reductions.
  const double written = family == OpFamily::reduction ? 0 : s.largest * s.largest_es;
  // A fill reads nothing: its one input is the tensor it writes.
  const bool fill = op == "aten::zero_" || op == "aten::fill_";
  c.bytes = (fill ? 0 : s.bytes) + written;
  if (family == OpFamily::elementwise) c.flops = s.largest;  // one operation per output element
  c.dims = "elements=" + fmt(s.largest);
  return c;
}

bool any_of(std::string_view op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

}  // namespace

// [SECTION] Parsing and classification ------------------------------------------------------

bool parse_op_inputs(std::string_view dims_json, std::string_view types_json, std::string_view concrete_json,
                     OpInputs* out) {
  *out = OpInputs{};
  if (!dims_json.empty() && !parse_dims(dims_json, &out->dims)) return *out = OpInputs{}, false;
  if (!types_json.empty() && !parse_strings(types_json, &out->types)) return *out = OpInputs{}, false;
  if (!concrete_json.empty() && !parse_strings(concrete_json, &out->concrete)) return *out = OpInputs{}, false;
  return true;
}

std::string_view to_string(OpFamily f) {
  static constexpr std::array<std::string_view, 7> kNames = {
      "", "gemm", "convolution", "attention", "elementwise", "reduction", "normalization"};
  return kNames[static_cast<std::size_t>(f)];
}

std::string_view to_string(MathType m) {
  static constexpr std::array<std::string_view, 7> kNames = {"", "fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};
  return kNames[static_cast<std::size_t>(m)];
}

MathType math_type_of(std::string_view t) {
  if (t == "float" || t == "Float") return MathType::fp32;
  if (t == "double" || t == "Double") return MathType::fp64;
  if (t == "c10::Half" || t == "Half") return MathType::fp16;
  if (t == "c10::BFloat16" || t == "BFloat16") return MathType::bf16;
  if (t.starts_with("c10::Float8") || t.starts_with("Float8")) return MathType::fp8;
  return MathType::unknown;
}

OpFamily op_family(std::string_view op) {
  if (any_of(op, {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}))
    return OpFamily::gemm;
  if (any_of(op, {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
                  "aten::cudnn_convolution", "aten::convolution_backward"}))
    return OpFamily::convolution;
  if (any_of(op, {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                  "aten::_scaled_dot_product_efficient_attention", "aten::_flash_attention_forward",
                  "aten::_scaled_dot_product_flash_attention_backward",
                  "aten::_scaled_dot_product_efficient_attention_backward"}))
    return OpFamily::attention;
  if (any_of(op, {"aten::layer_norm", "aten::native_layer_norm", "aten::batch_norm", "aten::native_batch_norm",
                  "aten::cudnn_batch_norm", "aten::_batch_norm_impl_index", "aten::group_norm",
                  "aten::native_group_norm", "aten::rms_norm", "aten::_fused_rms_norm", "aten::softmax",
                  "aten::_softmax", "aten::log_softmax", "aten::_log_softmax"}))
    return OpFamily::normalization;
  if (any_of(op, {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max", "aten::min", "aten::norm",
                  "aten::var", "aten::std", "aten::argmax", "aten::argmin", "aten::prod"}))
    return OpFamily::reduction;
  if (any_of(op, {"aten::add",           "aten::add_",     "aten::sub",
                  "aten::sub_",          "aten::mul",      "aten::mul_",
                  "aten::div",           "aten::div_",     "aten::relu",
                  "aten::relu_",         "aten::gelu",     "aten::silu",
                  "aten::silu_",         "aten::sigmoid",  "aten::tanh",
                  "aten::exp",           "aten::neg",      "aten::rsqrt",
                  "aten::sqrt",          "aten::pow",      "aten::threshold_backward",
                  "aten::gelu_backward", "aten::addcmul_", "aten::addcdiv_",
                  "aten::clamp",         "aten::where",    "aten::fill_",
                  "aten::zero_"}))
    return OpFamily::elementwise;
  return OpFamily::none;
}

std::optional<bool> conv_channels_aligned(const OpInputs& in) {
  if (in.dims.size() < 2) return std::nullopt;
  const auto& xs = in.dims[0];
  const auto& ws = in.dims[1];
  if (xs.size() < 3 || xs.size() != ws.size() || ws[0] < 1 || ws[1] < 1 || xs[1] % ws[1] != 0) return std::nullopt;
  return channels_aligned(double(ws[1]), double(ws[0]));
}

OpCost op_cost(std::string_view op, const OpInputs& in) {
  const OpFamily family = op_family(op);
  switch (family) {
    case OpFamily::gemm: return gemm(op, in);
    case OpFamily::convolution: return op == "aten::convolution_backward" ? conv_backward(in) : conv_forward(op, in);
    case OpFamily::attention: return attention(op, in);
    case OpFamily::elementwise:
    case OpFamily::reduction:
    case OpFamily::normalization: return memory_bound(family, op, in);
    case OpFamily::none: break;
  }
  return {};
}

// [SECTION] Device peaks -----------------------------------------------------------------------

double DevicePeaks::flops(MathType m) const {
  switch (m) {
    case MathType::fp64: return fp64;
    case MathType::fp32: return fp32;
    case MathType::tf32: return tf32;
    case MathType::fp16: return fp16;
    case MathType::bf16: return bf16;
    case MathType::fp8: return fp8;
    case MathType::unknown: break;
  }
  return 0;
}

const std::vector<DevicePeaks>& device_peak_table() {
  constexpr double T = 1e12;
  static const std::vector<DevicePeaks> kTable = {
      // model, source, fp64, fp32, tf32, fp16 (tensor), bf16, fp8, bandwidth
      {"V100 SXM2", "NVIDIA Tesla V100 datasheet (SXM2)", 7.8 * T, 15.7 * T, 0, 125 * T, 0, 0, 0.9 * T},
      {"V100 PCIe", "NVIDIA Tesla V100 datasheet (PCIe)", 7 * T, 14 * T, 0, 112 * T, 0, 0, 0.9 * T},
      {"A100 80GB", "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB)", 9.7 * T, 19.5 * T, 156 * T, 312 * T, 312 * T,
       0, 2.039 * T},
      {"A100 40GB", "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40GB)", 9.7 * T, 19.5 * T, 156 * T, 312 * T, 312 * T,
       0, 1.555 * T},
      {"H100 PCIe", "NVIDIA H100 Tensor Core GPU datasheet (PCIe, dense)", 26 * T, 51 * T, 378 * T, 756 * T, 756 * T,
       1513 * T, 2.0 * T},
      {"H100 SXM", "NVIDIA H100 Tensor Core GPU datasheet (SXM5, dense)", 34 * T, 67 * T, 494.7 * T, 989.4 * T,
       989.4 * T, 1978.9 * T, 3.35 * T},
      {"H200 SXM", "NVIDIA H200 Tensor Core GPU datasheet (SXM, dense)", 34 * T, 67 * T, 494.7 * T, 989.4 * T,
       989.4 * T, 1978.9 * T, 4.8 * T},
      {"B200", "NVIDIA HGX B200 datasheet (per GPU, dense)", 37 * T, 75 * T, 1100 * T, 2250 * T, 2250 * T, 4500 * T,
       8.0 * T},
      {"MI300X", "AMD Instinct MI300X datasheet (dense; FP64 and FP32 vector)", 81.7 * T, 163.4 * T, 653.7 * T,
       1307.4 * T, 1307.4 * T, 2614.9 * T, 5.3 * T},
  };
  return kTable;
}

std::optional<DevicePeaks> peaks_for_device(std::string_view name) {
  auto has = [&](std::string_view s) {
    return std::search(name.begin(), name.end(), s.begin(), s.end(), [](char a, char b) {
             return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
           }) != name.end();
  };
  auto model = [&](std::string_view m) -> std::optional<DevicePeaks> {
    for (const DevicePeaks& p : device_peak_table())
      if (p.model == m) return p;
    return std::nullopt;
  };
  if (has("V100")) return model(has("PCIE") ? "V100 PCIe" : "V100 SXM2");
  if (has("A100")) return model(has("80GB") ? "A100 80GB" : "A100 40GB");
  if (has("H100")) return model(has("PCIE") ? "H100 PCIe" : "H100 SXM");
  if (has("H200")) return model("H200 SXM");
  if (has("B200")) return model("B200");
  if (has("MI300X")) return model("MI300X");
  return std::nullopt;
}

std::string device_model_name(const Device& d) {
  if (!d.name.empty() && d.name != "AMD Radeon Graphics") return d.name;
  // AMD's Instinct parts by architecture (ROCm gives gfx942 as 9.4, gfx90a
  // as 9.0) and compute units per device (an MI250's GCD is a device):
  // AMD's datasheets. MI300X and MI325X share gfx942 and 304 CUs and differ
  // in memory (192 GB vs 256 GB).
  const double gib = double(d.memory_bytes) / double(1ull << 30);
  std::string model;
  if (d.warp_size == 64 || d.warp_size == 0) {
    if (d.compute_major == 9 && d.compute_minor == 4 && d.sm_count == 304 && gib > 150 && gib < 200)
      model = "AMD Instinct MI300X";
    else if (d.compute_major == 9 && d.compute_minor == 4 && d.sm_count == 304 && gib >= 230 && gib < 260)
      model = "AMD Instinct MI325X";
    else if (d.compute_major == 9 && d.compute_minor == 4 && d.sm_count == 228)
      model = "AMD Instinct MI300A";
    else if (d.compute_major == 9 && d.compute_minor == 0 && d.sm_count == 110)
      model = "AMD Instinct MI250X (one GCD)";
  }
  if (model.empty()) return d.name;
  const char* arch = d.compute_minor == 4 ? "gfx942" : "gfx90a";
  return model + " (inferred: " + arch + ", " + std::to_string(d.sm_count) + " CUs" +
         (d.name.empty() ? "" : "; named \"" + d.name + "\"") + ")";
}

}  // namespace gpuscope
