// gpuscope view FILE [COMPARE_FILE] | DIR | FILE…: opens traces (or a job of many ranks) in the desktop viewer by
// running gpuscope-view, which is installed next to the gpuscope binary. The
// viewer's flags are declared here too, so `gpuscope view --help` tells the
// truth and a misspelt flag fails here with the usual one-line error.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "trace/name_pattern.h"

namespace gpuscope::cli {
namespace {

// What --help says of the command.
constexpr const char* kAbout =
    "Open traces in the desktop viewer (gpuscope-view): timeline, hotspots, ops, findings, summary, compare; a "
    "directory of rank traces opens as a job (one timeline on the job clock)";

struct ViewArgs {
  std::vector<std::string> files;
  std::string screenshot, size, view, zoom, select, select_op, find, font, select_instance;
  bool regex = false, ops_by_shapes = false, critical_path = false;
  int frames = 0;
};

std::filesystem::path viewer_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return self.parent_path() / "gpuscope-view";
}

void run(const ViewArgs& a) {
  if (a.regex && !a.find.empty()) {
    try {
      (void)NamePattern(a.find);
    } catch (const PatternError& e) {
      throw Error("--find '" + a.find + "': not a regular expression: " + e.what());
    }
  }
  const std::filesystem::path viewer = viewer_path();
  std::error_code ec;
  if (viewer.empty() || !std::filesystem::exists(viewer, ec))
    throw Error("gpuscope-view: not found next to gpuscope (" + viewer.string() +
                "); it is built when Dear ImGui, GLFW and OpenGL are installed (scripts/setup.sh)");
  std::vector<std::string> args{viewer.string()};
  for (const std::string& f : a.files) args.push_back(f);
  auto flag = [&](const char* name, const std::string& value) {
    if (value.empty()) return;
    args.emplace_back(name);
    args.push_back(value);
  };
  flag("--screenshot", a.screenshot);
  flag("--size", a.size);
  flag("--view", a.view);
  flag("--zoom", a.zoom);
  flag("--select", a.select);
  flag("--select-op", a.select_op);
  if (a.ops_by_shapes) args.emplace_back("--ops-by-shapes");
  flag("--find", a.find);
  if (a.regex) args.emplace_back("--regex");
  if (a.critical_path) args.emplace_back("--critical-path");
  if (a.frames > 0) flag("--frames", std::to_string(a.frames));
  flag("--font", a.font);
  flag("--select-instance", a.select_instance);
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  throw Error("gpuscope-view: cannot run " + viewer.string() + ": " + std::strerror(errno));
}

void add(CLI::App& app, Context&) {
  const auto [cmd, args] = add_command<ViewArgs>(app, "view", kAbout, run);
  cmd->add_option(
         "files", args->files,
         "trace to open (.gscope, Chrome/Kineto .json or .json.gz, Nsight Systems .sqlite); a second one to compare; "
         "a directory or more than two files: a job of many ranks on one timeline")
      ->required()
      ->expected(1, 1 << 20);
  cmd->add_option("--screenshot", args->screenshot,
                  "headless: render, write OUT.png and OUT.json, exit (- or a FIFO/device: the PNG through it, no "
                  "JSON)");
  cmd->add_option("--size", args->size, "window / image size WIDTHxHEIGHT (default 1280x800)");
  cmd->add_option("--view", args->view, "panel to show: timeline, hotspots, ops, findings, summary or compare");
  cmd->add_option("--zoom", args->zoom, "visible range START:END from the trace start, in ns or with a unit (0:5ms)");
  cmd->add_option("--select", args->select, "select the first instance of this kernel");
  cmd->add_option("--select-op", args->select_op,
                  "highlight the kernels of this framework op (exact name) and select the first");
  cmd->add_flag("--ops-by-shapes", args->ops_by_shapes, "the Ops tab per op name × input shapes");
  cmd->add_option("--find", args->find, "search names for this text and highlight the matches");
  cmd->add_flag("--regex", args->regex, "--find is a regular expression");
  cmd->add_flag("--critical-path", args->critical_path,
                "draw the critical path of the visible steps (the toolbar's toggle; docs/whatif.md)");
  cmd->add_option("--frames", args->frames, "headless: frames to render after loading (default 3)");
  cmd->add_option("--font", args->font, "TrueType font of the UI (default: DejaVu Sans, Debian's fonts-dejavu-core)");
  cmd->add_option("--select-instance", args->select_instance,
                  "job view: select the N-th collective instance: its parts linked on every rank, the last arrival "
                  "marked");
  add_examples(*cmd, {"gpuscope view run.gscope", "gpuscope view before.gscope after.gscope",
                      "xvfb-run -a gpuscope view run.gscope --view findings --screenshot findings.png"});
}

const CommandRegistration registration(80, add);

}  // namespace
}  // namespace gpuscope::cli
