// Checks a Chrome trace JSON document against the invariants of our export
// (shared by the export tests and the CLI tests).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace gpuscope::testing {

// µs with three decimals back to ns. Exact while the value stays below 2^50 ns
// (13 days), which every relative timestamp of the test traces does.
inline std::int64_t to_ns(const nlohmann::json& us) { return std::llround(us.get<double>() * 1000.0); }

struct ParsedChrome {
  nlohmann::json doc;
  std::int64_t base = 0;
  nlohmann::json events;  // traceEvents (moved out of doc)
};

// Parses and checks: valid JSON (nlohmann rejects invalid UTF-8), every ts and
// dur printed with exactly three decimals, X events with dur, ts in order per
// (pid, tid, cat), GPU ops on one stream never overlapping, flows paired
// (one "s" and one "f" per id, "f" with bp "e"), sample events ("P") whose
// "sf" and its parents are in "stackFrames", metadata for every pid and every
// (pid, tid) that has events.
inline ParsedChrome check_chrome_json(const std::string& text) {
  ParsedChrome p;
  p.doc = nlohmann::json::parse(text);  // throws on any syntax or encoding error
  EXPECT_TRUE(p.doc.contains("traceEvents"));
  EXPECT_EQ(p.doc.value("displayTimeUnit", ""), "ns");
  p.base = p.doc.at("baseTimeNanoseconds").get<std::int64_t>();
  EXPECT_EQ(((p.base % 1000) + 1000) % 1000, 0) << "the base is a whole µs";
  p.events = std::move(p.doc.at("traceEvents"));

  // Text level: timestamps are never doubles of an epoch, always "<digits>.<3 digits>".
  for (const char* key : {"\"ts\":", "\"dur\":"}) {
    const std::string k = key;
    for (std::size_t at = text.find(k); at != std::string::npos; at = text.find(k, at + 1)) {
      std::size_t i = at + k.size(), digits = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
      bool ok = digits > 0 && i + 4 <= text.size() && text[i] == '.';
      for (std::size_t d = 1; ok && d <= 3; ++d) ok = text[i + d] >= '0' && text[i + d] <= '9';
      ok = ok && i + 4 < text.size() && (text[i + 4] == ',' || text[i + 4] == '}');
      if (!ok) {
        ADD_FAILURE() << "timestamp not printed as <µs>.<3 digits>: " << text.substr(at, 40);
        break;
      }
    }
  }

  std::set<std::uint64_t> process_names;
  std::set<std::pair<std::uint64_t, std::int64_t>> thread_names;
  std::map<std::tuple<std::uint64_t, std::int64_t, std::string>, std::int64_t> last_ts;
  std::map<std::pair<std::uint64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> gpu_ops;
  std::map<std::uint64_t, int> flow_starts, flow_ends;
  std::set<std::uint64_t> pids_used;
  std::set<std::pair<std::uint64_t, std::int64_t>> threads_used;
  for (const auto& e : p.events) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      const std::string what = e.at("name");
      if (what == "process_name") process_names.insert(e.at("pid").get<std::uint64_t>());
      if (what == "thread_name")
        thread_names.insert({e.at("pid").get<std::uint64_t>(), e.at("tid").get<std::int64_t>()});
      EXPECT_TRUE(e.contains("args"));
      continue;
    }
    EXPECT_TRUE(e.contains("ts")) << e.dump();
    EXPECT_TRUE(e.contains("pid")) << e.dump();
    pids_used.insert(e.at("pid").get<std::uint64_t>());
    if (ph == "C") continue;
    const std::pair<std::uint64_t, std::int64_t> thread{e.at("pid").get<std::uint64_t>(),
                                                        e.at("tid").get<std::int64_t>()};
    threads_used.insert(thread);
    if (ph == "s" || ph == "f") {
      EXPECT_EQ(e.value("cat", ""), "ac2g");
      EXPECT_EQ(e.value("name", ""), "ac2g");
      (ph == "s" ? flow_starts : flow_ends)[e.at("id").get<std::uint64_t>()]++;
      if (ph == "f") {
        EXPECT_EQ(e.value("bp", ""), "e");
      }
      continue;
    }
    if (ph == "P") {  // a sample: its stack is a frame of stackFrames, whose parents are frames too
      const std::string sf = e.at("sf");
      const nlohmann::json& frames = p.doc.at("stackFrames");
      EXPECT_TRUE(frames.contains(sf)) << e.dump();
      for (std::string f = sf; frames.contains(f) && frames.at(f).contains("parent");) {
        f = frames.at(f).at("parent").get<std::string>();
        EXPECT_TRUE(frames.contains(f)) << "frame " << f << " is nobody's";
      }
    }
    EXPECT_TRUE(ph == "X" || ph == "i" || ph == "P") << e.dump();
    if (ph == "X") {
      EXPECT_TRUE(e.contains("dur")) << e.dump();
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
    }
    const std::string cat = e.at("cat");
    const std::int64_t ts = to_ns(e.at("ts"));
    const auto key = std::make_tuple(thread.first, thread.second, cat);
    auto [it, fresh] = last_ts.try_emplace(key, ts);
    EXPECT_LE(it->second, ts) << "ts goes back on " << e.dump();
    it->second = ts;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset")
      gpu_ops[thread].push_back({ts, ts + to_ns(e.at("dur"))});
  }
  for (auto& [thread, ops] : gpu_ops) {
    std::sort(ops.begin(), ops.end());
    for (std::size_t i = 1; i < ops.size(); ++i)
      EXPECT_LE(ops[i - 1].second, ops[i].first)
          << "GPU ops overlap on pid " << thread.first << " tid " << thread.second;
  }
  for (const auto& [id, n] : flow_starts) {
    EXPECT_EQ(n, 1) << "flow " << id << " starts " << n << " times";
    EXPECT_EQ(flow_ends.count(id), 1u) << "flow " << id << " has no end";
  }
  for (const auto& [id, n] : flow_ends) {
    EXPECT_EQ(n, 1) << "flow " << id << " ends " << n << " times";
    EXPECT_EQ(flow_starts.count(id), 1u) << "flow " << id << " has no start";
  }
  for (std::uint64_t pid : pids_used) EXPECT_TRUE(process_names.count(pid)) << "no process_name for pid " << pid;
  for (const auto& t : threads_used)
    EXPECT_TRUE(thread_names.count(t)) << "no thread_name for pid " << t.first << " tid " << t.second;
  return p;
}

}  // namespace gpuscope::testing
