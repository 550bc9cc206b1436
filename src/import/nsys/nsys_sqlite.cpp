// import_nsys_sqlite: an SQLite database in Nsight Systems' schema, told
// apart by its tables: gpuscope's own export (GPUSCOPE_META) or an nsys
// export (StringIds and the tables nsys writes); anything else is refused
// with what the file is.
#include "import/nsys/nsys_sqlite.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "import/nsys/readers.h"

namespace gpuscope {

bool is_sqlite_header(const void* bytes, std::size_t size) {
  return size >= 16 && std::memcmp(bytes, "SQLite format 3", 16) == 0;
}

namespace {

// The first bytes of the file: SQLite's own error for a file that is not a
// database ("file is not a database") comes only at the first query, and
// says less than this.
void check_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  char head[16];
  ssize_t n;
  do {
    n = ::read(fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  const int e = errno;
  ::close(fd);
  if (n < 0) throw InputError(path, std::string("cannot read: ") + std::strerror(e));
  if (n == 0) throw InputError(path, "empty file (not an SQLite database)");
  if (!is_sqlite_header(head, static_cast<std::size_t>(n)))
    throw InputError(path,
                     "not an SQLite database: it does not start with SQLite's header \"SQLite format 3\" (an encrypted "
                     "database does not either; gpuscope reads unencrypted exports only)");
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

}  // namespace

Trace import_nsys_sqlite(const std::string& path, const NsysImportOptions& options) {
  check_header(path);
  const nsys::Database db(path, options.progress);
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
  const nsys::Input in{db, pages.get(), options};
  try {
    return f == Flavour::gpuscope ? nsys::read_gpuscope_export(in) : nsys::read_nsys_export(in);
  } catch (const TraceError& e) {
    throw InputError(path, std::string("inconsistent data: ") + e.what());
  }
}

}  // namespace gpuscope
