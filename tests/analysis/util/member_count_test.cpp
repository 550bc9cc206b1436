// member_count() on local structs of the shapes the digest codec lists:
// scalars, strings and containers, nested aggregates, std::array, a base
// class, a member with an explicit default constructor. The counts are
// compile-time facts (static_asserts); the test also checks them at run time
// so that a wrong count shows as a failing test, not only as a build error.
#include "analysis/util/member_count.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::detail {
namespace {

struct Empty {};
struct One {
  std::int64_t a = 0;
};
struct Mixed {
  std::string name;
  std::optional<double> share;
  std::vector<std::uint32_t> ids;
  std::map<std::string, std::int64_t> by_name;
  bool flag = false;
  std::shared_ptr<const One> parts;
};
struct Nested {  // an aggregate member counts as one, not as its members
  One one;
  Mixed mixed;
  std::int32_t x = 0;
};
struct WithArray {  // a std::array counts as one
  std::array<One, 4> ones;
  std::array<std::uint64_t, 7> counts{};
};
struct Derived : Nested {  // the base counts as one
  double y = 0;
};
struct Keeps {  // explicit default constructor: `Keeps k = {};` is ill-formed
  explicit Keeps(int keep = 10) : keep(keep) {}
  int keep;
};
struct ExplicitLast {  // shorter brace lists fail: the count is still 3
  int a = 0;
  double b = 0;
  Keeps k;
};
struct ExplicitFirst {
  Keeps k;
  int a = 0;
};
struct CArray {  // a C array counts as its elements (brace elision)
  int v[3];
  int w;
};

static_assert(member_count<Empty>() == 0);
static_assert(member_count<One>() == 1);
static_assert(member_count<Mixed>() == 6);
static_assert(member_count<Nested>() == 3);
static_assert(member_count<WithArray>() == 2);
static_assert(member_count<Derived>() == 2);
static_assert(member_count<ExplicitLast>() == 3);
static_assert(member_count<ExplicitFirst>() == 2);
static_assert(member_count<CArray>() == 4);

TEST(MemberCount, CountsWhatABraceListInitializes) {
  EXPECT_EQ(member_count<Empty>(), 0u);
  EXPECT_EQ(member_count<One>(), 1u);
  EXPECT_EQ(member_count<Mixed>(), 6u);
  EXPECT_EQ(member_count<Nested>(), 3u);
  EXPECT_EQ(member_count<WithArray>(), 2u);
  EXPECT_EQ(member_count<Derived>(), 2u);
  EXPECT_EQ(member_count<ExplicitLast>(), 3u);
  EXPECT_EQ(member_count<ExplicitFirst>(), 2u);
  EXPECT_EQ(member_count<CArray>(), 4u);
}

}  // namespace
}  // namespace gpuscope::detail
