// Regular expressions over names (kernel, op and range names): what
// `whatif --remove /REGEX/`, the viewer's find and Python use.
//
// RE2 (Debian's libre2): matching is linear in the name and never recurses,
// so a name of 50,000 characters cannot overflow the stack (std::regex's
// backtracking did). Its syntax is RE2's (POSIX/Perl classes, no
// backreferences, no lookaround).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace gpuscope {

// A pattern that does not compile: what is wrong and where.
class PatternError : public std::runtime_error {
 public:
  PatternError(std::string what, std::size_t position) : std::runtime_error(std::move(what)), position_(position) {}
  std::size_t position() const { return position_; }  // 0-based byte offset in the pattern

 private:
  std::size_t position_;
};

class NamePattern {
 public:
  // Throws PatternError: "missing ]: [ (at character 1)".
  explicit NamePattern(std::string_view pattern, bool ignore_case = false);
  NamePattern(NamePattern&&) noexcept;
  NamePattern& operator=(NamePattern&&) noexcept;
  ~NamePattern();

  // Whether the pattern matches somewhere in `name`.
  bool search(std::string_view name) const;

 private:
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace gpuscope
