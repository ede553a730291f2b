// HTTP range reads against a real nginx on loopback (label: integration).

#include "data/http_file.h"

#include <string>
#include <thread>
#include <vector>

#include "data/shard_source.h"
#include "data/storage_backend.h"
#include "data/testing/nginx_server.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::stoker::testing::NginxServer;
using ::stoker::testing::SampleBytes;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::stoker::testing::WriteTar;
using ::stoker::testing::WriteTestDataset;
using ::testing::HasSubstr;

class HttpFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = NginxServer::Start(root_.path());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  HttpOptions FastRetries() const {
    HttpOptions options;
    options.backoff.initial = absl::Milliseconds(1);
    options.backoff.max = absl::Milliseconds(5);
    options.backoff.max_attempts = 3;
    return options;
  }

  TempDir root_;
  std::unique_ptr<NginxServer> server_;  // Stopped by its destructor, even after a failure.
};

TEST_F(HttpFileTest, RangeReads) {
  std::string bytes;
  for (int i = 0; i < 100000; ++i) bytes.push_back(static_cast<char>(i * 31 % 251));
  WriteFile(root_.File("blob.bin"), bytes);
  auto file = OpenHttpFile(server_->url() + "blob.bin", HttpOptions());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->size(), bytes.size());
  for (auto [offset, n] : std::vector<std::pair<size_t, size_t>>{
           {0, 1}, {0, 100000}, {4095, 8193}, {99999, 1}, {500, 0}}) {
    std::string out(n, '\0');
    ASSERT_TRUE((*file)->ReadAt(offset, n, reinterpret_cast<uint8_t*>(out.data())).ok());
    EXPECT_EQ(out, bytes.substr(offset, n));
  }
  uint8_t out[2];
  EXPECT_EQ((*file)->ReadAt(99999, 2, out).code(), absl::StatusCode::kOutOfRange);
}

TEST_F(HttpFileTest, ErrorsNameTheUrl) {
  const std::string missing = server_->url() + "missing.stoker";
  auto not_found = OpenHttpFile(missing, FastRetries());
  EXPECT_EQ(not_found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(not_found.status().message()), HasSubstr(missing));

  const std::string failing = server_->url() + "status/503";
  auto unavailable = OpenHttpFile(failing, FastRetries());
  EXPECT_EQ(unavailable.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(unavailable.status().message()), HasSubstr("3 attempts"));
  EXPECT_THAT(std::string(unavailable.status().message()), HasSubstr(failing));
}

// A redirect is followed by default, and refused where data roots limit URLs: a server inside a
// root must not lead a worker out of it (here from .../moved/ to the server's top).
TEST_F(HttpFileTest, RedirectsAreFollowedOnlyWithoutDataRoots) {
  WriteFile(root_.File("blob.bin"), "0123456789");
  const std::string moved = server_->url() + "moved/blob.bin";
  auto followed = OpenHttpFile(moved, HttpOptions());
  ASSERT_TRUE(followed.ok()) << followed.status();
  EXPECT_EQ((*followed)->size(), 10u);

  HttpOptions no_redirects = FastRetries();
  no_redirects.follow_redirects = false;
  auto refused = OpenHttpFile(moved, no_redirects);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("HTTP 302"));

  StorageOptions options;
  options.data_roots = {server_->url() + "moved/"};
  absl::StatusOr<std::shared_ptr<Storage>> storage =
      Storage::Create(options, AwsEnvironment::Real());
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ((*storage)->Open(moved).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ((*storage)->ReadAll(moved).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(HttpFileTest, ShardSourceOverHttp) {
  WriteTestDataset(root_.path(), 3, 20);
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(server_->url() + "manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok()) << source.status();
  ASSERT_EQ((*source)->size(), 60u);
  // Four threads, each with its own curl handle, read every sample.
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SampleBuffer sample;
      for (uint64_t i = t; i < 60; i += 4) {
        const bool ok =
            (*source)->Read(i, &sample).ok() &&
            std::string(sample.encoded.begin(), sample.encoded.end()) == SampleBytes(i) &&
            sample.label == static_cast<int64_t>(i % 10);
        if (!ok) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  EXPECT_THAT((*source)->Locate(25), HasSubstr("shard-00001.stoker offset "));
}

TEST_F(HttpFileTest, TarShardsOverHttp) {
  WriteTar(root_.File("w-0.tar"), {{"a.jpg", "AAA"}, {"a.cls", "1"}, {"b.jpg", "BB"}});
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->add_paths(server_->url() + "w-0.tar");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok()) << source.status();
  ASSERT_EQ((*source)->size(), 2u);
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(0, &sample).ok());
  EXPECT_EQ(std::string(sample.encoded.begin(), sample.encoded.end()), "AAA");
  EXPECT_EQ(sample.label, 1);
}

}  // namespace
}  // namespace stoker
