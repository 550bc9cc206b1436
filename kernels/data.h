// The workload's input data, defined once for the GPU kernels, the CPU
// references and `resnet-train --make-cifar`: a counter-based hash RNG, the
// learnable synthetic CIFAR-like images, and the augmentation mapping (random
// crop through reflect padding + shift, horizontal flip, normalisation).
//
// Everything is a pure function of (seed, indices), never of a stateful
// generator, so a GPU thread, a CPU loader thread and a test compute the same
// pixel independently and results do not depend on launch geometry.
#pragma once

#include <cstdint>

#include "kernels/common.h"

namespace gpuscope::kernels {

// ---- CIFAR-10 binary record geometry ---------------------------------------
inline constexpr int kImageSize = 32;
inline constexpr int kImageChannels = 3;
inline constexpr int kImageBytes = kImageChannels * kImageSize * kImageSize;  // 3072
inline constexpr int kRecordBytes = 1 + kImageBytes;                          // 3073: label, R, G, B planes
inline constexpr int kClasses = 10;
inline constexpr int kCropPad = 4;  // random crop = reflect pad 4 + shift in [-4, 4]

// ---- counter-based RNG -------------------------------------------------------
// A 32-bit integer finaliser (Chris Wellons' "lowbias32"): good avalanche, a
// handful of ALU ops, identical on host and device.
GS_HD std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
GS_HD std::uint32_t hash_mix(std::uint32_t a, std::uint32_t b) { return hash32(a ^ (hash32(b) + 0x9e3779b9U)); }
GS_HD std::uint32_t hash4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return hash_mix(hash_mix(hash_mix(a, b), c), d);
}

// ---- the synthetic dataset ---------------------------------------------------
// Learnable on purpose: the class decides a colour (5 choices) and a stripe
// orientation (2 choices); each image gets its own stripe phase and pixel
// noise. Colour is learnable from global pooling alone, orientation needs the
// convolutions, so the loss of a working trainer falls within a few steps.
GS_HD int synthetic_label(std::uint32_t seed, std::uint32_t index) {
  return static_cast<int>(hash_mix(seed, index) % kClasses);
}

GS_HD std::uint8_t synthetic_pixel(std::uint32_t seed, std::uint32_t index, int label, int c, int y, int x) {
  // Five colours well apart in RGB.
  constexpr int kColour[5][3] = {{200, 60, 60}, {60, 200, 60}, {60, 60, 200}, {200, 200, 60}, {60, 200, 200}};
  const int colour = label % 5;
  const bool vertical = label >= 5;
  const std::uint32_t phase = hash_mix(seed ^ 0xa5a5a5a5U, index) & 7U;
  const std::uint32_t along = static_cast<std::uint32_t>(vertical ? x : y) + phase;
  const int stripe = (along & 4U) ? 40 : -40;
  const std::uint32_t noise_bits =
      hash4(seed, index, static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(y * kImageSize + x));
  const int noise = static_cast<int>(noise_bits % 65U) - 32;  // [-32, 32]
  int v = kColour[colour][c] + stripe + noise;
  v = v < 0 ? 0 : (v > 255 ? 255 : v);
  return static_cast<std::uint8_t>(v);
}

// ---- augmentation ------------------------------------------------------------
// Which dataset record sample i of a step reads when data is resident on the
// GPU (with replacement; a different stream per rank).
GS_HD std::uint32_t sample_index(std::uint32_t seed, std::uint32_t step, std::uint32_t rank, std::uint32_t i,
                                 std::uint32_t dataset_size) {
  return hash4(seed ^ 0x51ed270bU, step, rank, i) % dataset_size;
}

struct AugmentChoice {
  int dy = 0, dx = 0;  // crop offset in [-kCropPad, kCropPad]
  bool flip = false;
};

GS_HD AugmentChoice augment_choice(std::uint32_t seed, std::uint32_t step, std::uint32_t rank, std::uint32_t i) {
  const std::uint32_t h = hash4(seed ^ 0x2c1b3c6dU, step, rank, i);
  AugmentChoice a;
  a.dy = static_cast<int>(h % (2 * kCropPad + 1)) - kCropPad;
  a.dx = static_cast<int>((h / (2 * kCropPad + 1)) % (2 * kCropPad + 1)) - kCropPad;
  a.flip = ((h >> 24) & 1U) != 0;
  return a;
}

// Reflect an index into [0, n) without repeating the edge (PyTorch's
// ReflectionPad): -1 -> 1, n -> n - 2. Valid for |overhang| < n.
GS_HD int reflect_index(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i); }

// Source pixel (y, x) of output pixel (oy, ox): flip the output column, then
// shift (a crop of the reflect-padded image).
GS_HD int augment_source_row(AugmentChoice a, int oy) { return reflect_index(oy + a.dy, kImageSize); }
GS_HD int augment_source_col(AugmentChoice a, int ox) {
  const int x = a.flip ? kImageSize - 1 - ox : ox;
  return reflect_index(x + a.dx, kImageSize);
}

// Per-channel normalisation with the CIFAR-10 training-set statistics.
GS_HD float normalize_pixel(std::uint8_t v, int c) {
  constexpr float kMean[3] = {0.4914f, 0.4822f, 0.4465f};
  constexpr float kInvStd[3] = {1.0f / 0.2470f, 1.0f / 0.2435f, 1.0f / 0.2616f};
  return (static_cast<float>(v) * (1.0f / 255.0f) - kMean[c]) * kInvStd[c];
}

}  // namespace gpuscope::kernels
