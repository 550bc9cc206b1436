// What a damaged file lost, in words: the data is trace/'s (FileDamage, what
// the readers found; DeviceCoverage, which GPUs have data), the sentences are
// these. Report, info, diff, Python and the viewer state the headline first
// (tests: tests/words/damage_text_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/damage.h"

namespace gpuscope {

// The one line that says what storage lost, first wherever a user looks:
// "INCOMPLETE file: truncated at byte 1,234,567; about 48 % of the kernels
// survive (…); GPUs 1–3 have no data", "INCOMPLETE file: damaged after byte
// …", or "DAMAGED file, nothing lost: …" (a damaged index). Empty when the
// file was intact.
std::string damage_headline(const FileDamage& damage, const DeviceCoverage& devices);

// Rows lost, table by table: "65,536 kernels, at least 1,024 api_calls,
// ~300 ranges (estimated)"; "none" when no table lost rows.
std::string rows_lost_text(const FileDamage& damage);

// "0", "1–3", "0, 2, 5–7".
std::string device_list_text(const std::vector<std::uint32_t>& ids);

}  // namespace gpuscope
