// gpuscope: the command-line entry point. Commands register themselves (see
// command.h); this file only parses, dispatches and maps failures to exit 2.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/version.h"

namespace gpuscope::cli {
namespace {
std::vector<std::pair<int, AddCommand>>& registry() {
  static std::vector<std::pair<int, AddCommand>> r;
  return r;
}
}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommand add) { registry().emplace_back(order, add); }

}  // namespace gpuscope::cli

int main(int argc, char** argv) {
  using namespace gpuscope::cli;
  CLI::App app{"gpuscope " GPUSCOPE_VERSION_STRING
               " — find out why GPU training is slow: capture (CUPTI), analyse, report, view."};
  app.set_version_flag("--version", "gpuscope " GPUSCOPE_VERSION_STRING);
  app.require_subcommand(1);
  app.fallthrough(false);
  Context ctx;
  auto& commands = registry();
  std::stable_sort(commands.begin(), commands.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : commands) add(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuscope: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope: error: %s\n", e.what());
    return 2;
  }
  return ctx.exit_code;
}
