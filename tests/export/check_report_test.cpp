// The gate's verdict as text, JSON and JUnit XML: the numbers are there, and
// the XML stays well-formed whatever the names in the trace hold.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "export/check_report.h"

namespace gpuscope {
namespace {

CheckReport sample() {
  CheckReport r;
  r.diff.before_label = "base.gscope";
  r.diff.after_label = "cand.gscope";
  r.diff.before_steps = r.diff.after_steps = 40;
  r.diff.before_step_ns = 10'000'000;
  r.diff.after_step_ns = 11'000'000;
  r.diff.summary = {"Step time 10.0 ms -> 11.0 ms (+10.0%)"};
  r.baseline_noise = {80, 10'000'000, 120'000, 0.012};
  r.step_limit = 0.05;
  r.step_threshold = 0.05;
  CheckResult step;
  step.name = "step-time";
  step.outcome = CheckOutcome::failed;
  step.value = 0.1;
  step.threshold = 0.05;
  step.message = "mean step time 10.0 ms -> 11.0 ms (+10.0%), above the threshold of 5.0%";
  step.seconds = 0.25;
  CheckResult share;
  share.name = "share:padding";
  share.message = "padding 1.0% -> 1.1% of kernel time (+0.1 points), within the limit of +2.0 points";
  CheckResult skipped;
  skipped.name = "new-critical";
  skipped.outcome = CheckOutcome::skipped;
  skipped.message = "why <not> & \"so\"";
  r.checks = {step, share, skipped};
  return r;
}

TEST(CheckText, SaysTheVerdictTheThresholdAndEachCheck) {
  const std::string t = check_text(sample());
  EXPECT_EQ(t.rfind("gpuscope check: FAILED — 1 of 3 checks failed (1 skipped: --allow-skip)\n", 0), 0u) << t;
  EXPECT_NE(t.find("baseline   base.gscope: 40 steps per GPU, mean step 10.0 ms, step-to-step spread 1.2%"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  step time: a rise above the limit of 5.0% fails (the baseline's step-to-step spread, 1.2%, is "
                   "within it)\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("\033["), std::string::npos) << "no colour unless asked";
  EXPECT_NE(t.find("  FAIL  step-time      mean step time"), std::string::npos) << t;
  EXPECT_NE(t.find("  pass  share:padding  padding"), std::string::npos) << t;
  EXPECT_NE(t.find("  skip  new-critical   why"), std::string::npos) << t;
  EXPECT_NE(t.find("  - Step time 10.0 ms -> 11.0 ms"), std::string::npos) << t;
  CheckTextOptions colour;
  colour.colour = true;
  EXPECT_NE(check_text(sample(), colour).find("  \033[1;31mFAIL\033[0m  step-time"), std::string::npos);
}

TEST(CheckText, ACheckThatCouldNotRunMakesTheVerdictNotChecked) {
  CheckReport r = sample();
  r.checks[0].outcome = CheckOutcome::not_run;
  r.noise = true;
  r.step_threshold = 0.12;
  r.same_workload = "one workload: the same recorded command line and job size";
  const std::string t = check_text(r);
  EXPECT_EQ(t.rfind("gpuscope check: NOT CHECKED — 1 of 3 checks could not run (1 skipped: --allow-skip)\n", 0), 0u)
      << t;
  EXPECT_NE(t.find("  workload   one workload: the same recorded command line and job size\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  step time: a rise up to the limit of 5.0% passes, above 12.0% (the baseline's step-to-step "
                   "spread) fails; in between it cannot be told from noise\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  NOT RUN  step-time      mean step time"), std::string::npos) << t;
  EXPECT_EQ(r.exit_code(), 2);
}

TEST(CheckJson, CarriesEveryNumber) {
  const auto j = nlohmann::json::parse(check_json(sample()));
  EXPECT_EQ(j["schema"], "gpuscope.check/1");
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["counts"]["skipped"], 1);
  EXPECT_EQ(j["counts"]["not_run"], 0);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["noise"], true);
  EXPECT_EQ(j["step_threshold"], 0.05);
  EXPECT_EQ(j["baseline_step_noise"]["spread"], 0.012);
  ASSERT_EQ(j["checks"].size(), 3u);
  EXPECT_EQ(j["checks"][0]["name"], "step-time");
  EXPECT_EQ(j["checks"][0]["outcome"], "failed");
  EXPECT_EQ(j["checks"][0]["value"], 0.1);
}

TEST(CheckJunit, OneTestcasePerCheckWithTheNumbers) {
  JunitRun run;
  run.seconds = 1.5;
  run.timestamp = "2024-05-01T12:00:00";
  run.hostname = "ci-runner";
  const std::string x = check_junit_xml(sample(), run);
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gpuscope check\" tests=\"3\" "
                    "failures=\"1\" errors=\"0\" time=\"1.500000\">\n",
                    0),
            0u)
      << x;
  EXPECT_NE(x.find("<testsuite name=\"gpuscope check base.gscope -&gt; cand.gscope\" tests=\"3\" failures=\"1\" "
                   "errors=\"0\" skipped=\"1\" time=\"1.500000\" timestamp=\"2024-05-01T12:00:00\" "
                   "hostname=\"ci-runner\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase name=\"step-time\" classname=\"gpuscope.check\" time=\"0.250000\">\n      <failure "
                   "message=\"mean step time 10.0 ms -&gt; 11.0 ms (+10.0%), above the threshold of 5.0%\" "
                   "type=\"regression\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase name=\"share:padding\" classname=\"gpuscope.check\" time=\"0.000000\">\n      "
                   "<system-out>"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<skipped message=\"why &lt;not&gt; &amp; &quot;so&quot;\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<property name=\"step_threshold\" value=\"5.0%\"/>"), std::string::npos) << x;
  EXPECT_EQ(x.substr(x.size() - 29), "  </testsuite>\n</testsuites>\n");
}

TEST(CheckJunit, ACheckThatCouldNotRunIsAnErroredTestcase) {
  CheckReport r = sample();
  r.checks[1].outcome = CheckOutcome::not_run;
  r.checks[1].message = "no kernel time in the candidate";
  const std::string x = check_junit_xml(r);
  EXPECT_NE(x.find("tests=\"3\" failures=\"1\" errors=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<error message=\"no kernel time in the candidate\" type=\"not-run\">no kernel time in the "
                   "candidate</error>"),
            std::string::npos)
      << x;
}

TEST(CheckJunit, AGateThatStoppedIsOneErroredTestcase) {
  JunitRun run;
  run.seconds = 0.125;
  const std::string x = check_junit_error_xml("a.gscope", "b.gscope", "b.gscope: cannot open: No such file", run);
  EXPECT_NE(x.find("<testsuites name=\"gpuscope check\" tests=\"1\" failures=\"0\" errors=\"1\" time=\"0.125000\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<testcase name=\"comparison\" classname=\"gpuscope.check\" time=\"0.125000\">\n      <error "
                   "message=\"b.gscope: cannot open: No such file\" type=\"not-run\">"),
            std::string::npos)
      << x;
  EXPECT_EQ(x.find("timestamp="), std::string::npos) << "left out when not given";
}

TEST(CheckJunit, ControlCharactersAndInvalidUtf8BecomeReplacementCharacters) {
  CheckReport r = sample();
  r.checks[0].message = std::string(
                            "a\x01"
                            "b\xff"
                            "c \xc3\xa9 \xe2\x82\xac \xed\xa0\x80 \xc0\xaf") +
                        "\tz";
  const std::string x = check_junit_xml(r);
  const std::string rep = "\xef\xbf\xbd";
  const std::string want =
      "a" + rep + "b" + rep + "c \xc3\xa9 \xe2\x82\xac " + rep + rep + rep + " " + rep + rep + "\tz";
  EXPECT_NE(x.find("message=\"" + want + "\""), std::string::npos) << x;
}

}  // namespace
}  // namespace gpuscope
