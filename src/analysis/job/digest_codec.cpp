// encode_digest() / decode_digest(): a RankDigest as versioned bytes.
//
// [SECTION] Field lists (one per type, shared by both directions)
// [SECTION] Writing
// [SECTION] Reading (with every length and enum checked)
// [SECTION] Entry points
//
// Each type's fields are listed once, and the writer and the reader walk the
// same list: a field cannot be written and then read back into another. The
// Profile's records (and the parts of a file's damage) take their lists from
// analysis/profile_fields.h, which the JSON report walks too: the digest
// writes each row of one member, in the order listed. The types of the job's
// own (the evidence, a rank's parts, the digest) are listed here, in
// fields(io, x). The sketches and kept ranges, whose state is private, go
// through their state()/from_state() pairs, which refuse states no sketch
// could have had. Every list is checked against its type's member count at
// compile time: a type that grew a member its list lacks fails to compile.
// A change to any list raises kDigestFormatVersion.
#include "analysis/job/digest_codec.h"

#include <bit>
#include <concepts>
#include <cstring>
#include <type_traits>
#include <utility>

#include "analysis/detail/context.h"
#include "analysis/profile_fields.h"
#include "analysis/util/member_count.h"
#include "analysis/util/stats.h"

namespace gpuscope {

namespace {

constexpr char kMagic[8] = {'G', 'S', 'D', 'I', 'G', 'E', 'S', 'T'};

// [SECTION] Field lists ---------------------------------------------------------------------

// The largest value each enum may take.
template <class E>
constexpr std::uint64_t enum_max() {
  static_assert(record::kEnumValues<E> > 0, "an enum the digest holds needs its record::kEnumValues");
  return static_cast<std::uint64_t>(record::kEnumValues<E> - 1);
}

// A record of profile_fields.h: io(member) for each row of one member, in
// order. Every record the digest holds is checked here against its member
// count.
template <class IO, class S>
struct MemberRows {
  IO& io;
  S& x;
  template <unsigned Flags, auto... Path>
  void member(const record::Row&) {
    if constexpr (sizeof...(Path) == 1) io((x.*Path)...);
  }
  template <auto Compute>
  void computed(const record::Row&) {}
};
template <class IO, class S>
requires record::Listed<std::remove_const_t<S>>
void fields(IO& io, S& x) {
  using T = std::remove_const_t<S>;
  static_assert(detail::member_count<T>() == record::listed_members<T>(),
                "analysis/profile_fields.h: a record has a member its rows() do not list: add its row, and raise "
                "kDigestFormatVersion");
  MemberRows<IO, S> walk{io, x};
  rows(walk, record::Of<T>{});
}

// fields(io, x) for x of type T, const (writing) or not (reading); it returns
// what io(…) returns (for FieldCount below: how many fields it lists).
#define GPUSCOPE_FIELDS(T)                         \
  template <class IO, class S>                     \
  requires std::same_as<std::remove_const_t<S>, T> \
  auto fields(IO& io, S& x)

GPUSCOPE_FIELDS(CollectivePart) { return io(x.start, x.end, x.bytes, x.kind, x.step, x.ordinal); }
GPUSCOPE_FIELDS(detail::Evidence) {
  return io(x.ops_by_category, x.idle_gaps, x.idle_gaps_explained_ns, x.exposed_comm, x.memcpy_exposed, x.launch_gaps,
            x.input_wait, x.sync_idle, x.pageable, x.sync_memcpy, x.optimizer, x.has_input_ranges, x.optimizer_ns,
            x.optimizer_overlapped_ns, x.optimizer_kernels, x.steps_with_optimizer, x.allocator_calls,
            x.allocator_call_ns, x.allocator, x.idle_gaps_sync_ns, x.idle_gaps_warmup_ns, x.idle_gaps_launch_ns,
            x.idle_gaps_queued_ns, x.idle_gaps_warmup, x.optimizer_kernel_ns, x.optimizer_op_kernels,
            x.optimizer_op_named_kernels, x.optimizer_op_kernel_ns, x.attention_chains, x.attention_chain_ns,
            x.attention_chain_gemm_ns, x.input_wait_before_start_ns, x.idle_gaps_host, x.idle_gaps_host_ops,
            x.idle_gaps_unlaunched_ns, x.held_wait_call, x.held_wait_ns, x.held_graph_ns, x.idle_gaps_unrecorded_ns,
            x.unrecorded_gaps, x.unrecorded_largest, x.unrecorded_device, x.unrecorded_stream, x.idle_gaps_capture,
            x.idle_gaps_capture_ns, x.idle_gaps_comm_ns, x.comm_gaps, x.comm_gap_largest_ns, x.comm_gap_range,
            x.staging_idle_ns, x.staging_gaps, x.idle_gaps_staging_ns, x.idle_gaps_host_named,
            x.idle_gaps_allocator_named, x.idle_gaps_warmup_unsure_ns, x.idle_gaps_host_recorded_ns);
}
GPUSCOPE_FIELDS(detail::RankParts::Name) { return io(x.name, x.category, x.durations); }
GPUSCOPE_FIELDS(detail::RankParts) { return io(x.evidence, x.names, x.launch); }
// RankDigest::parts goes separately (a shared pointer).
GPUSCOPE_FIELDS(RankDigest) {
  return io(x.file, x.own_rank, x.world_size, x.host, x.command_line, x.gpus, x.profile, x.collectives);
}

#undef GPUSCOPE_FIELDS

// Every type listed above names all its members: fields() of a FieldCount
// returns how many it lists, member_count() how many the struct has (the same
// on every compiler and platform). A type that grew has a field its list
// lacks.
struct FieldCount {
  template <class... F>
  std::integral_constant<std::size_t, sizeof...(F)> operator()(const F&...) const {
    return {};
  }
};
template <class T>
constexpr std::size_t listed_fields() {
  return decltype(fields(std::declval<FieldCount&>(), std::declval<const T&>()))::value;
}
// `apart`: members encoded outside the list (RankDigest::parts).
#define GPUSCOPE_LISTED(T, apart)                                          \
  static_assert(detail::member_count<T>() == listed_fields<T>() + (apart), \
                "digest_codec.cpp: " #T                                    \
                " has a member its fields() does not list: "               \
                "list it and raise kDigestFormatVersion")
GPUSCOPE_LISTED(CollectivePart, 0);
// Evidence has a constructor (how many ranges to keep), so it is no
// aggregate; its members are those of the aggregate EvidenceFields.
static_assert(detail::member_count<detail::EvidenceFields>() == listed_fields<detail::Evidence>(),
              "digest_codec.cpp: detail::Evidence has a member its fields() does not list: "
              "list it and raise kDigestFormatVersion");
GPUSCOPE_LISTED(detail::RankParts::Name, 0);
GPUSCOPE_LISTED(detail::RankParts, 0);
GPUSCOPE_LISTED(RankDigest, 1);
#undef GPUSCOPE_LISTED

// [SECTION] Writing ---------------------------------------------------------------------------

class Writer {
 public:
  std::string out;

