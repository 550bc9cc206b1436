// libFuzzer target: a rank's digest from bytes (analysis/job/digest_codec.h: what
// `mpirun … gpuscope report` sends to process 0).
//
// The only acceptable failure is DigestError. A digest that decodes must
// encode back to the same bytes (the writer and the reader agree). The
// numbers inside are not judged: the bytes come from another gpuscope
// process of the same build, and a decoded digest is as good as the one it
// was made from.
// Seeds: tests/fuzz/corpus/fuzz_digest/ (digests of two small synthetic
// ranks, and one cut short).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/job/digest_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const RankDigest d = decode_digest(bytes);
    if (encode_digest(d) != bytes) __builtin_trap();  // writer and reader disagree
  } catch (const DigestError&) {
  }
  return 0;
}
