#include "trace/damage.h"

#include <algorithm>
#include <iterator>

#include "trace/trace.h"

namespace gpuscope {

namespace {

LossCount worse(LossCount a, LossCount b) {
  // An estimate says less than a lower bound only about the number; both say
  // less than an exact count. The estimate wins: it is the one to flag.
  if (a == LossCount::estimate || b == LossCount::estimate) return LossCount::estimate;
  if (a == LossCount::at_least || b == LossCount::at_least) return LossCount::at_least;
  return LossCount::exact;
}

}  // namespace

std::string_view to_string(LossCount c) {
  switch (c) {
    case LossCount::exact: return "exact";
    case LossCount::at_least: return "at_least";
    case LossCount::estimate: return "estimate";
  }
  return "exact";
}

std::uint64_t FileDamage::rows_lost() const {
  std::uint64_t n = 0;
  for (const TableLoss& t : tables) n += t.lost;
  return n;
}

void FileDamage::add_earlier(const FileDamage& earlier) {
  truncated = truncated || earlier.truncated;
  bytes_lost += earlier.bytes_lost;
  damaged_sections += earlier.damaged_sections;
  for (int i = 0; i < kTableCount; ++i) {
    tables[i].lost += earlier.tables[i].lost;
    if (earlier.tables[i].lost) tables[i].count = worse(tables[i].count, earlier.tables[i].count);
  }
  std::vector<std::string> all;
  all.reserve(earlier.problems.size() + problems.size());
  for (const std::string& p : earlier.problems) all.push_back("before it was saved: " + p);
  for (std::string& p : problems) all.push_back(std::move(p));
  problems = std::move(all);
}

std::vector<std::uint32_t> DeviceCoverage::without_data() const {
  std::vector<std::uint32_t> out;
  std::set_difference(declared.begin(), declared.end(), with_data.begin(), with_data.end(), std::back_inserter(out));
  return out;
}

DeviceCoverage device_coverage(const Trace& trace) {
  DeviceCoverage c;
  for (const Device& d : trace.devices()) c.declared.push_back(d.id);
  for (TrackId id = 0; id < trace.tracks().size(); ++id) {
    const Track& t = trace.tracks()[id];
    if (t.kind != TrackKind::gpu) continue;
    c.declared.push_back(t.device);
    if (!trace.rows_of(TableId::kernels, id).empty() || !trace.rows_of(TableId::memcpys, id).empty() ||
        !trace.rows_of(TableId::memsets, id).empty())
      c.with_data.push_back(t.device);
  }
  for (auto* v : {&c.declared, &c.with_data}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return c;
}

}  // namespace gpuscope
