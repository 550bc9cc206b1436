// cli/mpi.h: joining the processes of an `mpirun … gpuscope report`, and the
// little they say to each other (items sent to process 0, bytes and its
// exit code sent back).
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
#include <deque>
#include <thread>
#include <vector>

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

// Polls `ready` until it says yes: busily for the first ~50 µs (a message
// under way completes within a few polls), then sleeping, 10 µs at first and
// up to 1 ms, so that a long wait costs its node nothing.
template <class Ready>
void poll(Ready&& ready) {
  const auto start = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(10);
  while (!ready()) {
    if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(50)) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

void wait(MPI_Request* request) {
  poll([&] {
    int done = 0;
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

[[noreturn]] void abort_job(const std::string& what) {
  std::fprintf(stderr, "gpuscope: error: process %d of %d: %s\n", state().rank, state().size, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::_Exit(2);
}

// An item travels as pieces of up to kChunk bytes (MPI counts are int), the
// last one shorter (empty when the item is a multiple of kChunk): the
// receiver learns each piece's size from its probe, so no length goes first.
constexpr int kTagItem = 1;
constexpr std::size_t kChunk = std::size_t{1} << 30;
// Items a process has on their way at once: it goes on to the next while
// process 0 takes the last, but holds only this many unsent.
constexpr std::size_t kInFlight = 4;

struct Sending {
  std::string bytes;
  std::vector<MPI_Request> pieces;
};

void start_send(Sending& s) {
  for (std::size_t at = 0;; at += kChunk) {
    const std::size_t n = std::min(kChunk, s.bytes.size() - at);
    s.pieces.emplace_back();
    MPI_Isend(s.bytes.data() + at, static_cast<int>(n), MPI_BYTE, 0, kTagItem, MPI_COMM_WORLD, &s.pieces.back());
    if (n < kChunk) return;
  }
}

void finish_send(Sending& s) {
  for (MPI_Request& r : s.pieces) wait(&r);
}

std::string receive(int from) {
  std::string bytes;
  for (;;) {
    MPI_Message message;
    MPI_Status status;
    poll([&] {
      int found = 0;
      MPI_Improbe(from, kTagItem, MPI_COMM_WORLD, &found, &message, &status);
      return found != 0;
    });
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    const std::size_t at = bytes.size();
    bytes.resize(at + static_cast<std::size_t>(n));
    MPI_Mrecv(bytes.data() + at, n, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    if (static_cast<std::size_t>(n) < kChunk) return bytes;
  }
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
    std::deque<Sending> sending;
    for (std::size_t i = 0; i < n; ++i) {
      if (me == 0 && i % p != 0) take(i, receive(static_cast<int>(i % p)));
      if (me == 0 || i % p != me) continue;
      sending.push_back({mine(i), {}});
      start_send(sending.back());
      if (sending.size() > kInFlight) finish_send(sending.front()), sending.pop_front();
    }
    for (Sending& s : sending) finish_send(s);
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
}

void fail(const std::string& what) {
  if (!active()) throw Error(what);
  abort_job(what);
}

std::string broadcast(std::string bytes) {
  if (!active()) return bytes;
  try {
    // The length first, then pieces of up to kChunk bytes (MPI counts are int).
    std::uint64_t n = state().rank == 0 ? bytes.size() : 0;
    MPI_Request r;
    MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &r);
    wait(&r);
    if (state().rank != 0) bytes.assign(static_cast<std::size_t>(n), '\0');
    for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
      const std::size_t piece = std::min(kChunk, bytes.size() - at);
      MPI_Ibcast(bytes.data() + at, static_cast<int>(piece), MPI_BYTE, 0, MPI_COMM_WORLD, &r);
      wait(&r);
    }
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
  return bytes;
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

std::string broadcast(std::string bytes) { return bytes; }

void fail(const std::string& what) { throw Error(what); }

int finish(int code) { return code; }

#endif

}  // namespace gpuscope::cli::mpi
