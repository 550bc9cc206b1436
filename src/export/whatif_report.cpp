// whatif text and JSON.
//
// [SECTION] Text
// [SECTION] JSON
#include "export/whatif_report.h"

#include <cstdio>
#include <set>

#include "trace/json_writer.h"
#include "words/format.h"

namespace gpuscope {

namespace {

using graph::PathKind;
using graph::PathSummary;
using graph::WhatIf;
using json::kv;
using Out = json::Writer;

constexpr const char* kKindLabels[graph::kPathKindCount] = {
    "GPU compute",         "communication",        "copy",
    "CPU launch overhead", "other CPU time",       "input wait",
    "sync wait",           "unexplained GPU wait", "gaps before GPU ops"};

// [SECTION] Text ------------------------------------------------------------------------------

std::string source_words(const WhatIfHeader& h) {
  // By TraceSource's value: unknown, cupti, chrome_json, synthetic, nsys_sqlite.
  static constexpr std::string_view kWords[] = {
      "source unknown", "captured with gpuscope (CUPTI)", "imported Chrome/Kineto JSON",
      "SYNTHETIC trace (generated, not measured)", "imported Nsight Systems SQLite export"};
  const auto i = static_cast<std::size_t>(h.source);
  const std::string s(i < std::size(kWords) ? kWords[i] : std::string_view());
  return h.producer.empty() ? s : s + " (" + h.producer + ")";
}

std::string pct(double v) { return format::percent1(v); }

std::string error_text(const graph::TimelineError& e, bool steps) {
  if (!steps) return "replay error " + pct(e.span) + " of the span";
  return "replay error " + pct(e.step_median) + " median, " + pct(e.step_worst) + " worst step, " + pct(e.span) +
         " span";
}

std::string row(const char* label, const graph::StepTime& t, const std::string& extra) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-10s %12s %12s   ", label, format::duration(t.median).c_str(),
                format::duration(t.mean).c_str());
  return buf + extra + "\n";
}

void path_text(const PathSummary& p, const char* which, std::string& out) {
  if (p.length <= 0) return;
  out += "\nCritical path (" + std::string(which) + "), ";
  out += p.steps ? "summed over " + format::count(p.steps) + " steps: " : "over the whole trace: ";
  out += format::duration(p.length) + "\n";
  const auto share = [&](TimeNs ns) { return static_cast<double>(ns) / static_cast<double>(p.length); };
  std::string kinds;
  for (int k = 0; k < graph::kPathKindCount; ++k)
    if (p.by_kind[k] > 0)
      kinds += (kinds.empty() ? "" : ", ") + std::string(kKindLabels[k]) + " " + pct(share(p.by_kind[k]));
  out += "  by kind      " + kinds + "\n";
  std::vector<std::pair<TimeNs, int>> cats;
  for (int c = 0; c < kKernelCategoryCount; ++c)
    if (p.by_category[c] > 0) cats.push_back({p.by_category[c], c});
  std::sort(cats.rbegin(), cats.rend());
  std::string by_cat;
  for (const auto& [ns, c] : cats)
    by_cat +=
        (by_cat.empty() ? "" : ", ") + std::string(to_string(static_cast<KernelCategory>(c))) + " " + pct(share(ns));
  if (!by_cat.empty()) out += "  by category  " + by_cat + "\n";
  if (p.top.empty()) return;
  out += "  ops with the most time on it:\n";
  std::vector<std::string_view> names;
  for (const auto& op : p.top) names.push_back(op.name);
  const std::vector<std::string> shorts = format::short_kernel_names(names, 64);
  for (std::size_t i = 0; i < p.top.size(); ++i) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "    %10s %6s  %8sx  %s\n", format::duration(p.top[i].ns).c_str(),
                  pct(share(p.top[i].ns)).c_str(), format::count(p.top[i].count).c_str(), shorts[i].c_str());
    out += buf;
  }
}

// [SECTION] JSON ----------------------------------------------------------------------------------

