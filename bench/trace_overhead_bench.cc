// scripts/bench.sh trace-overhead: CPU per image of one batch's path through a worker and a
// trainer client, tracing off vs on for every batch (docs/decisions/0046-batch-timeline.md),
// batch by batch in turns, measured in the thread's CPU time. Prints `RESULT name=trace-overhead
// ...` with microseconds per image (medians) and the ratio on/off (the median of each round's
// ratio).
//
// One batch's path, in one thread: the producer's ProduceBatch with its timeline
// (worker/batch_timeline.h), the stream writer's queue span and clock instants (AppendSpan),
// the header's serialization and the client's parse of it, then the client's side
// (trace/client_trace.h): the worker spans moved into its clock, its receive,
// buffer_wait, handoff and consumer_step spans, and a heartbeat's worth of spans every 16
// batches. Off, the same code runs with sampling 0: what "zero when off" costs is in the off
// figure. The payload's compression and the network are left out (they do not change with
// tracing), so the ratio is the overhead on the CPU a worker and a client spend per image.
//
// The budget (issue 26): on costs <= 1% more CPU per image.
//
//   trace_overhead_bench [--pipeline=TEXT] [--height=224] [--width=224] [--batch-size=64]
//                        [--rounds=6] [--seconds=1.0]

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "bench/bench_util.h"
#include "common/clock.h"
#include "common/flags.h"
#include "trace/client_trace.h"
#include "trace/span_recorder.h"
#include "worker/batch_producer.h"
#include "worker/batch_timeline.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

struct Config {
  std::string pipeline =
      "horizontal_flip, to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])";
  uint32_t height = 224;
  uint32_t width = 224;
  uint32_t batch_size = 64;
  uint32_t rounds = 6;
  absl::Duration cpu_time = absl::Seconds(1);  // per round, of this thread's CPU
};

// One batch's path through a worker and a client (see the file comment), on or off.
class BatchPath {
 public:
  explicit BatchPath(std::shared_ptr<JobContext> job) : job_(std::move(job)) {
    scratch_.workspace.set_time_ops(true);  // as the producer threads run
  }

  void SetTracing(bool on) {
    job_->trace().SetSampling(on ? 1 : 0);
    pb::ClientHeartbeatResponse response;
    if (on) {
      response.mutable_trace()->set_sample_one_in(1);
      response.set_received_clock_ns(trace::MonotonicNowNanos());
      response.set_sent_clock_ns(response.received_clock_ns());
    }
    client_.OnHeartbeatResponse(on ? trace::MonotonicNowNanos() : 0, response);
  }

  // Returns the images produced.
  uint32_t OneBatch() {
    pb::TaskId task;
    task.set_job_id(job_->job_id());
    task.set_batch_index(next_batch_++ % batches_per_epoch());
    trace::SpanRecorder& recorder = job_->trace();
    LeaseStart lease;
    if (recorder.sampling() != 0) lease = {recorder.Now(), trace::SpanRecorder::CurrentThreadId()};
    scratch_.timeline.Begin(recorder, task, lease);
    if (!ProduceBatch(*job_, task, 1, &scratch_, &message_).ok()) std::abort();
    scratch_.timeline.End(recorder, job_->pipeline(), message_.mutable_header());
    Send();
    Receive();
    return job_->spec().batch_size();
  }

 private:
  uint64_t batches_per_epoch() const {
    return job_->spec().dataset().synthetic().num_samples() / job_->spec().batch_size();
  }

  void Send() {
    pb::BatchHeader* header = message_.mutable_header();
    if (header->has_trace()) {
      const int64_t now = trace::MonotonicNowNanos();
      AppendSpan(trace::Stage::kQueue, now, now, "stream writer", header);
      header->mutable_trace()->set_credit_client_ns(client_.Now());
      header->mutable_trace()->set_credit_received_ns(now);
      header->mutable_trace()->set_send_ns(now);
    }
    header->SerializeToString(&wire_);
  }

  void Receive() {
    if (!received_.ParseFromString(wire_)) std::abort();
    const pb::TaskId& task = received_.task();
    const bool sampled = client_.Sampled(task);
    const bool worker_spans = received_.has_trace() && client_.on();
    const int64_t arrived = sampled || worker_spans ? client_.Now() : 0;
    if (worker_spans) client_.OnWorkerSpans(received_, arrived);
    if (sampled) {
      client_.Record(trace::Stage::kReceive, task, arrived, client_.Now(), "stream reader");
      client_.OnAccepted(task, client_.Now());
      const int64_t popped = client_.Now();
      client_.Record(trace::Stage::kBufferWait, task, *client_.TakeAccepted(task), popped,
                     "consumer");
      client_.Record(trace::Stage::kHandoff, task, popped, client_.Now(), "consumer");
      client_.Record(trace::Stage::kConsumerStep, task, client_.Now(), client_.Now(), "consumer");
    }
    if (next_batch_ % 16 == 0) {
      pb::ClientHeartbeatRequest heartbeat;
      client_.FillHeartbeat(&heartbeat);
      heartbeat.SerializeToString(&heartbeat_wire_);
    }
  }

