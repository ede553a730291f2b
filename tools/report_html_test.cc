#include "tools/report_html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

trace::RankVerdict Rank(uint32_t rank, trace::Verdict verdict, double link) {
  trace::RankVerdict out;
  out.footprint.rank = rank;
  out.footprint.data_wait_share = 0.4;
  out.footprint.worker_cpu_utilization = 0.95;
  out.footprint.link_utilization = link;
  out.verdict = verdict;
  out.group_shares = {0.1, 0.7, 0.2, 0};
  out.recommendation = "add 3 worker(s) <now>";
  return out;
}

TEST(ReportHtmlTest, SelfContainedPageWithVerdictsAndPlots) {
  const std::vector<trace::RankVerdict> ranks = {Rank(0, trace::Verdict::kWorkers, 0.3),
                                                 Rank(1, trace::Verdict::kNetwork, -1)};
  const std::string html = RenderReportHtml("job <blur>", ranks);
  EXPECT_THAT(html, HasSubstr("<title>job &lt;blur&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("<b>workers</b>"));
  EXPECT_THAT(html, HasSubstr("<b>network</b>"));
  EXPECT_THAT(html, HasSubstr("add 3 worker(s) &lt;now&gt;"));
  // Data wait, critical path and utilization plots; 40% of the 400-unit bar is 160.
  EXPECT_THAT(html, HasSubstr("width=\"160\" height=\"14\""));
  EXPECT_THAT(html, HasSubstr("<title>workers 70.0%</title>"));
  EXPECT_THAT(html, HasSubstr("rank 1 link</text><text x=\"150\" y=\"103\">unknown"));
  // Nothing to fetch: no script, no link, no http(s) reference.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
}

TEST(ReportHtmlTest, GpuUtilizationBesideTheVerdictWhenKnown) {
  std::vector<trace::RankVerdict> ranks = {Rank(0, trace::Verdict::kNone, 0.3),
                                           Rank(1, trace::Verdict::kNone, 0.3)};
  ranks[0].footprint.gpu_utilization = 0.925;
  const std::string html = RenderReportHtml("job", ranks);
  EXPECT_THAT(html, HasSubstr("<th>GPU utilization</th>"));
  EXPECT_THAT(html, HasSubstr("<b>none</b></td><td>92.5%</td>"));
  EXPECT_THAT(html, HasSubstr("<b>none</b></td><td>unknown</td>"));
}

TEST(ReportHtmlTest, ThresholdLinesWhereTheThresholdsSay) {
  trace::BottleneckThresholds thresholds;
  thresholds.data_wait_share = 0.25;    // x = 150 + 100
  thresholds.link_near_capacity = 0.5;  // x = 150 + 200
  const std::vector<trace::RankVerdict> ranks = {Rank(0, trace::Verdict::kWorkers, 0.3)};
  const std::string html = RenderReportHtml("t", ranks, thresholds);
  EXPECT_THAT(html, HasSubstr("<line x1=\"250\""));
  EXPECT_THAT(html, HasSubstr("<line x1=\"350\""));
  EXPECT_THAT(html, HasSubstr("(dashed: 25.0%"));
}

TEST(HtmlEscapedTest, EscapesTheFiveCharacters) {
  EXPECT_EQ(HtmlEscaped("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
}

}  // namespace
}  // namespace stoker
