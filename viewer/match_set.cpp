#include "viewer/match_set.h"

#include <algorithm>
#include <cctype>

#include "trace/time_columns.h"

namespace gpuscope::viewer {
namespace {

const std::vector<StringId>* name_column(const Trace& t, TableId table) {
  switch (table) {
    case TableId::kernels: return &t.kernels().name;
    case TableId::api_calls: return &t.api_calls().name;
    case TableId::ranges: return &t.ranges().name;
    default: return nullptr;
  }
}

}  // namespace

int MatchSet::slot(TableId t) {
  switch (t) {
    case TableId::kernels: return 0;
    case TableId::api_calls: return 1;
    case TableId::ranges: return 2;
    default: return -1;
  }
}

MatchSet MatchSet::by_names(const Trace& trace, const std::vector<std::uint8_t>& name_matches, bool kernels_only) {
  MatchSet m;
  const std::size_t ntracks = trace.tracks().size();
  for (TableId table : kTables) {
    if (kernels_only && table != TableId::kernels) continue;
    const std::vector<StringId>& names = *name_column(trace, table);
    const detail::TimeColumns tc = detail::time_columns(trace.tables(), table);
    List& l = m.lists_[slot(table)];
    l.begin.assign(ntracks + 1, 0);
    for (RowIndex i = 0; i < names.size(); ++i) {
      const StringId id = names[i];
      if (id < name_matches.size() && name_matches[id]) {
        l.rows.push_back(i);
        ++l.begin[tc.track_at(i) + 1];
      }
    }
    for (std::size_t t = 0; t < ntracks; ++t) l.begin[t + 1] += l.begin[t];
    m.total_ += l.rows.size();
  }
  return m;
}

MatchSet MatchSet::by_category(const Trace& trace, KernelCategory category) {
  MatchSet m;
  const std::size_t ntracks = trace.tracks().size();
  const KernelTable& k = trace.kernels();
  List& l = m.lists_[0];
  l.begin.assign(ntracks + 1, 0);
  const auto c = static_cast<std::uint8_t>(category);
  for (RowIndex i = 0; i < k.size(); ++i)
    if (k.category[i] == c) {
      l.rows.push_back(i);
      ++l.begin[k.track_at(i) + 1];
    }
  for (std::size_t t = 0; t < ntracks; ++t) l.begin[t + 1] += l.begin[t];
  m.total_ = l.rows.size();
  return m;
}

MatchSet MatchSet::of_rows(const Trace& trace, TableId table, std::vector<RowIndex> rows) {
  MatchSet m;
  const int s = slot(table);
  if (s < 0) return m;
  const std::size_t ntracks = trace.tracks().size();
  const detail::TimeColumns tc = detail::time_columns(trace.tables(), table);
  List& l = m.lists_[s];
  l.begin.assign(ntracks + 1, 0);
  l.rows = std::move(rows);
  for (RowIndex i : l.rows) ++l.begin[tc.track_at(i) + 1];
  for (std::size_t t = 0; t < ntracks; ++t) l.begin[t + 1] += l.begin[t];
  m.total_ = l.rows.size();
  return m;
}

std::uint64_t MatchSet::count(TableId table) const {
  const int s = slot(table);
  return s < 0 ? 0 : lists_[s].rows.size();
}

std::span<const RowIndex> MatchSet::on_track(TableId table, TrackId track) const {
  const int s = slot(table);
  if (s < 0) return {};
  const List& l = lists_[s];
  if (track + 1 >= l.begin.size()) return {};
  return std::span<const RowIndex>(l.rows.data() + l.begin[track], l.begin[track + 1] - l.begin[track]);
}

// Calls fn(table, start column, first, last) for each track's matches, in
// start order, of each table (tracks without a match are passed over).
template <class Fn>
void MatchSet::each_track(const Trace& trace, Fn&& fn) const {
  for (TableId table : kTables) {
    const List& l = lists_[slot(table)];
    if (l.rows.empty()) continue;
    const auto& start = *detail::time_columns(trace.tables(), table).start;
    for (std::size_t t = 0; t + 1 < l.begin.size(); ++t) {
      const Rows b = l.rows.begin() + l.begin[t], e = l.rows.begin() + l.begin[t + 1];
      if (b != e) fn(table, start, b, e);
    }
  }
}

std::optional<MatchSet::Key> MatchSet::key_of(const Trace& trace, std::optional<MatchRef> m) const {
  if (!m) return std::nullopt;
  const auto& start = *detail::time_columns(trace.tables(), m->table).start;
  return Key{start[m->row], slot(m->table), m->row};
}

std::optional<MatchRef> MatchSet::next(const Trace& trace, std::optional<MatchRef> current) const {
  return after(trace, key_of(trace, current));
}

std::optional<MatchRef> MatchSet::first_from(const Trace& trace, TimeNs t) const { return after(trace, Key{t, -1, 0}); }

std::optional<MatchRef> MatchSet::after(const Trace& trace, std::optional<Key> cur) const {
  std::optional<Key> best;
  each_track(trace, [&](TableId table, const auto& start, Rows b, Rows e) {
    auto it = b;
    if (cur) {
      it = std::lower_bound(b, e, cur->start, [&](RowIndex r, TimeNs v) { return start[r] < v; });
      while (it != e && !(Key{start[*it], slot(table), *it} > *cur)) ++it;
    }
    if (it == e) return;
    const Key k{start[*it], slot(table), *it};
    if (!best || k < *best) best = k;
  });
  if (!best) return std::nullopt;
  return MatchRef{kTables[best->table], best->row};
}

std::optional<MatchRef> MatchSet::prev(const Trace& trace, std::optional<MatchRef> current) const {
  const std::optional<Key> cur = key_of(trace, current);
  std::optional<Key> best;
  each_track(trace, [&](TableId table, const auto& start, Rows b, Rows e) {
    auto it = e;
    if (cur) {
      it = std::upper_bound(b, e, cur->start, [&](TimeNs v, RowIndex r) { return v < start[r]; });
      while (it != b && !(Key{start[*(it - 1)], slot(table), *(it - 1)} < *cur)) --it;
    }
    if (it == b) return;
    const Key k{start[*(it - 1)], slot(table), *(it - 1)};
    if (!best || k > *best) best = k;
  });
  if (!best) return std::nullopt;
  return MatchRef{kTables[best->table], best->row};
}

std::uint64_t MatchSet::ordinal(const Trace& trace, MatchRef m) const {
  const auto& mstart = *detail::time_columns(trace.tables(), m.table).start;
  const Key cur{mstart[m.row], slot(m.table), m.row};
  std::uint64_t n = 0;
  each_track(trace, [&](TableId table, const auto& start, Rows b, Rows e) {
    auto it = std::lower_bound(b, e, cur.start, [&](RowIndex r, TimeNs v) { return start[r] < v; });
    while (it != e && Key{start[*it], slot(table), *it} < cur) ++it;
    n += static_cast<std::uint64_t>(it - b);
  });
  return n;
}

std::vector<std::uint8_t> match_names(const StringTable& strings, std::string_view text, bool regex) {
  std::vector<std::uint8_t> out(strings.size(), 0);
  if (text.empty()) return out;
  if (regex) {
    const NamePattern re(text, /*ignore_case=*/true);
    for (StringId id = 1; id < strings.size(); ++id) out[id] = re.search(strings.get(id)) ? 1 : 0;
    return out;
  }
  std::string needle(text);
  for (char& c : needle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto lower_eq = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; };
  for (StringId id = 1; id < strings.size(); ++id) {
    const std::string_view s = strings.get(id);
    out[id] = std::search(s.begin(), s.end(), needle.begin(), needle.end(), lower_eq) != s.end() ? 1 : 0;
  }
  return out;
}

}  // namespace gpuscope::viewer
