#include "trainer_client/loader_options.h"

#include <string>
#include <vector>

#include "common/field_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

LoaderOptions ValidOptions() {
  LoaderOptions options;
  options.coordinator_address = "127.0.0.1:7000";
  options.job_name = "job";
  options.spec.set_world_size(2);
  options.rank = 1;
  options.tls = TlsConfig::Plaintext();
  return options;
}

void ExpectInvalid(const LoaderOptions& options, const std::string& message) {
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(status.message(), message);
}

TEST(LoaderOptionsTest, ValidOptionsPass) { EXPECT_TRUE(ValidOptions().Validate().ok()); }

// A library in someone else's trainer retunes neither their allocator nor their environment
// unless asked (docs/architecture.md, Rules the code keeps).
TEST(LoaderOptionsTest, ProcessWideTuningIsOffByDefault) {
  const LoaderOptions options;
  EXPECT_FALSE(options.retain_heap_memory);
  EXPECT_FALSE(options.tune_read_wakeups);
}

TEST(LoaderOptionsTest, NoTlsSettingsIsAnErrorNotPlaintext) {
  LoaderOptions options = ValidOptions();
  options.tls = TlsConfig();
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::StartsWith("tls.cert_file: no TLS settings"));
}

TEST(LoaderOptionsTest, NamesTheBadField) {
  LoaderOptions options = ValidOptions();
  options.coordinator_address.clear();
  ExpectInvalid(options, "coordinator_address: entry 1 of '' is not host:port: ''");
  options.coordinator_address = "10.0.0.1:7070,10.0.0.2";  // replicas: each entry host:port
  ExpectInvalid(options,
                "coordinator_address: entry 2 of '10.0.0.1:7070,10.0.0.2' is not host:port: "
                "'10.0.0.2'");
  options.coordinator_address = "10.0.0.1:7070,10.0.0.2:7070";
  EXPECT_TRUE(options.Validate().ok());

  options = ValidOptions();
  options.job_name.clear();
  ExpectInvalid(options, "job_name: must not be empty");

  options = ValidOptions();
  options.spec.set_world_size(0);
  ExpectInvalid(options, "spec.world_size: must be > 0, got 0");

  options = ValidOptions();
  options.rank = 2;
  ExpectInvalid(options, "rank: must be < spec.world_size (2), got 2");

  options = ValidOptions();
  options.prefetch_bytes = 0;
  ExpectInvalid(options, "prefetch_bytes: must be > 0, got 0");

  options = ValidOptions();
  options.only_workers = {"a:1", ""};
  ExpectInvalid(options, "only_workers[1]: must not be empty");

  options = ValidOptions();
  options.heartbeat_interval = absl::ZeroDuration();
  ExpectInvalid(options, "heartbeat_interval: must be > 0, got 0");

  options = ValidOptions();
  options.rpc_timeout = absl::Seconds(-1);
  ExpectInvalid(options, "rpc_timeout: must be > 0, got -1s");

  options = ValidOptions();
  options.connect_backoff.max_attempts = 0;
  ExpectInvalid(options, "connect_backoff.max_attempts: must be >= 1, got 0");

  options = ValidOptions();
  options.compression = "gzip";
  ExpectInvalid(options,
                "compression: unknown compression 'gzip' (want one of none, lz4, zstd, "
                "zstd:LEVEL) or auto");

  options = ValidOptions();
  options.compression = "zstd:30";
  ExpectInvalid(options, "compression.level: zstd level 30 is outside -7..19 or auto");
}

TEST(LoaderOptionsTest, AcceptsEveryCompressionName) {
  for (const char* name : {"none", "lz4", "zstd", "zstd:-3", "zstd:19", "auto"}) {
    LoaderOptions options = ValidOptions();
    options.compression = name;
    EXPECT_TRUE(options.Validate().ok()) << name << ": " << options.Validate();
  }
}

// Without fields a batch's payload is its tensor, as before; each named field adds room for a
// value of at most kMaxFieldValueBytes per sample, a typed target its wire bound at the image's
// size (masks: kMaxTargetInstances planes of a sample's elements).
TEST(LoaderOptionsTest, MaxBatchPayloadBytesCountsTheFieldColumns) {
  LoaderOptions options;
  options.spec.set_batch_size(4);
  stoker::v1::OpenJobResponse job;
  job.set_batch_bytes(4 * 300);
  for (int64_t dim : {4, 10, 10, 3}) job.add_batch_shape(dim);
  EXPECT_EQ(options.MaxBatchPayloadBytes(job), 1200u);
  options.spec.add_fields("image");
  options.spec.add_fields("text");
  const std::vector<std::string> text = {"text"};
  EXPECT_EQ(options.MaxBatchPayloadBytes(job), 1200u + MaxFieldColumnBytes(4, text, 300));
  EXPECT_GE(MaxFieldColumnBytes(4, text, 300), 4u * kMaxFieldValueBytes);
  options.spec.add_fields("masks");
  EXPECT_GE(options.MaxBatchPayloadBytes(job),
            1200u + 4u * kMaxFieldValueBytes + 4u * kMaxTargetInstances * 300);
}

}  // namespace
}  // namespace stoker