  template <class... T>
  void operator()(const T&... v) {
    (put(v), ...);
  }

 private:
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      out.push_back(v ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::uint64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::endian::native == std::endian::little) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out.append(b, sizeof(T));
      } else {
        std::uint64_t u = static_cast<std::make_unsigned_t<T>>(v);
        for (std::size_t i = 0; i < sizeof(T); ++i, u >>= 8) out.push_back(static_cast<char>(u & 0xff));
      }
    } else if constexpr (std::is_same_v<T, double>) {
      put(std::bit_cast<std::uint64_t>(v));
    } else {
      fields(*this, v);
    }
  }
  void put(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    out.append(s);
  }
  template <class T>
  void put(const std::optional<T>& v) {
    put(v.has_value());
    if (v) put(*v);
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (const T& x : v) put(x);
  }
  template <class T, std::size_t N>
  void put(const std::array<T, N>& v) {
    for (const T& x : v) put(x);
  }
  template <class A, class B>
  void put(const std::pair<A, B>& v) {
    put(v.first), put(v.second);
  }
  void put(const DurationSketch& d) {
    const DurationSketch::State s = d.state();
    (*this)(s.items, s.exact, s.count, s.total, s.min, s.max);
  }
  void put(const detail::TopRanges& t) {
    (*this)(static_cast<std::uint64_t>(t.keep()), t.items(), t.total(), t.count());
  }
};

