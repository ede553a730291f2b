#include "trainer_client/testing/fake_env.h"

#include <string>
#include <utility>

#include "trace/span_recorder.h"

namespace stoker::testing {
namespace {

constexpr absl::Duration kAwaitLimit = absl::Seconds(10);

// The loader's handle; the test keeps the FakeStream.
class FakeStreamHandle : public WorkerStream {
 public:
  explicit FakeStreamHandle(std::shared_ptr<FakeStream> stream) : stream_(std::move(stream)) {}
  void GrantCredit(uint32_t n) override { stream_->GrantCredit(n); }
  void Ack(const v1::TaskId& task) override { stream_->Ack(task); }
  void SetCompression(const v1::CompressionChoice& choice) override {
    stream_->SetCompression(choice);
  }
  void Close() override {
    stream_->Close();
    stream_->End(absl::OkStatus());
  }
  void Cancel() override { stream_->End(absl::CancelledError("cancelled")); }
  void Join() override {}

 private:
  std::shared_ptr<FakeStream> stream_;
};

}  // namespace

FakeCoordinator::FakeCoordinator() {
  v1::OpenJobResponse response;
  response.set_job_id(7);
  response.set_batches_per_epoch_per_rank(2);
  response.set_num_samples(8);
  response.set_batch_bytes(6);
  for (int64_t d : {2, 1, 1, 3}) response.add_batch_shape(d);
  open_job_result_ = response;
  heartbeat_response_.set_state(v1::JOB_STATE_RUNNING);
}

absl::StatusOr<v1::OpenJobResponse> FakeCoordinator::OpenJob(const v1::OpenJobRequest& request) {
  absl::MutexLock lock(&mu_);
  ++open_job_calls_;
  last_open_job_request_ = request;
  return open_job_result_;
}

absl::StatusOr<v1::ClientHeartbeatResponse> FakeCoordinator::ClientHeartbeat(
    const v1::ClientHeartbeatRequest& request) {
  absl::MutexLock lock(&mu_);
  ++heartbeats_;
  if (!heartbeat_error_.ok()) return heartbeat_error_;
  received_.insert(received_.end(), request.received().begin(), request.received().end());
  traced_.insert(traced_.end(), request.trace().processes().begin(),
                 request.trace().processes().end());
  last_stats_ = request.stats();
  v1::ClientHeartbeatResponse response = heartbeat_response_;
  if (request.client_clock_ns() != 0 && response.has_trace()) {
    response.set_received_clock_ns(trace::MonotonicNowNanos());
    response.set_sent_clock_ns(trace::MonotonicNowNanos());
  }
  return response;
}

void FakeCoordinator::set_trace(uint32_t one_in) {
  absl::MutexLock lock(&mu_);
  heartbeat_response_.mutable_trace()->set_sample_one_in(one_in);
  heartbeat_response_.mutable_trace()->set_remaining_ms(60000);
}

v1::ClientStats FakeCoordinator::last_stats() const {
  absl::MutexLock lock(&mu_);
  return last_stats_;
}

std::vector<v1::TraceProcessSpans> FakeCoordinator::traced() const {
  absl::MutexLock lock(&mu_);
  return traced_;
}

void FakeCoordinator::set_open_job_result(absl::StatusOr<v1::OpenJobResponse> result) {
  absl::MutexLock lock(&mu_);
  open_job_result_ = std::move(result);
}

void FakeCoordinator::set_heartbeat_error(absl::Status status) {
  absl::MutexLock lock(&mu_);
  heartbeat_error_ = std::move(status);
}

void FakeCoordinator::set_state(v1::JobState state) {
  absl::MutexLock lock(&mu_);
  heartbeat_response_.set_state(state);
}

void FakeCoordinator::AddWorker(uint64_t id, const std::string& address) {
  absl::MutexLock lock(&mu_);
  v1::WorkerInfo* worker = heartbeat_response_.add_workers();
  worker->set_worker_id(id);
  worker->set_address(address);
  worker->set_cores(1);
}

int FakeCoordinator::open_job_calls() const {
  absl::MutexLock lock(&mu_);
  return open_job_calls_;
}

bool FakeCoordinator::AwaitOpenJobCalls(int n) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return open_job_calls_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit);
}

v1::OpenJobRequest FakeCoordinator::last_open_job_request() const {
  absl::MutexLock lock(&mu_);
  return last_open_job_request_;
}

std::vector<v1::TaskId> FakeCoordinator::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

bool FakeCoordinator::AwaitReceived(size_t n) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return received_.size() >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit);
}

bool FakeCoordinator::AwaitHeartbeats(int n) { return AwaitHeartbeatCount(heartbeats() + n); }

int FakeCoordinator::heartbeats() const {
  absl::MutexLock lock(&mu_);
  return heartbeats_;
}

bool FakeCoordinator::AwaitHeartbeatCount(int total) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return heartbeats_ >= total; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit);
}

void FakeStream::Deliver(std::shared_ptr<v1::BatchMessage> message) {
  absl::MutexLock deliver(&deliver_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
  }
  hooks_.on_batch(Batch(std::move(message)));
}

void FakeStream::End(const absl::Status& status) {
  absl::MutexLock deliver(&deliver_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    ended_ = true;
  }
  hooks_.on_done(status);
}

uint64_t FakeStream::credits() const {
  absl::MutexLock lock(&mu_);
  return credits_;
}

std::vector<v1::TaskId> FakeStream::acks() const {
  absl::MutexLock lock(&mu_);
  return acks_;
}

bool FakeStream::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

bool FakeStream::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

bool FakeStream::AwaitCredits(uint64_t n) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return credits_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit);
}

bool FakeStream::AwaitAcks(size_t n) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return acks_.size() >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit);
}

void FakeStream::GrantCredit(uint32_t n) {
  absl::MutexLock lock(&mu_);
  if (!closed_ && !ended_) credits_ += n;
}

void FakeStream::Ack(const v1::TaskId& task) {
  absl::MutexLock lock(&mu_);
  if (!closed_ && !ended_) acks_.push_back(task);
}

void FakeStream::SetCompression(const v1::CompressionChoice& choice) {
  absl::MutexLock lock(&mu_);
  if (!closed_ && !ended_) compression_requests_.push_back(choice);
}

std::vector<v1::CompressionChoice> FakeStream::compression_requests() const {
  absl::MutexLock lock(&mu_);
  return compression_requests_;
}

void FakeStream::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

std::unique_ptr<WorkerStream> FakeWorkerStreamFactory::Open(const std::string& address,
                                                            const v1::OpenStream& open,
                                                            WorkerStreamHooks hooks) {
  auto stream = std::make_shared<FakeStream>(address, open, std::move(hooks));
  absl::MutexLock lock(&mu_);
  streams_.push_back(stream);
  return std::make_unique<FakeStreamHandle>(stream);
}

size_t FakeWorkerStreamFactory::stream_count() const {
  absl::MutexLock lock(&mu_);
  return streams_.size();
}

std::shared_ptr<FakeStream> FakeWorkerStreamFactory::AwaitStream(size_t index) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return streams_.size() > index; };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), kAwaitLimit)) return nullptr;
  return streams_[index];
}

}  // namespace stoker::testing
