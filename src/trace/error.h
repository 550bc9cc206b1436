// Errors about input a user handed us (a file, a JSON document): they name the
// file, where in it (byte offset, if known) and what is wrong, so the CLI can
// print them as one line and the viewer can show them in its window.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpuscope {

class InputError : public std::runtime_error {
 public:
  static constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};
  InputError(std::string file, std::string reason, std::uint64_t offset = kNoOffset)
      : std::runtime_error(format(file, reason, offset)),
        file_(std::move(file)),
        reason_(std::move(reason)),
        offset_(offset) {}
  const std::string& file() const { return file_; }
  const std::string& reason() const { return reason_; }
  std::uint64_t offset() const { return offset_; }

 private:
  static std::string format(const std::string& file, const std::string& reason, std::uint64_t offset) {
    std::string s = file;
    if (offset != kNoOffset) s += " (at byte " + std::to_string(offset) + ")";
    return s + ": " + reason;
  }
  std::string file_, reason_;
  std::uint64_t offset_;
};

}  // namespace gpuscope
