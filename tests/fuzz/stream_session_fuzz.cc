// Fuzz target (stateful): one worker stream as its logic sees it (worker/stream_session.h), driven
// by a sequence of ClientMessages (proto/stoker/v1/worker.proto: open, credit, ack,
// set_compression) interleaved with the worker's own events (a lease, a batch produced, a write
// finished, time passing, the stream ended). No gRPC: the target plays the reactor
// (worker/stream_batches_server_reactor.cc: the first message must be open, set_compression errors
// end the stream), the lease loop (leases at most what WantedTasks asks) and the producers.
//
// Input: up to 256 steps framed by SplitChunks (fuzz_input.h); a step's first byte picks the
// event (fuzz_specs.h, StreamEvent), the rest is its argument.
// Invariants checked after every step, while the stream is open:
//   - no more tasks leased than the client granted credit (the credit protocol:
//     docs/architecture.md, Protocol);
//   - queued_bytes() is what the sink holds and sent_bytes() what it wrote;
//   - the compression in effect is valid and raw or offered; a refused set_compression is
//     INVALID_ARGUMENT naming set_compression;
//   - every batch written decodes (its codec, its declared size) to the tensor produced;
//   - memory bounded: the batches the worker holds for the stream (produced, not yet written)
//     stay within the stream's share of the worker's memory (kStreamShareBytes), however much
//     credit the client asked for (docs/security.md, issue 28 item 3).
//   - an ack is accepted only for batches written and not yet acknowledged; a refused one is
//     INVALID_ARGUMENT naming ack.tasks and ends the stream (issue 28 item 2).

#include <deque>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "common/payload_codec.h"
#include "stoker/v1/worker.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_specs.h"
#include "worker/stream_session.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr size_t kMaxSteps = 256;
constexpr size_t kMaxBatchBytes = 64 << 10;
// The stream's share of the worker's memory for its batches in this harness.
constexpr uint64_t kStreamShareBytes = 4 << 20;
// The share in batches, as the Worker passes it to WantedTasks: a compressed batch counts twice
// (its encoded copy waits beside the raw tensor until written).
constexpr uint64_t kMaxHeldBatches = kStreamShareBytes / (2 * kMaxBatchBytes);
constexpr absl::Duration kMaxPoll = absl::Milliseconds(200);

// Holds what the session queues, as the reactor's send queue does. Thread-compatible.
class QueueSink : public BatchSink {
 public:
  void Send(OutgoingBatch batch) override {
    pending_bytes += batch.wire_bytes();
    queue.push_back(std::move(batch));
  }
  void Fail(const absl::Status& status) override {
    FUZZ_CHECK(!status.ok());
    if (failure.ok()) failure = status;
  }
  std::deque<OutgoingBatch> queue;
  uint64_t pending_bytes = 0;
  absl::Status failure;
};

class Harness {
 public:
  Harness() : pool_(8), buffers_(8) {}
  ~Harness() {
    if (session_ != nullptr) session_->Detach();
  }

  // False once the stream is over (nothing more to check).
  bool Step(uint8_t event, absl::string_view argument) {
    const uint8_t arg = argument.empty() ? 0 : static_cast<uint8_t>(argument[0]);
    switch (event % fuzz::kStreamEvents) {
      case fuzz::kClientMessage:
        return ClientMessage(argument);
      case fuzz::kLease:
        Lease(arg);
        break;
      case fuzz::kProduce:
        Produce(argument);
        break;
      case fuzz::kWrite:
        Write();
        break;
      case fuzz::kTime:
        now_ += absl::Milliseconds(arg);
        break;
      case fuzz::kEnd:
        if (session_ != nullptr) session_->End(absl::CancelledError("client went away"));
        return false;
    }
    return sink_.failure.ok();
  }

  void CheckInvariants() const {
    if (session_ == nullptr) return;
    FUZZ_CHECK(leased_ <= credit_granted_);
    FUZZ_CHECK(session_->queued_bytes() == sink_.pending_bytes);
    FUZZ_CHECK(session_->sent_bytes() == written_bytes_);
    const pb::CompressionChoice choice = session_->compression();
    FUZZ_CHECK(ValidateCompressionChoice(choice, "compression").ok());
    FUZZ_CHECK(IsRaw(choice.codec()) || choice.codec() == pb::COMPRESSION_LZ4 ||
               choice.codec() == pb::COMPRESSION_ZSTD);
    FUZZ_CHECK(sink_.pending_bytes <= kStreamShareBytes);
  }

