// S3 against the loopback test server (tests/s3/s3_test_server.js: s3rver behind a proxy that
// verifies SigV4 with AWS's own signer): objects, ranges, multipart, paginated listings, each
// credential source, and the error codes of data/s3_client.h.

#include "data/s3_client.h"

#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "data/manifest.h"
#include "data/storage_backend.h"
#include "data/testing/s3_test_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::S3TestServer;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;

absl::Span<const uint8_t> Bytes(const std::string& text) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::S3TestServerOptions options;
    options.sts_ttl_seconds = 2;
    auto server = S3TestServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    env_["AWS_ACCESS_KEY_ID"] = server_->options().access_key_id;
    env_["AWS_SECRET_ACCESS_KEY"] = server_->options().secret_access_key;
  }

  AwsEnvironment Env() const {
    AwsEnvironment env = AwsEnvironment::Real();
    std::map<std::string, std::string> vars = env_;
    env.getenv = [vars](const std::string& name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::string() : it->second;
    };
    return env;
  }

  std::shared_ptr<S3Client> Client(S3Config config = S3Config(),
                                   Clock* clock = Clock::Real()) const {
    config.endpoint = server_->endpoint();
    config.backoff = BackoffPolicy{absl::Milliseconds(10), absl::Milliseconds(50), 2.0, 3};
    return std::make_shared<S3Client>(config, std::make_shared<AwsCredentialChain>(Env()),
                                      CurlTransport(), clock);
  }

  std::unique_ptr<S3TestServer> server_;
  std::map<std::string, std::string> env_;
  TempDir dir_;
};

TEST_F(S3ClientTest, PutGetHeadAndRanges) {
  auto client = Client();
  const S3Location object{"data", "dir/hello world+1.txt"};
  ASSERT_TRUE(client->Put(object, Bytes("hello, bucket")).ok());
  auto size = client->Head(object);
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ(*size, 13u);
  EXPECT_EQ(*client->Get(object), "hello, bucket");
  auto file = OpenS3File(client, "s3://data/dir/hello world+1.txt");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string part(6, '\0');
  ASSERT_TRUE((*file)->ReadAt(7, 6, reinterpret_cast<uint8_t*>(part.data())).ok());
  EXPECT_EQ(part, "bucket");
  EXPECT_EQ((*file)->ReadAt(10, 6, reinterpret_cast<uint8_t*>(part.data())).code(),
            absl::StatusCode::kOutOfRange);
}

TEST_F(S3ClientTest, LargeObjectsGoUpInParts) {
  S3Config config;
  config.part_bytes = 5 << 20;
  auto client = Client(config);
  std::string data(11 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  const S3Location object{"data", "big/shard.stoker"};
  ASSERT_TRUE(client->Put(object, Bytes(data)).ok());
  EXPECT_EQ(*client->Get(object), data);
  EXPECT_EQ(server_->CountRequests("POST", "/data/big/shard.stoker"), 2);  // Create, complete.
  EXPECT_EQ(server_->CountRequests("PUT", "/data/big/shard.stoker"), 3);   // 5 + 5 + 1 MiB.
}

TEST_F(S3ClientTest, ListingsFollowContinuationTokens) {
  S3Config config;
  config.list_page_keys = 3;
  auto client = Client(config);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(client->Put({"data", absl::StrCat("set/part-", i, ".tar")}, Bytes("x")).ok());
  }
  ASSERT_TRUE(client->Put({"data", "other/a.tar"}, Bytes("x")).ok());
  auto listed = client->List({"data", "set/"});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 7u);
  EXPECT_EQ((*listed)[6].key, "set/part-6.tar");
  EXPECT_EQ(server_->CountRequests("GET", "/data "), 3);  // Pages of 3, 3 and 1.
}

TEST_F(S3ClientTest, AWrongSecretIsPermissionDeniedNamingKeyIdNotSecret) {
  ASSERT_TRUE(Client()->Put({"data", "ds/manifest.json"}, Bytes("{}")).ok());
  env_["AWS_SECRET_ACCESS_KEY"] = "the-wrong-secret-value";
  auto got = Client()->Get({"data", "ds/manifest.json"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kPermissionDenied) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("s3://data/ds/manifest.json"));
  EXPECT_THAT(got.status().message(), HasSubstr("SignatureDoesNotMatch"));
  EXPECT_THAT(got.status().message(), HasSubstr(server_->options().access_key_id));
  EXPECT_THAT(got.status().message(), Not(HasSubstr("the-wrong-secret-value")));
}

