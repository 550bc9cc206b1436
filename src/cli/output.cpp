#include "cli/output.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdlib>

#include "cli/command.h"
#include "cli/mpi.h"
#include "import/trace_info.h"
#include "trace/damage.h"
#include "trace/error.h"
#include "trace/files.h"
#include "words/damage_text.h"

namespace gpuscope::cli {

bool is_stdout(const std::string& path) { return path.empty() || path == "-"; }

std::string output_name(const std::string& path) { return is_stdout(path) ? "standard output" : path; }

void write_output(const std::string& path, std::span<const std::string> parts) {
  if (is_stdout(path)) {
    for (const std::string& part : parts) std::fwrite(part.data(), 1, part.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw Error("standard output: cannot write");
    return;
  }
  try {
    files::OutputFile out(path);
    for (const std::string& part : parts) out.write(part.data(), part.size());
    out.commit();
  } catch (const InputError& e) {
    throw Error(e.what());
  }
}

void write_output(const std::string& path, const std::string& text) { write_output(path, std::span(&text, 1)); }

void status(const char* format, ...) {
  std::fflush(stdout);
  std::fputs("gpuscope: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
}

void warn_if_damaged(const std::string& file, const Trace& trace) {
  const FileDamage& d = trace.meta().damage;
  if (!d.any()) return;
  std::fprintf(stderr, "gpuscope: warning: %s: %s (gpuscope info says what was lost)\n",
               files::input_name(file).c_str(), damage_headline(d, device_coverage(trace)).c_str());
}

void note_losses(const std::string& file, const Trace& trace) {
  if (const std::string losses = source_losses_line(trace.meta()); !losses.empty())
    std::fprintf(stderr, "gpuscope: note: %s: %s\n", files::input_name(file).c_str(), losses.c_str());
}

bool colour_for(const std::string& path) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour && *no_colour) return false;
  // An MPI launcher (mpirun, srun) hands its processes a terminal of its own
  // whatever their output reaches: no colour there.
  if (mpi::launch_from_environment().launched) return false;
  return is_stdout(path) && ::isatty(STDOUT_FILENO);
}

const CLI::Validator& output_path() {
  static const CLI::Validator v(
      [](const std::string& s) {
        return s.empty() ? std::string("an empty file name (give a file, or - for standard output)") : std::string();
      },
      "FILE|-");
  return v;
}

CLI::Option* add_output_option(CLI::App& cmd, std::string& path) {
  return cmd.add_option("-o,--output", path, "Write to this file instead of standard output (- is standard output)")
      ->check(output_path());
}

}  // namespace gpuscope::cli
