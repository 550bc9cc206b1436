// whatif_json: the gpuscope.whatif/1 document, written by trace/json_writer.h.
#include "export/whatif_report.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuscope {
namespace {

graph::WhatIf sample() {
  graph::WhatIf w;
  w.measured.steps = w.replayed.steps = w.predicted.steps = 3;
  w.measured.median = 1000;
  w.replay_error.step_median = 0.25;
  w.replay_error.span = 0.5;
  w.replayed_path.steps = 3;
  w.replayed_path.length = 900;
  w.replayed_path.by_kind[0] = 900;
  w.replayed_path.top.push_back({"gemm \xff cut \xe2\x82", 0, 900, 3});  // names from traces: any bytes
  w.replayed_path.top.push_back({"no category", graph::kNoCategory, 0, 1});
  w.graph.stats = {{"graph.inferred", 2}};
  return w;
}

// Names that are not valid UTF-8 are replaced, as in every output (the
// document was once dumped strictly, and threw).
TEST(WhatIfJson, InvalidUtf8InNamesIsReplaced) {
  const WhatIfHeader h{"run \xc0.gscope", TraceSource::synthetic, "gpuscope synth", 1};
  std::string text;
  ASSERT_NO_THROW(text = whatif_json(sample(), h));
  const auto j = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(j["file"], "run \xef\xbf\xbd.gscope");
  EXPECT_EQ(j["critical_path"]["top_ops"][0]["name"], "gemm \xef\xbf\xbd cut \xef\xbf\xbd");
  EXPECT_TRUE(j["critical_path"]["top_ops"][1]["category"].is_null());
}

// The keys in their documented order, indented by 2, a newline at the end:
// the bytes nlohmann's dump gives for the same document.
TEST(WhatIfJson, LayoutAndKeys) {
  const std::string text = whatif_json(sample(), WhatIfHeader{"run.gscope", TraceSource::cupti, "", 2});
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto j = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(j.dump(2) + "\n", text);
  std::string keys;
  for (const auto& [k, v] : j.items()) keys += k + " ";
  EXPECT_EQ(keys,
            "schema file source producer gpus scope step_source graph measured replayed predicted changes "
            "each_change critical_path replayed_critical_path ");
  EXPECT_EQ(j["scope"], "steps");
  EXPECT_EQ(j["replayed"]["error"], 0.25);
  EXPECT_EQ(j["predicted"]["replay_error"], 0.25);
  EXPECT_EQ(j["graph"]["stats"]["graph.inferred"], 2);
  EXPECT_TRUE(j["changes"].is_array() && j["changes"].empty());
}

}  // namespace
}  // namespace gpuscope
