// Fuzz target: the CIFAR-10 binary file parser (resnet-train --data cifar:DIR
// reads files a user hands it). Any input must either load completely or be
// refused with gpuscope::InputError — never crash, hang or load partially.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "trace/error.h"
#include "workloads/resnet/cifar.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpuscope::resnet::CifarDataset d;
  try {
    gpuscope::resnet::parse_cifar_file("fuzz-input", std::span<const std::uint8_t>(data, size), d);
    // Accepted: every byte is a record, every label is a CIFAR-10 class.
    if (d.count * 3073 != size || d.records.size() != size) std::abort();
    for (std::size_t i = 0; i < d.count; ++i)
      if (d.records[i * 3073] > 9) std::abort();
  } catch (const gpuscope::InputError&) {
    if (d.count != 0 || !d.records.empty()) std::abort();  // refused files leave nothing behind
  }
  return 0;
}
