// libFuzzer target: the gpuscope.report/1 reader (`gpuscope diff` reads saved
// reports) on arbitrary bytes, and everything a parsed report then goes
// through: diff, text and JSON rendering.
//
// The only acceptable failure is InputError. A report that parses must write
// back and parse again to the same document (the writer and the reader agree).
// Seeds: tests/fuzz/corpus/fuzz_report_json/ (reports of small traces,
// `gpuscope report --json`, and a few broken ones).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/diff.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "trace/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)looks_like_report_json(text);
  try {
    const Profile p = parse_report_json(text, "fuzz.json");
    const std::string written = report_json(p);
    const Profile again = parse_report_json(written, "rewritten.json");
    if (report_json(again) != written) __builtin_trap();  // writer and reader disagree
    const ProfileDiff d = diff_profiles(p, again);
    (void)report_text(p);
    (void)diff_text(d);
    (void)diff_json(d);
  } catch (const InputError&) {
  }
  return 0;
}
