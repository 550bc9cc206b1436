// The trace files that command-line inputs name, shared by the CLI's
// report, diff and check and by the viewer's job view.
#pragma once

#include <string>
#include <vector>

namespace gpuscope {

// True when the file starts as a saved gpuscope report (`report --json`), not
// a trace: false for anything unreadable.
bool is_saved_report(const std::string& path);

// Each directory's trace files (.gscope, .json, .json.gz, .sqlite; sorted by
// name), saved reports among them left out; every other input as given (the
// trace reader says what is wrong with it, if anything). Throws InputError
// naming a directory that cannot be listed or holds no trace file.
std::vector<std::string> trace_files(const std::vector<std::string>& inputs);

}  // namespace gpuscope
