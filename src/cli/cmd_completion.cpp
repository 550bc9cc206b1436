// gpuscope completion bash|zsh|fish [-o OUT]: the shell completion script,
// and the hidden `gpuscope man-pages DIR` the build runs; both generated
// from the CLI definition (cli/help.h).
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/command.h"
#include "cli/help.h"
#include "cli/output.h"
#include "cli/version.h"

namespace gpuscope::cli {

namespace {

struct CompletionArgs {
  std::string shell, output, man_dir;
};

void add(CLI::App& app, Context&) {
  auto args = std::make_shared<CompletionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "completion",
      "Print the shell completion script for bash, zsh or fish (installed ones come with gpuscope: "
      "share/bash-completion/completions, share/zsh/site-functions, share/fish/vendor_completions.d).");
  cmd->add_option("SHELL", args->shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  add_output_option(*cmd, args->output);
  add_examples(*cmd, {"source <(gpuscope completion bash)", "gpuscope completion zsh -o ~/.zfunc/_gpuscope",
                      "gpuscope completion fish -o ~/.config/fish/completions/gpuscope.fish"});
  cmd->callback([args, &app] { write_output(args->output, completion_script(app, args->shell)); });

  // The man pages, for the build (not listed: no group).
  CLI::App* man = app.add_subcommand("man-pages", "Write gpuscope.1 and gpuscope-COMMAND.1 into a directory");
  man->group("");
  man->add_option("DIR", args->man_dir, "The directory (made if needed)")->required();
  man->callback([args, &app] {
    std::error_code ec;
    std::filesystem::create_directories(args->man_dir, ec);
    if (ec) throw Error(args->man_dir + ": cannot create the directory: " + ec.message());
    for (const auto& [name, text] : man_pages(app, GPUSCOPE_VERSION_STRING))
      write_output((std::filesystem::path(args->man_dir) / name).string(), text);
  });
}

const CommandRegistration registration(90, add);

}  // namespace
}  // namespace gpuscope::cli
