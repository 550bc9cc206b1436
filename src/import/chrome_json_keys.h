// KeyTable: the keys of a JSON object the Chrome JSON importer reads, as data
// (key string -> what to do with its value), found with one probe of a
// perfect hash (internal to src/import/).
//
// Keys are looked up once per key of every event, so the lookup must cost
// about what a hand-unrolled switch on the key's length did: the slot comes
// from the key's length and its first and last bytes, and one compare
// decides. The multipliers are searched at compile time: adding a key is one
// line in its table, and keys that no multipliers can tell apart do not
// compile (raise the slot count). The search must stay short: compilers
// bound the steps of a constant evaluation (clang's default, about a
// million, allows a few thousand tries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuscope::detail::chrome {

template <class Value, std::size_t N, std::size_t Slots = 64>
class KeyTable {
  static_assert(N < 255 && Slots <= 256 && (Slots & (Slots - 1)) == 0, "slots: a power of two, more than the keys");

 public:
  struct Entry {
    std::string_view key;
    Value value;
  };

  consteval explicit KeyTable(const Entry (&entries)[N]) {
    for (std::size_t i = 0; i < N; ++i) entries_[i] = entries[i];
    for (unsigned a = 1; a < 64; ++a)
      for (unsigned b = 1; b < 64; ++b)
        for (unsigned c = 1; c < 64; ++c)
          if (place(a, b, c)) return;
    throw "KeyTable: no perfect hash for these keys";  // not a constant expression: a compile error
  }

  // The value of `key`, or null when the table does not have it.
  [[gnu::always_inline]] const Value* find(std::string_view key) const {
    if (key.empty()) return nullptr;
    const std::uint8_t i = slots_[slot(key, a_, b_, c_)];
    if (i == kEmpty) return nullptr;
    const Entry& e = entries_[i];
    if (e.key.size() != key.size() || !same_bytes(e.key.data(), key.data(), key.size())) return nullptr;
    return &e.value;
  }

 private:
  // memcmp(a, b, n) == 0 inlined: words that overlap at the end rather than
  // a call to the library's memcmp (keys are short; most compares fail in
  // the first word).
  [[gnu::always_inline]] static bool same_bytes(const char* a, const char* b, std::size_t n) {
    if (n >= 8) {
      for (std::size_t i = 0; i + 8 < n; i += 8)
        if (load<std::uint64_t>(a + i) != load<std::uint64_t>(b + i)) return false;
      return load<std::uint64_t>(a + n - 8) == load<std::uint64_t>(b + n - 8);
    }
    if (n >= 4)
      return load<std::uint32_t>(a) == load<std::uint32_t>(b) &&
             load<std::uint32_t>(a + n - 4) == load<std::uint32_t>(b + n - 4);
    if (n >= 2)
      return load<std::uint16_t>(a) == load<std::uint16_t>(b) &&
             load<std::uint16_t>(a + n - 2) == load<std::uint16_t>(b + n - 2);
    return n == 0 || *a == *b;
  }
  template <class Word>
  [[gnu::always_inline]] static Word load(const char* p) {
    Word w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }

  static constexpr std::uint8_t kEmpty = 0xff;

  static constexpr std::size_t slot(std::string_view k, unsigned a, unsigned b, unsigned c) {
    return (k.size() * a + static_cast<unsigned char>(k.front()) * b + static_cast<unsigned char>(k.back()) * c) &
           (Slots - 1);
  }

  // Whether multipliers (a, b, c) put every key in a slot of its own (then
  // kept). Cheap to reject: most tries fail within the first few keys.
  constexpr bool place(unsigned a, unsigned b, unsigned c) {
    std::uint64_t used[(Slots + 63) / 64] = {};
    for (std::size_t i = 0; i < N; ++i) {
      const std::size_t s = slot(entries_[i].key, a, b, c);
      if (used[s / 64] & (std::uint64_t{1} << (s % 64))) return false;
      used[s / 64] |= std::uint64_t{1} << (s % 64);
    }
    for (std::size_t s = 0; s < Slots; ++s) slots_[s] = kEmpty;
    for (std::size_t i = 0; i < N; ++i) slots_[slot(entries_[i].key, a, b, c)] = static_cast<std::uint8_t>(i);
    a_ = a;
    b_ = b;
    c_ = c;
    return true;
  }

  Entry entries_[N] = {};
  std::uint8_t slots_[Slots] = {};
  unsigned a_ = 0, b_ = 0, c_ = 0;
};

}  // namespace gpuscope::detail::chrome
