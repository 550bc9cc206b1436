// CIFAR-10 binary files: reading (untrusted input: every file is checked),
// writing the synthetic dataset in the same format (`--make-cifar`), and
// generating it in memory (`--data host`).
//
// Format: no header; records of 3073 bytes = 1 label byte (0-9), then the
// 1024 red, 1024 green and 1024 blue bytes of a 32x32 image, rows in order.
// Training files are data_batch_1.bin … data_batch_5.bin (10,000 records each
// in the real dataset; any positive number is accepted here).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpuscope::resnet {

struct CifarDataset {
  std::vector<std::uint8_t> records;  // count * kRecordBytes, as in the files
  std::size_t count = 0;
  std::string source;  // "DIR (5 files)", "synthetic (seed 1)", …
};

// Checks one file's bytes and appends its records. Throws gpuscope::InputError
// naming `name` and the byte offset of the first problem.
void parse_cifar_file(const std::string& name, std::span<const std::uint8_t> bytes, CifarDataset& out);

// Loads data_batch_1.bin, data_batch_2.bin, … (consecutive, at least one) from
// dir. Throws InputError for a missing directory, no training files, a gap in
// the numbering, or a bad file.
CifarDataset load_cifar_dir(const std::string& dir);

// count records of the synthetic dataset, indices first .. first + count - 1.
std::vector<std::uint8_t> synthetic_records(std::uint32_t seed, std::uint32_t first, std::size_t count);
CifarDataset synthetic_dataset(std::uint32_t seed, std::size_t count);

// Writes data_batch_1..5.bin (training indices 0 .. 5n-1) and test_batch.bin
// (indices 5n .. 6n-1), each through a temporary name and a rename, creating
// dir if needed. Throws InputError if dir cannot be written.
void write_cifar_dir(const std::string& dir, std::uint32_t seed, std::size_t records_per_file = 10000);

}  // namespace gpuscope::resnet
