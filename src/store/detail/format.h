// .gscope layout constants shared by the writer, the reader and the tests.
// docs/format.md is the spec; every number here appears there.
//
//   file    = header · section* · [footer section · trailer]
//   header  = magic(8) · format_version u32 · header_size u32 · writer_len u16 · writer · xxh3-64 of the above
//   section = 40-byte section header · payload (stored_length bytes)
//   trailer = footer_offset u64 · end magic(8)          (the last 16 bytes of a finished file)
//
// All integers are little-endian. The first 12 bytes (magic, format version)
// keep this layout in every future version, so any reader can refuse a newer
// file with a clear message.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace gpuscope::store_detail {

inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'G', 'S', 'C', 'O', 'P', 'E', '\n'};
inline constexpr std::array<std::uint8_t, 8> kEndMagic = {0x89, 'G', 'S', 'C', 'E', 'N', 'D', '\n'};
inline constexpr std::array<std::uint8_t, 4> kSectionSync = {'G', 'S', 'E', 'C'};

inline constexpr std::uint32_t kFormatVersion = 1;

inline constexpr std::size_t kHeaderFixedBytes = 18;  // magic, version, header_size, writer_len
inline constexpr std::size_t kSectionHeaderBytes = 40;
inline constexpr std::size_t kTrailerBytes = 16;

// Section header field offsets.
//   0 sync[4] · 4 tag u16 · 6 codec u8 · 7 flags u8 · 8 items u32 · 12 header_check u32
//   16 raw_length u64 · 24 stored_length u64 · 32 payload_checksum u64
// header_check = low 32 bits of XXH3-64 over bytes [0,12) and [16,40).
inline constexpr std::size_t kSecTag = 4, kSecCodec = 6, kSecFlags = 7, kSecItems = 8, kSecHeaderCheck = 12,
                             kSecRaw = 16, kSecStored = 24, kSecChecksum = 32;

enum class Codec : std::uint8_t { none = 0, zstd = 1 };

// Section tags. Row chunks are kRowsBase + TableId.
enum SectionTag : std::uint16_t {
  kTagStrings = 1,
  kTagTracks = 2,
  kTagDevices = 3,
  kTagProcesses = 4,
  kTagCounterSeries = 5,
  kTagMeta = 6,
  kTagContents = 7,
  kTagRowsBase = 0x10,  // 0x10 kernels … 0x17 overheads, 0x18 memory events, 0x19 OS calls
  kTagFooter = 0x7f,
};

// Limits a reader enforces (a writer never exceeds them).
inline constexpr std::uint64_t kMaxRawSectionBytes = 256ull << 20;  // decompressed payload of one section
inline constexpr std::uint32_t kMaxRowsPerChunk = 1u << 24;
inline constexpr std::uint32_t kMaxWriterRowsPerChunk = 1u << 20;  // writers clamp rows_per_chunk to this
inline constexpr std::uint32_t kMaxColumnsPerChunk = 64;

// Column transforms (row chunks).
enum ColumnMode : std::uint8_t {
  kModeFrameOfReference = 0,  // stored = x - base, base = min(x)
  kModeDelta = 1,             // base = x[0]; stored[i] = zigzag(x[i] - x[i-1]), stored[0] = 0
  kModeRelativeFlag = 0x80,   // x = value - start (the table's first time column) before the above
};

enum class ValueClass : std::uint8_t { unsigned_int = 0, signed_int = 1, floating = 2 };

}  // namespace gpuscope::store_detail