 private:
  bool ClientMessage(absl::string_view bytes) {
    pb::ClientMessage message;
    if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
    if (session_ == nullptr) return message.has_open() && Open(message.open());
    if (message.has_credit()) {
      credit_granted_ += message.credit().n();
      session_->AddCredit(message.credit().n());
    } else if (message.has_ack()) {
      google::protobuf::RepeatedPtrField<pb::TaskId> accepted;
      const absl::Status acked = session_->Acknowledge(message.ack(), &accepted);
      FUZZ_CHECK(accepted.size() <= message.ack().tasks_size());
      for (const pb::TaskId& task : accepted) {
        FUZZ_CHECK(task.job_id() == kJob && task.batch_index() < next_task_);
      }
      if (!acked.ok()) {
        FUZZ_CHECK(acked.code() == absl::StatusCode::kInvalidArgument);
        FUZZ_CHECK(absl::StartsWith(acked.message(), "ack.tasks"));
        return false;
      }
    } else if (message.has_set_compression()) {
      const absl::Status set = session_->SetCompression(message.set_compression());
      if (!set.ok()) {
        FUZZ_CHECK(set.code() == absl::StatusCode::kInvalidArgument);
        FUZZ_CHECK(absl::StartsWith(set.message(), "set_compression."));
        return false;
      }
    }
    return true;
  }

  bool Open(const pb::OpenStream& open) {
    if (!ValidateCompressionChoice(open.compression(), "open.compression").ok()) return false;
    SessionEncoding encoding;
    encoding.offered = {pb::COMPRESSION_LZ4, pb::COMPRESSION_ZSTD};
    encoding.requested = open.compression();
    encoding.producer_threads = 2;
    encoding.buffers = &buffers_;
    session_ = std::make_unique<StreamSession>(
        nullptr, open.rank(), open.client_id(), &sink_, &pool_, [] {}, std::move(encoding));
    return true;
  }

  void Lease(uint8_t most) {
    if (session_ == nullptr) return;
    absl::Time next_poll = absl::InfiniteFuture();
    const uint32_t wanted = session_->WantedTasks(now_, &next_poll, kMaxHeldBatches);
    const uint32_t granted = std::min<uint32_t>(wanted, most);
    session_->OnLeased(granted, now_, kMaxPoll);
    leased_ += granted;
    for (uint32_t i = 0; i < granted; ++i) in_production_.push_back(next_task_++);
  }

  // Argument: [failed?][size: 2 bytes][fill]: a batch of `size` bytes, compressible or not.
  void Produce(absl::string_view argument) {
    if (session_ == nullptr || in_production_.empty()) return;
    std::unique_ptr<pb::BatchMessage> batch = pool_.Get();
    batch->Clear();
    pb::TaskId* task = batch->mutable_header()->mutable_task();
    task->set_job_id(kJob);
    task->set_batch_index(in_production_.front());
    in_production_.pop_front();
    const auto byte = [&argument](size_t i) {
      return i < argument.size() ? static_cast<uint8_t>(argument[i]) : uint8_t{0};
    };
    const size_t size = (byte(1) | size_t{byte(2)} << 8) % kMaxBatchBytes;
    std::string* data = batch->mutable_data();
    data->resize(size);
    for (size_t i = 0; i < size; ++i) {
      (*data)[i] = static_cast<char>((byte(3) & 1) != 0 ? (i * 2654435761u) >> 13 : byte(3));
    }
    batch->mutable_header()->add_shape(static_cast<int64_t>(size));
    const absl::Status status = (byte(0) & 0x0f) == 0x0f
                                    ? absl::DataLossError("fuzz: production failed")
                                    : absl::OkStatus();
    session_->OnProduced(status, std::move(batch));
  }

  void Write() {
    if (sink_.queue.empty()) return;
    OutgoingBatch batch = std::move(sink_.queue.front());
    sink_.queue.pop_front();
    sink_.pending_bytes -= batch.wire_bytes();
    CheckDecodes(batch);
    written_bytes_ += batch.wire_bytes();
    session_->OnSent(batch.wire_bytes());
    pool_.Put(std::move(batch.message));
  }

  static void CheckDecodes(const OutgoingBatch& batch) {
    const pb::BatchHeader& header = batch.message->header();
    if (batch.encoded == nullptr) {
      FUZZ_CHECK(IsRaw(header.compression()));
      return;
    }
    FUZZ_CHECK(header.uncompressed_bytes() == batch.message->data().size());
    std::string decoded(header.uncompressed_bytes(), '\0');
    FUZZ_CHECK(DecompressPayload(
                   header.compression(),
                   absl::MakeConstSpan(batch.encoded->data(), batch.encoded->size()),
                   absl::MakeSpan(reinterpret_cast<uint8_t*>(decoded.data()), decoded.size()))
                   .ok());
    FUZZ_CHECK(decoded == batch.message->data());
  }

  static constexpr uint64_t kJob = 11;

  QueueSink sink_;
  MessagePool pool_;
  PayloadBufferPool buffers_;
  std::unique_ptr<StreamSession> session_;
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  uint64_t credit_granted_ = 0;
  uint64_t leased_ = 0;
  uint64_t next_task_ = 0;
  uint64_t written_bytes_ = 0;
  std::deque<uint64_t> in_production_;
};

}  // namespace
}  // namespace stoker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  stoker::Harness harness;
  for (absl::string_view step : stoker::fuzz::SplitChunks(
           absl::string_view(reinterpret_cast<const char*>(data), size), stoker::kMaxSteps)) {
    if (step.empty()) continue;
    const bool open = harness.Step(static_cast<uint8_t>(step[0]), step.substr(1));
    harness.CheckInvariants();
    if (!open) break;
  }
  return 0;
}
