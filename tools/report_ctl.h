#ifndef STOKER_TOOLS_REPORT_CTL_H_
#define STOKER_TOOLS_REPORT_CTL_H_

// `stoker-ctl report --coordinator=HOST:PORT --job=J [--seconds=10] [--link-gbps=G] [--json]
// [--html=FILE]`: traces job J for S seconds (coordinator/coordinator_trace_client.h's
// CollectTrace), reads the coordinator's status, and prints per rank the footprint and the
// verdict (workers, storage, network, trainer or none) with its recommendation
// (tools/report_assembly.h): as text, as JSON
// (`{"ranks":[{"rank":0,"verdict":"workers",...}]}`), and with --html also as a self-contained
// page (tools/report_html.h). --link-gbps is the trainers' link capacity; without it the link
// utilization is unknown and only the spans can name the network.
//
// Exit codes: 0 reported; 2 (kExitBadFlags) for a bad flag; 1 when the coordinator cannot be
// reached, the job is unknown or nothing can be reported.

namespace stoker {

// argv[0] is the program, argv[1] "report". Prints to stdout/stderr; returns the exit code.
int RunReportCommand(int argc, char** argv);

}  // namespace stoker

#endif  // STOKER_TOOLS_REPORT_CTL_H_
