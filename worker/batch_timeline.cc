#include "worker/batch_timeline.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "trace/trace_proto.h"

namespace stoker {

void BatchTimeline::Begin(const trace::SpanRecorder& recorder, const stoker::v1::TaskId& task,
                          const LeaseStart& lease) {
  task_ = trace::TaskKey{task.job_id(), task.epoch(), task.batch_index()};
  on_ = recorder.Sampled(task_);
  if (!on_) return;
  lease_ = lease;
  start_ns_ = recorder.Now();
  read_ns_ = decoded_hit_ns_ = run_ns_ = mix_ns_ = 0;
  op_ns_.clear();
}

void BatchTimeline::AddRun(int64_t ns, const std::vector<double>& op_seconds) {
  run_ns_ += ns;
  if (op_ns_.size() < op_seconds.size()) op_ns_.resize(op_seconds.size(), 0);
  for (size_t op = 0; op < op_seconds.size(); ++op) {
    op_ns_[op] += static_cast<int64_t>(op_seconds[op] * 1e9);
  }
}

void BatchTimeline::End(trace::SpanRecorder& recorder, const Pipeline& pipeline,
                        stoker::v1::BatchHeader* header) {
  if (!on_) return;
  on_ = false;
  const int64_t end_ns = recorder.Now();
  const uint32_t thread = trace::SpanRecorder::CurrentThreadId();
  recorder.NameCurrentThread(absl::StrCat("producer ", thread));
  std::vector<trace::Span> spans;
  if (lease_.ns != 0 && lease_.ns <= start_ns_) {
    spans.push_back(trace::Span{.stage = trace::Stage::kLeaseWait,
                                .thread_id = lease_.thread_id,
                                .task = task_,
                                .start_ns = lease_.ns,
                                .end_ns = start_ns_});
  }
  int64_t cursor = start_ns_;
  auto lay = [&](trace::Stage stage, int64_t ns, uint16_t name_id) {
    if (ns <= 0) return;
    spans.push_back(trace::Span{.stage = stage,
                                .name_id = name_id,
                                .thread_id = thread,
                                .task = task_,
                                .start_ns = cursor,
                                .end_ns = cursor + ns});
    cursor += ns;
  };
  lay(trace::Stage::kShardRead, read_ns_, 0);
  lay(trace::Stage::kDecodedCacheHit, decoded_hit_ns_, 0);
  int64_t ops_ns = 0;
  const size_t ops = std::min(op_ns_.size(), pipeline.num_ops());
  for (size_t op = 0; op < ops; ++op) {
    ops_ns += op_ns_[op];
    if (op_ns_[op] <= 0) continue;
    if (pipeline.op_name(op) == "decode") {
      lay(trace::Stage::kDecode, op_ns_[op], 0);
      continue;
    }
    // A fused run's time is on its first op, its other ops at 0: one op_group span "a+b".
    std::string name = pipeline.op_name(op);
    size_t last = op;
    while (last + 1 < ops && op_ns_[last + 1] == 0) name += "+" + pipeline.op_name(++last);
    lay(last > op ? trace::Stage::kOpGroup : trace::Stage::kOp, op_ns_[op],
        recorder.InternName(name));
  }
  lay(trace::Stage::kTail, std::max<int64_t>(run_ns_ - ops_ns, 0) + mix_ns_, 0);
  lay(trace::Stage::kEncode, end_ns - cursor, 0);
  *header->mutable_trace() = trace::ToBatchTrace(spans, recorder.Names(), recorder.ThreadNames());
}

void AppendSpan(trace::Stage stage, int64_t start_ns, int64_t end_ns, const char* thread_name,
                stoker::v1::BatchHeader* header) {
  if (!header->has_trace() || header->trace().spans_size() >= trace::kMaxSpansPerBatch) return;
  stoker::v1::BatchTrace* batch_trace = header->mutable_trace();
  const uint32_t thread = trace::SpanRecorder::CurrentThreadId();
  stoker::v1::TraceSpan* span = batch_trace->add_spans();
  span->set_stage(static_cast<uint32_t>(stage));
  span->set_thread_id(thread);
  span->set_start_ns(start_ns);
  span->set_end_ns(std::max(start_ns, end_ns));
  auto& names = *batch_trace->mutable_thread_names();
  if (!names.contains(thread) && names.size() < trace::kMaxNamesPerMessage) {
    names[thread] = absl::StrCat(thread_name, " ", thread);
  }
}

}  // namespace stoker
