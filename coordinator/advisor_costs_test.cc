// The advisor's cost arithmetic on a known rate model: exact figures per worker count, the knee
// and the cheapest count (which differ when workers are dear next to the GPU).
#include "coordinator/advisor_costs.h"

#include "coordinator/advisor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// One rank demanding 1,000 samples/s; workers of 300 samples/s; an epoch of 3.6M samples; the
// post's prices: a GPU node at $1.408/h, a worker at $0.816/h.
CostModel PostModel() {
  CostModel model;
  model.demand_samples_per_second = 1000;
  model.capacity_per_worker = 300;
  model.samples_per_epoch = 3'600'000;
  model.gpu_nodes = 1;
  model.gpu_node_dollars_per_hour = 1.408;
  model.worker_dollars_per_hour = 0.816;
  model.priced = true;
  model.workers_now = 2;
  model.workers_desired = 4;
  model.supply_now = 600;
  model.data_wait_now = 0.4;
  return model;
}

TEST(AdvisorCostsTest, FiguresAtOneCount) {
  const CostPoint three = PredictAt(PostModel(), 3);
  EXPECT_EQ(three.workers, 3u);
  EXPECT_DOUBLE_EQ(three.samples_per_second, 900);
  EXPECT_DOUBLE_EQ(three.data_wait_fraction, 0.1);
  EXPECT_DOUBLE_EQ(three.dollars_per_hour, 1.408 + 3 * 0.816);  // 3.856
  EXPECT_DOUBLE_EQ(three.epoch_seconds, 4000);
  EXPECT_DOUBLE_EQ(three.dollars_per_epoch, 3.856 * 4000 / 3600);  // 4.284
  EXPECT_DOUBLE_EQ(three.gpu_hours_lost_per_epoch, 4000 * 0.1 / 3600);
  EXPECT_DOUBLE_EQ(three.samples_per_dollar, 900 * 3600 / 3.856);

  const CostPoint five = PredictAt(PostModel(), 5);  // past the knee: no wait, idle capacity
  EXPECT_DOUBLE_EQ(five.samples_per_second, 1000);
  EXPECT_DOUBLE_EQ(five.data_wait_fraction, 0);
  EXPECT_DOUBLE_EQ(five.gpu_hours_lost_per_epoch, 0);
  EXPECT_DOUBLE_EQ(five.dollars_per_epoch, (1.408 + 5 * 0.816) * 3600 / 3600);
}

TEST(AdvisorCostsTest, NowUsesWhatIsMeasured) {
  const CostAdvice advice = PredictCosts(PostModel());
  EXPECT_EQ(advice.now.workers, 2u);
  EXPECT_DOUBLE_EQ(advice.now.samples_per_second, 600);
  EXPECT_DOUBLE_EQ(advice.now.data_wait_fraction, 0.4);
  EXPECT_DOUBLE_EQ(advice.now.epoch_seconds, 6000);
  EXPECT_DOUBLE_EQ(advice.now.dollars_per_epoch, (1.408 + 2 * 0.816) * 6000 / 3600);
  EXPECT_DOUBLE_EQ(advice.now.gpu_hours_lost_per_epoch, 6000 * 0.4 / 3600);
}

TEST(AdvisorCostsTest, CheapWorkersMakeTheKneeCheapest) {
  // 1,000 / 300 = 3.33 → the knee is 4. At the post's prices 3 workers cost $4.284 an epoch
  // and 4 cost $4.672: the cheapest count is below the knee.
  const CostAdvice advice = PredictCosts(PostModel());
  EXPECT_EQ(advice.knee_workers, 4u);
  EXPECT_EQ(advice.cheapest_workers, 3u);
  // A dear GPU ($10/h) makes waiting the expense: 3 cost $13.83, 4 cost $13.26.
  CostModel dear_gpu = PostModel();
  dear_gpu.gpu_node_dollars_per_hour = 10;
  EXPECT_EQ(PredictCosts(dear_gpu).cheapest_workers, 4u);
  // Unpriced: the knee.
  CostModel unpriced = PostModel();
  unpriced.gpu_node_dollars_per_hour = unpriced.worker_dollars_per_hour = 0;
  unpriced.priced = false;
  const CostAdvice free = PredictCosts(unpriced);
  EXPECT_EQ(free.cheapest_workers, 4u);
  EXPECT_DOUBLE_EQ(free.by_workers[0].dollars_per_epoch, 0);
  EXPECT_DOUBLE_EQ(free.by_workers[0].samples_per_dollar, 0);
}

TEST(AdvisorCostsTest, ListsEveryCountUpToPastTheKneeAndTheFarOnes) {
  CostAdvice advice = PredictCosts(PostModel());
  ASSERT_EQ(advice.by_workers.size(), 6u);  // 1..max(now 2, desired 4, knee 4) + 2
  for (size_t i = 0; i < advice.by_workers.size(); ++i) {
    EXPECT_EQ(advice.by_workers[i].workers, i + 1);
  }
  CostModel many = PostModel();
  many.workers_now = 100;                   // far past the listed range: listed anyway
  many.demand_samples_per_second = 30'000;  // knee 100
  many.workers_desired = 110;
  advice = PredictCosts(many);
  ASSERT_EQ(advice.by_workers.size(), kMaxCostRows + 2);  // 1..32, 100 (now, knee), 110
  EXPECT_EQ(advice.by_workers.back().workers, 110u);
  EXPECT_EQ(advice.knee_workers, 100u);
}

// Through AdviseWorkers: the job's workers' pools set the worker price, and the explanation
// carries the dollars.
TEST(AdvisorCostsTest, AdvicePricesWorkersByPool) {
  AdvisorInput input;
  input.batch_size = 100;
  input.samples_per_epoch = 3'600'000;
  input.ranks = {RankDemand{0, 0.4, 0.1}};                           // 1,000 samples/s
  input.workers = {{1, 300, 1.0, "cpu-a"}, {2, 300, 1.0, "cpu-b"}};  // 300 each at full load
  AdvisorConfig config;
  config.prices.gpu_node_dollars_per_hour = 1.408;
  config.prices.worker_pool_dollars_per_hour = {{"cpu-a", 0.616}, {"cpu-b", 1.016}};  // mean .816
  const Advice advice = AdviseWorkers(input, config);
  ASSERT_TRUE(advice.measured);
  EXPECT_EQ(advice.cost.knee_workers, 4u);
  EXPECT_EQ(advice.cost.cheapest_workers, 3u);
  EXPECT_DOUBLE_EQ(advice.cost.now.dollars_per_hour, 1.408 + 0.616 + 1.016);
  EXPECT_THAT(advice.explanation,
              HasSubstr("; an epoch costs $5.07 now, $4.67 at the knee (4 workers), the least at "
                        "3 ($4.28)"));
}

}  // namespace
}  // namespace stoker
