#include "worker/stream_write_order.h"

namespace stoker {

bool StreamWriteOrder::End(const absl::Status& status) {
  MarkEnding(status);
  return FinishIfIdle();
}

bool StreamWriteOrder::ReadsDone() {
  reads_done_ = true;
  return !write_outstanding_ && End(absl::OkStatus());
}

StreamWriteOrder::Next StreamWriteOrder::WriteDone(bool ok) {
  write_outstanding_ = false;
  if (!ok) {
    MarkEnding(absl::UnavailableError("client stream broke"));
  } else if (reads_done_) {
    MarkEnding(absl::OkStatus());
  }
  if (FinishIfIdle()) return Next::kFinish;
  return ending_ ? Next::kNothing : Next::kWrite;
}

void StreamWriteOrder::MarkEnding(const absl::Status& status) {
  if (ending_) return;
  ending_ = true;
  status_ = status;
}

bool StreamWriteOrder::FinishIfIdle() {
  if (!ending_ || write_outstanding_ || finished_) return false;
  finished_ = true;
  return true;
}

}  // namespace stoker
