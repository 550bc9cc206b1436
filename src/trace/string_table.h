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

  // Readers of untrusted files cap the length of what they intern: from
  // then on intern(), find() and append_raw() cut a longer string to its
  // first `max_bytes` bytes (at a UTF-8 character boundary), and truncated()
  // counts the strings added cut short. 0 (the default): no limit.
  void limit_length(std::size_t max_bytes) { max_bytes_ = max_bytes; }
  std::uint64_t truncated() const { return truncated_; }

 private:
  std::string_view capped(std::string_view s) const;
  void rehash(std::size_t buckets);
  void insert_ids(StringId first, StringId end);  // into the buckets as they are (room enough)
  static std::uint64_t hash(std::string_view s);

  std::string arena_;
  std::vector<std::uint64_t> offsets_;  // size() + 1 entries; offsets_[0] == 0
  std::vector<StringId> buckets_;       // kNoString = empty
  std::size_t max_bytes_ = 0;
  std::uint64_t truncated_ = 0;
};

}  // namespace gpuscope