TEST_F(S3ClientTest, MissingBucketAndKeyAreNotFound) {
  auto client = Client();
  auto bucket = client->Get({"no-such-bucket", "ds/manifest.json"});
  EXPECT_EQ(bucket.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(bucket.status().message(), HasSubstr("no such bucket no-such-bucket"));
  auto key = client->Head({"data", "missing"});
  EXPECT_EQ(key.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(key.status().message(), HasSubstr("s3://data/missing"));
}

TEST_F(S3ClientTest, AStoppedServerIsUnavailableAfterRetriesThenServesAgain) {
  auto client = Client();
  ASSERT_TRUE(client->Put({"data", "k"}, Bytes("v")).ok());
  server_->Stop();
  auto got = client->Get({"data", "k"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(), HasSubstr("3 attempts"));
  ASSERT_TRUE(server_->Restart().ok());
  EXPECT_EQ(*client->Get({"data", "k"}), "v");
}

TEST_F(S3ClientTest, SlowDownIsRetriedWithBackoffThenUnavailable) {
  auto client = Client();  // 3 attempts.
  ASSERT_TRUE(client->Put({"data", "busy"}, Bytes("v")).ok());
  server_->FailNext(2);
  EXPECT_EQ(*client->Get({"data", "busy"}), "v");
  EXPECT_EQ(server_->CountRequests("GET", "/data/busy 503"), 2);
  server_->FailNext(3);
  auto got = client->Get({"data", "busy"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(), HasSubstr("SlowDown"));
  EXPECT_THAT(got.status().message(), HasSubstr("3 attempts"));
}

// Throttling (429), a server-side timeout (408) and 503 are retried, each retry waiting what the
// server's Retry-After asked (seconds or an HTTP-date) instead of the 10 ms backoff. The clock
// records the waits and skips them.
TEST_F(S3ClientTest, ThrottlingIsRetriedWaitingWhatRetryAfterAsks) {
  SleepRecordingClock clock;
  auto client = Client(S3Config(), &clock);
  ASSERT_TRUE(client->Put({"data", "busy"}, Bytes("v")).ok());
  server_->FailNext(2, 429, "4");
  EXPECT_EQ(*client->Get({"data", "busy"}), "v");
  EXPECT_EQ(server_->CountRequests("GET", "/data/busy 429"), 2);
  EXPECT_THAT(clock.sleeps(), ::testing::ElementsAre(absl::Seconds(4), absl::Seconds(4)));

  // An HTTP-date 7 s after the clock's now; a 408 without Retry-After waits the backoff only.
  server_->FailNext(1, 503,
                    absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", clock.Now() + absl::Seconds(7),
                                     absl::UTCTimeZone()));
  EXPECT_EQ(*client->Get({"data", "busy"}), "v");
  ASSERT_EQ(clock.sleeps().size(), 3u);
  EXPECT_EQ(clock.sleeps()[2], absl::Seconds(7));
  server_->FailNext(1, 408);
  EXPECT_EQ(*client->Get({"data", "busy"}), "v");
  ASSERT_EQ(clock.sleeps().size(), 4u);
  EXPECT_LE(clock.sleeps()[3], absl::Milliseconds(10));

  // Still throttled after every attempt: UNAVAILABLE naming the server's answer.
  server_->FailNext(3, 429, "1");
  auto got = client->Get({"data", "busy"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(), HasSubstr("TooManyRequests, HTTP 429"));
  EXPECT_THAT(got.status().message(), HasSubstr("3 attempts"));
}

TEST_F(S3ClientTest, ProfileInACredentialsFile) {
  const std::string file = dir_.File("credentials");
  WriteFile(file, absl::StrCat("[default]\naws_access_key_id = AKIAWRONG\naws_secret_access_key = "
                               "nope\n\n[train]\naws_access_key_id = ",
                               server_->options().access_key_id, "\naws_secret_access_key = ",
                               server_->options().secret_access_key, "\n"));
  env_.erase("AWS_ACCESS_KEY_ID");
  env_.erase("AWS_SECRET_ACCESS_KEY");
  env_["AWS_SHARED_CREDENTIALS_FILE"] = file;
  env_["AWS_PROFILE"] = "train";
  EXPECT_TRUE(Client()->Put({"data", "p"}, Bytes("v")).ok());
}

TEST_F(S3ClientTest, WebIdentityCredentialsAreRefreshedWhenTheServerSaysExpired) {
  env_.erase("AWS_ACCESS_KEY_ID");
  env_.erase("AWS_SECRET_ACCESS_KEY");
  const std::string token = dir_.File("token");
  WriteFile(token, server_->options().web_identity_token);
  env_["AWS_WEB_IDENTITY_TOKEN_FILE"] = token;
  env_["AWS_ROLE_ARN"] = server_->options().role_arn;
  env_["AWS_ENDPOINT_URL"] = server_->endpoint();
  // The chain's clock stands still, so only the server's ExpiredToken makes it refresh.
  FakeClock frozen;
  AwsEnvironment env = Env();
  env.clock = &frozen;
  S3Config config;
  config.endpoint = server_->endpoint();
  S3Client client(config, std::make_shared<AwsCredentialChain>(env), CurlTransport(),
                  Clock::Real());
  ASSERT_TRUE(client.Put({"data", "w"}, Bytes("v")).ok());
  absl::SleepFor(absl::Seconds(2.5));  // The server's 2 s session token expires.
  EXPECT_EQ(*client.Get({"data", "w"}), "v");
  EXPECT_EQ(server_->CountRequests("GET", "/data/w 400"), 1);  // ExpiredToken, then fresh keys.
  EXPECT_EQ(server_->CountRequests("GET", "/data/w 200"), 1);
}

TEST_F(S3ClientTest, ContainerAndInstanceMetadataEndpoints) {
  env_.erase("AWS_ACCESS_KEY_ID");
  env_.erase("AWS_SECRET_ACCESS_KEY");
  env_["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = server_->endpoint() + "/container-credentials";
  env_["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = server_->options().container_token;
  EXPECT_TRUE(Client()->Put({"data", "c"}, Bytes("v")).ok());
  env_.erase("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  env_["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = server_->endpoint();
  EXPECT_TRUE(Client()->Put({"data", "i"}, Bytes("v")).ok());
  env_["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = server_->endpoint() + "/container-credentials";
  env_["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "wrong";
  EXPECT_EQ(Client()->Put({"data", "c"}, Bytes("v")).code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(S3ClientTest, VirtualHostedAddressing) {
  auto client = Client();
  // curl resolves *.localhost to loopback itself; the server maps bucket.s3.localhost to bucket.
  S3Config vhost = client->config();
  vhost.addressing = S3Config::Addressing::kVirtualHosted;
  vhost.endpoint = absl::StrReplaceAll(server_->endpoint(), {{"127.0.0.1", "s3.localhost"}});
  S3Client hosted(vhost, std::make_shared<AwsCredentialChain>(Env()), CurlTransport(),
                  Clock::Real());
  ASSERT_TRUE(hosted.Put({"data", "v/h"}, Bytes("vhost")).ok());
  EXPECT_EQ(*client->Get({"data", "v/h"}), "vhost");
  EXPECT_EQ(server_->CountRequests("PUT", "/v/h 200"), 1);  // The path has no bucket.
}

TEST_F(S3ClientTest, ManifestsAndGlobsThroughTheStorage) {
  StorageOptions options;
  options.s3.endpoint = server_->endpoint();
  auto created = Storage::Create(options, Env());
  ASSERT_TRUE(created.ok()) << created.status();
  const Storage& storage = **created;
  for (const char* key : {"g/a-1.tar", "g/a-2.tar", "g/b-1.tar", "g/sub/a-3.tar"}) {
    ASSERT_TRUE(storage.Write(absl::StrCat("s3://data/", key), Bytes("x")).ok());
  }
  auto expanded = ExpandShardPaths(storage, {"s3://data/g/a-*.tar"});
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_THAT(*expanded, ::testing::ElementsAre("s3://data/g/a-1.tar", "s3://data/g/a-2.tar"));
  EXPECT_EQ(ExpandShardPaths(storage, {"s3://data/g/z-*.tar"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadManifest(storage, "s3://nobucket/ds/manifest.json").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace stoker
