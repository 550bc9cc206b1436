// Every member of a Profile, through the lists of analysis/profile_fields.h:
// fill() gives each a value of its own, unlike its default (records member
// by member, lists two items, optionals set, flags flipped, enums moved off
// their default); expect_same() compares two Profiles member by
// member and names the path of each difference ("findings[1].saving_ns").
// The round-trip tests of each form (the JSON report, the rank digest) fill
// a Profile, write it, read it back and compare: a member a form drops,
// whatever its record, fails them. (profile_fill.cpp: compiled once, in
// gpuscope_profile_fill.)
#pragma once

#include "analysis/profile.h"

namespace gpuscope::members {

// A Profile whose every member has a value of its own.
Profile filled_profile();

// Which members to compare: all, or those the JSON report carries (not the
// digest_only<…> rows).
enum class Members { all, in_report };

// A gtest failure for each member that differs, named by its path.
void expect_same(const Profile& a, const Profile& b, Members which);

}  // namespace gpuscope::members
