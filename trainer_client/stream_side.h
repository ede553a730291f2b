#ifndef STOKER_TRAINER_CLIENT_STREAM_SIDE_H_
#define STOKER_TRAINER_CLIENT_STREAM_SIDE_H_

// The Loader's stream side: one WorkerStream per worker the coordinator lists (filtered by
// LoaderOptions::only_workers), reopened with backoff per address when it ends early; the
// credit CreditPolicy says each is owed (its balance, the stall's extra credit, the hedging
// limit); each stream's auto compression; a stream whose payload does not decode is ended
// (cancelled by TakeEnded's caller, never from gRPC's callback) and its batches dropped
// unacknowledged, so that its worker hands them back.
//
// The receive path runs on a stream's gRPC callback thread, outside the Loader's mutex: it
// decodes the batch into the pooled buffers, records the batch timelines' arrival spans, and
// hands the result to `on_batch`, which takes the Loader's mutex and calls OnBatch, then
// OnAccepted or OnDuplicate. That path reads only what the constructor set.
//
// Thread-compatible otherwise: the Loader calls it under its mutex. Lock order: the Loader's
// mutex → a stream's own lock → the message pool's; streams never call back holding theirs.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "stoker/v1/coordinator.pb.h"
#include "trace/client_trace.h"
#include "trainer_client/batch.h"
#include "trainer_client/credit_policy.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_options.h"
#include "trainer_client/worker_stream.h"
#include "wire/compression_auto.h"
#include "wire/message_pool.h"
#include "wire/payload_decode.h"

namespace stoker {

// A batch as a stream's receive path hands it to the Loader.
struct StreamDelivery {
  StreamId stream = 0;
  // DATA_LOSS naming the worker when the payload did not decode or its header lies.
  absl::StatusOr<DecodedBatch> decoded;
  absl::Time received_at;  // when its receive path started
  bool sampled = false;    // a sampled batch of the batch timelines (trace/client_trace.h)
};

class StreamSide {
 public:
  struct Callbacks {
    std::function<void(StreamDelivery)> on_batch;
    std::function<void(StreamId, const absl::Status&)> on_done;  // WorkerStreamHooks::on_done
  };
  // `clock`, `factory` and `trace` outlive it.
  StreamSide(const LoaderOptions& options, const v1::OpenJobResponse& job, Clock* clock,
             WorkerStreamFactory* factory, ClientTrace* trace, Callbacks callbacks);

  // The coordinator's worker list: sizes the pools for every stream that stays open or opens,
  // rebalances the credit shares and, with `open_new`, opens a stream to each listed worker
  // that has none once its backoff has passed.
  void Reconcile(const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers, bool open_new);
  // Sends the credit the policy says is owed; records the byte budget's high-water mark.
  void GrantCredits(const ConsumerView& consumer);

  // The receive path under the Loader's mutex. A batch that did not decode ends its stream.
  // OnBatch: false when the stream is ending (drop the batch unacknowledged), else notes the
  // arrival for the credit policy and the stream's auto compression. Then the consumer side
  // decides: an accepted batch is acknowledged and counted for its worker, so is a duplicate.
  void Fail(StreamId id, const absl::Status& status);
  bool OnBatch(StreamId id, const DecodedBatch& decoded);
  void OnAccepted(StreamId id, const Batch& batch, uint64_t wire_bytes);
  void OnDuplicate(StreamId id, const v1::TaskId& task);
  // The consumer took a batch that came on stream `id`: its credit is free again.
  void OnHandedOut(StreamId id) { policy_.OnHandedOut(id); }

  // Stream `id` ended. Unless the Loader is `stopping` or had `all_received`, its address is
  // retried after a backoff (and the end counted as a failure).
  void OnDone(StreamId id, const absl::Status& status, bool stopping, bool all_received);

  // Hedging: the stall is older than the overdue limit (credit_policy.h) at `now`.
  bool Overdue(absl::Time now) const;

  // Ended streams, to join, and streams ended for a corrupt payload, to cancel: both outside
  // the Loader's mutex (Cancel may run on_done inline). Only the heartbeat thread (and Stop,
  // once it has joined that thread) takes them, so the failing pointers stay valid meanwhile.
  struct Ended {
    std::vector<std::unique_ptr<WorkerStream>> ended;
    std::vector<WorkerStream*> failing;
    void CancelAndJoin();
  };
  Ended TakeEnded();
  // For Stop: the streams not ended yet (valid until TakeEnded), and whether none is left.
  std::vector<WorkerStream*> OpenStreams() const;
  bool all_done() const;

  // Streams opened and failed, corrupt payloads, decode seconds, per-worker receive stats with
  // their current shares, and the credit budget's marks.
  void AddStats(LoaderStats* stats) const;

 private:
  struct Stream {
    std::string address;
    std::unique_ptr<WorkerStream> stream;  // set right after the factory returns
    bool done = false;
    // With compression "auto": this stream's probing and decision (compression_auto.h).
    std::unique_ptr<AutoCompression> auto_compression;
    absl::Status failure;  // why the Loader ends it (a payload that did not decode)
  };
  struct Address {
    StreamId open_stream = 0;  // 0: none
    int failures = 0;
    absl::Time next_attempt = absl::InfinitePast();
  };

  void Open(const std::string& address);
  // On a stream's callback thread: decodes `received` and hands it to on_batch.
  void Receive(StreamId id, const std::string& address, Batch received) const;
  Stream* Find(StreamId id);

  const LoaderOptions& options_;
  const v1::OpenJobResponse& job_;
  Clock* const clock_;
  WorkerStreamFactory* const factory_;
  ClientTrace* const trace_;
  const Callbacks callbacks_;
  const std::shared_ptr<MessagePool> pool_;  // received batches' headers
  // Buffers of a batch's size: received pieces gathered (BatchPayload::contiguous()) and
  // compressed payloads decoded.
  const std::shared_ptr<BufferPool> gather_buffers_;
  // What OpenStream.compression asks for (unset for none and auto).
  std::optional<v1::CompressionChoice> open_compression_;

  CreditPolicy policy_;
  std::map<StreamId, Stream> streams_;
  absl::flat_hash_map<std::string, Address> addresses_;
  StreamId next_stream_id_ = 1;
  absl::BitGen jitter_;
  bool warned_no_workers_ = false;
  std::map<uint64_t, WorkerReceiveStats> workers_;  // by worker id
  LoaderStats stats_;                               // the stream side's fields only
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_STREAM_SIDE_H_
