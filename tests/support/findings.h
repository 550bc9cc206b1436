// Looking up a profile's findings in tests: by id, all ids, and a listing for
// failure messages; the answers to "What would help?" by id.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "analysis/profile.h"

namespace gpuscope::testing {

inline std::set<std::string> finding_ids(const Profile& p) {
  std::set<std::string> out;
  for (const Finding& f : p.findings) out.insert(f.id);
  return out;
}

// The first finding with `id`, or null.
inline const Finding* find_finding(const Profile& p, std::string_view id) {
  for (const Finding& f : p.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The first finding with `id`, numbered or minor (Profile::minor_findings), or null.
inline const Finding* find_any_finding(const Profile& p, std::string_view id) {
  if (const Finding* f = find_finding(p, id)) return f;
  for (const Finding& f : p.minor_findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The answer to the "What would help?" question `id`, or null.
inline const HelpAnswer* find_help(const Profile& p, std::string_view id) {
  for (const HelpAnswer& a : p.helps)
    if (a.id == id) return &a;
  return nullptr;
}

// "\n  id: title" per finding.
inline std::string describe_findings(const Profile& p) {
  std::string s;
  for (const Finding& f : p.findings) s += "\n  " + f.id + ": " + f.title;
  return s;
}

}  // namespace gpuscope::testing
