// Reference: synthetic CIFAR records and the augmentation kernel (gather a
// batch of records, random crop + flip, normalise, write the chosen layout,
// zero any extra input channels the tensor-core layout pads to).
#pragma once

#include "kernels/data.h"
#include "kernels/reference/tensor.h"

namespace gpuscope::kernels::ref {

// One 3073-byte CIFAR-10 record of the synthetic dataset.
inline void synthetic_record(std::uint32_t seed, std::uint32_t index, std::uint8_t* out) {
  const int label = synthetic_label(seed, index);
  out[0] = static_cast<std::uint8_t>(label);
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < kImageSize; ++y)
      for (int x = 0; x < kImageSize; ++x)
        out[1 + (c * kImageSize + y) * kImageSize + x] = synthetic_pixel(seed, index, label, c, y, x);
}

struct AugmentArgs {
  std::uint32_t seed = 0, step = 0, rank = 0;
  int batch = 0;
  int channels = kImageChannels;  // >= 3; channels 3.. are zero
  Layout layout = Layout::nchw;
};

// records: `count` records of kRecordBytes. indices: which record each sample
// reads (empty: sample i reads record i). Fills images (batch, channels, 32,
// 32) in args.layout and labels.
template <class S>
void augment(std::span<const std::uint8_t> records, std::span<const std::uint32_t> indices, const AugmentArgs& args,
             Vec<S>& images, std::vector<int>& labels) {
  const Shape s{args.batch, args.channels, kImageSize, kImageSize};
  images.assign(s.count(), S(0));
  labels.assign(args.batch, 0);
  for (int i = 0; i < args.batch; ++i) {
    const std::size_t rec = indices.empty() ? static_cast<std::size_t>(i) : indices[i];
    require((rec + 1) * kRecordBytes <= records.size(), "augment: record index");
    const std::uint8_t* r = records.data() + rec * kRecordBytes;
    labels[i] = r[0];
    const AugmentChoice a = augment_choice(args.seed, args.step, args.rank, static_cast<std::uint32_t>(i));
    for (int c = 0; c < kImageChannels; ++c)
      for (int y = 0; y < kImageSize; ++y)
        for (int x = 0; x < kImageSize; ++x) {
          const std::uint8_t v =
              r[1 + (c * kImageSize + augment_source_row(a, y)) * kImageSize + augment_source_col(a, x)];
          images[offset(s, args.layout, i, c, y, x)] = static_cast<S>(normalize_pixel(v, c));
        }
  }
}

}  // namespace gpuscope::kernels::ref
