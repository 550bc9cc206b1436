// How a process learns it is one of several (cli/mpi.h): each launcher's
// variables give the rank and size, a plain run has none; and a gpuscope
// built without MPI, launched as one of several, refuses with exit 2 and
// only rank 0 says why (this test builds cli/mpi.cpp without MPI).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "cli/command.h"
#include "cli/mpi.h"

namespace gpuscope::cli::mpi {
namespace {

Launch launch(const std::map<std::string, std::string>& env) {
  return launch_from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(MpiLaunch, EachLauncherSaysRankAndSize) {
  EXPECT_FALSE(launch({}).launched);
  EXPECT_FALSE(launch({{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"}}).launched);  // an sbatch script, no srun
  Launch l = launch({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.size, 4);
  l = launch({{"PMI_SIZE", "16"}, {"PMI_RANK", "0"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.rank, 0);
  EXPECT_EQ(l.size, 16);
  l = launch({{"PMIX_RANK", "2"}, {"SLURM_STEP_NUM_TASKS", "8"}});  // srun --mpi=pmix
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.size, 8);
  l = launch({{"PMIX_RANK", "5"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.size, 0);  // not told
  l = launch({{"OMPI_COMM_WORLD_SIZE", "two"}, {"OMPI_COMM_WORLD_RANK", "-1"}});
  EXPECT_TRUE(l.launched);
  EXPECT_EQ(l.rank, -1);
  EXPECT_EQ(l.size, 0);
}

TEST(MpiLaunch, BuiltWithoutMpiRefusesAndOnlyRankZeroSaysWhy) {
  ASSERT_FALSE(built_with_mpi());
  ::unsetenv("PMI_SIZE");
  ::unsetenv("PMIX_RANK");
  ::setenv("OMPI_COMM_WORLD_SIZE", "1", 1);  // one process: nothing to share, it runs as always
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_NO_THROW(join());
  EXPECT_FALSE(quiet());
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    join();
    FAIL() << "joined";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("this gpuscope was built without MPI (GPUSCOPE_MPI)"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(quiet());  // rank 0 prints it
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  EXPECT_THROW(join(), Error);
  EXPECT_TRUE(quiet());  // rank 1 exits 2 without a word
  EXPECT_EQ(finish(2), 2);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
}

}  // namespace
}  // namespace gpuscope::cli::mpi