// [SECTION] Reading ---------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  template <class... T>
  void operator()(T&... v) {
    (get(v), ...);
  }
  std::size_t left() const { return in_.size() - pos_; }
  std::size_t pos() const { return pos_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw DigestError("digest: " + what + " at byte " + std::to_string(pos_));
  }

 private:
  template <class T>
  void get(T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::uint8_t b = byte();
      if (b > 1) fail("a flag of value " + std::to_string(b));
      v = b != 0;
    } else if constexpr (std::is_enum_v<T>) {
      std::uint64_t u = 0;
      get(u);
      if (u > enum_max<T>())
        fail("an enum value " + std::to_string(u) + " past its largest, " + std::to_string(enum_max<T>()));
      v = static_cast<T>(u);
    } else if constexpr (std::is_integral_v<T>) {
      need(sizeof(T), "an integer");
      if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, in_.data() + pos_, sizeof(T));
      } else {
        std::uint64_t u = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
          u |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << 8 * i;
        v = static_cast<T>(static_cast<std::make_unsigned_t<T>>(u));
      }
      pos_ += sizeof(T);
    } else if constexpr (std::is_same_v<T, double>) {
      std::uint64_t u = 0;
      get(u);
      v = std::bit_cast<double>(u);
    } else {
      fields(*this, v);
    }
  }
  void get(std::string& s) {
    const std::size_t n = count(1, "a string");
    s.assign(in_.substr(pos_, n));
    pos_ += n;
  }
  template <class T>
  void get(std::optional<T>& v) {
    bool has = false;
    get(has);
    v.reset();
    if (has) get(v.emplace());
  }
  template <class T>
  void get(std::vector<T>& v) {
    // Every element takes at least one byte: a count past the bytes left is refused before any allocation.
    const std::size_t n = count(1, "a list");
    v.clear();
    v.resize(n);
    for (T& x : v) get(x);
  }
  template <class T, std::size_t N>
  void get(std::array<T, N>& v) {
    for (T& x : v) get(x);
  }
  template <class A, class B>
  void get(std::pair<A, B>& v) {
    get(v.first), get(v.second);
  }
  void get(DurationSketch& d) {
    DurationSketch::State s;
    (*this)(s.items, s.exact, s.count, s.total, s.min, s.max);
    std::optional<DurationSketch> r = DurationSketch::from_state(std::move(s));
    if (!r) fail("a duration sketch whose values are not ascending or whose counts do not add up");
    d = std::move(*r);
  }
  void get(detail::TopRanges& t) {
    std::uint64_t keep = 0, count = 0;
    std::vector<detail::TopRanges::Item> items;
    TimeNs total = 0;
    (*this)(keep, items, total, count);
    std::optional<detail::TopRanges> r = detail::TopRanges::restore(keep, std::move(items), total, count);
    if (!r) fail("a list of kept ranges that is not a heap of at most " + std::to_string(keep));
    t = std::move(*r);
  }

  std::uint8_t byte() {
    need(1, "a flag");
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  void need(std::size_t n, const char* what) const {
    if (left() < n)
      fail(std::string("cut short (") + what + " needs " + std::to_string(n) + " bytes, " + std::to_string(left()) +
           " left)");
  }
  // A count of things of at least `size` bytes each, checked against the bytes left.
  std::size_t count(std::size_t size, const char* what) {
    std::uint64_t n = 0;
    get(n);
    if (n > left() / size)
      fail(std::string("cut short (") + what + " of " + std::to_string(n) + " where " + std::to_string(left()) +
           " bytes are left)");
    return static_cast<std::size_t>(n);
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

}  // namespace

// [SECTION] Entry points ------------------------------------------------------------------------

std::string encode_digest(const RankDigest& d) {
  Writer w;
  w.out.reserve(std::size_t{1} << 20);
  w.out.append(kMagic, sizeof kMagic);
  w(kDigestFormatVersion, std::uint64_t{0});
  const std::size_t head = w.out.size();
  static const detail::RankParts kNoParts;
  w(d, d.parts ? *d.parts : kNoParts);
  // The payload's length, in the place kept for it.
  Writer length;
  length(static_cast<std::uint64_t>(w.out.size() - head));
  w.out.replace(head - length.out.size(), length.out.size(), length.out);
  return std::move(w.out);
}

RankDigest decode_digest(std::string_view bytes) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw DigestError("digest: not a digest (no GSDIGEST mark)");
  Reader r(bytes.substr(sizeof kMagic));
  std::uint32_t version = 0;
  std::uint64_t length = 0;
  r(version);
  if (version != kDigestFormatVersion)
    throw DigestError("digest: format version " + std::to_string(version) + ", this gpuscope reads version " +
                      std::to_string(kDigestFormatVersion) + " (run one gpuscope build on every process)");
  r(length);
  if (length != r.left())
    throw DigestError("digest: says " + std::to_string(length) + " bytes follow, " + std::to_string(r.left()) + " do");
  RankDigest d;
  auto parts = std::make_shared<detail::RankParts>();
  r(d, *parts);
  if (r.left() != 0) r.fail(std::to_string(r.left()) + " bytes after the digest's end");
  d.parts = std::move(parts);
  return d;
}

}  // namespace gpuscope
