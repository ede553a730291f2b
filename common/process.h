#ifndef STOKER_COMMON_PROCESS_H_
#define STOKER_COMMON_PROCESS_H_

// Small pieces every server main.cc needs: orderly shutdown on SIGINT/SIGTERM and a port file
// for scripts that started the server on port 0.

#include <string>

#include "absl/status/status.h"

namespace stoker {

// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts later. Call first
// thing in main, before any thread exists.
void BlockTerminationSignals();

// Waits until SIGINT or SIGTERM arrives; returns its number. REQUIRES: BlockTerminationSignals().
int WaitForTerminationSignal();

// Writes `port` and a newline to `path` atomically (common/atomic_file.h), so a reader never
// sees a partial file. Errors as ReplaceFile's, naming the path.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace stoker

#endif  // STOKER_COMMON_PROCESS_H_
