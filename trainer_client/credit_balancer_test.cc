#include "trainer_client/credit_balancer.h"

#include <cstdint>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

CreditBalancer::Config Budget(uint64_t batches) {
  CreditBalancer::Config config;
  config.budget_batches = batches;
  return config;
}

uint64_t Sum(const std::map<uint64_t, uint32_t>& shares) {
  uint64_t sum = 0;
  for (const auto& [id, share] : shares) sum += share;
  return sum;
}

// Drives streams with fixed delivery rates (batches per second; 0 = stalled) in 10 ms steps,
// granting one credit back per batch as the loader's level rule would, rebalancing every 200 ms.
// Checks the budget after every rebalance.
class Simulation {
 public:
  Simulation(CreditBalancer* balancer, std::map<uint64_t, double> rates)
      : balancer_(balancer), rates_(std::move(rates)) {
    for (const auto& [id, rate] : rates_) {
      balancer_->AddStream(id, now_);
      balancer_->OnGrant(id, balancer_->share(id), now_);
      due_[id] = 0;
    }
  }

  void Run(absl::Duration duration) {
    const absl::Time end = now_ + duration;
    int step = 0;
    while (now_ < end) {
      now_ += absl::Milliseconds(10);
      for (const auto& [id, rate] : rates_) {
        due_[id] += rate * 0.01;
        while (due_[id] >= 1) {
          due_[id] -= 1;
          balancer_->OnBatch(id, now_);
          balancer_->OnGrant(id, 1, now_);
        }
      }
      if (++step % 20 == 0) {
        const auto& shares = balancer_->Rebalance(now_);
        EXPECT_LE(Sum(shares), balancer_->effective_budget());
      }
    }
  }
  absl::Time now() const { return now_; }

 private:
  CreditBalancer* balancer_;
  std::map<uint64_t, double> rates_;
  std::map<uint64_t, double> due_;
  absl::Time now_ = kT0;
};

TEST(CreditBalancerTest, NewStreamsStartWithEvenShares) {
  CreditBalancer balancer(Budget(12));
  EXPECT_EQ(balancer.AddStream(1, kT0), 12u);
  EXPECT_EQ(balancer.AddStream(2, kT0), 6u);
  EXPECT_EQ(balancer.share(1), 6u);
  EXPECT_EQ(balancer.AddStream(3, kT0), 4u);
  EXPECT_THAT(balancer.Rebalance(kT0), ElementsAre(Pair(1, 4), Pair(2, 4), Pair(3, 4)));
}

TEST(CreditBalancerTest, EveryStreamKeepsOneCreditWhenTheBudgetIsSmall) {
  CreditBalancer balancer(Budget(2));
  for (uint64_t id = 1; id <= 4; ++id) balancer.AddStream(id, kT0);
  EXPECT_EQ(balancer.effective_budget(), 4u);
  EXPECT_THAT(balancer.Rebalance(kT0 + absl::Seconds(5)),
              ElementsAre(Pair(1, 1), Pair(2, 1), Pair(3, 1), Pair(4, 1)));
}

TEST(CreditBalancerTest, PrefersTheFastWorker) {
  CreditBalancer balancer(Budget(20));
  Simulation sim(&balancer, {{1, 40.0}, {2, 10.0}});
  sim.Run(absl::Seconds(5));
  // Rates 40 : 10 → 1 + 18 × 0.8 and 1 + 18 × 0.2.
  EXPECT_NEAR(balancer.Rate(1, sim.now()), 40.0, 1.0);
  EXPECT_NEAR(balancer.Rate(2, sim.now()), 10.0, 1.0);
  EXPECT_GE(balancer.share(1), 15u);
  EXPECT_LE(balancer.share(2), 5u);
  EXPECT_EQ(balancer.share(1) + balancer.share(2), 20u);
}

TEST(CreditBalancerTest, BalancingOffKeepsEvenSharesWhateverTheRates) {
  CreditBalancer::Config config = Budget(20);
  config.balance = false;
  CreditBalancer balancer(config);
  Simulation sim(&balancer, {{1, 40.0}, {2, 10.0}});
  sim.Run(absl::Seconds(5));
  EXPECT_EQ(balancer.share(1), 10u);
  EXPECT_EQ(balancer.share(2), 10u);
}

