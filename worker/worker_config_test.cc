#include "worker/worker_config.h"

#include "common/process_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

void ExpectInvalid(const WorkerConfig& config, const std::string& field) {
  absl::Status status = config.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(field));
}

TEST(WorkerConfigTest, DefaultsWithCoordinatorAreValid) {
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:7070";
  config.tls = TlsConfig::Plaintext();
  EXPECT_TRUE(config.Validate().ok());
  EXPECT_GE(config.ResolvedThreads(), 1u);
}

TEST(WorkerConfigTest, ZeroMeansWhatTheProcessMayUse) {
  WorkerConfig config;
  EXPECT_EQ(config.ResolvedThreads(), OwnProcessLimits().cpus);
  EXPECT_EQ(config.ResolvedMemoryBytes(), OwnProcessLimits().memory_bytes / 2);
  config.threads = 3;
  config.memory_bytes = 1000;
  EXPECT_EQ(config.ResolvedThreads(), 3u);
  EXPECT_EQ(config.ResolvedMemoryBytes(), 1000u);
}

TEST(WorkerConfigTest, TheDecodedCacheIsAShareOfTheMemoryBudget) {
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:7070";
  config.tls = TlsConfig::Plaintext();
  config.memory_bytes = 4000;
  config.decoded_cache_bytes = 2000;
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
  EXPECT_EQ(config.BatchMemoryBytes(), 2000u);
  config.decoded_cache_bytes = 2001;
  EXPECT_EQ(config.Validate(),
            absl::InvalidArgumentError(
                "decoded_cache_bytes: 2001 bytes is more than half of the worker's memory budget, "
                "memory_bytes (--memory-bytes) = 4000 bytes; the decoded cache takes its share of "
                "that budget and batches need the rest: lower --decoded-cache-bytes or raise "
                "--memory-bytes"));
}

// The replicas of a coordinator share a network: the first address decides whether a loopback
// listen address can serve its clients.
TEST(WorkerConfigTest, TheFirstReplicaStandsForTheCoordinator) {
  WorkerConfig config;
  config.tls = TlsConfig::Plaintext();
  config.coordinator_address = "10.0.0.5:7070,10.0.0.6:7070";
  EXPECT_EQ(config.Validate().message(),
            "listen_address: '127.0.0.1:0' is loopback but the coordinator (10.0.0.5:7070) is "
            "not; listen on 0.0.0.0 or set --advertise-address");
  config.coordinator_address = "127.0.0.1:7070,127.0.0.1:7071";
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
}

TEST(WorkerConfigTest, NamesTheBadField) {
  WorkerConfig config;
  ExpectInvalid(config, "tls.cert_file: no TLS settings");  // Never silently plaintext.
  config.tls = TlsConfig::Plaintext();
  ExpectInvalid(config, "coordinator_address");
  config.coordinator_address = "127.0.0.1:7070,127.0.0.1";
  ExpectInvalid(config, "coordinator_address: entry 2 of '127.0.0.1:7070,127.0.0.1'");
  config.coordinator_address = "127.0.0.1:7070";
  config.listen_address = "nohost";
  ExpectInvalid(config, "listen_address");
  config.listen_address = "127.0.0.1:0";
  config.threads = 100000;
  ExpectInvalid(config, "threads");
  config.threads = 2;
  config.pool = "cpu a";
  ExpectInvalid(config, "pool: only [A-Za-z0-9._-]");
  config.pool = "cpu-a";
  config.rpc_timeout = absl::ZeroDuration();
  ExpectInvalid(config, "rpc_timeout");
  config.rpc_timeout = absl::Seconds(1);
  config.register_backoff.max_attempts = 0;
  ExpectInvalid(config, "register_backoff");
  config.register_backoff.max_attempts = 1;
  config.advertise_address = "0.0.0.0";
  ExpectInvalid(config, "advertise_address");
  config.advertise_address.clear();
  config.max_streams = 0;
  ExpectInvalid(config, "max_streams");
  config.max_streams = 1;
  config.max_request_bytes = 10;
  ExpectInvalid(config, "max_request_bytes");
  config.max_request_bytes = 1 << 20;
  config.offered_compression = "lz4,gzip";
  ExpectInvalid(config, "offered_compression (--compression-codecs): unknown codec 'gzip'");
}

TEST(WorkerConfigTest, ParsesOfferedCodecs) {
  WorkerConfig config;
  EXPECT_THAT(*config.OfferedCodecs(),
              ::testing::ElementsAre(v1::COMPRESSION_LZ4, v1::COMPRESSION_ZSTD));
  config.offered_compression = "zstd,zstd";
  EXPECT_THAT(*config.OfferedCodecs(), ::testing::ElementsAre(v1::COMPRESSION_ZSTD));
  config.offered_compression = "none";
  EXPECT_TRUE(config.OfferedCodecs()->empty());
}

TEST(WorkerConfigTest, SimulatedProductionNamesTheBadField) {
  WorkerConfig config;
  config.coordinator_address = "127.0.0.1:7070";
  config.tls = TlsConfig::Plaintext();
  EXPECT_EQ(config.Simulation(), std::nullopt);
  config.simulate_batch_mode = SimulatedBatchMode::kBurn;
  ExpectInvalid(config, "simulate_batch_mode: burn simulates production");  // no period
  config.simulate_batch_period = absl::Milliseconds(40);
  EXPECT_TRUE(config.Validate().ok());
  config.simulate_batch_cpu = absl::Milliseconds(41);
  ExpectInvalid(config, "simulate_batch_cpu: must be in [0, simulate_batch_period");
  config.simulate_batch_cpu = absl::Milliseconds(-1);
  ExpectInvalid(config, "simulate_batch_cpu: must be in");
  config.simulate_batch_cpu = absl::Milliseconds(10);
  config.simulate_batch_mode = SimulatedBatchMode::kSleep;
  ExpectInvalid(config, "simulate_batch_cpu: only with simulate_batch_mode burn");
}

TEST(WorkerConfigTest, ABurningSimulationSpendsTheWholePeriodUnlessToldLess) {
  WorkerConfig config;
  config.simulate_batch_period = absl::Milliseconds(40);
  config.simulate_batch_mode = SimulatedBatchMode::kBurn;
  std::optional<SimulatedProduction> simulation = config.Simulation();
  ASSERT_TRUE(simulation.has_value());
  EXPECT_EQ(simulation->period, absl::Milliseconds(40));
  EXPECT_EQ(simulation->mode, SimulatedBatchMode::kBurn);
  EXPECT_EQ(simulation->cpu, absl::Milliseconds(40));
  config.simulate_batch_cpu = absl::Milliseconds(10);
  EXPECT_EQ(config.Simulation()->cpu, absl::Milliseconds(10));
}

}  // namespace
}  // namespace stoker