  std::shared_ptr<JobContext> job_;
  ProducerScratch scratch_;
  pb::BatchMessage message_;
  ClientTrace client_;
  uint64_t next_batch_ = 0;
  std::string wire_;
  pb::BatchHeader received_;
  std::string heartbeat_wire_;
};

struct Round {
  double off_us = 0;  // this thread's CPU per image, tracing off
  double on_us = 0;
};

// About `cpu_time` of this thread's CPU, tracing on and off by turns batch by batch (so both see
// the same machine: a shared host's load moves both alike); each batch timed alone, the switch
// between them not.
Round MeasureRound(BatchPath& path, absl::Duration cpu_time) {
  absl::Duration spent[2];
  uint64_t images[2] = {0, 0};
  const absl::Duration start = ThreadCpuTime();
  for (int on = 0; ThreadCpuTime() - start < cpu_time; on = 1 - on) {
    path.SetTracing(on == 1);
    const absl::Duration before = ThreadCpuTime();
    images[on] += path.OneBatch();
    spent[on] += ThreadCpuTime() - before;
  }
  return Round{absl::ToDoubleMicroseconds(spent[0]) / static_cast<double>(images[0]),
               absl::ToDoubleMicroseconds(spent[1]) / static_cast<double>(images[1])};
}

int Run(const Config& config) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(config.batch_size * 64);
  synthetic->set_height(config.height);
  synthetic->set_width(config.width);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  absl::StatusOr<pb::PipelineSpec> pipeline = ParsePipelineText(config.pipeline);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "trace_overhead_bench: --pipeline: %s\n",
                 pipeline.status().ToString().c_str());
    return 2;
  }
  *spec.mutable_pipeline() = *pipeline;
  spec.set_batch_size(config.batch_size);
  spec.set_world_size(1);
  spec.set_epochs(1);
  absl::StatusOr<std::shared_ptr<JobContext>> job =
      JobContext::Create(1, spec, DatasetIo::FromEnvironment());
  if (!job.ok()) {
    std::fprintf(stderr, "trace_overhead_bench: %s\n", job.status().ToString().c_str());
    return 2;
  }
  const std::string load_start = bench::LoadAverage();
  std::printf("load average at start: %s\n", load_start.c_str());
  BatchPath path(*job);
  MeasureRound(path, absl::Milliseconds(300));  // warm-up
  std::vector<double> off_us, on_us, ratios;
  for (uint32_t round = 0; round < config.rounds; ++round) {
    const Round measured = MeasureRound(path, config.cpu_time);
    off_us.push_back(measured.off_us);
    on_us.push_back(measured.on_us);
    ratios.push_back(measured.on_us / measured.off_us);
    std::printf("round %u: off %.3f us/image, on %.3f us/image, ratio %.4f\n", round + 1,
                measured.off_us, measured.on_us, ratios.back());
  }
  const double ratio = bench::Median(ratios);
  std::printf("load average at end: %s\n", bench::LoadAverage().c_str());
  std::printf(
      "RESULT name=trace-overhead off_us_per_image=%.3f on_us_per_image=%.3f ratio=%.4f "
      "overhead_percent=%.2f rounds=%u batch_size=%u image=%ux%ux3 pipeline=\"%s\" "
      "load_start=\"%s\" load_end=\"%s\"\n",
      bench::Median(off_us), bench::Median(on_us), ratio, (ratio - 1) * 100, config.rounds,
      config.batch_size, config.height, config.width, config.pipeline.c_str(), load_start.c_str(),
      bench::LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  stoker::Config config;
  stoker::FlagSet flags("trace_overhead_bench",
                        "CPU per image of a batch's worker and client path, tracing off vs on.");
  flags.Add("pipeline", &config.pipeline, "The pipeline (text)");
  flags.Add("height", &config.height, "Image height");
  flags.Add("width", &config.width, "Image width");
  flags.Add("batch-size", &config.batch_size, "Images per batch");
  flags.Add("rounds", &config.rounds, "Alternating rounds (each: off and on)");
  flags.Add("seconds", &config.cpu_time, absl::Seconds(1), "Thread CPU time per measurement");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  return stoker::Run(config);
}
