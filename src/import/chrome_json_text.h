// Small exact text helpers of the Chrome JSON importer, public to tests
// (property tests check them against brute-force references).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::detail {

// Parses a JSON number given in microseconds ("1712195495505583.123",
// "12", "1.5e3", "-0.25") to exact integer nanoseconds, never through a
// double. Digits below 1 ns are rounded to nearest (ties away from zero).
// `sub_us` is set when the value is not a whole number of microseconds.
// Returns false for text that is not a JSON number or whose value does not
// fit in int64 nanoseconds.
bool parse_us_to_ns(std::string_view text, std::int64_t* ns, bool* sub_us);

// Parses a JSON integer ("42", "-7"; no fraction or exponent) into int64.
bool parse_json_int(std::string_view text, std::int64_t* out);

// Unescapes the content of a JSON string (without its quotes) into `out`
// (appended). Returns false on an invalid escape or an unpaired surrogate.
bool json_unescape(std::string_view raw, std::string* out);

}  // namespace gpuscope::detail