TEST(CreditBalancerTest, StalledStreamDecaysTowardOneCredit) {
  CreditBalancer balancer(Budget(16));
  Simulation sim(&balancer, {{1, 50.0}, {2, 0.0}, {3, 50.0}});
  sim.Run(absl::Seconds(4));
  EXPECT_TRUE(balancer.Stalled(2, sim.now()));
  EXPECT_FALSE(balancer.Stalled(1, sim.now()));
  EXPECT_EQ(balancer.share(2), 1u);
  EXPECT_EQ(balancer.share(1) + balancer.share(3), 15u);
}

TEST(CreditBalancerTest, ShrinkingIsGradual) {
  CreditBalancer::Config config = Budget(64);
  config.decay = 0.5;
  CreditBalancer balancer(config);
  balancer.AddStream(1, kT0);
  balancer.AddStream(2, kT0);
  balancer.OnGrant(2, 32, kT0);  // stream 2 never delivers
  balancer.OnGrant(1, 32, kT0);
  absl::Time now = kT0;
  for (int i = 0; i < 300; ++i) {  // stream 1: 100 batches/s for 3 s
    now += absl::Milliseconds(10);
    balancer.OnBatch(1, now);
    balancer.OnGrant(1, 1, now);
  }
  EXPECT_EQ(balancer.Rebalance(now).at(2), 16u);  // 32 → halfway to 1 (rounded up)
  EXPECT_EQ(balancer.Rebalance(now).at(2), 8u);
  EXPECT_EQ(balancer.share(1) + balancer.share(2), 64u);
}

TEST(CreditBalancerTest, RecoveredStreamGetsItsShareBack) {
  CreditBalancer balancer(Budget(16));
  {
    Simulation sim(&balancer, {{1, 50.0}, {2, 0.0}});
    sim.Run(absl::Seconds(4));
    EXPECT_EQ(balancer.share(2), 1u);
  }
  absl::Time now = kT0 + absl::Seconds(4);
  for (int i = 0; i < 400; ++i) {  // both at 50/s for 4 s
    now += absl::Milliseconds(20);
    for (uint64_t id : {1, 2}) {
      balancer.OnBatch(id, now);
      balancer.OnGrant(id, 1, now);
    }
    if (i % 10 == 0) {
      EXPECT_LE(Sum(balancer.Rebalance(now)), 16u);
    }
  }
  EXPECT_NEAR(balancer.share(2), 8.0, 1.0);
}

TEST(CreditBalancerTest, YoungStreamWeighsTheMeanOfTheOthers) {
  CreditBalancer balancer(Budget(30));
  Simulation sim(&balancer, {{1, 20.0}, {2, 20.0}});
  sim.Run(absl::Seconds(3));
  balancer.AddStream(3, sim.now());
  const auto& shares = balancer.Rebalance(sim.now() + absl::Milliseconds(100));
  EXPECT_EQ(shares.at(3), 10u);
  EXPECT_LE(Sum(shares), 30u);
}

TEST(CreditBalancerTest, OverdueAfterIsAMultipleOfTheP99LatencyWithAFloor) {
  CreditBalancer::Config config = Budget(8);
  config.stall_floor = absl::Milliseconds(100);
  config.stall_factor = 3;
  config.latency_samples = 100;
  CreditBalancer balancer(config);
  EXPECT_EQ(balancer.OverdueAfter(), absl::Milliseconds(100));
  balancer.AddStream(1, kT0);
  balancer.OnGrant(1, 100, kT0);
  for (int i = 1; i <= 100; ++i) balancer.OnBatch(1, kT0 + absl::Milliseconds(i));
  // Latencies 1..100 ms: p99 = 99 ms.
  EXPECT_EQ(balancer.P99Latency(1), absl::Milliseconds(99));
  EXPECT_EQ(balancer.OverdueAfter(), absl::Milliseconds(297));
}

TEST(CreditBalancerTest, RemovedStreamFreesItsShare) {
  CreditBalancer balancer(Budget(10));
  balancer.AddStream(1, kT0);
  balancer.AddStream(2, kT0);
  balancer.RemoveStream(2);
  EXPECT_EQ(balancer.share(2), 0u);
  EXPECT_THAT(balancer.Rebalance(kT0 + absl::Seconds(1)), ElementsAre(Pair(1, 10)));
}

}  // namespace
}  // namespace stoker
