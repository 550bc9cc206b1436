// A rank's digest (analysis/job/job.h) as bytes, so that the processes of one
// `mpirun … gpuscope report` can each digest their share of a job's files and
// gather the digests at one of them (docs/scale.md). Everything of a digest
// travels: its file, rank, host and command line, its whole Profile, its
// collectives, the findings' evidence and the duration sketches; the job's
// Profile built from decoded digests is the one built from the originals.
//
// The bytes: "GSDIGEST", a format version (u32), the payload's length (u64),
// the payload; integers little-endian, strings and vectors as a u64 count and
// their elements. Decoding checks every length and enum against what is
// left and what exists, and throws DigestError on anything else.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "analysis/job/job.h"

namespace gpuscope {

inline constexpr std::uint32_t kDigestFormatVersion = 51;

// Bytes that are not a digest of this format: says where and what.
class DigestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string encode_digest(const RankDigest& digest);
RankDigest decode_digest(std::string_view bytes);  // throws DigestError

}  // namespace gpuscope
