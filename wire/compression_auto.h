#ifndef STOKER_WIRE_COMPRESSION_AUTO_H_
#define STOKER_WIRE_COMPRESSION_AUTO_H_

// The client's `auto` compression (docs/decisions/0030-stream-compression-auto-and-metrics.md): per
// stream, pick the payload codec that delivers the most batches per second from figures measured on
// the stream's first batches.
//
// Model. For a codec c, with S the raw bytes of a batch, r_c its wire bytes per raw byte (1 for
// raw), P the worker's production seconds per batch and T its producer threads, K_c the worker's
// CPU seconds to compress a batch, D_c the client's CPU seconds to decompress one (0 for raw), and
// L the link's bytes per second:
//
//   rate(c) = min( L / (S * r_c),       the link
//                  T / (P + K_c),       the worker's threads (compression runs on them)
//                  1 / D_c,             the client (a stream decodes on one thread at a time)
//                  R_c )                what the stream delivered while using c, once measured
//
// R_c (1 / the mean gap between arrivals of c's batches) keeps the model honest where its terms
// are not independent: on a machine whose cores the producers, gRPC's send path and the codec
// share, a slow send path looks like a slow link, and compressing then delivers less, not more;
// measuring the outcome catches that.
//
// L is measured only from batches the worker sent back to back (header.sent_back_to_back): the
// gap between their arrivals is their time on the link; L is the highest such rate of any codec
// (the link carried at least that). With no such batch the link has not been
// the bottleneck, L is taken as unlimited, and the choice is raw (compression can only cost).
// The choice switches only when the best codec's rate beats the current one's by kSwitchMargin,
// so measurement noise does not make it flap; ties go to the codec that costs less CPU.
//
// Probing. The stream starts raw; after kProbeBatches raw batches the client asks for each codec
// the worker offers in turn (ClientMessage.set_compression), kProbeBatches batches each, then
// picks. Figures keep updating (moving averages) with every batch, and the choice is re-decided
// each time, but codecs not in use are not re-probed.
//
// Thread-compatible: the Loader calls it under its lock.

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "stoker/v1/worker.pb.h"
#include "wire/payload_decode.h"

namespace stoker {

// What one codec costs and saves, per batch. Thread-compatible value.
struct CodecCost {
  double wire_ratio = 1;          // wire bytes / raw bytes
  double compress_seconds = 0;    // worker CPU per batch
  double decompress_seconds = 0;  // client CPU per batch
};

// A stream's measured figures. Thread-compatible value.
struct StreamFigures {
  double raw_bytes = 0;        // per batch
  double produce_seconds = 0;  // worker seconds per batch, one thread
  uint32_t producer_threads = 1;
  std::optional<double> link_bytes_per_second;  // nullopt: never link-bound so far
  // The costs measured so far, by codec (COMPRESSION_NONE has ratio 1 and no costs).
  std::map<v1::Compression, CodecCost> codecs;
  // Batches per second the stream delivered while using each codec (COMPRESSION_NONE included).
  std::map<v1::Compression, double> delivered_per_second;
};

// A codec's switch must promise this much more throughput (0.1 = 10%).
inline constexpr double kSwitchMargin = 0.1;
// Batches measured per codec while probing.
inline constexpr int kProbeBatches = 4;

// Batches per second `codec` would deliver by the model; +infinity when nothing bounds it.
// REQUIRES: figures.codecs has `codec` (COMPRESSION_NONE may be absent).
double EstimatedBatchesPerSecond(const StreamFigures& figures, v1::Compression codec);

// The codec to use, given the one in use: the fastest by the model among COMPRESSION_NONE and
// figures.codecs, keeping `current` unless another beats it by kSwitchMargin; among equal rates
// the one with the least CPU (compress + decompress). Pure.
v1::Compression DecideCompression(const StreamFigures& figures, v1::Compression current);

// One received batch, as auto compression sees it. Thread-compatible value.
struct BatchObservation {
  v1::Compression codec = v1::COMPRESSION_NONE;
  uint64_t raw_bytes = 0;
  uint64_t wire_bytes = 0;
  double produce_seconds = 0;
  double compress_seconds = 0;
  double decompress_seconds = 0;  // this client's CPU seconds decoding it
  uint32_t producer_threads = 1;
  bool sent_back_to_back = false;
  absl::Time arrival;
  std::vector<v1::Compression> offered;

  // What `decoded` (its header and the decoding's figures) shows, arrived at `arrival`.
  static BatchObservation Of(const DecodedBatch& decoded, absl::Time arrival);
};

// Per-stream probing and decision state. Thread-compatible.
class AutoCompression {
 public:
  // `zstd_level`: the level asked for when trying zstd.
  explicit AutoCompression(int zstd_level = 1) : zstd_level_(zstd_level) {}

  // Records `batch`; returns the choice to send to the worker when it wants another codec.
  std::optional<v1::CompressionChoice> OnBatch(const BatchObservation& batch);

  const StreamFigures& figures() const { return figures_; }
  // The codec last asked for (COMPRESSION_NONE at first).
  v1::Compression requested() const { return requested_; }
  // True once every offered codec was probed and a decision made.
  bool decided() const { return decided_; }

 private:
  void Record(const BatchObservation& batch);
  std::optional<v1::CompressionChoice> Ask(v1::Compression codec);

  const int zstd_level_;
  StreamFigures figures_;
  std::map<v1::Compression, int> seen_;  // batches measured per codec
  std::optional<absl::Time> last_arrival_;
  std::map<v1::Compression, double> mean_gap_seconds_;  // between arrivals, by codec
  std::map<v1::Compression, double> link_by_codec_;     // wire bytes/s back to back, by codec
  v1::Compression requested_ = v1::COMPRESSION_NONE;
  int waited_ = 0;    // batches since the last request
  int measured_ = 0;  // of which in the codec requested
  std::vector<v1::Compression> to_probe_;
  bool probing_started_ = false;
  bool decided_ = false;
};

}  // namespace stoker

#endif  // STOKER_WIRE_COMPRESSION_AUTO_H_
