#include "worker/simulated_batch.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "worker/batch_producer.h"

namespace stoker {

absl::string_view SimulatedBatchModeName(SimulatedBatchMode mode) {
  return mode == SimulatedBatchMode::kBurn ? "burn" : "sleep";
}

absl::StatusOr<SimulatedBatchMode> ParseSimulatedBatchMode(absl::string_view name) {
  for (SimulatedBatchMode mode : {SimulatedBatchMode::kSleep, SimulatedBatchMode::kBurn}) {
    if (name == SimulatedBatchModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("simulate_batch_mode: expected sleep or burn, got '", name, "'"));
}

absl::Status SimulateBatch(JobContext& job, const stoker::v1::TaskId& task, uint64_t worker_id,
                           stoker::v1::BatchMessage* out) {
  ASSIGN_OR_RETURN(std::shared_ptr<const EpochPlan> plan, job.Plan(task.epoch()));
  RETURN_IF_ERROR(plan->CheckBatch(task.batch_index()));
  const uint32_t batch_size = job.spec().batch_size();
  stoker::v1::BatchHeader* header = out->mutable_header();
  StartBatchHeader(job, task, worker_id, header);
  const uint64_t first_position = task.batch_index() * batch_size;
  for (uint32_t i = 0; i < batch_size; ++i) {
    header->set_sample_indices(static_cast<int>(i), plan->SampleAt(first_position + i));
  }
  out->mutable_data()->resize(job.batch_bytes());  // keeps the pooled capacity
  return absl::OkStatus();
}

absl::Duration BurnThreadCpu(absl::Duration cpu, absl::Duration since, std::string* payload) {
  constexpr size_t kBytesPerClockRead = 64 << 10;
  std::string scratch;
  std::string* target = payload;
  if (payload->size() < sizeof(uint64_t)) {
    scratch.resize(4096);
    target = &scratch;
  }
  char* const data = target->data();
  const size_t words = target->size() / sizeof(uint64_t);
  uint64_t state = static_cast<uint64_t>(absl::ToInt64Nanoseconds(since)) | 1;
  size_t word = 0;
  while (true) {
    const absl::Duration spent = ThreadCpuTime() - since;
    if (spent >= cpu) return spent;
    for (size_t i = 0; i < kBytesPerClockRead / sizeof(uint64_t); ++i) {
      state = state * 6364136223846793005u + 1442695040888963407u;  // Knuth's MMIX LCG
      std::memcpy(data + word * sizeof(uint64_t), &state, sizeof(state));
      if (++word == words) word = 0;
    }
  }
}

}  // namespace stoker
