// A Profile's members through the records' lists (profile_fill.h).
#include "support/profile_fill.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/profile_fields.h"

namespace gpuscope::members {

namespace {

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, std::size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};
template <class T>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};

// Values counted up from 1000 (past every default and small constant, below
// every limit of the report's reader); a TimeRange's start comes before its end.
class Filler {
 public:
  template <class T>
  [[gnu::noinline]] void fill(T& v) {
    if constexpr (record::Listed<T>) {
      Rows<T> walk{*this, v};
      rows(walk, record::Of<T>{});
    } else if constexpr (IsVector<T>::value) {
      v.resize(2);
      for (auto& item : v) fill(item);
    } else if constexpr (IsOptional<T>::value) {
      fill(v.emplace());
    } else if constexpr (IsArray<T>::value) {
      for (auto& item : v) fill(item);
    } else if constexpr (IsPair<T>::value) {
      fill(v.first), fill(v.second);
    } else if constexpr (std::is_same_v<T, bool>) {
      v = !v;
    } else if constexpr (std::is_enum_v<T>) {
      static_assert(record::kEnumValues<T> > 1, "an enum of the records needs its record::kEnumValues");
      const int n = record::kEnumValues<T>, now = static_cast<int>(v);
      v = static_cast<T>((now + 1 + static_cast<int>(next_++ % (n - 1))) % n);
    } else if constexpr (std::is_same_v<T, std::string>) {
      v = std::to_string(next_++);
      v.insert(0, 1, 's');
    } else if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<double>(next_++) + 0.25;
    } else {
      static_assert(std::is_integral_v<T>, "a member type fill() does not know");
      v = static_cast<T>(next_++);
    }
  }

 private:
  // fill() of each row of one member of x.
  template <class T>
  struct Rows {
    Filler& filler;
    T& x;
    template <unsigned Flags, auto... Path>
    void member(const record::Row&) {
      if constexpr (sizeof...(Path) == 1) filler.fill((x.*Path)...);
    }
    template <auto Compute>
    void computed(const record::Row&) {}
  };

  std::uint64_t next_ = 1000;
};

template <class T>
void expect_same_as(const T& a, const T& b, const std::string& path, Members which);

// A member's path; a row of no key of its own is named by where the report has it.
std::string member_path(const std::string& path, const record::Row& row) {
  std::string at = path;
  if (!at.empty()) at += '.';
  at += row.key ? std::string_view(row.key) : row.meaning;
  return at;
}

template <class T>
struct PairWalk {
  const T& a;
  const T& b;
  const std::string& path;
  Members which;
  template <unsigned Flags, auto... Path>
  void member(const record::Row& row) {
    if constexpr (sizeof...(Path) == 1) {
      if (which == Members::in_report && (Flags & record::kDigestOnly) != 0) return;
      one<Path...>(row);
    }
  }
  template <auto Member>
  void one(const record::Row& row) {
    expect_same_as(a.*Member, b.*Member, member_path(path, row), which);
  }
  template <auto Compute>
  void computed(const record::Row&) {}
};

template <class T>
[[gnu::noinline]] void expect_same_as(const T& a, const T& b, const std::string& path, Members which) {
  if constexpr (record::Listed<T>) {
    PairWalk<T> walk{a, b, path, which};
    rows(walk, record::Of<T>{});
  } else if constexpr (IsVector<T>::value || IsArray<T>::value) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same_as(a[i], b[i], path + '[' + std::to_string(i) + ']', which);
  } else if constexpr (IsOptional<T>::value) {
    ASSERT_EQ(a.has_value(), b.has_value()) << path;
    if (a) expect_same_as(*a, *b, path, which);
  } else if constexpr (IsPair<T>::value) {
    expect_same_as(a.first, b.first, path + ".first", which);
    expect_same_as(a.second, b.second, path + ".second", which);
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

}  // namespace

Profile filled_profile() {
  Profile p;
  Filler().fill(p);
  return p;
}

void expect_same(const Profile& a, const Profile& b, Members which) { expect_same_as(a, b, "", which); }

}  // namespace gpuscope::members
