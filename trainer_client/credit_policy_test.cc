// CreditPolicy's shares: rates, silence, decay (levels, stall and cap:
// credit_policy_levels_test.cc).

#include "trainer_client/credit_policy.h"

#include <cstdint>
#include <map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/credit_policy_for_test.h"

namespace stoker {
namespace {

using credit_testing::Budget;
using credit_testing::Granted;
using credit_testing::kT0;

uint64_t SumOfShares(const CreditPolicy& policy, std::vector<StreamId> ids) {
  uint64_t sum = 0;
  for (StreamId id : ids) sum += policy.share(id);
  return sum;
}

// Drives streams with fixed delivery rates (batches per second; 0 = silent) in 10 ms steps;
// each batch is handed out at once and the level rule grants its credit back; rebalances every
// 200 ms and checks that the shares stay within the budget.
class Simulation {
 public:
  Simulation(CreditPolicy* policy, std::map<StreamId, double> rates, absl::Time start = kT0)
      : policy_(policy), rates_(std::move(rates)), now_(start) {
    for (const auto& [id, rate] : rates_) {
      policy_->AddStream(id, now_);
      ids_.push_back(id);
    }
    policy_->TakeCreditGrants({}, now_);
  }

  void Run(absl::Duration duration) {
    const absl::Time end = now_ + duration;
    for (int step = 1; now_ < end; ++step) {
      now_ += absl::Milliseconds(10);
      for (const auto& [id, rate] : rates_) {
        due_[id] += rate * 0.01;
        for (; due_[id] >= 1; due_[id] -= 1) policy_->OnBatch(id, now_);
      }
      policy_->TakeCreditGrants({}, now_);
      if (step % 20 == 0) {
        policy_->Rebalance(now_);
        EXPECT_LE(SumOfShares(*policy_, ids_), policy_->effective_budget());
      }
    }
  }
  absl::Time now() const { return now_; }

