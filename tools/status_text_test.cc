#include "tools/status_text.h"

#include "absl/strings/str_split.h"
#include "common/ids.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

stoker::v1::GetStatusResponse SampleStatus() {
  stoker::v1::GetStatusResponse status;
  stoker::v1::JobStatus* job = status.add_jobs();
  job->set_job_id(MakeId(0x9e3779b9, 1));  // ids carry the incarnation; people see the serial
  job->set_name("demo");
  job->set_state(stoker::v1::JOB_STATE_RUNNING);
  job->set_batch_size(64);
  job->set_batches_per_epoch_per_rank(96);
  job->set_epochs(2);
  stoker::v1::RankStatus* rank = job->add_ranks();
  rank->set_rank(0);
  rank->mutable_stats()->set_data_wait_fraction(0.41);
  rank->mutable_stats()->set_step_seconds(0.0502);
  rank->mutable_stats()->set_batches_per_second(11.84);
  rank->mutable_stats()->set_batches_delivered(120);
  rank->set_last_report_age_ms(180);
  stoker::v1::JobAdvice* advice = job->mutable_advice();
  advice->set_measured(true);
  advice->set_workers_now(2);
  advice->set_workers_desired(4);
  advice->set_explanation(
      "rank 0 waits 41% of its step; 2 workers at 95% busy supply 610 samples/s of 1,275 "
      "demanded (one worker can do 321): add 2");
  stoker::v1::WorkerStatus* worker = status.add_workers();
  worker->mutable_info()->set_worker_id(MakeId(0x9e3779b9, 3));
  worker->mutable_info()->set_address("127.0.0.1:40123");
  worker->mutable_info()->set_cores(1);
  worker->set_busy_fraction(0.95);
  worker->add_job_rates()->set_samples_per_second(305.2);
  worker->set_leases_held(2);
  worker->set_last_heartbeat_age_ms(12'345);
  return status;
}

TEST(StatusTextTest, FormatsJobsRanksAdviceAndWorkers) {
  EXPECT_EQ(FormatStatus(SampleStatus(), "127.0.0.1:7070"),
            "coordinator 127.0.0.1:7070: 1 job, 1 worker\n"
            "\n"
            "job demo (id 1): running, batch 64, 96 batches/epoch/rank, 2 epochs\n"
            "  rank   wait      step  batch/s delivered  reported\n"
            "  0       41%    50.2ms     11.8       120  180ms ago\n"
            "  advice: 4 workers (2 now): rank 0 waits 41% of its step; 2 workers at 95% busy\n"
            "    supply 610 samples/s of 1,275 demanded (one worker can do 321): add 2\n"
            "\n"
            "worker address               cores  busy samples/s leases  heartbeat\n"
            "3      127.0.0.1:40123           1   95%       305      2  12s ago\n");
}

TEST(StatusTextTest, NamesAJobsTenantWhenItIsNotTheDefault) {
  stoker::v1::GetStatusResponse status = SampleStatus();
  status.mutable_jobs(0)->set_tenant("vision");
  EXPECT_THAT(FormatStatus(status, "127.0.0.1:7070"),
              HasSubstr("job demo (id 1, tenant vision): running"));
  status.mutable_jobs(0)->set_tenant("default");
  EXPECT_THAT(FormatStatus(status, "127.0.0.1:7070"), HasSubstr("job demo (id 1): running"));
}

TEST(StatusTextTest, EveryLineFitsEightyColumns) {
  stoker::v1::GetStatusResponse status = SampleStatus();
  status.mutable_jobs(0)->mutable_advice()->set_explanation(std::string(30, 'x') + " " +
                                                            std::string(200, 'y'));
  for (absl::string_view line : absl::StrSplit(FormatStatus(status, "c"), '\n')) {
    if (line.find('y') != absl::string_view::npos) continue;  // The one unbreakable word.
    EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(StatusTextTest, WrapBreaksAtSpaces) {
  EXPECT_EQ(WrapText("aa bb cc dd", 9, "- "), "- aa bb\n-   cc dd\n");
  EXPECT_EQ(WrapText("aa bb cc dd", 8, "- "), "- aa bb\n-   cc\n-   dd\n");
  EXPECT_EQ(WrapText("aaaaaaaaaaaa b", 8, ""), "aaaaaaaaaaaa\n  b\n");
  EXPECT_EQ(WrapText("", 8, "- "), "");
}

}  // namespace
}  // namespace stoker
