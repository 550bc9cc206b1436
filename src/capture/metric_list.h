// The --gpu-metrics list as text: "default", "none", or metric names and
// "default", comma-separated. Parsing needs no CUPTI, so `gpuscope capture`
// checks the list before it runs anything (metric_selection.h resolves the
// names on a chip).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::capture {

// "default", "none", or a comma-separated list whose items are metric names
// or "default" (the default set). Returns nullopt and *error for an empty
// item or a name with characters no metric name has.
struct MetricRequest {
  bool use_default = true;
  std::vector<std::string> names;  // besides the default set
  bool none() const { return !use_default && names.empty(); }
};
std::optional<MetricRequest> parse_metric_list(std::string_view list, std::string* error);

}  // namespace gpuscope::capture
