// How many members an aggregate has, at compile time and on every platform:
// the largest N for which `T{a1, …, aN}` is well-formed, each ai an object
// that converts to any type (a member with an explicit default constructor
// makes shorter lists fail too: see largest_brace_list). It counts what a
// brace list initializes:
//  * a base class counts as one (it takes one initializer, like a member);
//  * a member that is itself an aggregate (or a std::array) counts as one:
//    the argument converts to it whole, so no brace elision happens;
//  * a C array member cannot be converted to, so brace elision counts its
//    elements one by one: a type with one counts more than its members.
//    Compared with a list of its fields, that errs on the side of a
//    mismatch, never of a match that hides a missing field.
// Used by the digest codec to check that each record's field list names
// every member (the Profile's records in src/analysis/profile_fields.h, the
// job's own in src/analysis/job/digest_codec.cpp).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <type_traits>
#include <utility>

namespace gpuscope::detail {

namespace member_count_impl {

// Converts to anything but T itself, so that T{any} is never T's copy or
// move. The conversion is used in unevaluated operands only; its body (never
// instantiated) is there because a declared-only function of a type local to
// a file is a warning.
template <class T>
struct AnyBut {
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, T>) operator U() const { std::abort(); }
};

template <class T, std::size_t>
using Arg = AnyBut<T>;

template <class T, std::size_t... I>
constexpr bool brace_constructible(std::index_sequence<I...>) {
  return requires { T{std::declval<Arg<T, I>>()...}; };
}

// The brace lists T takes are those of N initializers for N from the
// position of its last member that `{}` cannot initialize (one with an
// explicit default constructor) up to its member count: scan N upwards and
// stop at the first that fails after one that worked. Types of more members
// than this are not counted (and recursion stays shallow).
inline constexpr std::size_t kMaxMembers = 256;
inline constexpr std::size_t kNotCounted = ~std::size_t{0};

template <class T, std::size_t N, bool kSeenOne>
constexpr std::size_t largest_brace_list() {
  constexpr bool ok = brace_constructible<T>(std::make_index_sequence<N>{});
  if constexpr (kSeenOne && !ok) {
    return N - 1;
  } else if constexpr (N == kMaxMembers) {
    return kNotCounted;
  } else {
    return largest_brace_list < T, N + 1, kSeenOne || ok > ();
  }
}

}  // namespace member_count_impl

// The members of aggregate T (a base class counts as one; a C array member as
// its elements: see the comment at the top).
template <class T>
constexpr std::size_t member_count() {
  static_assert(std::is_aggregate_v<T>, "member_count: T is not an aggregate");
  constexpr std::size_t n = member_count_impl::largest_brace_list<T, 0, false>();
  static_assert(n != member_count_impl::kNotCounted, "member_count: T takes no brace list of up to kMaxMembers");
  return n;
}

}  // namespace gpuscope::detail
