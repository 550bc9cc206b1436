// Numbers for people: durations with a sensible unit, shares as percentages,
// counts with thousands separators, byte sizes, short kernel names. Findings,
// the text report and diff all speak with these, so the same number reads the
// same everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/types.h"

namespace gpuscope::format {

std::string duration(TimeNs ns);     // "850 ns", "12.3 µs", "45.6 ms", "1.23 s"
std::string percent(double share);   // 0.2144 -> "21%", 0.0123 -> "1.2%", 0 -> "0%"
std::string percent1(double share);  // always one decimal: "21.4%"
std::string count(std::uint64_t n);  // 1234567 -> "1,234,567"
std::string bytes(std::uint64_t b);  // "1.5 KB", "110.3 MB", "2.00 GB"
std::string fixed(double v, int decimals);
// A kernel name short enough for a table: Eigen evaluators become "Eigen
// TensorPaddingOp"; template and parameter lists go; at most `width` chars.
std::string short_kernel_name(std::string_view name, std::size_t width = 80);
// Short names for kernels listed together: where different kernels shorten to
// the same text (two Eigen padding kernels of other ranks, long cuDNN names cut
// at `width`), each of them gets " #1", " #2", … in list order, so a reader can
// tell the rows apart (the full names are in the JSON report).
std::vector<std::string> short_kernel_names(const std::vector<std::string_view>& names, std::size_t width = 80);

}  // namespace gpuscope::format
