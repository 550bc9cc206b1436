// gpuscope: the command-line entry point. Commands register themselves (see
// command.h); this file only parses, dispatches and maps failures to exit 2.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/help.h"
#include "cli/mpi.h"
#include "cli/version.h"
#include "trace/files.h"

namespace gpuscope::cli {
namespace {
std::vector<std::pair<int, AddCommand>>& registry() {
  static std::vector<std::pair<int, AddCommand>> r;
  return r;
}
}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommand add) { registry().emplace_back(order, add); }

void add_examples(CLI::App& cmd, std::initializer_list<std::string_view> lines, std::string_view note) {
  std::string footer(note);
  footer += note.empty() ? "Examples:" : "\n\nExamples:";
  for (std::string_view line : lines) (footer += "\n  ") += line;
  cmd.footer(footer);
}

}  // namespace gpuscope::cli

int main(int argc, char** argv) {
  using namespace gpuscope::cli;
  // A command killed by SIGTERM, SIGHUP, SIGINT or SIGPIPE leaves no temporary file behind.
  gpuscope::files::remove_temporaries_on_signals();
  CLI::App app{"gpuscope " GPUSCOPE_VERSION_STRING
               " — find out why GPU training is slow: capture (CUPTI), analyse, report, view."};
  app.name("gpuscope");  // in usage lines, whatever path ran it
  app.set_version_flag("--version", "gpuscope " GPUSCOPE_VERSION_STRING);
  app.require_subcommand(1);
  app.fallthrough(false);
  app.formatter(help_formatter());  // before the commands: each copies it
  app.footer(
      "Run 'gpuscope COMMAND --help' for a command's options; docs/cli.md has the rules every command keeps "
      "(- is standard input or output, status lines go to standard error, exit 0, 1 or 2).\n"
      "\n"
      "Examples:\n"
      "  gpuscope capture -o run.gscope -- python train.py\n"
      "  gpuscope report run.gscope\n"
      "  gpuscope stats trace.json.gz --report kernels --format csv -o kernels.csv\n"
      "  gpuscope diff before.gscope after.gscope\n"
      "  gpuscope check baseline.json run.gscope --junit check.xml");
  Context ctx;
  auto& commands = registry();
  std::stable_sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : commands) add(app, ctx);
  add_memory_option(app);

  ctx.command_line = "gpuscope";
  for (int i = 1; i < argc; ++i) ctx.command_line += " " + std::string(argv[i]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e);
    // Usage errors: one line in the house style, and where to find help.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      message = "unknown command '" + std::string(argv[1]) + "'";
    std::string help = "gpuscope";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      help += " " + sub->get_name();
    }
    std::fprintf(stderr, "gpuscope: error: %s (see '%s --help')\n", message.c_str(), help.c_str());
    return 2;
  } catch (const std::exception& e) {
    // cli::Error and gpuscope::InputError already read "<file>: <problem>".
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    // Under MPI every process fails alike; process 0 says why (cli/mpi.h).
    if (!mpi::quiet()) std::fprintf(stderr, "gpuscope: error: %s\n", message.c_str());
    return mpi::finish(2);
  }
  return mpi::finish(ctx.exit_code);
}
