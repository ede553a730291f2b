#ifndef STOKER_TOOLS_TRACE_CTL_H_
#define STOKER_TOOLS_TRACE_CTL_H_

// `stoker-ctl trace`: collects a job's batch timeline (coordinator/coordinator_trace_client.h) and
// writes it as Chrome Trace Event JSON (trace/chrome_trace.h), which Perfetto UI and
// chrome://tracing open.
//
//   stoker-ctl trace --coordinator=HOST:PORT --job=ID|NAME --seconds=S -o trace.json
//                    [--sample-one-in=N] [TLS flags: an operator's certificate]

namespace stoker {

// argv[1] is "trace". Returns the process's exit code: 0 written, 1 the collection failed,
// 2 bad flags.
int RunTraceCommand(int argc, char** argv);

}  // namespace stoker

#endif  // STOKER_TOOLS_TRACE_CTL_H_
