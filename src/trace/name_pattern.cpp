#include "trace/name_pattern.h"

#include <re2/re2.h>

#include <vector>

namespace gpuscope {

namespace {

// The last '(' of `p` without its ')' (escapes and bracket classes skipped), else npos.
std::size_t unclosed_paren(std::string_view p) {
  std::vector<std::size_t> open;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
    } else if (in_class) {
      in_class = p[i] != ']';
    } else if (p[i] == '[') {
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == ']') ++i;  // "[]...]": the first ']' is a member
    } else if (p[i] == '(') {
      open.push_back(i);
    } else if (p[i] == ')' && !open.empty()) {
      open.pop_back();
    }
  }
  return open.empty() ? std::string_view::npos : open.back();
}

}  // namespace

NamePattern::NamePattern(std::string_view pattern, bool ignore_case) {
  RE2::Options options;
  options.set_log_errors(false);  // errors are thrown, never printed
  options.set_case_sensitive(!ignore_case);
  re_ = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (re_->ok()) return;
  // RE2 names the offending part of the pattern; its place is where it
  // starts (for a missing ')', the '(' left open).
  const std::string& arg = re_->error_arg();
  std::size_t at = re_->error_code() == RE2::ErrorMissingParen        ? unclosed_paren(pattern)
                   : re_->error_code() == RE2::ErrorTrailingBackslash ? pattern.size() - 1
                   : arg.empty()                                      ? std::string_view::npos
                                                                      : pattern.find(arg);
  if (at == std::string_view::npos) at = pattern.size();
  throw PatternError(re_->error() + " (at character " + std::to_string(at + 1) + ")", at);
}

NamePattern::NamePattern(NamePattern&&) noexcept = default;
NamePattern& NamePattern::operator=(NamePattern&&) noexcept = default;
NamePattern::~NamePattern() = default;

bool NamePattern::search(std::string_view name) const {
  return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

}  // namespace gpuscope