void path_json(Out& out, const char* key, const PathSummary& p) {
  const auto by_kind = [&](Out& w) {
    w.begin_object();
    for (int k = 0; k < graph::kPathKindCount; ++k) w.member(to_string(static_cast<PathKind>(k)), p.by_kind[k]);
    w.end_object();
  };
  const auto by_category = [&](Out& w) {
    w.begin_object();
    for (int c = 0; c < kKernelCategoryCount; ++c)
      if (p.by_category[c] > 0) w.member(to_string(static_cast<KernelCategory>(c)), p.by_category[c]);
    w.end_object();
  };
  const auto top = [&](Out& w) {
    w.array(p.top, [&](const PathSummary::Op& op) {
      const bool known = op.category < kKernelCategoryCount;
      const std::string_view category = known ? to_string(static_cast<KernelCategory>(op.category)) : "";
      w.object(kv("name", op.name), kv("category", json::or_null(known, category)), kv("ns", op.ns),
               kv("count", op.count));
    });
  };
  out.key(key);
  out.object(kv("steps", p.steps), kv("length_ns", p.length), kv("by_kind_ns", by_kind),
             kv("by_category_ns", by_category), kv("top_ops", top));
}

// The members of a StepTime, in the object open.
void time_members(Out& out, const graph::StepTime& t) {
  out.member("step_ns", t.median);
  out.member("mean_step_ns", t.mean);
  out.member("span_ns", t.span);
  out.member("steps", t.steps);
}

void graph_json(Out& out, const WhatIf& w) {
  const auto edges = [&](Out& o) {
    o.begin_object();
    for (int t = 0; t < graph::kEdgeTypeCount; ++t)
      o.member(to_string(static_cast<graph::EdgeType>(t)), w.graph.edges[t]);
    o.end_object();
  };
  const auto stats = [&](Out& o) {
    o.begin_object();
    for (const auto& [k, v] : w.graph.stats) o.member(k, v);
    o.end_object();
  };
  const graph::GraphSummary& g = w.graph;
  out.key("graph");
  out.object(kv("nodes", g.nodes), kv("gpu_ops", g.gpu_ops), kv("cpu_calls", g.cpu_calls), kv("streams", g.streams),
             kv("threads", g.threads), kv("edges", edges), kv("stream_order_only", g.stream_order_only),
             kv("cycles_broken", g.cycles_broken), kv("stats", stats));
}

// measured, replayed, predicted: the step times and how far to trust them.
void times_json(Out& out, const WhatIf& w, bool steps) {
  out.key("measured");
  out.begin_object();
  time_members(out, w.measured);
  out.end_object();
  const double error = steps ? w.replay_error.step_median : w.replay_error.span;
  out.key("replayed");
  out.begin_object();
  time_members(out, w.replayed);
  out.member("error", error);
  out.member("error_worst_step", w.replay_error.step_worst);
  out.member("error_span", w.replay_error.span);
  out.end_object();
  out.key("predicted");
  out.begin_object();
  time_members(out, w.predicted);
  out.member("speedup", w.speedup);
  out.member("replay_error", error);
  out.member("simulated", w.simulated);
  out.member("cycles", w.predicted_cycles);
  out.member("not_simulated", w.not_simulated);
  out.end_object();
}

void changes_json(Out& out, const WhatIf& w) {
  out.key("changes");
  out.array(w.changes, [&](const graph::ChangeResult& c) {
    out.object(kv("change", c.text), kv("matched", c.matched), kv("what", c.what), kv("matched_ns", c.matched_ns),
               kv("note", c.note));
  });
  out.key("each_change");
  out.array(w.each, [&](const graph::ChangeAlone& a) {
    out.begin_object();
    time_members(out, a.predicted);
    out.member("change", a.text);
    out.member("speedup", a.speedup);
    out.member("simulated", a.simulated);
    out.end_object();
  });
}

}  // namespace

WhatIfHeader whatif_header(const Trace& trace, const std::string& file) {
  WhatIfHeader h;
  h.file = file;
  h.source = trace.meta().source;
  h.producer = trace.meta().producer;
  std::set<std::uint32_t> gpus;
  for (const Track& t : trace.tracks())
    if (t.kind == TrackKind::gpu) gpus.insert(t.device);
  h.gpus = gpus.size();
  return h;
}

