// The input pipeline's GPU half: generating the synthetic CIFAR records on
// the device (--data synthetic keeps the whole dataset there), and building a
// training batch — sample, random crop through reflect padding + shift, flip,
// normalise, write the network's layout and dtype (kernels/data.h has the
// shared definitions the CPU reference uses too).
#pragma once

#include "kernels/cuda_common.cuh"
#include "kernels/data.h"

namespace gpuscope::kernels {

// ---- CUDA kernels --------------------------------------------------------------

__global__ void synthetic_dataset_kernel(std::uint8_t* __restrict__ records, std::uint32_t seed, std::uint32_t first,
                                         std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count * kRecordBytes;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const auto index = first + static_cast<std::uint32_t>(i / kRecordBytes);
    const int byte = static_cast<int>(i % kRecordBytes);
    const int label = synthetic_label(seed, index);
    if (byte == 0) {
      records[i] = static_cast<std::uint8_t>(label);
    } else {
      const int p = byte - 1, c = p / (kImageSize * kImageSize), y = (p / kImageSize) % kImageSize, x = p % kImageSize;
      records[i] = synthetic_pixel(seed, index, label, c, y, x);
    }
  }
}

// One thread per output element, in output order (coalesced writes).
template <class T>
__global__ void augment_crop_flip_kernel(const std::uint8_t* __restrict__ records, std::uint32_t dataset_size,
                                         std::uint32_t seed, std::uint32_t step, std::uint32_t rank,
                                         T* __restrict__ images, int* __restrict__ labels, Shape s, Layout l) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < s.count();
       i += std::int64_t{gridDim.x} * blockDim.x) {
    int n, c, y, x;
    if (l == Layout::nchw) {
      x = static_cast<int>(i % s.w), y = static_cast<int>((i / s.w) % s.h);
      c = static_cast<int>((i / s.hw()) % s.c), n = static_cast<int>(i / (std::int64_t{s.hw()} * s.c));
    } else {
      c = static_cast<int>(i % s.c), x = static_cast<int>((i / s.c) % s.w);
      y = static_cast<int>((i / (std::int64_t{s.c} * s.w)) % s.h),
      n = static_cast<int>(i / (std::int64_t{s.c} * s.hw()));
    }
    const std::uint32_t rec = dataset_size ? sample_index(seed, step, rank, static_cast<std::uint32_t>(n), dataset_size)
                                           : static_cast<std::uint32_t>(n);
    const std::uint8_t* r = records + static_cast<std::int64_t>(rec) * kRecordBytes;
    float v = 0.0f;
    if (c < kImageChannels) {
      const AugmentChoice a = augment_choice(seed, step, rank, static_cast<std::uint32_t>(n));
      v = normalize_pixel(r[1 + (c * kImageSize + augment_source_row(a, y)) * kImageSize + augment_source_col(a, x)],
                          c);
    }
    images[i] = from_f32<T>(v);
    if (c == 0 && y == 0 && x == 0) labels[n] = r[0];
  }
}

// ---- kernel launchers ------------------------------------------------------------

void synthetic_dataset(std::uint8_t* records, std::uint32_t seed, std::uint32_t first, std::int64_t count,
                       cudaStream_t stream) {
  synthetic_dataset_kernel<<<grid_for(count * kRecordBytes), kThreads, 0, stream>>>(records, seed, first, count);
  check_launch("synthetic_dataset");
}

void augment(const std::uint8_t* records, std::uint32_t dataset_size, std::uint32_t seed, std::uint32_t step,
             std::uint32_t rank, const DeviceTensor& images, int* labels, cudaStream_t stream) {
  require_arg(images.shape.h == kImageSize && images.shape.w == kImageSize && images.shape.c >= kImageChannels,
              "augment: images must be (n, >=3, 32, 32)");
  GS_DISPATCH(images.dtype, T, {
    augment_crop_flip_kernel<T><<<grid_for(images.shape.count()), kThreads, 0, stream>>>(
        records, dataset_size, seed, step, rank, static_cast<T*>(images.data), labels, images.shape, images.layout);
  });
  check_launch("augment");
}

}  // namespace gpuscope::kernels
