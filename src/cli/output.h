// What every command writes, and where: the one place that decides between a
// file and standard output, where status lines go, and when text is coloured.
//
//  * `-o -` (and an empty path, for a command's own default) is standard
//    output; anything else is written through files::OutputFile (atomically
//    for a regular file, through for a FIFO, a device or a symbolic link).
//  * Status lines ("wrote …", warnings) go to standard error, so standard
//    output carries only what was asked for.
//  * Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
#pragma once

#include <cstdio>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "trace/trace.h"

namespace gpuscope::cli {

// True for "-" and "": the output is standard output.
bool is_stdout(const std::string& path);

// What messages call an output: "standard output" for "-", the path otherwise.
std::string output_name(const std::string& path);

// `text` to `path`, or to standard output (is_stdout). Throws cli::Error.
void write_output(const std::string& path, const std::string& text);
// The same for a text in consecutive parts, written one after another.
void write_output(const std::string& path, std::span<const std::string> parts);

// A status line on standard error: "gpuscope: " + printf-style text + "\n".
[[gnu::format(printf, 1, 2)]] void status(const char* format, ...);

// One line on stderr when `trace`'s file lost something in storage (cut short, damaged).
void warn_if_damaged(const std::string& file, const Trace& trace);

// One note on stderr when the reader of `trace`'s file skipped or changed
// something (import.skipped.*, import.coerced.*, trace.truncated_names, …:
// import/trace_info.h's source_losses_line), for commands that print no
// such list of their own (info, report and import do).
void note_losses(const std::string& file, const Trace& trace);

// Whether text for `path` (an output as for write_output) may carry colour:
// standard output that is a terminal, NO_COLOR unset or empty, and not a
// process of an MPI launch (whose terminal is the launcher's).
bool colour_for(const std::string& path);

// The check every -o/--output/--junit option takes: a file name, or "-".
const CLI::Validator& output_path();

// The -o/--output option of a command that prints to standard output unless
// told otherwise, checked by output_path().
CLI::Option* add_output_option(CLI::App& cmd, std::string& path);

}  // namespace gpuscope::cli
