#ifndef STOKER_TRACE_SPAN_FOR_TEST_H_
#define STOKER_TRACE_SPAN_FOR_TEST_H_

// For tests: a span of batch `batch` of job 7 (attempt 0), thread 1.

#include <cstdint>

#include "trace/span.h"

namespace stoker::trace {

inline Span BatchSpan(Stage stage, uint64_t batch, int64_t start_ns, int64_t end_ns,
                      uint16_t name_id = 0) {
  Span span;
  span.stage = stage;
  span.thread_id = 1;
  span.task = TaskKey{7, 0, batch};
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  span.name_id = name_id;
  return span;
}

}  // namespace stoker::trace

#endif  // STOKER_TRACE_SPAN_FOR_TEST_H_
