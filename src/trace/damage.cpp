#include "trace/damage.h"

#include <algorithm>
#include <cstdio>

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

// "about 48 %", never "0 %" or "100 %" for a part that is neither.
std::string share_text(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "0 %";
  if (part == whole) return "100 %";
  if (part == 0) return "0 %";
  const double pct = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  if (pct < 1) return "less than 1 %";
  if (pct > 99) return "more than 99 %";
  char buf[32];
  std::snprintf(buf, sizeof buf, "about %.0f %%", pct);
  return buf;
}

std::string kernels_text(const TableLoss& k, bool truncated) {
  const std::uint64_t all = k.loaded + k.lost;
  switch (k.count) {
    case LossCount::exact:
      if (k.lost == 0) return k.loaded ? "all " + thousands(k.loaded) + " kernels survive" : std::string();
      return share_text(k.loaded, all) + " of the kernels survive (" + thousands(k.loaded) + " of " + thousands(all) +
             ")";
    case LossCount::estimate:
      return share_text(k.loaded, all) + " of the kernels survive (" + thousands(k.loaded) + " of about " +
             thousands(all) + ", estimated)";
    case LossCount::at_least:
      if (k.lost)
        return "at least " + thousands(k.lost) + " kernels lost (" + thousands(k.loaded) +
               " survive; the file does not say how many more followed)";
      return truncated ? thousands(k.loaded) + " kernels survive; the file does not say how many followed the cut"
                       : std::string();
  }
  return {};
}

}  // namespace

std::string_view to_string(LossCount c) {
  switch (c) {
    case LossCount::exact:
      return "exact";
    case LossCount::at_least:
      return "at_least";
    case LossCount::estimate:
      return "estimate";
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

std::string thousands(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string device_list_text(const std::vector<std::uint32_t>& ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(ids[i]);
    if (j > i) s += (j == i + 1 ? ", " : "–") + std::to_string(ids[j]);
    i = j + 1;
  }
  return s;
}

std::string rows_lost_text(const FileDamage& d) {
  std::string s;
  bool estimated = false;
  for (int i = 0; i < kTableCount; ++i) {
    const TableLoss& t = d.tables[i];
    if (t.lost == 0) continue;
    if (!s.empty()) s += ", ";
    if (t.count == LossCount::at_least) s += "at least ";
    if (t.count == LossCount::estimate) s += "~", estimated = true;
    s += thousands(t.lost) + " " + std::string(to_string(static_cast<TableId>(i)));
  }
  if (s.empty()) return "none";
  return estimated ? s + " (~: estimated)" : s;
}

std::string damage_headline(const FileDamage& d, const DeviceCoverage& devices) {
  if (!d.any()) return {};
  const std::string parts =
      thousands(d.damaged_sections) + (d.damaged_sections == 1 ? " damaged part" : " damaged parts");
  std::string s;
  if (d.truncated) {
    s = "INCOMPLETE file: truncated at byte " + thousands(d.file_bytes);
  } else if (d.rows_lost() == 0 && d.bytes_lost == 0) {
    // A damaged index or trailer: every section was still read.
    s = "DAMAGED file, nothing lost: " + parts + " after byte " + thousands(d.intact_bytes);
  } else {
    s = "INCOMPLETE file: damaged after byte " + thousands(d.intact_bytes) + " (" + parts + ", " +
        thousands(d.bytes_lost) + " bytes not loaded)";
  }
  if (const std::string k = kernels_text(d.tables[static_cast<int>(TableId::kernels)], d.truncated); !k.empty())
    s += "; " + k;
  const std::vector<std::uint32_t> empty = devices.without_data();
  if (!empty.empty())
    s += "; GPU" + std::string(empty.size() > 1 ? "s " : " ") + device_list_text(empty) +
         (empty.size() > 1 ? " have no data" : " has no data");
  return s;
}

}  // namespace gpuscope
