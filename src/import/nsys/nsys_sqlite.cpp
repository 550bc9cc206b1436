// import_nsys_sqlite: an SQLite database in Nsight Systems' schema, told
// apart by its tables: gpuscope's own export (GPUSCOPE_META) or an nsys
// export (StringIds and the tables nsys writes); anything else is refused
// with what the file is.
#include "import/nsys/nsys_sqlite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "import/nsys/readers.h"

namespace gpuscope {

bool is_sqlite_header(const void* bytes, std::size_t size) {
  return size >= 16 && std::memcmp(bytes, "SQLite format 3", 16) == 0;
}

namespace {

std::uint64_t be(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// The first bytes of the file: SQLite's own error for a file that is not a
// database ("file is not a database") comes only at the first query, and
// says less than this. Returns the damage of a file shorter than its header
// says (cut inside its pages): SQLite reads what is there without a word.
std::optional<FileDamage> check_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  unsigned char head[100];
  ssize_t n;
  do {
    n = ::pread(fd, head, sizeof head, 0);
  } while (n < 0 && errno == EINTR);
  const int e = errno;
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (n < 0) throw InputError(path, std::string("cannot read: ") + std::strerror(e));
  if (n == 0) throw InputError(path, "empty file (not an SQLite database)");
  if (!is_sqlite_header(head, static_cast<std::size_t>(n)))
    throw InputError(path,
                     "not an SQLite database: it does not start with SQLite's header \"SQLite format 3\" (an encrypted "
                     "database does not either; gpuscope reads unencrypted exports only)");
  if (n < 100 || !sized) return std::nullopt;
  // The page count at byte 28 is valid when the change counter (24) equals
  // "version valid for" (92), as SQLite itself checks.
  const std::uint64_t page_size = be(head + 16, 2) == 1 ? 65536 : be(head + 16, 2);
  const std::uint64_t pages = be(head + 28, 4);
  const std::uint64_t file_bytes = static_cast<std::uint64_t>(st.st_size);
  if (be(head + 24, 4) != be(head + 92, 4) || pages == 0 || page_size < 512) return std::nullopt;
  const std::uint64_t expected = pages * page_size;
  if (file_bytes >= expected) return std::nullopt;
  FileDamage d;
  d.truncated = true;
  d.file_bytes = d.intact_bytes = file_bytes;
  d.bytes_lost = expected - file_bytes;
  d.problems.push_back("truncated: the database header says " + std::to_string(pages) + " pages of " +
                       std::to_string(page_size) + " bytes (" + std::to_string(expected) +
                       " bytes), the file ends at byte " + std::to_string(file_bytes) +
                       "; the rows of the missing pages are lost");
  return d;
}

enum class Flavour { nsys, gpuscope, other };

Flavour flavour(const nsys::Database& db) {
  if (!db.has_table("StringIds")) return Flavour::other;
  if (db.has_table("GPUSCOPE_META")) return Flavour::gpuscope;
  for (const nsys::TableDef& t : db.tables()) {
    const std::string n = nsys::lower(t.name);
    if (n.rfind("cupti_activity_kind_", 0) == 0 || n == "nvtx_events" || n.rfind("target_info_", 0) == 0 ||
        n == "export_meta_data" || n == "meta_data_export")
      return Flavour::nsys;
  }
  return Flavour::other;
}

// A view or virtual table in place of a table the readers need: the file is
// not an export as nsys or gpuscope write it, and what the view computes is
// not data to trust.
void refuse_replaced_tables(const std::string& path, const nsys::Database& db) {
  static constexpr std::string_view kRead[] = {
      "cupti_activity_kind_", "nvtx_events", "stringids",        "target_info_", "processes",
      "threadnames",          "gpuscope_",   "profiler_overhead"};
  for (const auto& [name, what] : db.not_tables()) {
    const std::string n = nsys::lower(name);
    for (std::string_view prefix : kRead)
      if (n.rfind(prefix, 0) == 0)
        throw InputError(path, name + " is " + what +
                                   ", not a table: gpuscope reads only the tables of an export (this one was changed "
                                   "after it was written)");
  }
}

}  // namespace

Trace import_nsys_sqlite(const std::string& path, const NsysImportOptions& options) {
  const std::optional<FileDamage> cut = check_header(path);
  const nsys::Database db(path, options.progress);
  refuse_replaced_tables(path, db);
  const Flavour f = flavour(db);
  if (f == Flavour::other) {
    if (db.tables().empty()) throw InputError(path, "an SQLite database without tables, not an Nsight Systems export");
    throw InputError(path, "an SQLite database, but not an Nsight Systems export: none of its " +
                               std::to_string(db.tables().size()) +
                               " tables is one nsys writes (StringIds with CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, "
                               "TARGET_INFO_* or the export's metadata)");
  }
  const std::unique_ptr<nsys::PageFile> pages =
      options.direct_read ? nsys::PageFile::open(db, options.progress) : nullptr;
  const nsys::Input in{db, pages.get(), options, cut ? &*cut : nullptr};
  try {
    return f == Flavour::gpuscope ? nsys::read_gpuscope_export(in) : nsys::read_nsys_export(in);
  } catch (const TraceError& e) {
    throw InputError(path, std::string("inconsistent data: ") + e.what());
  }
}

}  // namespace gpuscope
