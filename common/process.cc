#include "common/process.h"

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace stoker {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSignals();
  int signal = 0;
  while (sigwait(&set, &signal) != 0) {
  }
  return signal;
}

absl::Status WritePortFile(const std::string& path, int port) {
  // A restarted server writes its port again: no need to survive a crash.
  return ReplaceFile(path, absl::StrCat(port, "\n"), Durability::kAtomic);
}

}  // namespace stoker
