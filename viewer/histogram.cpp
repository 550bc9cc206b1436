#include "viewer/histogram.h"

#include <algorithm>
#include <cmath>

#include "trace/time_columns.h"

namespace gpuscope::viewer {

std::size_t DurationHistogram::bin_of(TimeNs duration) const {
  if (counts.empty()) return 0;
  const auto it = std::upper_bound(edges.begin(), edges.end(), std::max<TimeNs>(duration, 1));
  const auto i = static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, it - edges.begin() - 1));
  return std::min(i, counts.size() - 1);
}

std::vector<RowIndex> DurationHistogram::bin_rows(std::size_t bin) const {
  if (bin >= counts.size()) return {};
  return {rows.begin() + static_cast<std::ptrdiff_t>(first[bin]),
          rows.begin() + static_cast<std::ptrdiff_t>(first[bin + 1])};
}

namespace {

// Geometric bounds from lo to hi (exclusive), at most `bins` bins, each at least 1 ns wide.
std::vector<TimeNs> geometric_edges(TimeNs lo, TimeNs hi, std::size_t bins) {
  std::vector<TimeNs> edges = {lo};
  const double ratio = std::pow(static_cast<double>(hi) / static_cast<double>(lo), 1.0 / static_cast<double>(bins));
  for (std::size_t i = 1; i < bins; ++i) {
    const auto e = static_cast<TimeNs>(std::llround(static_cast<double>(lo) * std::pow(ratio, static_cast<double>(i))));
    if (e > edges.back() && e < hi) edges.push_back(e);
  }
  edges.push_back(hi);
  return edges;
}

}  // namespace

DurationHistogram duration_histogram(const Trace& trace, TableId table, StringId name, std::size_t bins) {
  DurationHistogram h;
  h.table = table;
  h.name = name;
  const std::vector<StringId>& names = table == TableId::kernels ? trace.kernels().name : trace.ranges().name;
  const auto& tc = detail::time_columns(trace.tables(), table);
  const std::vector<TimeNs>& start = *tc.start;
  const std::vector<TimeNs>& end = *tc.end;
  std::vector<RowIndex> rows;
  for (RowIndex r = 0; r < names.size(); ++r)
    if (names[r] == name) rows.push_back(r);
  if (rows.empty()) return h;
  std::vector<TimeNs> d;
  d.reserve(rows.size());
  for (RowIndex r : rows) d.push_back(end[r] - start[r]);
  h.count = rows.size();
  h.min = *std::min_element(d.begin(), d.end());
  h.max = *std::max_element(d.begin(), d.end());
  for (TimeNs v : d) h.total += v;
  h.mean = h.total / static_cast<TimeNs>(h.count);
  std::vector<TimeNs> sorted = d;
  const std::size_t mid = (sorted.size() - 1) / 2;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid), sorted.end());
  h.median = sorted[mid];
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(sorted.size())));
  const std::size_t k = std::max<std::size_t>(rank, 1) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  h.p99 = sorted[k];

  const TimeNs lo = std::max<TimeNs>(h.min, 1), hi = std::max<TimeNs>(h.max, 1) + 1;
  h.edges = geometric_edges(lo, hi, std::max<std::size_t>(bins, 1));
  h.counts.assign(h.edges.size() - 1, 0);
  std::vector<std::uint32_t> bin(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) ++h.counts[bin[i] = static_cast<std::uint32_t>(h.bin_of(d[i]))];
  h.first.assign(h.counts.size() + 1, 0);
  for (std::size_t b = 0; b < h.counts.size(); ++b) h.first[b + 1] = h.first[b] + h.counts[b];
  h.rows.resize(rows.size());
  std::vector<std::uint64_t> next(h.first.begin(), h.first.end() - 1);
  for (std::size_t i = 0; i < rows.size(); ++i) h.rows[next[bin[i]]++] = rows[i];  // row order kept within a bin
  return h;
}

}  // namespace gpuscope::viewer
