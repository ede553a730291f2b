#include "worker/worker_config.h"

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

TEST(WorkerConfigTest, NamesTheBadField) {
  WorkerConfig config;
  ExpectInvalid(config, "tls.cert_file: no TLS settings");  // Never silently plaintext.
  config.tls = TlsConfig::Plaintext();
  ExpectInvalid(config, "coordinator_address");
  config.coordinator_address = "127.0.0.1:7070";
  config.listen_address = "nohost";
  ExpectInvalid(config, "listen_address");
  config.listen_address = "127.0.0.1:0";
  config.threads = 100000;
  ExpectInvalid(config, "threads");
  config.threads = 2;
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

}  // namespace
}  // namespace stoker
