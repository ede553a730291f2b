// URL forms of data/s3_config.h and the scheme check of data/storage.h.

#include "data/s3_config.h"

#include "data/s3_client.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "data/storage_flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

TEST(S3UrlTest, ParsesBucketAndKey) {
  auto location = ParseS3Url("s3://my-data.set/train/shard-00001.stoker");
  ASSERT_TRUE(location.ok());
  EXPECT_EQ(location->bucket, "my-data.set");
  EXPECT_EQ(location->key, "train/shard-00001.stoker");
  EXPECT_EQ(ParseS3Url("s3://bk1/").value().key, "");
  EXPECT_EQ(ParseS3Url("s3://Upper/k").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseS3Url("s3:///k").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(S3UrlTest, PathStyleOnCustomEndpointsVirtualHostedOnAws) {
  S3Config config;
  config.endpoint = "http://127.0.0.1:9000/";
  EXPECT_EQ(config.ObjectUrl({"data", "a b/c+d.jpg"}),
            "http://127.0.0.1:9000/data/a%20b/c%2Bd.jpg");
  EXPECT_EQ(config.ObjectUrl({"data", ""}, {{"prefix", "x/"}, {"list-type", "2"}}),
            "http://127.0.0.1:9000/data?list-type=2&prefix=x%2F");
  config.addressing = S3Config::Addressing::kVirtualHosted;
  EXPECT_EQ(config.ObjectUrl({"data", "k"}), "http://data.127.0.0.1:9000/k");
  S3Config aws;
  aws.region = "eu-west-1";
  EXPECT_EQ(aws.ObjectUrl({"data", "k"}), "https://data.s3.eu-west-1.amazonaws.com/k");
  EXPECT_EQ(aws.ObjectUrl({"dotted.bucket", "k"}),
            "https://s3.eu-west-1.amazonaws.com/dotted.bucket/k");
  aws.addressing = S3Config::Addressing::kPath;
  EXPECT_EQ(aws.ObjectUrl({"data", "k"}, {{"uploads", ""}}),
            "https://s3.eu-west-1.amazonaws.com/data/k?uploads=");
}

TEST(S3UrlTest, EndpointAndRegionFromTheEnvironment) {
  auto env = [](const std::string& name) -> std::string {
    if (name == "AWS_ENDPOINT_URL") return "http://minio:9000";
    if (name == "AWS_DEFAULT_REGION") return "ap-south-1";
    return "";
  };
  const S3Config config = S3Config::FromEnvironment(env);
  EXPECT_EQ(config.endpoint, "http://minio:9000");
  EXPECT_EQ(config.ResolvedRegion(), "ap-south-1");
  S3Config bad;
  bad.endpoint = "minio:9000";
  EXPECT_THAT(bad.Validate().message(), HasSubstr("s3.endpoint"));
  bad.endpoint = "http://minio:9000/path";
  EXPECT_EQ(bad.Validate().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StorageSchemeTest, UnknownSchemesAreErrorsNamingTheScheme) {
  EXPECT_EQ(SchemeOf("/data/x").value(), StorageScheme::kLocal);
  EXPECT_EQ(SchemeOf("relative/x").value(), StorageScheme::kLocal);
  EXPECT_EQ(SchemeOf("HTTPS://h/x").value(), StorageScheme::kHttp);
  EXPECT_EQ(SchemeOf("s3://b/x").value(), StorageScheme::kS3);
  const absl::Status status = SchemeOf("gs://bucket/ds/manifest.json").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("unsupported URL scheme \"gs\""));
  EXPECT_EQ(Storage::FromEnvironment()->Open("gs://bucket/x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

absl::Status S3ErrorStatus(long status, const std::string& code) {
  HttpResponse response;
  response.status = status;
  if (!code.empty()) response.body = "<Error><Code>" + code + "</Code></Error>";
  return S3ErrorStatus(response, S3Location{"data", "ds/shard-00001.stoker"}, "AKIAID",
                       Clock::Real());
}

TEST(S3ErrorTest, CodesSayWhatToDo) {
  EXPECT_EQ(S3ErrorStatus(403, "AccessDenied").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(S3ErrorStatus(403, "SignatureDoesNotMatch").message(),
              HasSubstr("s3://data/ds/shard-00001.stoker: access denied (SignatureDoesNotMatch, "
                        "HTTP 403) for access key id AKIAID"));
  EXPECT_EQ(S3ErrorStatus(403, "").code(),
            absl::StatusCode::kPermissionDenied);  // A HEAD: no body.
  EXPECT_EQ(S3ErrorStatus(404, "NoSuchBucket").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(S3ErrorStatus(404, "NoSuchBucket").message(), HasSubstr("no such bucket data"));
  EXPECT_THAT(S3ErrorStatus(404, "NoSuchKey").message(), HasSubstr("no such key"));
  EXPECT_EQ(S3ErrorStatus(503, "SlowDown").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(S3ErrorStatus(500, "InternalError").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(S3ErrorStatus(400, "ExpiredToken").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(S3ErrorStatus(416, "InvalidRange").code(), absl::StatusCode::kOutOfRange);
  // Other 4xx: the same request would fail again (data/http_status.h).
  EXPECT_EQ(S3ErrorStatus(400, "InvalidRequest").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(S3ErrorStatus(429, "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(S3ErrorStatus(400, "SlowDown").code(), absl::StatusCode::kUnavailable);
  const absl::Status skew = S3ErrorStatus(403, "RequestTimeTooSkewed");
  EXPECT_EQ(skew.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(skew.message(), HasSubstr("this machine's clock differs"));
}

TEST(StorageFlagsTest, BadFlagsAreNamed) {
  StorageFlags flags;
  EXPECT_EQ(flags.BuildDatasetIo().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flags.BuildDatasetIo().status().message(), HasSubstr("--data-root: required"));
  flags.data_roots = {"/"};
  flags.s3_addressing = "dns";
  EXPECT_THAT(flags.BuildDatasetIo().status().message(),
              HasSubstr("--s3-addressing: must be auto, path or virtual"));
  flags.s3_addressing = "path";
  flags.s3_endpoint = "minio:9000";
  EXPECT_THAT(flags.BuildDatasetIo().status().message(),
              HasSubstr("--s3-endpoint: must start with http://"));
  flags.s3_endpoint = "http://minio:9000";
  flags.cache_dir = "/tmp/stoker-unused-cache";
  flags.cache_bytes = 0;
  EXPECT_THAT(flags.BuildDatasetIo().status().message(), HasSubstr("--cache-bytes: must be > 0"));
  flags.cache_bytes = 1 << 20;
  flags.open_shards.max_open = 0;
  EXPECT_THAT(flags.BuildDatasetIo().status().message(),
              HasSubstr("--max-open-shards: must be > 0"));
  flags.open_shards.max_open = 4;
  flags.cache_dir.clear();
  absl::StatusOr<DatasetIo> io = flags.BuildDatasetIo();
  ASSERT_TRUE(io.ok()) << io.status();
  EXPECT_NE(io->storage, nullptr);
  EXPECT_NE(io->shards, nullptr);
}

// The metrics are those of the storage they are given, not of some process-wide one.
TEST(StorageMetricsTest, ReportTheStorageTheyAreGiven) {
  const std::shared_ptr<Storage> storage = Storage::FromEnvironment();
  storage->CountSampleBytes(123);
  const StorageMetrics metrics(storage);
  const StorageMetrics other(Storage::FromEnvironment());
  auto sample_bytes = [](const StorageMetrics& of) {
    for (const prometheus::MetricFamily& family : of.Collect()) {
      if (family.name == "stoker_sample_bytes_total") return family.metric.at(0).counter.value;
    }
    return -1.0;
  };
  EXPECT_EQ(sample_bytes(metrics), 123.0);
  EXPECT_EQ(sample_bytes(other), 0.0);
}

}  // namespace
}  // namespace stoker
