#include "workloads/resnet/cifar.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kernels/data.h"
#include "kernels/reference/data.h"
#include "trace/error.h"

namespace gpuscope::resnet {

namespace fs = std::filesystem;
using kernels::kClasses;
using kernels::kRecordBytes;

void parse_cifar_file(const std::string& name, std::span<const std::uint8_t> bytes, CifarDataset& out) {
  if (bytes.empty()) throw InputError(name, "empty file (a CIFAR-10 binary file holds 3073-byte records)");
  if (bytes.size() % kRecordBytes != 0) {
    const std::size_t whole = bytes.size() / kRecordBytes;
    throw InputError(name,
                     "size " + std::to_string(bytes.size()) + " is not a multiple of 3073 bytes: record " +
                         std::to_string(whole) + " is truncated",
                     whole * kRecordBytes);
  }
  const std::size_t n = bytes.size() / kRecordBytes;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t label = bytes[i * kRecordBytes];
    if (label >= kClasses)
      throw InputError(name,
                       "record " + std::to_string(i) + " has label " + std::to_string(label) +
                           " (CIFAR-10 labels are 0-9; is this CIFAR-100 or not a CIFAR file?)",
                       i * kRecordBytes);
  }
  out.records.insert(out.records.end(), bytes.begin(), bytes.end());
  out.count += n;
}

namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw InputError(path, "cannot determine the file size");
  // The real training files are 30 MB; refuse anything absurd before allocating.
  if (size > (std::streamoff{1} << 32)) throw InputError(path, "larger than 4 GiB: not a CIFAR-10 batch file");
  in.seekg(0);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw InputError(path, "read failed", static_cast<std::uint64_t>(in.gcount()));
  return bytes;
}

void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, std::string("cannot create: ") + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError(path, "write failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path, "cannot rename the temporary file into place: " + ec.message());
  }
}

}  // namespace

CifarDataset load_cifar_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, "no such directory (expected CIFAR-10 binary files)");
  CifarDataset data;
  int files = 0;
  for (int i = 1;; ++i) {
    const std::string path = (fs::path(dir) / ("data_batch_" + std::to_string(i) + ".bin")).string();
    if (!fs::exists(path, ec)) break;
    parse_cifar_file(path, read_file(path), data);
    ++files;
  }
  if (files == 0)
    throw InputError(dir, "no data_batch_1.bin: not a CIFAR-10 binary directory (make one with --make-cifar DIR)");
  for (int i = files + 2; i <= files + 5; ++i) {
    const std::string later = "data_batch_" + std::to_string(i) + ".bin";
    if (fs::exists(fs::path(dir) / later, ec))
      throw InputError(dir, "data_batch_" + std::to_string(files + 1) + ".bin is missing but " + later + " exists");
  }
  data.source = dir + " (" + std::to_string(files) + (files == 1 ? " file)" : " files)");
  return data;
}

std::vector<std::uint8_t> synthetic_records(std::uint32_t seed, std::uint32_t first, std::size_t count) {
  std::vector<std::uint8_t> out(count * kRecordBytes);
  // Records are independent; a few threads make the 50,000-image dataset
  // appear in well under a second.
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < count; i += threads)
        kernels::ref::synthetic_record(seed, first + static_cast<std::uint32_t>(i), out.data() + i * kRecordBytes);
    });
  for (auto& th : pool) th.join();
  return out;
}

CifarDataset synthetic_dataset(std::uint32_t seed, std::size_t count) {
  CifarDataset d;
  d.records = synthetic_records(seed, 0, count);
  d.count = count;
  d.source = "synthetic (seed " + std::to_string(seed) + ", " + std::to_string(count) + " images)";
  return d;
}

void write_cifar_dir(const std::string& dir, std::uint32_t seed, std::size_t records_per_file) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) throw InputError(dir, "cannot create directory");
  const auto n = static_cast<std::uint32_t>(records_per_file);
  for (int f = 0; f < 6; ++f) {
    const std::string name = f < 5 ? "data_batch_" + std::to_string(f + 1) + ".bin" : "test_batch.bin";
    write_file_atomically((fs::path(dir) / name).string(),
                          synthetic_records(seed, static_cast<std::uint32_t>(f) * n, n));
  }
}

}  // namespace gpuscope::resnet
