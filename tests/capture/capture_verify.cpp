// capture_verify [--expect full|range-graph|range-copies] [--no-nccl] FILE.gscope
// Checks a capture of capture_workload against what it did (workload_checks.h).
// Prints one PASS/FAIL line per check; exit status 0 when all pass.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "capture/workload_checks.h"
#include "store/gscope.h"

int main(int argc, char** argv) {
  using namespace gpuscope::capture::workload;
  Expect expect = Expect::full;
  bool nccl = true;
  const char* file = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect" && i + 1 < argc) {
      const std::string e = argv[++i];
      if (e == "full")
        expect = Expect::full;
      else if (e == "range-graph")
        expect = Expect::range_graph;
      else if (e == "range-copies")
        expect = Expect::range_copies;
      else
        file = nullptr, i = argc;
    } else if (a == "--no-nccl") {
      nccl = false;
    } else {
      file = argv[i];
    }
  }
  if (!file) {
    std::fprintf(stderr, "usage: capture_verify [--expect full|range-graph|range-copies] [--no-nccl] FILE.gscope\n");
    return 2;
  }
  try {
    gpuscope::GscopeReadReport report;
    const gpuscope::Trace t = gpuscope::read_gscope(file, &report);
    int failed = 0;
    std::printf("%s %s: %s\n", report.complete ? "PASS" : "FAIL", "file complete",
                report.complete ? "footer present, every section intact" : "the writer did not finish");
    failed += !report.complete;
    for (const Check& c : check_workload(t, expect, nccl)) {
      std::printf("%s %s: %s\n", c.ok ? "PASS" : "FAIL", c.name.c_str(), c.detail.c_str());
      failed += !c.ok;
    }
    std::printf("%s: %d check(s) failed\n", file, failed);
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAIL read: %s\n", e.what());
    return 1;
  }
}
