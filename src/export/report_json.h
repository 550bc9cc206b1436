// A Profile as JSON (schema gpuscope.report/1, docs/report-schema.md), read
// back for `gpuscope diff` of saved reports; a ProfileDiff as JSON
// (gpuscope.diff/1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff.h"
#include "analysis/profile.h"
#include "trace/json_writer.h"

namespace gpuscope {

struct ReportJsonOptions {
  std::size_t top = 0;        // hotspots written; 0 = all
  std::size_t max_steps = 0;  // steps written; 0 = all
  bool pretty = true;         // indented (2 spaces) or one line
  unsigned jobs = 1;          // threads formatting the long lists (0 = every core); same bytes whatever
};

std::string report_json(const Profile& p, const ReportJsonOptions& options = {});
// The same text as report_json() in consecutive parts, to be written one
// after another (a job's document is hundreds of MB: joining the parts
// would hold it twice).
std::vector<std::string> report_json_parts(const Profile& p, const ReportJsonOptions& options = {});

// Parses a gpuscope.report/1 document. Unknown keys are ignored (newer
// writers add keys); a missing required key, a wrong type, another schema or
// malformed JSON throws InputError naming `file`.
Profile parse_report_json(std::string_view text, const std::string& file);

// One file's storage damage as the report writes it (an element of
// `trace_quality.files`), as the next value of `out`; `gpuscope info --json`
// shows the same.
void write_file_quality_json(json::Writer& out, const FileQuality& q);

// The op attribution counts as the report writes them (`op_summary`), as the
// next value of `out`; `gpuscope info --json` shows them as `ops`.
void write_op_summary_json(json::Writer& out, const OpSummary& s);

// True if `head` (the first bytes of a file) starts a gpuscope report.
bool looks_like_report_json(std::string_view head);

// docs/report-schema.md's key tables (one per JSON object, one row per key,
// in the order written), generated from the table the writer and the reader
// walk (report_fields.cpp).
std::string report_schema_markdown();

std::string diff_json(const ProfileDiff& d, bool pretty = true);

}  // namespace gpuscope
