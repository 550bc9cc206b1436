// CIFAR-10 binary files: the synthetic dataset written and read back, and
// every kind of broken file refused with the file name and the byte offset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernels/data.h"
#include "trace/error.h"
#include "workloads/resnet/cifar.h"

namespace gpuscope::resnet {
namespace {

namespace fs = std::filesystem;
using kernels::kRecordBytes;

class CifarFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscope_cifar_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  // The error message of loading dir_ (or "(loaded)").
  std::string load_error() {
    try {
      load_cifar_dir(dir_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "(loaded)";
  }

  fs::path dir_;
};

TEST_F(CifarFiles, WriteThenLoadRoundTrips) {
  write_cifar_dir(dir_.string(), 7, 20);
  for (const char* f : {"data_batch_1.bin", "data_batch_5.bin", "test_batch.bin"})
    EXPECT_EQ(fs::file_size(dir_ / f), 20u * kRecordBytes) << f;
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".bin");
  }
  EXPECT_EQ(files, 6);
  const CifarDataset d = load_cifar_dir(dir_.string());
  EXPECT_EQ(d.count, 100u);
  EXPECT_EQ(d.records, synthetic_records(7, 0, 100));  // test_batch (indices 100..119) is not training data
  EXPECT_NE(d.source.find("5 files"), std::string::npos);
}

TEST_F(CifarFiles, MissingDirectory) {
  EXPECT_EQ(load_error(), dir_.string() + ": no such directory (expected CIFAR-10 binary files)");
}

TEST_F(CifarFiles, NoTrainingFiles) {
  fs::create_directories(dir_);
  write(dir_ / "test_batch.bin", synthetic_records(1, 0, 2));
  EXPECT_NE(load_error().find("no data_batch_1.bin"), std::string::npos);
}

TEST_F(CifarFiles, GapInNumbering) {
  fs::create_directories(dir_);
  write(dir_ / "data_batch_1.bin", synthetic_records(1, 0, 2));
  write(dir_ / "data_batch_3.bin", synthetic_records(1, 2, 2));
  EXPECT_NE(load_error().find("data_batch_2.bin is missing but data_batch_3.bin exists"), std::string::npos);
}

TEST_F(CifarFiles, TruncatedRecord) {
  fs::create_directories(dir_);
  auto bytes = synthetic_records(1, 0, 3);
  bytes.resize(bytes.size() - 100);
  write(dir_ / "data_batch_1.bin", bytes);
  const std::string path = (dir_ / "data_batch_1.bin").string();
  EXPECT_EQ(load_error(), path + " (at byte 6146): size 9119 is not a multiple of 3073 bytes: record 2 is truncated");
}

TEST_F(CifarFiles, BadLabel) {
  fs::create_directories(dir_);
  auto bytes = synthetic_records(1, 0, 3);
  bytes[2 * kRecordBytes] = 57;  // CIFAR-100 fine label, say
  write(dir_ / "data_batch_1.bin", bytes);
  const std::string e = load_error();
  EXPECT_NE(e.find("data_batch_1.bin (at byte 6146): record 2 has label 57"), std::string::npos) << e;
}

TEST_F(CifarFiles, EmptyFile) {
  fs::create_directories(dir_);
  write(dir_ / "data_batch_1.bin", {});
  EXPECT_NE(load_error().find("data_batch_1.bin: empty file"), std::string::npos);
}

TEST_F(CifarFiles, UnwritableDirectory) {
  fs::create_directories(dir_);
  write(dir_ / "blocker", {1});
  try {
    write_cifar_dir((dir_ / "blocker" / "sub").string(), 1, 1);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create directory"), std::string::npos);
  }
}

TEST(CifarParse, AcceptsEveryRecordOfAGoodBuffer) {
  CifarDataset d;
  const auto bytes = synthetic_records(2, 10, 5);
  parse_cifar_file("buf", bytes, d);
  parse_cifar_file("buf", bytes, d);
  EXPECT_EQ(d.count, 10u);
  EXPECT_EQ(d.records.size(), 10u * kRecordBytes);
}

TEST(CifarParse, SyntheticDatasetMatchesRecords) {
  const CifarDataset d = synthetic_dataset(3, 40);
  EXPECT_EQ(d.count, 40u);
  EXPECT_EQ(d.records, synthetic_records(3, 0, 40));
  // Different records differ.
  EXPECT_FALSE(std::equal(d.records.begin(), d.records.begin() + kRecordBytes, d.records.begin() + kRecordBytes));
}

}  // namespace
}  // namespace gpuscope::resnet
