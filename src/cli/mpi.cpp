// cli/mpi.h: joining the processes of an `mpirun … gpuscope report`, and the
// little they say to each other (items sent to process 0, its exit code
// sent back).
//
// Every wait polls and sleeps instead of blocking in MPI: Open MPI's blocking
// calls spin a core, and the processes that wait (for process 0 to finish
// its share, or the report) would take it from the ones still working on the
// same node.
#include "cli/mpi.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/command.h"

#if GPUSCOPE_HAVE_MPI
#include <mpi.h>
#endif

namespace gpuscope::cli::mpi {

namespace {

int parse_int(const char* s) {
  if (!s || !*s) return -1;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return *end == '\0' && v >= 0 && v <= 1'000'000'000 ? static_cast<int>(v) : -1;
}

struct State {
  bool joined = false;
  bool silent = false;  // not rank 0 of a job that fails alike on every process
  int rank = 0, size = 1;
};
State& state() {
  static State s;
  return s;
}

}  // namespace

Launch launch_from(const std::function<const char*(const char*)>& getenv) {
  Launch l;
  // The launchers' own variables, most specific first.
  const std::pair<const char*, const char*> kVars[] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"}, {nullptr, "PMIX_RANK"}};
  for (const auto& [size_var, rank_var] : kVars) {
    const char* size = size_var ? getenv(size_var) : nullptr;
    const char* rank = getenv(rank_var);
    if (!size && !rank) continue;
    l.launched = true;
    l.size = std::max(0, parse_int(size));
    l.rank = parse_int(rank);
    break;
  }
  // PMIx does not say the size; Slurm does, for its job step.
  if (l.launched && l.size == 0) l.size = std::max(0, parse_int(getenv("SLURM_STEP_NUM_TASKS")));
  return l;
}

Launch launch_from_environment() {
  return launch_from([](const char* name) { return std::getenv(name); });
}

bool built_with_mpi() { return GPUSCOPE_HAVE_MPI != 0; }
bool active() { return state().joined && state().size > 1; }
int rank() { return active() ? state().rank : 0; }
int size() { return active() ? state().size : 1; }
bool quiet() { return state().silent || (active() && state().rank != 0); }

#if GPUSCOPE_HAVE_MPI

namespace {

void wait(MPI_Request* request) {
  for (int done = 0;;) {
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

[[noreturn]] void abort_job(const std::string& what) {
  std::fprintf(stderr, "gpuscope: error: process %d of %d: %s\n", state().rank, state().size, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::_Exit(2);
}

constexpr int kTagLength = 1, kTagBytes = 2;
constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int: a long item goes in pieces

void send(const std::string& bytes) {
  std::uint64_t length = bytes.size();
  MPI_Request r;
  MPI_Isend(&length, 1, MPI_UINT64_T, 0, kTagLength, MPI_COMM_WORLD, &r);
  wait(&r);
  for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes.size() - at));
    MPI_Isend(bytes.data() + at, n, MPI_BYTE, 0, kTagBytes, MPI_COMM_WORLD, &r);
    wait(&r);
  }
}

std::string receive(int from) {
  std::uint64_t length = 0;
  MPI_Request r;
  MPI_Irecv(&length, 1, MPI_UINT64_T, from, kTagLength, MPI_COMM_WORLD, &r);
  wait(&r);
  std::string bytes(length, '\0');
  for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
    const int n = static_cast<int>(std::min<std::size_t>(kChunk, bytes.size() - at));
    MPI_Irecv(bytes.data() + at, n, MPI_BYTE, from, kTagBytes, MPI_COMM_WORLD, &r);
    wait(&r);
  }
  return bytes;
}

}  // namespace

void join() {
  State& s = state();
  if (s.joined) return;
  const Launch l = launch_from_environment();
  if (!l.launched || l.size == 1) return;
  int provided = 0;
  // Only the main thread calls MPI; the analysis threads never do.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  s.joined = true;
}

void gather_items(std::size_t n, const std::function<std::string(std::size_t)>& mine,
                  const std::function<void(std::size_t, std::string_view)>& take) {
  if (!active()) return;
  const auto p = static_cast<std::size_t>(state().size), me = static_cast<std::size_t>(state().rank);
  try {
    for (std::size_t i = 0; i < n; ++i) {
      if (me == 0 && i % p != 0) take(i, receive(static_cast<int>(i % p)));
      if (me != 0 && i % p == me) send(mine(i));
    }
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
}

int finish(int code) {
  State& s = state();
  if (!s.joined) return code;
  MPI_Request r;
  MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  wait(&r);
  MPI_Finalize();
  s.joined = false;
  return code;
}

#else  // built without MPI

void join() {
  const Launch l = launch_from_environment();
  if (!l.launched || l.size == 1) return;
  // Every process fails alike; one line for the job, from rank 0, when the rank is told.
  state().silent = l.rank > 0;
  throw Error(
      "launched as one of several MPI processes, but this gpuscope was built without MPI (GPUSCOPE_MPI): "
      "rebuild with MPI, or run one `gpuscope report -j N` on one node");
}

void gather_items(std::size_t, const std::function<std::string(std::size_t)>&,
                  const std::function<void(std::size_t, std::string_view)>&) {}

int finish(int code) { return code; }

#endif

}  // namespace gpuscope::cli::mpi
