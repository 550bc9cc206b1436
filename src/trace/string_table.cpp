#include "trace/string_table.h"

namespace gpuscope {

StringTable::StringTable() {
  offsets_.push_back(0);
  offsets_.push_back(0);  // id 0: the empty string
  buckets_.assign(64, kNoString);
  // The empty string is found through the bucket array like any other.
  buckets_[hash({}) & (buckets_.size() - 1)] = 0;
}

std::uint64_t StringTable::hash(std::string_view s) {
  // FNV-1a, 64-bit, with a final avalanche: short strings dominate, and the
  // bucket index uses the low bits.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

void StringTable::rehash(std::size_t n) {
  std::vector<StringId> fresh(n, kNoString);
  const std::size_t mask = n - 1;
  for (StringId id = 0; id < size(); ++id) {
    std::size_t b = hash(get(id)) & mask;
    while (fresh[b] != kNoString) {
      if (get(fresh[b]) == get(id)) break;  // duplicate from append_raw: keep the first
      b = (b + 1) & mask;
    }
    if (fresh[b] == kNoString) fresh[b] = id;
  }
  buckets_.swap(fresh);
}

std::string_view StringTable::capped(std::string_view s) const {
  if (max_bytes_ == 0 || s.size() <= max_bytes_) return s;
  std::size_t cut = max_bytes_;
  // Never inside a UTF-8 character: back off over continuation bytes.
  for (int back = 0; back < 3 && cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80; ++back) --cut;
  return s.substr(0, cut);
}

StringId StringTable::find(std::string_view s) const {
  s = capped(s);
  const std::size_t mask = buckets_.size() - 1;
  std::size_t b = hash(s) & mask;
  while (buckets_[b] != kNoString) {
    if (get(buckets_[b]) == s) return buckets_[b];
    b = (b + 1) & mask;
  }
  return kNoString;
}

StringId StringTable::intern(std::string_view s) {
  const bool cut = max_bytes_ && s.size() > max_bytes_;
  if (cut) s = capped(s);
  std::size_t mask = buckets_.size() - 1;
  std::size_t b = hash(s) & mask;
  while (buckets_[b] != kNoString) {
    if (get(buckets_[b]) == s) return buckets_[b];
    b = (b + 1) & mask;
  }
  const StringId id = size();
  truncated_ += cut;  // each name cut counts once, however often it is interned
  arena_.append(s.data(), s.size());
  offsets_.push_back(arena_.size());
  buckets_[b] = id;
  if (static_cast<std::size_t>(size()) * 2 > buckets_.size()) rehash(buckets_.size() * 2);
  return id;
}

bool StringTable::append_raw(std::string_view bytes, const std::vector<std::uint64_t>& lengths) {
  std::uint64_t total = 0;
  for (std::uint64_t len : lengths) {
    if (len > bytes.size() - total) return false;
    total += len;
  }
  if (total != bytes.size()) return false;
  const StringId first = size();
  std::uint64_t at = arena_.size();
  offsets_.reserve(offsets_.size() + lengths.size());
  bool cut = false;
  for (std::uint64_t len : lengths) cut = cut || (max_bytes_ && len > max_bytes_);
  if (!cut) {
    arena_.append(bytes.data(), bytes.size());
    for (std::uint64_t len : lengths) {
      at += len;
      offsets_.push_back(at);
    }
  } else {
    for (std::size_t i = 0, from = 0; i < lengths.size(); from += lengths[i++]) {
      const std::string_view s = capped(bytes.substr(from, lengths[i]));
      truncated_ += s.size() < lengths[i];
      arena_.append(s.data(), s.size());
      offsets_.push_back(arena_.size());
    }
  }
  // Growing: rehash everything (amortized, doubling). Else only the new
  // strings go in: a file of many small string sections (a live capture's)
  // must not hash the whole table again for each.
  std::size_t n = buckets_.size();
  while (static_cast<std::size_t>(size()) * 2 > n) n *= 2;
  if (n != buckets_.size()) {
    rehash(n);
    return true;
  }
  insert_ids(first, size());
  return true;
}

void StringTable::insert_ids(StringId first, StringId end) {
  const std::size_t mask = buckets_.size() - 1;
  for (StringId id = first; id < end; ++id) {
    std::size_t b = hash(get(id)) & mask;
    while (buckets_[b] != kNoString) {
      if (get(buckets_[b]) == get(id)) break;  // duplicate from append_raw: keep the first
      b = (b + 1) & mask;
    }
    if (buckets_[b] == kNoString) buckets_[b] = id;
  }
}

void StringTable::reserve(std::size_t strings, std::size_t bytes) {
  arena_.reserve(bytes);
  offsets_.reserve(strings + 1);
}

std::size_t StringTable::memory_bytes() const {
  return arena_.capacity() + offsets_.capacity() * sizeof(std::uint64_t) + buckets_.capacity() * sizeof(StringId);
}

}  // namespace gpuscope
