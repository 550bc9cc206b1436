// Everything generated from the one CLI definition (the CLI::App the commands
// register into): --help wrapped to the terminal's width, the shell
// completions for bash, zsh and fish, and the man pages. The build runs
// `gpuscope completion SHELL` and `gpuscope man-pages DIR` to make the files
// it installs, so they never disagree with --help.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace gpuscope::cli {

// The formatter every command's --help uses: descriptions, options and
// footers wrapped to `width` columns (0: the terminal's, else $COLUMNS, else
// 80); in the command list, each command's first sentence.
std::shared_ptr<CLI::Formatter> help_formatter(std::size_t width = 0);

// The completion script for `shell` ("bash", "zsh" or "fish"): commands,
// their options and the values a choice option takes; files elsewhere.
// Throws std::invalid_argument for another shell.
std::string completion_script(const CLI::App& app, std::string_view shell);

// The man pages: gpuscope.1 (the commands) and gpuscope-COMMAND.1 for each
// listed command, as (file name, roff text).
std::vector<std::pair<std::string, std::string>> man_pages(const CLI::App& app, std::string_view version);

}  // namespace gpuscope::cli
