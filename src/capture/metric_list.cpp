#include "capture/metric_list.h"

#include <algorithm>

namespace gpuscope::capture {

namespace {

bool valid_metric_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<MetricRequest> parse_metric_list(std::string_view list, std::string* error) {
  MetricRequest r;
  list = trim(list);
  if (list.empty() || list == "default") return r;
  r.use_default = false;
  if (list == "none") return r;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view item = trim(list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos));
    if (item.empty()) {
      if (error) *error = "empty item in metric list '" + std::string(list) + "'";
      return std::nullopt;
    }
    if (item == "default") {
      r.use_default = true;
    } else if (item == "none" || !std::all_of(item.begin(), item.end(), valid_metric_char)) {
      if (error)
        *error = std::string(1, '\'').append(item).append(
            "' is not a metric name (letters, digits, '_' and '.'; or 'default', or 'none' alone)");
      return std::nullopt;
    } else if (std::find(r.names.begin(), r.names.end(), item) == r.names.end()) {
      r.names.emplace_back(item);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return r;
}

}  // namespace gpuscope::capture
