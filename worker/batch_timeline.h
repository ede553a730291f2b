#ifndef STOKER_WORKER_BATCH_TIMELINE_H_
#define STOKER_WORKER_BATCH_TIMELINE_H_

// The worker's spans of one sampled batch (docs/decisions/0046-batch-timeline.md), gathered on
// its producer thread and written into the batch's header (BatchHeader.trace).
//
// A batch's samples interleave their stages (read, decode, ops, conversion, ...), which would
// make hundreds of spans. Instead each stage's time is summed over the batch's samples and the
// stages are laid end to end from the batch's start, in pipeline order: lease_wait (from the
// lease call to the producer taking the task; a wait, on the lease thread's track), shard_read,
// decoded_cache_hit (samples copied out of the decoded cache, worker/decoded_cache.h), decode,
// each op (its registry name; a fused run, whose time is on its first op, as one
// op_group span "a+b+c"), tail (the
// output conversion and any batch mix), encode (the rest: labels, header, the loop's own work),
// so one batch is at most 4 + ops spans, sequential on its producer thread, and their lengths
// are the stages' true shares. The session adds compress and the stream writer queue
// (AppendSpan).
//
// Off (the job's recorder does not sample the task): Begin costs SpanRecorder::Sampled's one
// relaxed load, and nothing else reads a clock. Thread-compatible: one per producer thread.

#include <cstdint>
#include <vector>

#include "augment/pipeline.h"
#include "stoker/v1/common.pb.h"
#include "stoker/v1/worker.pb.h"
#include "trace/span.h"
#include "trace/span_recorder.h"

namespace stoker {

// Where and when the lease of a task was asked for, for its lease_wait span; ns 0: untraced.
struct LeaseStart {
  int64_t ns = 0;
  uint32_t thread_id = 0;
};

class BatchTimeline {
 public:
  // Starts timing `task` when `recorder` samples it (forgetting a batch that failed).
  void Begin(const trace::SpanRecorder& recorder, const stoker::v1::TaskId& task,
             const LeaseStart& lease);
  bool on() const { return on_; }
  // One sample's read time, and its pipeline run time with the per-op seconds
  // (PipelineWorkspace::op_seconds). REQUIRES: on().
  void AddRead(int64_t ns) { read_ns_ += ns; }
  // One sample's copy out of the decoded cache (its decode and prefix ops skipped).
  // REQUIRES: on().
  void AddDecodedCacheHit(int64_t ns) { decoded_hit_ns_ += ns; }
  void AddRun(int64_t ns, const std::vector<double>& op_seconds);
  // The batch mix's time (part of the tail). REQUIRES: on().
  void AddTail(int64_t ns) { mix_ns_ += ns; }
  // Ends the batch: its spans, with their op and thread names, into header->trace. No-op when
  // off.
  void End(trace::SpanRecorder& recorder, const Pipeline& pipeline,
           stoker::v1::BatchHeader* header);

 private:
  bool on_ = false;
  trace::TaskKey task_;
  LeaseStart lease_;
  int64_t start_ns_ = 0;
  int64_t read_ns_ = 0;
  int64_t decoded_hit_ns_ = 0;
  int64_t run_ns_ = 0;
  int64_t mix_ns_ = 0;
  std::vector<int64_t> op_ns_;
};

// Appends one span of `stage` on the calling thread (named "`thread_name` <id>") to a traced
// header, within BatchTrace's limit of spans. No-op for an untraced header.
void AppendSpan(trace::Stage stage, int64_t start_ns, int64_t end_ns, const char* thread_name,
                stoker::v1::BatchHeader* header);

}  // namespace stoker

#endif  // STOKER_WORKER_BATCH_TIMELINE_H_
