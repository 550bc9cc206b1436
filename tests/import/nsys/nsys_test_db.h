// Helpers of the Nsight Systems import tests: real exports by name, SQLite
// databases built from SQL in a test's own folder.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "import/nsys/nsys_sqlite.h"
#include "support/real_traces.h"

namespace gpuscope::testing {

// A real export of tests/data/traces/nsys; a missing one throws, naming it.
inline std::string nsys_trace(const std::string& name) { return real_trace("nsys/" + name); }
inline constexpr const char* kNsys2022 = "nsys2022-saxpy-mpi-openacc.sqlite";
inline constexpr const char* kNsys2024 = "nsys2024-cloverleaf-a100-mpi.sqlite";

// A fresh folder per test, removed afterwards.
class NsysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("gpuscope-nsys-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A database made by running `sql`; `page_size` 0 = SQLite's default.
  std::string make_db(const std::string& name, const std::string& sql, int page_size = 0) const {
    const std::string p = path(name);
    std::filesystem::remove(p);
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const std::string all = (page_size ? "PRAGMA page_size = " + std::to_string(page_size) + ";" : std::string()) + sql;
    const int rc = sqlite3_exec(db, all.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << "\n" << sql;
    sqlite3_free(err);
    sqlite3_close(db);
    return p;
  }

  std::filesystem::path dir_;
};

// Imports twice, through the direct page reader and through SQLite alone.
inline Trace import_slow(const std::string& path) {
  NsysImportOptions o;
  o.direct_read = false;
  return import_nsys_sqlite(path, o);
}

}  // namespace gpuscope::testing
