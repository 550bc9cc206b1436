#include "words/damage_text.h"

#include <cstdio>

#include "words/format.h"

namespace gpuscope {

namespace {

using format::count;

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
      if (k.lost == 0) return k.loaded ? "all " + count(k.loaded) + " kernels survive" : std::string();
      return share_text(k.loaded, all) + " of the kernels survive (" + count(k.loaded) + " of " + count(all) + ")";
    case LossCount::estimate:
      return share_text(k.loaded, all) + " of the kernels survive (" + count(k.loaded) + " of about " + count(all) +
             ", estimated)";
    case LossCount::at_least:
      if (k.lost)
        return "at least " + count(k.lost) + " kernels lost (" + count(k.loaded) +
               " survive; the file does not say how many more followed)";
      return truncated ? count(k.loaded) + " kernels survive; the file does not say how many followed the cut"
                       : std::string();
  }
  return {};
}

}  // namespace

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
    s += count(t.lost) + " " + std::string(to_string(static_cast<TableId>(i)));
  }
  if (s.empty()) return "none";
  return estimated ? s + " (~: estimated)" : s;
}

std::string damage_headline(const FileDamage& d, const DeviceCoverage& devices) {
  if (!d.any()) return {};
  const std::string parts = count(d.damaged_sections) + (d.damaged_sections == 1 ? " damaged part" : " damaged parts");
  std::string s;
  if (d.truncated) {
    s = "INCOMPLETE file: truncated at byte " + count(d.file_bytes);
  } else if (d.rows_lost() == 0 && d.bytes_lost == 0) {
    // A damaged index or trailer: every section was still read.
    s = "DAMAGED file, nothing lost: " + parts + " after byte " + count(d.intact_bytes);
  } else {
    s = "INCOMPLETE file: damaged after byte " + count(d.intact_bytes) + " (" + parts + ", " + count(d.bytes_lost) +
        " bytes not loaded)";
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
