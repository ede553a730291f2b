// `stoker-ctl advise`'s output: the cluster line and per job the cost table, exactly.
#include "tools/advise_text.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_split.h"
#include "common/ids.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

stoker::v1::WorkerCountCost Point(uint32_t workers, double samples_per_second, double wait,
                                  double dollars_per_hour, double epoch_seconds) {
  stoker::v1::WorkerCountCost point;
  point.set_workers(workers);
  point.set_samples_per_second(samples_per_second);
  point.set_data_wait_fraction(wait);
  point.set_dollars_per_hour(dollars_per_hour);
  point.set_epoch_seconds(epoch_seconds);
  point.set_dollars_per_epoch(dollars_per_hour * epoch_seconds / 3600);
  point.set_gpu_hours_lost_per_epoch(epoch_seconds * wait / 3600);
  point.set_samples_per_dollar(samples_per_second * 3600 / dollars_per_hour);
  return point;
}

// The post's prices ($1.408/h a GPU node, $0.816/h a worker), 1,000 samples/s demanded, 300 a
// worker, 3.6M samples an epoch (advisor_costs_test.cc's model).
stoker::v1::GetStatusResponse PostStatus() {
  stoker::v1::GetStatusResponse status;
  stoker::v1::ClusterCost* cluster = status.mutable_cluster();
  cluster->set_workers_now(2);
  cluster->set_workers_desired(4);
  cluster->set_samples_per_second(600);
  cluster->set_dollars_per_hour(3.04);
  cluster->set_samples_per_dollar(600 * 3600 / 3.04);
  cluster->set_gpu_hours_lost_per_hour(0.4);
  stoker::v1::JobStatus* job = status.add_jobs();
  job->set_job_id(MakeId(0x9e3779b9, 1));
  job->set_name("blur");
  job->add_ranks()->set_rank(0);  // dropped by AdviceOnly
  stoker::v1::JobAdvice* advice = job->mutable_advice();
  advice->set_measured(true);
  advice->set_workers_now(2);
  advice->set_workers_desired(4);
  advice->set_knee_workers(4);
  advice->set_cheapest_workers(3);
  advice->set_explanation("rank 0 waits 40% of its step: add 2");
  *advice->mutable_now() = Point(2, 600, 0.4, 3.04, 6000);
  *advice->add_predicted() = Point(1, 300, 0.7, 2.224, 12000);
  *advice->add_predicted() = Point(2, 600, 0.4, 3.04, 6000);
  *advice->add_predicted() = Point(3, 900, 0.1, 3.856, 4000);
  *advice->add_predicted() = Point(4, 1000, 0, 4.672, 3600);
  *advice->add_predicted() = Point(5, 1000, 0, 5.488, 3600);
  return status;
}

TEST(AdviseTextTest, PrintsTheClusterAndEachJobsTable) {
  EXPECT_EQ(FormatAdvice(PostStatus(), "127.0.0.1:7070"),
            "coordinator 127.0.0.1:7070: 2 workers now, 4 wanted by the running jobs\n"
            "cluster: 600 samples/s, $3.04/hour, 711k samples/$, 0.40 GPU-hours lost per hour\n"
            "\n"
            "job blur (id 1): 2 workers now, 4 advised\n"
            "  rank 0 waits 40% of its step: add 2\n"
            "  workers samples/s  wait   $/hour     epoch  $/epoch GPU-h/ep samples/$  mark\n"
            "  now 2         600   40%     3.04     1h40m     5.07    0.667      711k\n"
            "  1             300   70%     2.22     3h20m     7.41    2.333      486k\n"
            "  2             600   40%     3.04     1h40m     5.07    0.667      711k  N\n"
            "  3             900   10%     3.86   1h6m40s     4.28    0.111      840k  C\n"
            "  4            1000    0%     4.67        1h     4.67    0.000      771k  KA\n"
            "  5            1000    0%     5.49        1h     5.49    0.000      656k\n"
            "  mark: N now, K knee (fewest with no wait), C cheapest, A advised\n");
}

// One count that is now, the knee, the cheapest and the advised one (seen in
// prometheus_scrape_test, where spelled-out marks ran to 97 columns) still fits 80.
TEST(AdviseTextTest, ACountWithEveryMarkFitsEightyColumns) {
  stoker::v1::GetStatusResponse status = PostStatus();
  stoker::v1::JobAdvice* advice = status.mutable_jobs(0)->mutable_advice();
  advice->set_workers_now(4);
  advice->set_cheapest_workers(4);
  const std::string text = FormatAdvice(status, "127.0.0.1:7070");
  EXPECT_THAT(text, HasSubstr("771k  NKCA\n"));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(AdviseTextTest, UnmeasuredJobsSayWhatIsMissing) {
  stoker::v1::GetStatusResponse status;
  stoker::v1::JobStatus* job = status.add_jobs();
  job->set_name("new");
  job->mutable_advice()->set_explanation("no workers: start at least one");
  const std::string text = FormatAdvice(status, "c:1");
  EXPECT_THAT(text, HasSubstr("  no workers: start at least one\n"));
  EXPECT_THAT(text, Not(HasSubstr("samples/s  wait")));
}

TEST(AdviseTextTest, JsonKeepsTheAdviceAndDropsTheRest) {
  const stoker::v1::GetStatusResponse advice = AdviceOnly(PostStatus());
  EXPECT_EQ(advice.jobs(0).ranks_size(), 0);
  EXPECT_EQ(advice.jobs(0).advice().predicted_size(), 5);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(advice, &json, options).ok());
  EXPECT_THAT(json, HasSubstr("\"cheapest_workers\":3"));
  EXPECT_THAT(json, HasSubstr("\"dollars_per_epoch\":4.672"));
  EXPECT_THAT(json, HasSubstr("\"cluster\":{\"workers_now\":2,\"workers_desired\":4"));
}

}  // namespace
}  // namespace stoker
