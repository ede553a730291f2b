#include "trace/trace_proto.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace stoker::trace {
namespace {

namespace pb = ::stoker::v1;

absl::Status CheckCount(absl::string_view field, int count, int limit) {
  if (count > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", count, " entries, over the limit of ", limit));
  }
  return absl::OkStatus();
}

absl::Status CheckName(absl::string_view field, const std::string& name) {
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", name.size(), " bytes, over the limit of ", kMaxNameBytes));
  }
  return absl::OkStatus();
}

// The names and spans of a BatchTrace or a TraceProcessSpans.
absl::Status CheckNamesAndSpans(absl::string_view field,
                                const google::protobuf::RepeatedPtrField<std::string>& op_names,
                                const google::protobuf::Map<uint32_t, std::string>& thread_names,
                                const google::protobuf::RepeatedPtrField<pb::TraceSpan>& spans) {
  RETURN_IF_ERROR(
      CheckCount(absl::StrCat(field, ".op_names"), op_names.size(), kMaxNamesPerMessage));
  RETURN_IF_ERROR(CheckCount(absl::StrCat(field, ".thread_names"),
                             static_cast<int>(thread_names.size()), kMaxNamesPerMessage));
  for (int i = 0; i < op_names.size(); ++i) {
    RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".op_names[", i, "]"), op_names[i]));
  }
  for (const auto& [id, name] : thread_names) {
    RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".thread_names[", id, "]"), name));
  }
  for (int i = 0; i < spans.size(); ++i) {
    const pb::TraceSpan& span = spans[i];
    if (span.end_ns() < span.start_ns()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".spans[", i, "]: end_ns ",
                                                     span.end_ns(), " is before start_ns ",
                                                     span.start_ns()));
    }
    if (span.name_id() > static_cast<uint32_t>(op_names.size())) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".spans[", i, "]: name_id ",
                                                     span.name_id(), " names no op_names entry"));
    }
  }
  return absl::OkStatus();
}

Span FromWire(const pb::TraceSpan& wire, Stage stage) {
  Span span;
  span.stage = stage;
  span.name_id = static_cast<uint16_t>(wire.name_id());
  span.thread_id = wire.thread_id();
  span.task = TaskKey{wire.task().job_id(), wire.task().epoch(), wire.task().batch_index()};
  span.start_ns = wire.start_ns();
  span.end_ns = wire.end_ns();
  return span;
}

void ToWire(const Span& span, bool with_task, pb::TraceSpan* wire) {
  wire->set_stage(static_cast<uint32_t>(span.stage));
  wire->set_name_id(span.name_id);
  wire->set_thread_id(span.thread_id);
  if (with_task) {
    wire->mutable_task()->set_job_id(span.task.job_id);
    wire->mutable_task()->set_epoch(span.task.epoch);
    wire->mutable_task()->set_batch_index(span.task.batch_index);
  }
  wire->set_start_ns(span.start_ns);
  wire->set_end_ns(span.end_ns);
}

}  // namespace

absl::Status CheckBatchTrace(const pb::BatchTrace& trace, absl::string_view field) {
  RETURN_IF_ERROR(
      CheckCount(absl::StrCat(field, ".spans"), trace.spans().size(), kMaxSpansPerBatch));
  return CheckNamesAndSpans(field, trace.op_names(), trace.thread_names(), trace.spans());
}

