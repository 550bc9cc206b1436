// The viewer's job load alone (viewer/job_lanes.h: load_job, what the job
// view's worker runs), without a window: job_memory_test.cpp runs it in a
// process of its own to compare its peak memory with `gpuscope report`'s.
// Prints "RANKS COLLECTIVES LANE_BYTES".
#include <cstdio>
#include <exception>

#include "export/trace_inputs.h"
#include "viewer/job_lanes.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: job_load_probe DIR\n");
    return 2;
  }
  try {
    const gpuscope::viewer::JobData job = gpuscope::viewer::load_job(gpuscope::list_trace_inputs({argv[1]}));
    std::printf("%zu %zu %zu\n", job.ranks.size(), job.profile.collectives.size(),
                gpuscope::viewer::job_lane_bytes(job));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "job_load_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
