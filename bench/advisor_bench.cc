// scripts/bench.sh advisor: how close the coordinator's worker advice comes to the ideal
// ⌈demand × 1.1 / capacity⌉, with demand from the rank's measured step and capacity measured by
// this process (one producer thread's samples per CPU-second). Two scenarios: 1 worker under a
// consumer with a 1 ms step (too few), 3 workers under a 20 ms step (too many). A wall-clock
// measure on a shared machine, which is why it is a benchmark (tests/integration/advisor_test.cc
// checks only the direction). Prints each scenario, then
//   RESULT name=advisor too_few_advised=A too_few_ideal=I too_few_ratio=A/I too_many_... .

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "tests/testing/advisor_scenario.h"
#include "tests/testing/test_cluster.h"

namespace stoker {
namespace {

struct Outcome {
  double advised = 0;
  double ideal = 0;
};

absl::StatusOr<Outcome> Run(int workers, absl::Duration step, const std::string& name) {
  ASSIGN_OR_RETURN(double capacity, MeasureProducerCapacity(AdvisorBlurJob()));
  ASSIGN_OR_RETURN(std::unique_ptr<TestCluster> cluster, TestCluster::Start(workers));
  ASSIGN_OR_RETURN(v1::JobStatus status, ConsumeUntilAdvised(*cluster, name, step));
  if (!status.advice().measured() || status.ranks_size() == 0) {
    return absl::DeadlineExceededError(absl::StrCat(name, ": no measured advice within 30 s"));
  }
  const double demand = kAdvisorBatchSize / status.ranks(0).stats().step_seconds();
  Outcome outcome{static_cast<double>(status.advice().workers_desired()),
                  std::max(1.0, std::ceil(demand * 1.1 / capacity))};
  std::printf(
      "%s: %d workers, step %s: capacity %.0f samples/s per thread, demand %.0f/s; "
      "advice %s (ideal %.0f)\n",
      name.c_str(), workers, absl::FormatDuration(step).c_str(), capacity, demand,
      status.advice().explanation().c_str(), outcome.ideal);
  return outcome;
}

int Main() {
  absl::StatusOr<Outcome> few = Run(1, absl::Milliseconds(1), "too_few");
  absl::StatusOr<Outcome> many = Run(3, absl::Milliseconds(20), "too_many");
  for (const auto* o : {&few, &many}) {
    if (!o->ok()) {
      std::fprintf(stderr, "advisor_bench: %s\n", o->status().ToString().c_str());
      return 1;
    }
  }
  std::printf(
      "RESULT name=advisor too_few_advised=%.0f too_few_ideal=%.0f too_few_ratio=%.3f "
      "too_many_advised=%.0f too_many_ideal=%.0f too_many_ratio=%.3f\n",
      few->advised, few->ideal, few->advised / few->ideal, many->advised, many->ideal,
      many->advised / many->ideal);
  return 0;
}

}  // namespace
}  // namespace stoker

int main() { return stoker::Main(); }
