#include "cli/job.h"

#include "cli/command.h"
#include "cli/mpi.h"

namespace gpuscope::cli {

namespace {

// The processes of this `gpuscope` run, as cli/mpi.h joined them.
class MpiProcesses final : public job::Processes {
 public:
  bool active() const override { return mpi::active(); }
  int rank() const override { return mpi::rank(); }
  int size() const override { return mpi::size(); }
  bool quiet() const override { return mpi::quiet(); }
  void gather_items(std::size_t n, const std::function<std::string(std::size_t)>& mine,
                    const std::function<void(std::size_t, std::string_view)>& take) override {
    mpi::gather_items(n, mine, take);
  }
  std::string broadcast(std::string bytes) override { return mpi::broadcast(std::move(bytes)); }
  [[noreturn]] void fail(const std::string& what) override { mpi::fail(what); }
};

JobOptions with_mpi(const JobOptions& o) {
  static MpiProcesses processes;
  JobOptions out = o;
  out.processes = &processes;
  return out;
}

}  // namespace

Profile analyze_files(const std::vector<std::string>& files, const JobOptions& o) {
  try {
    return job::analyze_job(files, with_mpi(o));
  } catch (const job::Error& e) {
    throw Error(e.what());
  }
}

Profile load_profile(const std::string& path, const JobOptions& o) {
  try {
    return job::load_side(path, with_mpi(o));
  } catch (const job::Error& e) {
    throw Error(e.what());
  }
}

}  // namespace gpuscope::cli