absl::Status CheckTraceSpans(const pb::TraceSpans& trace, absl::string_view field) {
  RETURN_IF_ERROR(CheckCount(absl::StrCat(field, ".processes"), trace.processes().size(),
                             kMaxProcessesPerHeartbeat));
  int total = 0;
  for (const pb::TraceProcessSpans& process : trace.processes()) total += process.spans().size();
  RETURN_IF_ERROR(
      CheckCount(absl::StrCat(field, ".processes[*].spans"), total, kMaxSpansPerHeartbeat));
  for (int i = 0; i < trace.processes().size(); ++i) {
    const pb::TraceProcessSpans& process = trace.processes(i);
    const std::string process_field = absl::StrCat(field, ".processes[", i, "]");
    RETURN_IF_ERROR(CheckNamesAndSpans(process_field, process.op_names(), process.thread_names(),
                                       process.spans()));
    if (process.clock_error_bound_ns() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(process_field, ".clock_error_bound_ns: ", process.clock_error_bound_ns(),
                       " is negative"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStartTraceRequest(const pb::StartTraceRequest& request, uint32_t max_seconds) {
  if (request.seconds() < 1 || request.seconds() > max_seconds) {
    return absl::InvalidArgumentError(absl::StrCat("seconds: ", request.seconds(), ", not in [1, ",
                                                   max_seconds, "] (--max-trace-seconds)"));
  }
  return absl::OkStatus();
}

absl::Status CheckGetTraceRequest(const pb::GetTraceRequest& request) {
  if (request.max_spans() > kMaxSpansPerPage) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_spans: ", request.max_spans(), ", over the limit of ", kMaxSpansPerPage));
  }
  return absl::OkStatus();
}

pb::BatchTrace ToBatchTrace(absl::Span<const Span> spans, const std::vector<std::string>& names,
                            const absl::flat_hash_map<uint32_t, std::string>& threads) {
  pb::BatchTrace trace;
  absl::flat_hash_map<uint16_t, uint32_t> wire_name_ids;
  for (const Span& span : spans.subspan(0, std::min<size_t>(spans.size(), kMaxSpansPerBatch))) {
    Span copy = span;
    copy.name_id = 0;
    if (span.name_id != 0 && span.name_id < names.size()) {
      auto [it, added] = wire_name_ids.try_emplace(span.name_id, trace.op_names().size() + 1);
      if (added && trace.op_names().size() < kMaxNamesPerMessage) {
        trace.add_op_names(names[span.name_id].substr(0, kMaxNameBytes));
      } else if (added) {
        it->second = 0;
      }
      copy.name_id = static_cast<uint16_t>(it->second);
    }
    ToWire(copy, /*with_task=*/false, trace.add_spans());
    const auto thread = threads.find(span.thread_id);
    if (thread != threads.end() && trace.thread_names().size() < kMaxNamesPerMessage) {
      (*trace.mutable_thread_names())[span.thread_id] = thread->second.substr(0, kMaxNameBytes);
    }
  }
  return trace;
}

TraceProcess FromBatchTrace(const pb::BatchTrace& trace, const TaskKey& task, int64_t shift_ns) {
  TraceProcess process;
  process.op_names.emplace_back();
  process.op_names.insert(process.op_names.end(), trace.op_names().begin(), trace.op_names().end());
  process.thread_names.insert(trace.thread_names().begin(), trace.thread_names().end());
  for (const pb::TraceSpan& wire : trace.spans()) {
    const std::optional<Stage> stage = StageFromWire(wire.stage());
    if (!stage.has_value()) continue;
    Span span = FromWire(wire, *stage);
    span.task = task;
    span.start_ns += shift_ns;
    span.end_ns += shift_ns;
    process.spans.push_back(span);
  }
  return process;
}

pb::TraceProcessSpans ToProcessSpans(const TraceProcess& process) {
  pb::TraceProcessSpans message;
  message.set_process(process.name);
  for (size_t i = 1; i < process.op_names.size(); ++i) message.add_op_names(process.op_names[i]);
  message.mutable_thread_names()->insert(process.thread_names.begin(), process.thread_names.end());
  for (const Span& span : process.spans) ToWire(span, /*with_task=*/true, message.add_spans());
  message.set_clock_error_bound_ns(process.clock_error_bound_ns);
  return message;
}

TraceProcess FromProcessSpans(const pb::TraceProcessSpans& message) {
  TraceProcess process;
  process.name = message.process();
  process.op_names.emplace_back();
  process.op_names.insert(process.op_names.end(), message.op_names().begin(),
                          message.op_names().end());
  process.thread_names.insert(message.thread_names().begin(), message.thread_names().end());
  for (const pb::TraceSpan& wire : message.spans()) {
    const std::optional<Stage> stage = StageFromWire(wire.stage());
    if (stage.has_value()) process.spans.push_back(FromWire(wire, *stage));
  }
  process.clock_error_bound_ns = message.clock_error_bound_ns();
  return process;
}

}  // namespace stoker::trace
