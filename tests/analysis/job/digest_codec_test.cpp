// A rank's digest as bytes (analysis/job/digest_codec.h): the job's report built
// from decoded digests is byte for byte the one built from the originals (text
// and JSON), on a synthetic job with a slow rank and clocks off by seconds, on
// the real two-rank job and on one-rank digests of traces that fill every
// table; encoding a decoded digest gives the same bytes; and bytes cut short,
// flipped, of another version or with bad counts are refused with a
// DigestError, never a crash. The fuzz target's seeds are digests of this
// format (GPUSCOPE_WRITE_FUZZ_SEEDS=1 rewrites them).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "analysis/job/digest_codec.h"
#include "analysis/job/job.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "import/open_trace.h"
#include "import/synthetic_job.h"
#include "support/profile_fill.h"
#include "support/real_traces.h"
#include "support/test_traces.h"

namespace gpuscope {
namespace {

std::vector<RankDigest> synthetic_digests(std::uint32_t ranks, std::int32_t slow_rank) {
  SyntheticJobOptions o;
  o.ranks = ranks;
  o.kernels = 2'000;
  o.slow_rank = slow_rank;
  o.max_clock_offset_ns = 3'000'000'000;
  o.seed = 11;
  const SyntheticJob job(o);
  std::vector<RankDigest> digests;
  for (std::uint32_t r = 0; r < job.ranks(); ++r)
    digests.push_back(digest_rank(job.rank_trace(r), "rank-" + std::to_string(r) + ".gscope"));
  return digests;
}

std::vector<RankDigest> round_trip(const std::vector<RankDigest>& digests) {
  std::vector<RankDigest> out;
  for (const RankDigest& d : digests) {
    const std::string bytes = encode_digest(d);
    RankDigest back = decode_digest(bytes);
    EXPECT_EQ(encode_digest(back), bytes) << d.file << ": encoding the decoded digest gives other bytes";
    EXPECT_EQ(report_json(back.profile), report_json(d.profile)) << d.file;
    out.push_back(std::move(back));
  }
  return out;
}

void expect_same_job(const std::vector<RankDigest>& digests) {
  const std::vector<RankDigest> decoded = round_trip(digests);
  const Profile want = analyze_digests(digests), got = analyze_digests(decoded);
  EXPECT_EQ(report_json(got), report_json(want));
  EXPECT_EQ(report_text(got), report_text(want));
}

TEST(DigestCodec, SyntheticJobWithSlowRankGivesTheSameReport) {
  const std::vector<RankDigest> digests = synthetic_digests(5, 3);
  const Profile p = analyze_digests(digests);
  ASSERT_FALSE(p.collectives.empty());  // the cross-rank analysis has something to match
  ASSERT_EQ(p.stragglers.front().rank, 3);
  expect_same_job(digests);
}

TEST(DigestCodec, RealTwoRankJobGivesTheSameReport) {
  std::vector<RankDigest> digests;
  for (const char* f : {"hta-sampled-rank0.json.gz", "hta-sampled-rank1.json.gz"})
    digests.push_back(digest_rank(open_trace(testing::real_trace(f)), f));
  expect_same_job(digests);
}

TEST(DigestCodec, TracesFillingEveryTableRoundTrip) {
  std::vector<RankDigest> digests;
  digests.push_back(digest_rank(testing::every_table_trace(), "every-table"));
  digests.push_back(digest_rank(testing::training_trace({}), "training"));
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    digests.push_back(digest_rank(testing::random_trace(seed), "random-" + std::to_string(seed)));
  for (const RankDigest& d : digests) expect_same_job({d});
}

// Every member of every record of the Profile, each with a value of its
// own (walked through the lists in analysis/profile_fields.h), decodes as
// encoded; the report's empty ones (TracesFillingEveryTableRoundTrip) cannot
// show a member decoded into its neighbour.
TEST(DigestCodec, EveryMemberOfEveryRecordRoundTrips) {
  RankDigest d;
  d.profile = members::filled_profile();
  const RankDigest back = decode_digest(encode_digest(d));
  members::expect_same(d.profile, back.profile, members::Members::all);
}

void expect_refused(std::string_view bytes, const std::string& what) {
  try {
    (void)decode_digest(bytes);
    ADD_FAILURE() << what << ": decoded";
  } catch (const DigestError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("digest: ", 0), 0u) << e.what();
  }
}

TEST(DigestCodec, EveryCutIsRefused) {
  const std::string bytes = encode_digest(synthetic_digests(2, 1)[1]);
  ASSERT_GT(bytes.size(), 1000u);
  const std::size_t stride = bytes.size() / 3000 + 1;
  for (std::size_t n = 0; n < bytes.size(); n += stride) expect_refused(bytes.substr(0, n), std::to_string(n));
  expect_refused(bytes + "x", "one byte more");
}

TEST(DigestCodec, OtherVersionMarkAndLengthAreNamed) {
  const std::string bytes = encode_digest(synthetic_digests(2, -1)[0]);
  std::string other = bytes;
  other[8] = static_cast<char>(kDigestFormatVersion + 1);
  try {
    (void)decode_digest(other);
    FAIL() << "decoded another version";
  } catch (const DigestError& e) {
    EXPECT_NE(std::string(e.what()).find("format version " + std::to_string(kDigestFormatVersion + 1)),
              std::string::npos)
        << e.what();
  }
  expect_refused("not a digest at all", "no mark");
  std::string longer = bytes;
  longer[12] = static_cast<char>(longer[12] + 1);  // the payload's length, low byte
  expect_refused(longer, "length off by one");
}

// Flipped bytes anywhere either decode to some digest or are refused; none crashes
// (the sanitizer builds and the fuzz target say so for memory errors).
TEST(DigestCodec, FlippedBytesNeverCrash) {
  const std::string bytes = encode_digest(synthetic_digests(2, 0)[0]);
  std::mt19937_64 rng(5);
  std::size_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string b = bytes;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    try {
      (void)decode_digest(b);
    } catch (const DigestError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
}

TEST(DigestCodec, HugeCountIsRefusedBeforeAllocating) {
  // A digest whose file name claims 2^62 bytes.
  std::string b = encode_digest(synthetic_digests(2, -1)[0]);
  const std::size_t count_at = 8 + 4 + 8;  // mark, version, length; then the file name's length
  for (int i = 0; i < 8; ++i) b[count_at + i] = i == 7 ? 0x40 : 0;
  expect_refused(b, "huge count");
}

// tests/fuzz/corpus/fuzz_digest: two ranks of a synthetic job and the first
// one cut in half. A change of the format (kDigestFormatVersion) makes this
// fail until the seeds are rewritten: GPUSCOPE_WRITE_FUZZ_SEEDS=1.
TEST(DigestCodec, FuzzSeedsAreOfThisFormat) {
  const std::filesystem::path dir = std::filesystem::path(GPUSCOPE_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_digest";
  auto bytes_of = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  if (std::getenv("GPUSCOPE_WRITE_FUZZ_SEEDS")) {
    const std::vector<RankDigest> d = synthetic_digests(2, 1);
    const std::string rank0 = encode_digest(d[0]);
    std::ofstream(dir / "rank0", std::ios::binary) << rank0;
    std::ofstream(dir / "rank1", std::ios::binary) << encode_digest(d[1]);
    std::ofstream(dir / "cut", std::ios::binary) << rank0.substr(0, rank0.size() / 2);
  }
  for (const char* name : {"rank0", "rank1"}) {
    const std::string bytes = bytes_of(dir / name);
    ASSERT_FALSE(bytes.empty()) << name;
    EXPECT_NO_THROW(decode_digest(bytes)) << name << ": rewrite the seeds (GPUSCOPE_WRITE_FUZZ_SEEDS=1)";
  }
  EXPECT_THROW(decode_digest(bytes_of(dir / "cut")), DigestError);
}

}  // namespace
}  // namespace gpuscope