std::string whatif_text(const WhatIf& w, const WhatIfHeader& h) {
  std::string out = "gpuscope whatif: " + h.file + "\n";
  const bool steps = w.measured.steps > 0;
  out += "Source: " + source_words(h) + " · " + format::count(h.gpus) + (h.gpus == 1 ? " GPU" : " GPUs") + " · ";
  out += steps ? format::count(w.measured.steps, "step", "steps") + " (" + std::string(to_string(w.graph.step_source)) +
                     ")"
               : "no steps: the whole trace is predicted (its span)";
  out += "\n";
  const auto& e = w.graph.edges;
  auto edge = [&](graph::EdgeType t) { return e[static_cast<int>(t)]; };
  auto many = [](std::uint64_t n, const char* one, const char* more) {
    return format::count(n) + (n == 1 ? one : more);
  };
  out += "Graph: " + format::count(w.graph.gpu_ops) + " GPU ops on " +
         many(w.graph.streams, " stream, ", " streams, ") + format::count(w.graph.cpu_calls) + " CPU calls on " +
         many(w.graph.threads, " thread; ", " threads; ") + format::count(edge(graph::EdgeType::launch)) +
         " launches, " + format::count(edge(graph::EdgeType::sync) + edge(graph::EdgeType::blocking_copy)) +
         " host waits, " + format::count(edge(graph::EdgeType::inferred)) +
         " waits between streams inferred from timing, " + format::count(edge(graph::EdgeType::collective)) +
         " collective members\n";
  if (w.graph.stream_order_only)
    out +=
        "  No op could be linked to its launch (no correlations): stream-order replay only — each GPU stream "
        "runs on its own from its first op, the CPU is not modelled.\n";
  if (!w.graph.stats.empty()) {
    out += "  What the trace lacked or the graph inferred:";
    std::string sep = " ";
    for (const auto& [k, v] : w.graph.stats) out += sep + k + " " + format::count(v), sep = ", ";
    out += "\n";
  }
  if (w.graph.cycles_broken)
    out += "  " + format::count(w.graph.cycles_broken) +
           " dependency cycles were broken (clocks that disagree): the replay error says how much that cost.\n";
  out += "\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-10s %12s %12s\n", "", steps ? "median step" : "span", steps ? "mean step" : "");
  out += head;
  out += row("measured", w.measured, "");
  out += row("replayed", w.replayed, error_text(w.replay_error, steps));
  if (!w.changes.empty()) {
    char sp[64];
    std::snprintf(sp, sizeof sp, "%.2fx speedup", w.speedup);
    const double err = steps ? w.replay_error.step_median : w.replay_error.span;
    if (w.simulated)
      out += row("predicted", w.predicted, std::string(sp) + " (replay error " + pct(err) + ")");
    else
      out += "  predicted  NOT SIMULATED: " + w.not_simulated + "\n";
    out += "\nChanges\n";
    for (const graph::ChangeResult& c : w.changes) {
      out += "  " + c.text + ": " + format::count(c.matched) + " " + c.what;
      if (c.matched_ns > 0) out += " (" + format::duration(c.matched_ns) + " measured)";
      if (!c.note.empty()) out += "; " + c.note;
      out += "\n";
    }
    for (const graph::ChangeAlone& a : w.each) {
      char sp[64];
      std::snprintf(sp, sizeof sp, "%.2fx", a.speedup);
      out += "  alone, " + a.text + ": " +
             (a.simulated ? "median step " + format::duration(a.predicted.median) + " (" + sp + ")"
                          : std::string("not simulated (it makes dependency cycles in the graph)")) +
             "\n";
    }
  }
  path_text(w.replayed_path, "replayed", out);
  if (!w.changes.empty() && w.simulated) path_text(w.predicted_path, "predicted", out);
  return out;
}

// Names come from traces: invalid UTF-8 is replaced, as in every output.
std::string whatif_json(const WhatIf& w, const WhatIfHeader& h) {
  const bool steps = w.measured.steps > 0;
  std::string text;
  Out out(text);
  out.begin_object();
  out.member("schema", kWhatIfSchema);
  out.member("file", h.file);
  out.member("source", to_string(h.source));
  out.member("producer", h.producer);
  out.member("gpus", h.gpus);
  out.member("scope", steps ? "steps" : "trace");
  out.member("step_source", to_string(w.graph.step_source));
  graph_json(out, w);
  times_json(out, w, steps);
  changes_json(out, w);
  path_json(out, "critical_path", w.changes.empty() ? w.replayed_path : w.predicted_path);
  path_json(out, "replayed_critical_path", w.replayed_path);
  out.end_object();
  return text + "\n";
}

}  // namespace gpuscope
