// whatif text and JSON.
//
// [SECTION] Text
// [SECTION] JSON
#include "export/whatif_report.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "analysis/format.h"

namespace gpuscope {

namespace {

using graph::PathKind;
using graph::PathSummary;
using graph::WhatIf;
using Json = nlohmann::ordered_json;

constexpr const char* kKindLabels[graph::kPathKindCount] = {
    "GPU compute", "communication", "copy", "CPU launch overhead", "other CPU time", "input wait", "sync wait"};

// [SECTION] Text ------------------------------------------------------------------------------

std::string source_words(const WhatIfHeader& h) {
  std::string s;
  switch (h.source) {
    case TraceSource::cupti:
      s = "captured with gpuscope (CUPTI)";
      break;
    case TraceSource::chrome_json:
      s = "imported Chrome/Kineto JSON";
      break;
    case TraceSource::synthetic:
      s = "SYNTHETIC trace (generated, not measured)";
      break;
    case TraceSource::nsys_sqlite:
      s = "imported Nsight Systems SQLite export";
      break;
    case TraceSource::unknown:
      s = "source unknown";
      break;
  }
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

Json path_json(const PathSummary& p) {
  Json by_kind = Json::object(), by_cat = Json::object(), top = Json::array();
  for (int k = 0; k < graph::kPathKindCount; ++k)
    by_kind[std::string(to_string(static_cast<PathKind>(k)))] = p.by_kind[k];
  for (int c = 0; c < kKernelCategoryCount; ++c)
    if (p.by_category[c] > 0) by_cat[std::string(to_string(static_cast<KernelCategory>(c)))] = p.by_category[c];
  for (const auto& op : p.top)
    top.push_back({{"name", op.name},
                   {"category", op.category < kKernelCategoryCount
                                    ? Json(std::string(to_string(static_cast<KernelCategory>(op.category))))
                                    : Json(nullptr)},
                   {"ns", op.ns},
                   {"count", op.count}});
  return Json{{"steps", p.steps},
              {"length_ns", p.length},
              {"by_kind_ns", by_kind},
              {"by_category_ns", by_cat},
              {"top_ops", top}};
}

Json time_json(const graph::StepTime& t) {
  return Json{{"step_ns", t.median}, {"mean_step_ns", t.mean}, {"span_ns", t.span}, {"steps", t.steps}};
}

}  // namespace

std::string whatif_text(const WhatIf& w, const WhatIfHeader& h) {
  std::string out = "gpuscope whatif: " + h.file + "\n";
  const bool steps = w.measured.steps > 0;
  out += "Source: " + source_words(h) + " · " + format::count(h.gpus) + (h.gpus == 1 ? " GPU" : " GPUs") + " · ";
  out += steps ? format::count(w.measured.steps) + " steps (" + std::string(to_string(w.graph.step_source)) + ")"
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
    out += row("predicted", w.predicted, std::string(sp) + " (replay error " + pct(err) + ")");
    out += "\nChanges\n";
    for (const graph::ChangeResult& c : w.changes) {
      out += "  " + c.text + ": " + format::count(c.matched) + " " + c.what;
      if (c.matched_ns > 0) out += " (" + format::duration(c.matched_ns) + " measured)";
      if (!c.note.empty()) out += "; " + c.note;
      out += "\n";
    }
  }
  path_text(w.replayed_path, "replayed", out);
  if (!w.changes.empty()) path_text(w.predicted_path, "predicted", out);
  return out;
}

std::string whatif_json(const WhatIf& w, const WhatIfHeader& h) {
  const bool steps = w.measured.steps > 0;
  Json edges = Json::object(), stats = Json::object();
  for (int t = 0; t < graph::kEdgeTypeCount; ++t)
    edges[std::string(to_string(static_cast<graph::EdgeType>(t)))] = w.graph.edges[t];
  for (const auto& [k, v] : w.graph.stats) stats[k] = v;
  Json replayed = time_json(w.replayed);
  replayed["error"] = steps ? w.replay_error.step_median : w.replay_error.span;
  replayed["error_worst_step"] = w.replay_error.step_worst;
  replayed["error_span"] = w.replay_error.span;
  Json predicted = time_json(w.predicted);
  predicted["speedup"] = w.speedup;
  predicted["replay_error"] = replayed["error"];
  Json changes = Json::array();
  for (const graph::ChangeResult& c : w.changes)
    changes.push_back(
        {{"change", c.text}, {"matched", c.matched}, {"what", c.what}, {"matched_ns", c.matched_ns}, {"note", c.note}});
  Json out{{"schema", kWhatIfSchema},
           {"file", h.file},
           {"source", std::string(to_string(h.source))},
           {"producer", h.producer},
           {"gpus", h.gpus},
           {"scope", steps ? "steps" : "trace"},
           {"step_source", std::string(to_string(w.graph.step_source))},
           {"graph",
            {{"nodes", w.graph.nodes},
             {"gpu_ops", w.graph.gpu_ops},
             {"cpu_calls", w.graph.cpu_calls},
             {"streams", w.graph.streams},
             {"threads", w.graph.threads},
             {"edges", edges},
             {"stream_order_only", w.graph.stream_order_only},
             {"cycles_broken", w.graph.cycles_broken},
             {"stats", stats}}},
           {"measured", time_json(w.measured)},
           {"replayed", replayed},
           {"predicted", predicted},
           {"changes", changes},
           {"critical_path", path_json(w.changes.empty() ? w.replayed_path : w.predicted_path)},
           {"replayed_critical_path", path_json(w.replayed_path)}};
  return out.dump(2) + "\n";
}

}  // namespace gpuscope
