// Scanning JSON text without parsing it: where its strings are.
#pragma once

namespace gpuscope {

// Fed a JSON text one character at a time, says which characters belong to a
// string (its two quotes included), so that a scan can skip or keep strings
// whole: a '"' after a backslash does not end one.
class JsonStringScan {
 public:
  bool in_string(char c) {
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
      return true;
    }
    in_string_ = c == '"';
    return in_string_;
  }

 private:
  bool in_string_ = false, escaped_ = false;
};

}  // namespace gpuscope
