#include "wire/compression_auto.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stoker {
namespace {

// Weight of a new sample in the moving averages.
constexpr double kNewWeight = 0.25;
// A probe gives up on a codec the worker has not switched to after this many batches.
constexpr int kProbePatience = 8 * kProbeBatches;

void Blend(double sample, bool first, double* average) {
  *average = first ? sample : (1 - kNewWeight) * *average + kNewWeight * sample;
}

CodecCost CostOf(const StreamFigures& figures, v1::Compression codec) {
  if (codec == v1::COMPRESSION_NONE) return CodecCost{};
  return figures.codecs.at(codec);
}

}  // namespace

BatchObservation BatchObservation::Of(const DecodedBatch& decoded, absl::Time arrival) {
  const v1::BatchHeader& header = decoded.batch.header->header();
  BatchObservation seen;
  seen.codec = decoded.codec;
  seen.raw_bytes = decoded.raw_bytes;
  seen.wire_bytes = decoded.wire_bytes;
  seen.produce_seconds = header.produce_seconds();
  seen.compress_seconds = header.compress_seconds();
  seen.decompress_seconds = decoded.decode_seconds;
  seen.producer_threads = header.producer_threads();
  seen.sent_back_to_back = header.sent_back_to_back();
  seen.arrival = arrival;
  for (int codec : header.offered_compression()) {
    seen.offered.push_back(static_cast<v1::Compression>(codec));
  }
  return seen;
}

double EstimatedBatchesPerSecond(const StreamFigures& figures, v1::Compression codec) {
  const CodecCost cost = CostOf(figures, codec);
  double rate = std::numeric_limits<double>::infinity();
  if (figures.link_bytes_per_second.has_value() && figures.raw_bytes > 0) {
    rate = std::min(rate, *figures.link_bytes_per_second / (figures.raw_bytes * cost.wire_ratio));
  }
  const double worker_seconds = figures.produce_seconds + cost.compress_seconds;
  if (worker_seconds > 0) {
    rate = std::min(rate, std::max<uint32_t>(figures.producer_threads, 1) / worker_seconds);
  }
  if (cost.decompress_seconds > 0) rate = std::min(rate, 1 / cost.decompress_seconds);
  if (auto it = figures.delivered_per_second.find(codec);
      it != figures.delivered_per_second.end()) {
    rate = std::min(rate, it->second);
  }
  return rate;
}

v1::Compression DecideCompression(const StreamFigures& figures, v1::Compression current) {
  std::vector<v1::Compression> candidates = {v1::COMPRESSION_NONE};
  for (const auto& [codec, cost] : figures.codecs) {
    if (codec != v1::COMPRESSION_NONE) candidates.push_back(codec);
  }
  auto cpu = [&](v1::Compression codec) {
    const CodecCost cost = CostOf(figures, codec);
    return cost.compress_seconds + cost.decompress_seconds;
  };
  v1::Compression best = v1::COMPRESSION_NONE;
  double best_rate = EstimatedBatchesPerSecond(figures, best);
  for (v1::Compression codec : candidates) {
    const double rate = EstimatedBatchesPerSecond(figures, codec);
    if (rate > best_rate || (rate == best_rate && cpu(codec) < cpu(best))) {
      best = codec;
      best_rate = rate;
    }
  }
  if (best == current ||
      std::find(candidates.begin(), candidates.end(), current) == candidates.end()) {
    return best;
  }
  const double current_rate = EstimatedBatchesPerSecond(figures, current);
  return best_rate > current_rate * (1 + kSwitchMargin) ? best : current;
}

void AutoCompression::Record(const BatchObservation& batch) {
  const bool first = seen_.empty();
  Blend(static_cast<double>(batch.raw_bytes), first, &figures_.raw_bytes);
  Blend(batch.produce_seconds, first, &figures_.produce_seconds);
  figures_.producer_threads = std::max<uint32_t>(batch.producer_threads, 1);
  if (batch.codec != v1::COMPRESSION_NONE && batch.raw_bytes > 0) {
    const bool first_of_codec = figures_.codecs.count(batch.codec) == 0;
    CodecCost& cost = figures_.codecs[batch.codec];
    Blend(static_cast<double>(batch.wire_bytes) / batch.raw_bytes, first_of_codec,
          &cost.wire_ratio);
    Blend(batch.compress_seconds, first_of_codec, &cost.compress_seconds);
    Blend(batch.decompress_seconds, first_of_codec, &cost.decompress_seconds);
  }
  if (last_arrival_.has_value() && batch.arrival > *last_arrival_) {
    const double gap = absl::ToDoubleSeconds(batch.arrival - *last_arrival_);
    const bool first_gap = mean_gap_seconds_.count(batch.codec) == 0;
    double& mean_gap = mean_gap_seconds_[batch.codec];
    Blend(gap, first_gap, &mean_gap);
    figures_.delivered_per_second[batch.codec] = 1 / mean_gap;
  }
  if (batch.sent_back_to_back && last_arrival_.has_value() && batch.arrival > *last_arrival_) {
    const double link = static_cast<double>(batch.wire_bytes) /
                        absl::ToDoubleSeconds(batch.arrival - *last_arrival_);
    const bool first_link = link_by_codec_.count(batch.codec) == 0;
    Blend(link, first_link, &link_by_codec_[batch.codec]);
    // The link carried at least what any codec's batches got through it (a sender short of CPU
    // gets less through, never more).
    double best = 0;
    for (const auto& [codec, rate] : link_by_codec_) best = std::max(best, rate);
    figures_.link_bytes_per_second = best;
  }
  last_arrival_ = batch.arrival;
  ++seen_[batch.codec];
}

std::optional<v1::CompressionChoice> AutoCompression::Ask(v1::Compression codec) {
  if (codec == requested_) return std::nullopt;
  requested_ = codec;
  waited_ = 0;
  measured_ = 0;
  v1::CompressionChoice choice;
  choice.set_codec(codec);
  if (codec == v1::COMPRESSION_ZSTD) choice.set_level(zstd_level_);
  return choice;
}

std::optional<v1::CompressionChoice> AutoCompression::OnBatch(const BatchObservation& batch) {
  Record(batch);
  if (decided_) return Ask(DecideCompression(figures_, requested_));
  if (!probing_started_) {
    // Probe only once raw batches showed the link limiting the stream.
    if (seen_[v1::COMPRESSION_NONE] < kProbeBatches || !figures_.link_bytes_per_second) {
      return std::nullopt;
    }
    probing_started_ = true;
    for (v1::Compression codec : batch.offered) {
      if (codec != v1::COMPRESSION_NONE) to_probe_.push_back(codec);
    }
  } else {
    ++waited_;
    if (batch.codec == requested_) ++measured_;
    // Until the codec being probed is measured enough (or the worker never switched to it).
    if (measured_ < kProbeBatches && waited_ < kProbePatience) return std::nullopt;
    to_probe_.erase(to_probe_.begin());
  }
  if (!to_probe_.empty()) return Ask(to_probe_.front());
  decided_ = true;
  // Compress only if it beats raw by the margin, whichever codec was probed last.
  return Ask(DecideCompression(figures_, v1::COMPRESSION_NONE));
}

}  // namespace stoker
