// libFuzzer target: the SQLite importer (src/import/nsys) on arbitrary bytes.
//
// Each input is written to a file (SQLite and the direct page reader read
// files) and imported twice: reading the big tables straight from the pages,
// on two threads, and through SQLite alone. The only acceptable failure is
// InputError; when both succeed the traces must be equal. Anything else —
// another exception, a sanitizer report, a hang, two different traces — is a
// bug. Seeds: tests/fuzz/corpus/fuzz_nsys_sqlite/ (made by nsys_import_tests'
// FuzzSeeds test with GPUSCOPE_WRITE_FUZZ_SEEDS=1): small nsys-like exports
// of both schema generations and gpuscope's own export, with 512-byte pages.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "import/nsys/nsys_sqlite.h"
#include "trace/budget.h"

namespace {

using namespace gpuscope;

// Every column of every table, the strings, tracks, devices and meta.
bool same(const Trace& a, const Trace& b) {
  if (!(a.meta() == b.meta()) || a.devices() != b.devices() || a.processes() != b.processes() ||
      a.tracks() != b.tracks() || a.strings().size() != b.strings().size())
    return false;
  for (StringId i = 0; i < a.strings().size(); ++i)
    if (a.str(i) != b.str(i)) return false;
  bool equal = true;
  a.tables().for_each_table([&](TableId, const auto& ta) {
    b.tables().for_each_table([&](TableId, const auto& tb) {
      if constexpr (std::is_same_v<decltype(ta), decltype(tb)>) {
        if (ta.size() != tb.size()) equal = false;
        if (!equal) return;
        int i = 0;
        ta.for_each_column([&](ColumnInfo, const auto& ca) {
          int j = 0;
          tb.for_each_column([&](ColumnInfo, const auto& cb) {
            if constexpr (std::is_same_v<decltype(ca), decltype(cb)>) {
              using T = typename std::remove_cvref_t<decltype(ca)>::value_type;
              const std::vector<T> x = detail::stored_rows(ta, ca), y = detail::stored_rows(tb, cb);  // as rows
              if (i == j &&
                  (x.size() != y.size() || (!x.empty() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) != 0)))
                equal = false;
            }
            ++j;
          });
          ++i;
        });
      }
    });
  });
  return equal;
}

std::optional<Trace> import(const std::string& path, bool direct) {
  NsysImportOptions o;
  o.direct_read = direct;
  o.threads = 2;
  try {
    return import_nsys_sqlite(path, o);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/gpuscope-fuzz-nsys-" + std::to_string(::getpid()) + ".sqlite";
  set_memory_budget(32u << 20);  // a table claiming millions of rows is refused within it
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  const bool written = std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  if (!written) return 0;
  const std::optional<Trace> direct = import(path, true);
  const std::optional<Trace> slow = import(path, false);
  for (const char* suffix : {"-journal", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  if (direct && slow && !same(*direct, *slow)) __builtin_trap();
  return 0;
}
