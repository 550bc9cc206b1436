// How a gpuscope subcommand plugs into the CLI.
//
// Each command lives in its own src/cli/cmd_<name>.cpp and registers itself
// with a static `CommandRegistration` (the files are compiled straight into the
// executable, so registrations are never dropped by the linker). main.cpp
// orders commands by `order` for --help.
//
// Conventions every command follows (README and tests rely on them):
//  * exit 0 on success; 2 on bad usage or bad input, with ONE line on stderr:
//    "gpuscope: error: <file>: <problem>" — throw cli::Error for that;
//  * outputs through cli/output.h (write_output: "-" is standard output, a
//    regular file is written atomically, a FIFO or device written through),
//    status lines through status() to standard error; every -o option takes
//    the output_path() check (add_output_option() for the usual one);
//  * --help ends with examples of the command (add_examples());
//  * a command made with add_command() gets its arguments struct and a
//    callback that runs it with them;
//  * a command that runs another program (capture) returns that program's
//    status through Context::exit_code.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::cli {

// A failure the user caused or can fix (bad file, bad flag value). main prints
// "gpuscope: error: " + what() and exits with status 2.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Context {
  int exit_code = 0;         // set by commands whose status is not simply success
  std::string command_line;  // argv joined by spaces (recorded in traces a command writes)
};

using AddCommand = void (*)(CLI::App& app, Context& ctx);

struct CommandRegistration {
  CommandRegistration(int order, AddCommand add);
};

// The footer of a command's --help: `note` (a paragraph, if any) and a blank
// line, then "Examples:" and each command line indented by two spaces.
void add_examples(CLI::App& cmd, std::initializer_list<std::string_view> lines, std::string_view note = {});

// A subcommand and the arguments its options fill. Its callback holds `args`,
// so they live as long as the App.
template <class Args>
struct Command {
  CLI::App* cmd;
  std::shared_ptr<Args> args;
};

// Adds subcommand `name` (`about`: its --help paragraph) whose callback calls
// run(args) once the options are parsed.
template <class Args>
Command<Args> add_command(CLI::App& app, std::string name, std::string about, void (*run)(const Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(std::move(name), std::move(about));
  cmd->callback([args, run] { run(*args); });
  return {cmd, args};
}

// The same for a command that sets Context::exit_code: run(args, ctx).
template <class Args>
Command<Args> add_command(CLI::App& app, std::string name, std::string about, Context& ctx,
                          void (*run)(const Args&, Context&)) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(std::move(name), std::move(about));
  cmd->callback([args, run, &ctx] { run(*args, ctx); });
  return {cmd, args};
}

// Adds --max-memory SIZE (trace/budget.h) to every registered command that
// reads traces (memory_option.cpp).
void add_memory_option(CLI::App& app);

}  // namespace gpuscope::cli
