#include "worker/worker_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/address_list.h"
#include "common/pool_name.h"
#include "common/process_limits.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr uint32_t kMaxThreads = 1024;
constexpr uint32_t kMinRequestBytes = 4 << 10;

// The simulate_batch_* part of WorkerConfig::Validate().
absl::Status ValidateSimulation(const WorkerConfig& c) {
  if (c.simulate_batch_period.has_value() && *c.simulate_batch_period < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("simulate_batch_period: must be >= 0");
  }
  const bool burn = c.simulate_batch_mode == SimulatedBatchMode::kBurn;
  if (burn && !c.simulate_batch_period.has_value()) {
    return absl::InvalidArgumentError(
        "simulate_batch_mode: burn simulates production, which needs simulate_batch_period set");
  }
  if (!c.simulate_batch_cpu.has_value()) return absl::OkStatus();
  if (!burn) {
    return absl::InvalidArgumentError(
        "simulate_batch_cpu: only with simulate_batch_mode burn (sleeping producers use none)");
  }
  if (*c.simulate_batch_cpu < absl::ZeroDuration() ||
      *c.simulate_batch_cpu > *c.simulate_batch_period) {
    return absl::InvalidArgumentError(
        absl::StrCat("simulate_batch_cpu: must be in [0, simulate_batch_period = ",
                     absl::FormatDuration(*c.simulate_batch_period), "], got ",
                     absl::FormatDuration(*c.simulate_batch_cpu)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WorkerConfig::Validate() const {
  RETURN_IF_ERROR(tls.ValidateServing());
  RETURN_IF_ERROR(ParseAddressList("coordinator_address", coordinator_address).status());
  if (listen_address.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen_address: expected host:port, got '", listen_address, "'"));
  }
  RETURN_IF_ERROR(CheckAdvertisable(advertise_inputs()));
  if (threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads: must be at most ", kMaxThreads, ", got ", threads));
  }
  RETURN_IF_ERROR(ValidatePoolName("pool", pool));
  if (rpc_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rpc_timeout: must be > 0");
  }
  RETURN_IF_ERROR(ValidateBackoffPolicy(register_backoff, "register_backoff"));
  if (max_lease_poll <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("max_lease_poll: must be > 0");
  }
  if (drain_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("drain_deadline: must be > 0");
  }
  if (max_streams == 0) return absl::InvalidArgumentError("max_streams: must be > 0");
  if (max_request_bytes < kMinRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_request_bytes: must be >= ", kMinRequestBytes, ", got ", max_request_bytes));
  }
  RETURN_IF_ERROR(ValidateSimulation(*this));
  const uint64_t memory = ResolvedMemoryBytes();
  if (decoded_cache_bytes > static_cast<uint64_t>(memory * kMaxDecodedCacheShare)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decoded_cache_bytes: ", decoded_cache_bytes,
        " bytes is more than half of the worker's memory budget, memory_bytes (--memory-bytes) = ",
        memory,
        " bytes; the decoded cache takes its share of that budget and batches need the "
        "rest: lower --decoded-cache-bytes or raise --memory-bytes"));
  }
  return OfferedCodecs().status();
}

std::optional<SimulatedProduction> WorkerConfig::Simulation() const {
  if (!simulate_batch_period.has_value()) return std::nullopt;
  return SimulatedProduction{*simulate_batch_period, simulate_batch_mode,
                             simulate_batch_cpu.value_or(*simulate_batch_period)};
}

absl::StatusOr<std::vector<stoker::v1::Compression>> WorkerConfig::OfferedCodecs() const {
  std::vector<stoker::v1::Compression> codecs;
  if (offered_compression == "none") return codecs;
  for (absl::string_view name : absl::StrSplit(offered_compression, ',')) {
    stoker::v1::Compression codec;
    if (name == "lz4") {
      codec = stoker::v1::COMPRESSION_LZ4;
    } else if (name == "zstd") {
      codec = stoker::v1::COMPRESSION_ZSTD;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("offered_compression (--compression-codecs): unknown codec '", name,
                       "' (want a comma-separated list of lz4 and zstd, or none)"));
    }
    if (std::find(codecs.begin(), codecs.end(), codec) == codecs.end()) codecs.push_back(codec);
  }
  return codecs;
}

uint32_t WorkerConfig::ResolvedThreads() const {
  return threads > 0 ? threads : OwnProcessLimits().cpus;
}

uint64_t WorkerConfig::ResolvedMemoryBytes() const {
  if (memory_bytes > 0) return memory_bytes;
  // The other half is the process's own: code, gRPC buffers, decoders, the allocator's slack.
  return OwnProcessLimits().memory_bytes / 2;
}

uint64_t WorkerConfig::BatchMemoryBytes() const {
  const uint64_t memory = ResolvedMemoryBytes();
  return memory - std::min(memory, decoded_cache_bytes);
}

}  // namespace stoker
