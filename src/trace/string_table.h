// StringTable: every string of a trace, stored once.
//
// Strings live back to back in one character arena; an id is an index into an
// offsets array, so a lookup is two loads and a string_view. Id 0 is always the
// empty string. Interning uses an open-addressing hash set of ids (hashes are
// computed from the arena), so interning never allocates per string beyond the
// arena's amortized growth.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/types.h"

namespace gpuscope {

class StringTable {
 public:
  StringTable();

  // Returns the id of `s`, adding it if it is new.
  StringId intern(std::string_view s);
  // Returns the id of `s` or kNoString if it is not in the table.
  static constexpr StringId kNoString = 0xffffffffu;
  StringId find(std::string_view s) const;

  std::string_view get(StringId id) const {
    return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  bool valid(StringId id) const { return id < size(); }
  std::uint32_t size() const { return static_cast<std::uint32_t>(offsets_.size() - 1); }
  std::size_t arena_bytes() const { return arena_.size(); }
  std::size_t memory_bytes() const;

  // Bulk access for serialization: the arena and the end offset of each string.
  const std::string& arena() const { return arena_; }
  const std::vector<std::uint64_t>& offsets() const { return offsets_; }

  // Appends strings in id order without deduplication, as a reader restoring a
  // saved table does. `lengths[i]` is the byte length of the i-th new string;
  // `bytes` holds them back to back. Returns false (and changes nothing) if the
  // lengths do not add up to bytes.size().
  bool append_raw(std::string_view bytes, const std::vector<std::uint64_t>& lengths);

  void reserve(std::size_t strings, std::size_t bytes);

 private:
  void rehash(std::size_t buckets);
  static std::uint64_t hash(std::string_view s);

  std::string arena_;
  std::vector<std::uint64_t> offsets_;  // size() + 1 entries; offsets_[0] == 0
  std::vector<StringId> buckets_;       // kNoString = empty
};

}  // namespace gpuscope