 private:
  CreditPolicy* policy_;
  std::map<StreamId, double> rates_;
  std::vector<StreamId> ids_;
  std::map<StreamId, double> due_;
  absl::Time now_;
};

// --- Shares -----------------------------------------------------------------------------------

TEST(CreditPolicyTest, NewStreamsStartWithEvenShares) {
  CreditPolicy policy(Budget(12));
  EXPECT_EQ(policy.AddStream(1, kT0), 12u);
  EXPECT_EQ(policy.AddStream(2, kT0), 6u);
  EXPECT_EQ(policy.share(1), 6u);
  EXPECT_EQ(policy.AddStream(3, kT0), 4u);
  policy.Rebalance(kT0);
  for (StreamId id : {1, 2, 3}) EXPECT_EQ(policy.share(id), 4u);
}

TEST(CreditPolicyTest, EveryStreamKeepsOneCreditWhenTheBudgetIsSmall) {
  CreditPolicy policy(Budget(2));
  for (StreamId id = 1; id <= 4; ++id) policy.AddStream(id, kT0);
  EXPECT_EQ(policy.effective_budget(), 4u);
  policy.Rebalance(kT0 + absl::Seconds(5));
  for (StreamId id = 1; id <= 4; ++id) EXPECT_EQ(policy.share(id), 1u);
}

TEST(CreditPolicyTest, PrefersTheFastWorker) {
  CreditPolicy policy(Budget(20));
  Simulation sim(&policy, {{1, 40.0}, {2, 10.0}});
  sim.Run(absl::Seconds(5));
  // Rates 40 : 10 → 1 + 18 × 0.8 and 1 + 18 × 0.2.
  EXPECT_NEAR(policy.Rate(1, sim.now()), 40.0, 1.0);
  EXPECT_NEAR(policy.Rate(2, sim.now()), 10.0, 1.0);
  EXPECT_GE(policy.share(1), 15u);
  EXPECT_LE(policy.share(2), 5u);
  EXPECT_EQ(policy.share(1) + policy.share(2), 20u);
}

TEST(CreditPolicyTest, BalancingOffKeepsEvenSharesWhateverTheRates) {
  CreditPolicy::Config config = Budget(20);
  config.balance = false;
  CreditPolicy policy(config);
  Simulation sim(&policy, {{1, 40.0}, {2, 10.0}});
  sim.Run(absl::Seconds(5));
  EXPECT_EQ(policy.share(1), 10u);
  EXPECT_EQ(policy.share(2), 10u);
}

TEST(CreditPolicyTest, SilentStreamDecaysTowardOneCredit) {
  CreditPolicy policy(Budget(16));
  Simulation sim(&policy, {{1, 50.0}, {2, 0.0}, {3, 50.0}});
  sim.Run(absl::Seconds(4));
  EXPECT_TRUE(policy.Silent(2, sim.now()));
  EXPECT_FALSE(policy.Silent(1, sim.now()));
  EXPECT_EQ(policy.share(2), 1u);
  EXPECT_EQ(policy.share(1) + policy.share(3), 15u);
}

TEST(CreditPolicyTest, ShrinkingIsGradual) {
  CreditPolicy::Config config = Budget(64);
  config.decay = 0.5;
  CreditPolicy policy(config);
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);
  EXPECT_EQ(Granted(policy.TakeCreditGrants({}, kT0)), 64u);  // stream 2 never delivers
  absl::Time now = kT0;
  for (int i = 0; i < 300; ++i) {  // stream 1: 100 batches/s for 3 s
    now += absl::Milliseconds(10);
    policy.OnBatch(1, now);
    policy.TakeCreditGrants({}, now);
  }
  policy.Rebalance(now);
  EXPECT_EQ(policy.share(2), 16u);  // 32 → halfway to 1 (rounded up)
  policy.Rebalance(now);
  EXPECT_EQ(policy.share(2), 8u);
  EXPECT_EQ(policy.share(1) + policy.share(2), 64u);
}

TEST(CreditPolicyTest, RecoveredStreamGetsItsShareBack) {
  CreditPolicy policy(Budget(16));
  Simulation silent(&policy, {{1, 50.0}, {2, 0.0}});
  silent.Run(absl::Seconds(4));
  EXPECT_EQ(policy.share(2), 1u);
  absl::Time now = silent.now();
  for (int i = 0; i < 400; ++i) {  // both at 50/s for 8 s
    now += absl::Milliseconds(20);
    for (StreamId id : {1, 2}) policy.OnBatch(id, now);
    policy.TakeCreditGrants({}, now);
    if (i % 10 == 0) {
      policy.Rebalance(now);
      EXPECT_LE(SumOfShares(policy, {1, 2}), 16u);
    }
  }
  EXPECT_NEAR(policy.share(2), 8.0, 1.0);
}

TEST(CreditPolicyTest, YoungStreamWeighsTheMeanOfTheOthers) {
  CreditPolicy policy(Budget(30));
  Simulation sim(&policy, {{1, 20.0}, {2, 20.0}});
  sim.Run(absl::Seconds(3));
  policy.AddStream(3, sim.now());
  policy.Rebalance(sim.now() + absl::Milliseconds(100));
  EXPECT_EQ(policy.share(3), 10u);
  EXPECT_LE(SumOfShares(policy, {1, 2, 3}), 30u);
}

TEST(CreditPolicyTest, OverdueAfterIsAMultipleOfTheP99LatencyWithAFloor) {
  CreditPolicy::Config config = Budget(100);
  config.overdue_floor = absl::Milliseconds(100);
  config.overdue_factor = 3;
  config.latency_samples = 100;
  CreditPolicy policy(config);
  EXPECT_EQ(policy.OverdueAfter(), absl::Milliseconds(100));
  policy.AddStream(1, kT0);
  EXPECT_EQ(Granted(policy.TakeCreditGrants({}, kT0)), 100u);
  for (int i = 1; i <= 100; ++i) policy.OnBatch(1, kT0 + absl::Milliseconds(i));
  // Latencies 1..100 ms: p99 = 99 ms.
  EXPECT_EQ(policy.P99Latency(1), absl::Milliseconds(99));
  EXPECT_EQ(policy.OverdueAfter(), absl::Milliseconds(297));
}

TEST(CreditPolicyTest, RemovedStreamFreesItsShare) {
  CreditPolicy policy(Budget(10));
  policy.AddStream(1, kT0);
  policy.AddStream(2, kT0);
  policy.RemoveStream(2);
  EXPECT_EQ(policy.share(2), 0u);
  policy.Rebalance(kT0 + absl::Seconds(1));
  EXPECT_EQ(policy.share(1), 10u);
}

}  // namespace
}  // namespace stoker
