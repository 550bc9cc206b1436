// Opens any trace file gpuscope understands, chosen by content (not by name):
// .gscope (magic bytes), Chrome/Kineto JSON, gzip-compressed JSON, and SQLite
// databases in Nsight Systems' schema (`nsys export --type sqlite`, or
// gpuscope's own SQLite export).
#pragma once

#include <string>

#include "trace/error.h"
#include "trace/load_progress.h"
#include "trace/trace.h"

namespace gpuscope {

enum class TraceFileKind { gscope, chrome_json, chrome_json_gz, nsys_sqlite, unknown };

// Looks at the first bytes. Throws InputError if the file cannot be opened.
TraceFileKind detect_trace_file(const std::string& path);

// Whether the name ends in .sqlite, .sqlite3 or .db: a file of unknown
// contents named so is handed to the SQLite importer, whose error says what is
// wrong with it (an encrypted database has no readable header).
bool named_like_sqlite(const std::string& path);

// files::seekable_path() for a trace: a pipe, device or procfs file is read
// into memory (at most the memory budget, trace/budget.h), refused at its
// first bytes when they are no trace format. Throws InputError naming `path`.
std::string seekable_trace_path(const std::string& path);

// Throws InputError (file, offset, reason) for unreadable or unknown files,
// and for files whose contents would take more than the memory budget
// (trace/budget.h), before that memory is taken.
Trace open_trace(const std::string& path, const LoadProgress& progress = {});

}  // namespace gpuscope
