// How gpuscope speaks to people: durations with a sensible unit, shares as
// percentages, counts with thousands separators, byte sizes, bandwidth, and
// short kernel names. Findings, the text report, diff, the exports and the
// viewer all speak with these, so the same number or kernel reads the same
// everywhere (tests: tests/words/format_test.cpp).
//
// [SECTION] Numbers
// [SECTION] Kernel names
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/types.h"

namespace gpuscope::format {

// [SECTION] Numbers --------------------------------------------------------------------------

// "850 ns", "12.3 µs", "45.6 ms", "1.23 s"; "-2.0 ms". A value that rounds to
// a thousand of its unit is written in the next one ("1.0 ms", never "1000.0 µs").
std::string duration(TimeNs ns);
// A change of time: "+12.6 µs", "-3.3 ms", "0 ns".
std::string signed_duration(TimeNs ns);
std::string percent(double share);          // 0.2144 -> "21%", 0.0123 -> "1.2%", 0 -> "0%"
std::string percent1(double share);         // always one decimal: "21.4%"
std::string signed_percent1(double share);  // a relative change: "+30.0%", "-59.5%", "+0.0%"
std::string points(double share_change);    // a change of share in percentage points: 0.3 -> "+30.0 pts"
std::string count(std::uint64_t n);         // 1234567 -> "1,234,567"
// A count with its noun: (1, "copy", "copies") -> "1 copy", (2, …) -> "2 copies".
std::string count(std::uint64_t n, std::string_view one, std::string_view many);
// Sizes in 1024-based units with their IEC names: "512 B", "1.5 KiB", "110.3 MiB", "2.00 GiB".
std::string bytes(std::uint64_t b);
// Bytes per second in decimal units, as nvidia-smi and nsys print them:
// "850 B/s", "12.3 GB/s", "1.23 TB/s"; "n/a" unless positive and finite.
std::string bandwidth(double bytes_per_second);
std::string fixed(double v, int decimals);

// [SECTION] Kernel names ---------------------------------------------------------------------

// The width of kernel names in tables (the report's hotspot table, the viewer's).
inline constexpr std::size_t kTableNameWidth = 70;

// A kernel name short enough for a table: Eigen evaluators (one
// EigenMetaKernel template for every op) become "Eigen TensorPaddingOp",
// "Eigen TensorBroadcastingOp", …; otherwise the return type, template
// arguments and parameter lists go and the qualified function name stays
// ("void at::native::foo<float>(int)" -> "at::native::foo"); at most `width`
// characters ("..." at the end when cut). A name with nothing left is kept whole.
std::string short_kernel_name(std::string_view name, std::size_t width = 80);
// Short names for kernels listed together: where different kernels shorten to
// the same text (two Eigen padding kernels of other ranks, long cuDNN names cut
// at `width`), each of them gets " #1", " #2", … in list order, so a reader can
// tell the rows apart (the full names are in the JSON report).
std::vector<std::string> short_kernel_names(const std::vector<std::string_view>& names, std::size_t width = 80);
// Nsight Systems' "shortName" of a kernel (the SQLite export's column): the
// unqualified function name, without return type, template arguments or
// parameters ("void cudnn::bn_fw_tr<float>(int)" -> "bn_fw_tr", and
// "EigenMetaKernel" for every Eigen evaluator, as nsys has it). The same
// parsing as short_kernel_name, a different form of the result.
std::string nsys_short_name(std::string_view demangled);

}  // namespace gpuscope::format
