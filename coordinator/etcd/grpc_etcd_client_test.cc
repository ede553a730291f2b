// The gRPC EtcdClient against real etcd members on loopback (tests/testing/etcd_cluster.h).

#include "coordinator/etcd/grpc_etcd_client.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_cluster.h"

namespace stoker {
namespace {

using testing::EtcdCluster;

std::unique_ptr<EtcdClient> ClientOf(const EtcdCluster& etcd) {
  absl::StatusOr<std::unique_ptr<EtcdClient>> client =
      NewGrpcEtcdClient(EtcdTarget{etcd.endpoints(), "/t/"}, EtcdTls{}, absl::Seconds(2));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

absl::StatusOr<etcdserverpb::PutResponse> Put(EtcdClient* client, const std::string& key,
                                              const std::string& value) {
  etcdserverpb::TxnRequest txn;
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  absl::StatusOr<etcdserverpb::TxnResponse> response = client->Txn(txn);
  if (!response.ok()) return response.status();
  return response->responses(0).response_put();
}

std::string Get(EtcdClient* client, const std::string& key) {
  etcdserverpb::RangeRequest range;
  range.set_key(key);
  absl::StatusOr<etcdserverpb::RangeResponse> response = client->Range(range);
  if (!response.ok()) return response.status().ToString();
  return response->kvs().empty() ? "" : response->kvs(0).value();
}

TEST(GrpcEtcdClientTest, MapsEtcdErrorsToTheContractsCodes) {
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start({.members = 1});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::unique_ptr<EtcdClient> client = ClientOf(**etcd);
  const std::string prefix = absl::StrCat("etcd ", (*etcd)->endpoint(0), ": ");

  etcdserverpb::LeaseRevokeRequest revoke;
  revoke.set_id(12345);
  absl::Status revoked = client->LeaseRevoke(revoke).status();
  EXPECT_EQ(revoked.code(), absl::StatusCode::kNotFound) << revoked;
  EXPECT_EQ(revoked.message(), prefix + "etcdserver: requested lease not found");
  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> renewed = client->LeaseKeepAlive(12345);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_EQ(renewed->ttl(), 0);

  ASSERT_TRUE(Put(client.get(), "/t/a", "1").ok());
  absl::StatusOr<etcdserverpb::PutResponse> second = Put(client.get(), "/t/a", "2");
  ASSERT_TRUE(second.ok()) << second.status();
  etcdserverpb::CompactionRequest compact;
  compact.set_revision(second->header().revision());
  ASSERT_TRUE(client->Compact(compact).ok());
  etcdserverpb::RangeRequest old;
  old.set_key("/t/a");
  old.set_revision(second->header().revision() - 1);
  absl::Status compacted = client->Range(old).status();
  EXPECT_EQ(compacted.code(), absl::StatusCode::kOutOfRange) << compacted;
  EXPECT_EQ(compacted.message(), prefix + "etcdserver: mvcc: required revision has been compacted");

  etcdserverpb::WatchCreateRequest watch_old;
  watch_old.set_key("/t/a");
  watch_old.set_start_revision(second->header().revision() - 1);
  absl::StatusOr<std::unique_ptr<EtcdWatch>> watch = client->Watch(watch_old);
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_EQ((*watch)->Next(absl::Seconds(5)).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(GrpcEtcdClientTest, AFullBackendIsResourceExhausted) {
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd =
      EtcdCluster::Start({.members = 1, .quota_backend_bytes = 1 << 20});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::unique_ptr<EtcdClient> client = ClientOf(**etcd);
  absl::Status status;
  for (int i = 0; i < 64 && status.ok(); ++i) {
    status = Put(client.get(), absl::StrCat("/t/big", i), std::string(512 << 10, 'x')).status();
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_EQ(status.message(), absl::StrCat("etcd ", (*etcd)->endpoint(0),
                                           ": etcdserver: mvcc: database space exceeded"));
}

TEST(GrpcEtcdClientTest, WatchDeliversEventsAndCancelEndsIt) {
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start({.members = 1});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::unique_ptr<EtcdClient> client = ClientOf(**etcd);
  etcdserverpb::WatchCreateRequest request;
  request.set_key("/t/");
  request.set_range_end(EtcdPrefixEnd("/t/"));
  absl::StatusOr<std::unique_ptr<EtcdWatch>> watch = client->Watch(request);
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(Put(client.get(), "/t/w", "v").ok());
  absl::StatusOr<etcdserverpb::WatchResponse> next = (*watch)->Next(absl::Seconds(10));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_EQ(next->events_size(), 1);
  EXPECT_EQ(next->events(0).kv().key(), "/t/w");
  EXPECT_EQ((*watch)->Next(absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  (*watch)->Cancel();
  EXPECT_EQ((*watch)->Next(absl::Seconds(1)).status().code(), absl::StatusCode::kCancelled);
}

// Put, retried (bounded) while the members left after a kill elect a raft leader: calls
// meanwhile may be UNAVAILABLE or time out, and only those are retried.
absl::Status PutWhileElecting(EtcdClient* client, const std::string& key,
                              const std::string& value) {
  absl::Status put;
  for (int i = 0; i < 50; ++i) {
    put = Put(client, key, value).status();
    if (put.ok()) break;
    EXPECT_TRUE(absl::IsUnavailable(put) || absl::IsDeadlineExceeded(put)) << put;
  }
  return put;
}

TEST(GrpcEtcdClientTest, KeepsWorkingWhenAMemberAndThenEtcdsLeaderAreKilled) {
  absl::StatusOr<std::unique_ptr<EtcdCluster>> etcd = EtcdCluster::Start({.members = 3});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::unique_ptr<EtcdClient> client = ClientOf(**etcd);
  etcdserverpb::LeaseGrantRequest grant;
  grant.set_ttl(30);
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> lease = client->LeaseGrant(grant);
  ASSERT_TRUE(lease.ok()) << lease.status();
  ASSERT_TRUE(Put(client.get(), "/t/k", "0").ok());

  // The first endpoint is where calls start: killing it makes the client move on.
  ASSERT_TRUE((*etcd)->Kill(0).ok());
  EXPECT_TRUE(PutWhileElecting(client.get(), "/t/k", "1").ok());
  EXPECT_EQ(Get(client.get(), "/t/k"), "1");
  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> renewed =
      client->LeaseKeepAlive(lease->id());
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_GT(renewed->ttl(), 0);

  ASSERT_TRUE((*etcd)->Restart(0).ok());
  absl::StatusOr<int> leader = (*etcd)->LeaderIndex();
  ASSERT_TRUE(leader.ok()) << leader.status();
  ASSERT_TRUE((*etcd)->Kill(*leader).ok());
  EXPECT_TRUE(PutWhileElecting(client.get(), "/t/k", "2").ok());
  EXPECT_EQ(Get(client.get(), "/t/k"), "2");
  renewed = client->LeaseKeepAlive(lease->id());
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_GT(renewed->ttl(), 0);
}

TEST(GrpcEtcdClientTest, TlsFilesAreReadUpFrontNamingTheFlag) {
  absl::StatusOr<std::unique_ptr<EtcdClient>> client = NewGrpcEtcdClient(
      EtcdTarget{{"127.0.0.1:1"}, "/t/"}, EtcdTls{"/nonexistent/ca.pem", "", ""}, absl::Seconds(1));
  EXPECT_EQ(client.status(),
            absl::InvalidArgumentError("--etcd-ca: cannot read /nonexistent/ca.pem"));
  client = NewGrpcEtcdClient(EtcdTarget{{"127.0.0.1:1"}, "/t/"}, EtcdTls{"", "c.pem", ""},
                             absl::Seconds(1));
  EXPECT_EQ(client.status(), absl::InvalidArgumentError("--etcd-key: required with --etcd-cert"));
}

TEST(GrpcEtcdClientTest, ShutdownFailsLaterCallsCancelled) {
  absl::StatusOr<std::unique_ptr<EtcdClient>> client =
      NewGrpcEtcdClient(EtcdTarget{{"127.0.0.1:1"}, "/t/"}, EtcdTls{}, absl::Seconds(1));
  ASSERT_TRUE(client.ok());
  (*client)->Shutdown();
  EXPECT_EQ((*client)->Status().status(),
            absl::CancelledError("etcd 127.0.0.1:1: client shut down"));
}

}  // namespace
}  // namespace stoker
