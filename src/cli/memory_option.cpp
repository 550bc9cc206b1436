// --max-memory SIZE on every command that reads traces: the memory budget of
// each read (trace/budget.h). Also GPUSCOPE_MAX_MEMORY in the environment,
// which is how `gpuscope view` hands it to gpuscope-view.
#include <cstdlib>
#include <string>

#include "cli/command.h"
#include "trace/budget.h"

namespace gpuscope::cli {

void add_memory_option(CLI::App& app) {
  static constexpr std::string_view kReaders[] = {"check",  "diff",  "export", "import", "info",
                                                  "report", "stats", "view",   "whatif"};
  const std::string help =
      "the most memory one trace read may take (512M, 4G, 25%); a file or stream that would need more is refused "
      "before it is read (default: a quarter of physical memory, here " +
      memory_size_text(default_memory_budget()) + "; also GPUSCOPE_MAX_MEMORY)";
  for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
    bool reads = false;
    for (std::string_view name : kReaders) reads = reads || cmd->get_name() == name;
    if (!reads) continue;
    cmd->add_option_function<std::string>(
           "--max-memory",
           [](const std::string& text) {
             const std::optional<std::uint64_t> bytes = parse_memory_size(text);
             if (!bytes)
               throw CLI::ValidationError("--max-memory", "'" + text + "' is not a size (e.g. 512M, 4G, 1.5GiB, 25%)");
             set_memory_budget(*bytes);
             // gpuscope view runs gpuscope-view, which reads it from here.
             ::setenv("GPUSCOPE_MAX_MEMORY", std::to_string(*bytes).c_str(), 1);
           },
           help)
        ->type_name("SIZE");
  }
}

}  // namespace gpuscope::cli
