// workload_kernel_check: every CUDA kernel of kernels/ against its plain C++
// reference, on the GPU machine (tests/gpu/workload_check.sh runs it; ctest
// runs it too and reports "skipped" where there is no GPU).
//
// Each check: fresh random inputs (seed printed; --seed N repeats a run),
// rounded to the kernel's dtype first so kernel and reference see the same
// numbers; outputs poisoned with 0xFF bytes (NaN in fp32 and bf16) so an
// element the kernel forgot cannot pass; both layouts, both dtypes, shapes
// with ragged tails. Tolerances (|got - want| <= abs + rel * |want|):
//   exact     data movement (pad, transpose, broadcast, ReLU, casts, data)
//   fp32      abs 1e-5, rel 1e-5 for pointwise; rel 1e-4 for reductions
//   bf16      one bf16 rounding of the output: abs 1e-2, rel 1e-2
// Exit status: 0 all passed, 1 a mismatch, 77 no GPU (skipped).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reference/batchnorm.h"
#include "kernels/reference/data.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/linear.h"
#include "kernels/reference/pad.h"
#include "kernels/reference/pool.h"
#include "kernels/reference/sgd.h"
#include "kernels/reference/softmax_xent.h"
#include "kernels/reference/transpose.h"

namespace {

using namespace gpuscope::kernels;
using V = std::vector<float>;

// ---- plumbing ------------------------------------------------------------------
void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "workload_kernel_check: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

class Buf {
 public:
  explicit Buf(std::size_t bytes) : bytes_(bytes ? bytes : 16) {
    check_cuda(cudaMalloc(&p_, bytes_), "cudaMalloc");
    poison();
  }
  ~Buf() {
    if (p_) cudaFree(p_);
  }
  Buf(Buf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf& operator=(Buf&&) = delete;
  void* get() const { return p_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  void poison() { check_cuda(cudaMemset(p_, 0xFF, bytes_), "cudaMemset"); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
};

std::mt19937 g_rng;
int g_failures = 0, g_checks = 0;

V random(std::size_t n, float lo = -2.0f, float hi = 2.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  V v(n);
  for (float& x : v) x = u(g_rng);
  return v;
}

// The values a dtype can hold: what the kernel will really read.
V representable(V v, DType t) {
  if (t == DType::bf16)
    for (float& x : v) x = ref::round_to_bf16(x);
  return v;
}

void upload(const Buf& b, const V& host, DType t) {
  if (t == DType::f32) {
    check_cuda(cudaMemcpy(b.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice), "upload");
  } else {
    std::vector<std::uint16_t> raw(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) raw[i] = ref::float_to_bf16(host[i]);
    check_cuda(cudaMemcpy(b.get(), raw.data(), raw.size() * 2, cudaMemcpyHostToDevice), "upload");
  }
}

V download(const Buf& b, std::size_t n, DType t) {
  check_cuda(cudaDeviceSynchronize(), "kernel");
  V host(n);
  if (t == DType::f32) {
    check_cuda(cudaMemcpy(host.data(), b.get(), n * 4, cudaMemcpyDeviceToHost), "download");
  } else {
    std::vector<std::uint16_t> raw(n);
    check_cuda(cudaMemcpy(raw.data(), b.get(), n * 2, cudaMemcpyDeviceToHost), "download");
    for (std::size_t i = 0; i < n; ++i) host[i] = ref::bf16_to_float(raw[i]);
  }
  return host;
}

Buf device(const V& host, DType t) {
  Buf b(host.size() * dtype_size(t));
  upload(b, host, t);
  return b;
}

struct Tol {
  double abs, rel;
};
constexpr Tol kExact{0, 0};
Tol pointwise(DType t) { return t == DType::f32 ? Tol{1e-5, 1e-5} : Tol{1e-2, 1e-2}; }
Tol reduction(DType t) { return t == DType::f32 ? Tol{1e-4, 1e-4} : Tol{1e-2, 1e-2}; }

void expect(const std::string& name, const V& got, const V& want, Tol tol) {
  ++g_checks;
  double worst = 0;
  std::size_t bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    const bool ok = err <= tol.abs + tol.rel * std::abs(static_cast<double>(want[i]));  // false for NaN
    if (!ok && bad++ == 0) first_bad = i;
    if (std::isfinite(err)) worst = std::max(worst, err);
  }
  if (got.size() != want.size()) bad = std::max<std::size_t>(bad, 1);
  if (bad) {
    ++g_failures;
    std::printf("FAIL %-52s %zu of %zu elements off; first [%zu] got %.7g want %.7g\n", name.c_str(), bad, want.size(),
                first_bad, first_bad < got.size() ? got[first_bad] : NAN, want[first_bad]);
  } else {
    std::printf("ok   %-52s %zu elements, max abs error %.3g\n", name.c_str(), want.size(), worst);
  }
}

std::string tag(const char* what, DType t, Layout l) {
  return std::string(what) + (t == DType::f32 ? " f32" : " bf16") + (l == Layout::nchw ? " nchw" : " nhwc");
}

V round_out(V v, DType t) { return representable(std::move(v), t); }

constexpr DType kTypes[] = {DType::f32, DType::bf16};
constexpr Layout kLayouts[] = {Layout::nchw, Layout::nhwc};
// Ragged (odd sizes, tails off the 16-byte packs) and network-like shapes.
const Shape kShapes[] = {Shape{3, 5, 7, 7}, Shape{4, 16, 8, 8}, Shape{2, 32, 16, 16}};

// ---- checks ----------------------------------------------------------------------

void check_pad() {
  for (DType t : kTypes)
    for (Layout l : kLayouts)
      for (const Shape s : kShapes)
        for (const Padding2d p : {Padding2d{1, 1, 1, 1}, Padding2d{0, 1, 0, 1}}) {
          const V x = representable(random(s.count()), t);
          const Shape ps = padded(s, p);
          Buf dx = device(x, t), dxp(ps.count() * dtype_size(t));
          pad_forward(DeviceTensor{dx.get(), t, l, s}, DeviceTensor{dxp.get(), t, l, ps}, p, nullptr);
          expect(tag("pad_forward", t, l), download(dxp, ps.count(), t), ref::pad_forward<float>(x, s, l, p), kExact);
          const V g = representable(random(ps.count()), t);
          upload(dxp, g, t);
          for (bool acc : {false, true}) {
            V want = x;
            ref::pad_backward<float>(g, s, l, p, want, acc);
            upload(dx, x, t);
            if (!acc) dx.poison();
            pad_backward(DeviceTensor{dxp.get(), t, l, ps}, DeviceTensor{dx.get(), t, l, s}, p, acc, nullptr);
            expect(tag(acc ? "pad_backward accumulate" : "pad_backward", t, l), download(dx, s.count(), t),
                   round_out(want, t), acc ? pointwise(t) : kExact);
          }
        }
}

void check_broadcast_and_pointwise() {
  for (DType t : kTypes) {
    for (Layout l : kLayouts)
      for (const Shape s : kShapes) {
        const V v = random(s.c);
        Buf dv = device(v, DType::f32), out(s.count() * dtype_size(t));
        broadcast_channel(dv.as<float>(), DeviceTensor{out.get(), t, l, s}, nullptr);
        expect(tag("broadcast_channel", t, l), download(out, s.count(), t),
               round_out(ref::broadcast_channel<float>(v, s, l), t), kExact);
      }
    for (std::int64_t n : {std::int64_t{1003}, std::int64_t{4096}}) {
      const V a = representable(random(n), t), b = representable(random(n), t);
      Buf da = device(a, t), db = device(b, t), out(n * dtype_size(t));
      const std::string sz = " n=" + std::to_string(n);
      elementwise_mul(t, da.get(), db.get(), out.get(), n, nullptr);
      expect(tag("elementwise_mul", t, Layout::nchw) + sz, download(out, n, t),
             round_out(ref::elementwise_mul<float>(a, b), t), pointwise(t));
      out.poison();
      elementwise_add(t, da.get(), db.get(), out.get(), n, nullptr);
      expect(tag("elementwise_add", t, Layout::nchw) + sz, download(out, n, t),
             round_out(ref::elementwise_add<float>(a, b), t), pointwise(t));
      out.poison();
      residual_add(t, da.get(), db.get(), out.get(), n, nullptr);
      expect(tag("residual_add", t, Layout::nchw) + sz, download(out, n, t),
             round_out(ref::residual_add<float>(a, b), t), pointwise(t));
      // In place, as the trainer uses it.
      residual_add(t, da.get(), db.get(), da.get(), n, nullptr);
      expect(tag("residual_add in place", t, Layout::nchw) + sz, download(da, n, t),
             round_out(ref::residual_add<float>(a, b), t), pointwise(t));
      out.poison();
      relu_forward(t, db.get(), out.get(), n, nullptr);
      const V y = ref::relu_forward<float>(b);
      expect(tag("relu_forward", t, Layout::nchw) + sz, download(out, n, t), y, kExact);
      upload(da, a, t);
      Buf dy = device(y, t), dx(n * dtype_size(t));
      relu_backward(t, da.get(), dy.get(), dx.get(), n, nullptr);
      expect(tag("relu_backward", t, Layout::nchw) + sz, download(dx, n, t), ref::relu_backward<float>(a, y), kExact);
    }
  }
  const int rows = 7, cols = 10;
  const V bias = random(cols);
  Buf db = device(bias, DType::f32), out(rows * cols * 4);
  broadcast_bias(db.as<float>(), out.as<float>(), rows, cols, nullptr);
  expect("broadcast_bias f32", download(out, rows * cols, DType::f32), ref::broadcast_bias<float>(bias, rows), kExact);
}

void check_transpose() {
  for (DType t : kTypes)
    for (const Shape s : kShapes) {
      const V x = representable(random(s.count()), t);
      Buf dx = device(x, t), dy(s.count() * dtype_size(t));
      transpose_nchw_to_nhwc(t, dx.get(), dy.get(), s, nullptr);
      expect(tag("transpose_nchw_to_nhwc", t, Layout::nchw), download(dy, s.count(), t),
             ref::transpose_nchw_to_nhwc<float>(x, s), kExact);
      dy.poison();
      transpose_nhwc_to_nchw(t, dx.get(), dy.get(), s, nullptr);
      expect(tag("transpose_nhwc_to_nchw", t, Layout::nhwc), download(dy, s.count(), t),
             ref::transpose_nhwc_to_nchw<float>(x, s), kExact);
    }
}

void check_batchnorm() {
  for (DType t : kTypes)
    for (Layout l : kLayouts)
      for (const Shape s : kShapes)
        for (BnReduction r : {BnReduction::naive, BnReduction::parallel}) {
          const std::string variant = r == BnReduction::naive ? " naive" : " parallel";
          // An offset mean: the pivoted sums must not lose the variance.
          const V x = representable(random(s.count(), 2.0f, 6.0f), t);
          const V gamma = random(s.c, 0.5f, 1.5f), beta = random(s.c);
          Buf dx = device(x, t), dg = device(gamma, DType::f32), db = device(beta, DType::f32);
          Buf mean(s.c * 4), invstd(s.c * 4), a(s.c * 4), b(s.c * 4), part(bn_partials_bytes(s, l));
          bn_forward_stats(r, DeviceTensor{dx.get(), t, l, s}, dg.as<float>(), db.as<float>(), mean.as<float>(),
                           invstd.as<float>(), a.as<float>(), b.as<float>(), part.as<double>(), nullptr);
          const auto st = ref::bn_stats<float>(x, s, l);
          V ra, rb;
          ref::bn_forward_coefficients<float>(st, gamma, beta, ra, rb);
          const Tol red = reduction(DType::f32);  // statistics are fp32 whatever the data
          expect(tag("bn_forward_stats mean", t, l) + variant, download(mean, s.c, DType::f32), st.mean, red);
          expect(tag("bn_forward_stats invstd", t, l) + variant, download(invstd, s.c, DType::f32), st.invstd, red);
          expect(tag("bn_forward_stats a", t, l) + variant, download(a, s.c, DType::f32), ra, red);
          expect(tag("bn_forward_stats b", t, l) + variant, download(b, s.c, DType::f32), rb, red);
          if (r == BnReduction::naive) continue;

          // apply, with and without residual / ReLU (using the reference's a, b)
          upload(a, ra, DType::f32);
          upload(b, rb, DType::f32);
          const V res = representable(random(s.count()), t);
          Buf dres = device(res, t), dy(s.count() * dtype_size(t));
          for (int mode = 0; mode < 3; ++mode) {
            const bool with_res = mode >= 1, relu = mode == 2;
            dy.poison();
            bn_forward_apply(DeviceTensor{dx.get(), t, l, s}, a.as<float>(), b.as<float>(),
                             with_res ? dres.get() : nullptr, relu, DeviceTensor{dy.get(), t, l, s}, nullptr);
            const V want = ref::bn_forward_apply<float>(
                x, s, l, ra, rb, with_res ? std::span<const float>(res) : std::span<const float>(), relu);
            expect(tag(mode == 0 ? "bn_forward_apply"
                                 : (mode == 1 ? "bn_forward_apply +residual" : "bn_forward_apply +residual +relu"),
                       t, l),
                   download(dy, s.count(), t), round_out(want, t), pointwise(t));
          }

          // backward reductions and apply, with and without the fused ReLU mask
          const V y = representable(ref::relu_forward<float>(random(s.count())), t);
          const V g = representable(random(s.count()), t);
          Buf dgy = device(g, t), dyy = device(y, t);
          upload(mean, st.mean, DType::f32);
          upload(invstd, st.invstd, DType::f32);
          for (BnReduction rb2 : {BnReduction::naive, BnReduction::parallel})
            for (bool mask : {false, true}) {
              const std::string v2 =
                  std::string(rb2 == BnReduction::naive ? " naive" : " parallel") + (mask ? " +relu" : "");
              Buf dgam(s.c * dtype_size(t)), dbet(s.c * dtype_size(t)), ka(s.c * 4), kb(s.c * 4), kc(s.c * 4);
              bn_backward_reduce(rb2, DeviceTensor{dgy.get(), t, l, s}, mask ? dyy.get() : nullptr,
                                 DeviceTensor{dx.get(), t, l, s}, mean.as<float>(), invstd.as<float>(), dg.as<float>(),
                                 t, dgam.get(), dbet.get(), ka.as<float>(), kb.as<float>(), kc.as<float>(),
                                 part.as<double>(), nullptr);
              const auto want = ref::bn_backward<float>(g, y, x, s, l, st, gamma, mask);
              ref::Vec<double> sg, sgx;
              ref::bn_backward_sums<float>(want.g, x, s, l, sg, sgx);
              V rdg, rdb, rka, rkb, rkc;
              ref::bn_backward_coefficients<float>(sg, sgx, st, gamma, s.per_channel(), rdg, rdb, rka, rkb, rkc);
              expect(tag("bn_backward_reduce dgamma", t, l) + v2, download(dgam, s.c, t), round_out(rdg, t),
                     reduction(t));
              expect(tag("bn_backward_reduce dbeta", t, l) + v2, download(dbet, s.c, t), round_out(rdb, t),
                     reduction(t));
              expect(tag("bn_backward_reduce ka", t, l) + v2, download(ka, s.c, DType::f32), rka, red);
              expect(tag("bn_backward_reduce kb", t, l) + v2, download(kb, s.c, DType::f32), rkb, Tol{1e-4, 1e-3});
              expect(tag("bn_backward_reduce kc", t, l) + v2, download(kc, s.c, DType::f32), rkc, Tol{1e-4, 1e-3});
              if (rb2 == BnReduction::naive) continue;
              upload(ka, rka, DType::f32);
              upload(kb, rkb, DType::f32);
              upload(kc, rkc, DType::f32);
              Buf ddx(s.count() * dtype_size(t)), gout(s.count() * dtype_size(t));
              bn_backward_apply(DeviceTensor{dgy.get(), t, l, s}, mask ? dyy.get() : nullptr,
                                DeviceTensor{dx.get(), t, l, s}, ka.as<float>(), kb.as<float>(), kc.as<float>(),
                                DeviceTensor{ddx.get(), t, l, s}, gout.get(), nullptr);
              V rdx(s.count());
              for (std::int64_t i = 0; i < s.count(); ++i) {
                const int c = channel_of(i, s, l);
                rdx[i] = rka[c] * want.g[i] + rkb[c] * x[i] + rkc[c];
              }
              expect(tag("bn_backward_apply dx", t, l) + v2, download(ddx, s.count(), t), round_out(rdx, t),
                     t == DType::f32 ? Tol{1e-4, 1e-4} : pointwise(t));
              expect(tag("bn_backward_apply g", t, l) + v2, download(gout, s.count(), t), want.g, kExact);
            }
        }
}

void check_pool() {
  for (DType t : kTypes)
    for (Layout l : kLayouts)
      for (const Shape s : kShapes) {
        const V x = representable(random(s.count()), t);
        Buf dx = device(x, t), dy(s.n * s.c * dtype_size(t));
        avgpool_forward(DeviceTensor{dx.get(), t, l, s}, dy.get(), nullptr);
        expect(tag("avgpool_forward", t, l), download(dy, s.n * s.c, t),
               round_out(ref::avgpool_forward<float>(x, s, l), t), reduction(t));
        const V g = representable(random(s.n * s.c), t);
        upload(dy, g, t);
        dx.poison();
        avgpool_backward(dy.get(), DeviceTensor{dx.get(), t, l, s}, nullptr);
        expect(tag("avgpool_backward", t, l), download(dx, s.count(), t),
               round_out(ref::avgpool_backward<float>(g, s, l), t), pointwise(t));
      }
}

void check_softmax_xent() {
  for (DType t : kTypes)
    for (int rows : {7, 128, 300})
      for (bool with_bias : {false, true}) {
        const int k = 10;
        const V logits = random(rows * k, -4.0f, 4.0f), bias = random(k);
        std::vector<int> labels(rows);
        for (int& v : labels) v = static_cast<int>(g_rng() % k);
        Buf dl = device(logits, DType::f32), dbias = device(bias, DType::f32), dlab(rows * 4),
            dd(rows * k * dtype_size(t)), loss(4), correct(4);
        check_cuda(cudaMemcpy(dlab.get(), labels.data(), rows * 4, cudaMemcpyHostToDevice), "labels");
        softmax_xent(dl.as<float>(), with_bias ? dbias.as<float>() : nullptr, dlab.as<int>(), rows, k, t, dd.get(),
                     loss.as<float>(), correct.as<int>(), nullptr);
        const auto want = ref::softmax_xent<float>(
            logits, with_bias ? std::span<const float>(bias) : std::span<const float>(), labels, k);
        const std::string name = std::string("softmax_xent") + (with_bias ? " +bias" : "") +
                                 (t == DType::f32 ? " f32" : " bf16") + " rows=" + std::to_string(rows);
        expect(name + " loss", download(loss, 1, DType::f32), V{static_cast<float>(want.loss)}, Tol{1e-5, 1e-5});
        int got_correct = -1;
        check_cuda(cudaMemcpy(&got_correct, correct.get(), 4, cudaMemcpyDeviceToHost), "correct");
        expect(name + " correct", V{static_cast<float>(got_correct)}, V{static_cast<float>(want.correct)}, kExact);
        expect(name + " dlogits", download(dd, rows * k, t), round_out(want.dlogits, t),
               t == DType::f32 ? Tol{1e-6, 1e-4} : pointwise(t));
        Buf sums(k * dtype_size(t));
        upload(dd, representable(want.dlogits, t), t);
        column_sums(t, dd.get(), rows, k, sums.get(), nullptr);
        expect(std::string("column_sums") + (t == DType::f32 ? " f32" : " bf16") + " rows=" + std::to_string(rows),
               download(sums, k, t), round_out(ref::column_sums<float>(representable(want.dlogits, t), rows, k), t),
               Tol{1e-5, 1e-2});
      }
}

void check_sgd() {
  const SgdHyper h{0.1f, 0.9f, 5e-4f};
  const ref::SgdConfig cfg{h.lr, h.momentum, h.weight_decay};
  for (DType gt : kTypes)
    for (bool flat : {false, true})
      for (std::int64_t n : {std::int64_t{1001}, std::int64_t{4096}}) {
        const V w = random(n), v = random(n), g = representable(random(n), gt);
        Buf dw = device(w, DType::f32), dv = device(v, DType::f32), dg = device(g, gt), shadow(n * 2);
        sgd_momentum(dw.as<float>(), dv.as<float>(), gt, dg.get(), shadow.get(), n, h, flat, nullptr);
        V rw = w, rv = v;
        ref::sgd_momentum<float>(rw, rv, g, cfg);
        const std::string name = std::string(flat ? "sgd_momentum_flat" : "sgd_momentum") +
                                 (gt == DType::f32 ? " grads f32" : " grads bf16") + " n=" + std::to_string(n);
        expect(name + " weights", download(dw, n, DType::f32), rw, Tol{1e-6, 1e-5});
        expect(name + " momentum", download(dv, n, DType::f32), rv, Tol{1e-6, 1e-5});
        expect(name + " bf16 shadow", download(shadow, n, DType::bf16),
               round_out(download(dw, n, DType::f32), DType::bf16), kExact);
      }
  const V x = random(999);
  Buf dx = device(x, DType::f32), dy(999 * 2);
  cast_f32_to_bf16(dx.as<float>(), dy.get(), 999, nullptr);
  expect("cast_f32_to_bf16", download(dy, 999, DType::bf16), representable(x, DType::bf16), kExact);
}

void check_data() {
  const std::uint32_t seed = static_cast<std::uint32_t>(g_rng());
  const int count = 300;
  Buf recs(count * kRecordBytes);
  synthetic_dataset(recs.as<std::uint8_t>(), seed, 1000, count, nullptr);
  check_cuda(cudaDeviceSynchronize(), "synthetic_dataset");
  std::vector<std::uint8_t> got(count * kRecordBytes), want(count * kRecordBytes);
  check_cuda(cudaMemcpy(got.data(), recs.get(), got.size(), cudaMemcpyDeviceToHost), "records");
  for (int i = 0; i < count; ++i) ref::synthetic_record(seed, 1000 + i, want.data() + i * kRecordBytes);
  ++g_checks;
  if (got != want) {
    ++g_failures;
    std::printf("FAIL synthetic_dataset: records differ from the reference\n");
  } else {
    std::printf("ok   %-52s %d records, bit-identical\n", "synthetic_dataset", count);
  }
  for (DType t : kTypes)
    for (Layout l : kLayouts)
      for (bool resident : {false, true}) {
        ref::AugmentArgs args;
        args.seed = seed, args.step = 17, args.rank = 3, args.batch = 64, args.layout = l;
        args.channels = l == Layout::nhwc ? 8 : 3;
        const Shape s{args.batch, args.channels, kImageSize, kImageSize};
        Buf img(s.count() * dtype_size(t)), lab(args.batch * 4);
        augment(recs.as<std::uint8_t>(), resident ? count : 0, seed, args.step, args.rank,
                DeviceTensor{img.get(), t, l, s}, lab.as<int>(), nullptr);
        std::vector<std::uint32_t> idx;
        if (resident)
          for (int i = 0; i < args.batch; ++i) idx.push_back(sample_index(seed, args.step, args.rank, i, count));
        V ref_img;
        std::vector<int> ref_lab;
        ref::augment<float>(want, idx, args, ref_img, ref_lab);
        const std::string name = tag(resident ? "augment resident" : "augment staged", t, l);
        expect(name + " images", download(img, s.count(), t), round_out(ref_img, t),
               t == DType::f32 ? Tol{1e-6, 1e-6} : pointwise(t));
        std::vector<int> got_lab(args.batch);
        check_cuda(cudaMemcpy(got_lab.data(), lab.get(), args.batch * 4, cudaMemcpyDeviceToHost), "labels");
        expect(name + " labels", V(got_lab.begin(), got_lab.end()), V(ref_lab.begin(), ref_lab.end()), kExact);
      }
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("workload_kernel_check: no CUDA GPU visible: skipped\n");
    return 77;
  }
  unsigned seed = std::random_device{}();
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--seed") seed = static_cast<unsigned>(std::stoul(argv[i + 1]));
  g_rng.seed(seed);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("workload_kernel_check on %s, seed %u (repeat with --seed %u)\n", prop.name, seed, seed);
  check_pad();
  check_broadcast_and_pointwise();
  check_transpose();
  check_batchnorm();
  check_pool();
  check_softmax_xent();
  check_sgd();
  check_data();
  std::printf("workload_kernel_check: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
