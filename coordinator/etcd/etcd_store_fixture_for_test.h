#ifndef STOKER_COORDINATOR_ETCD_ETCD_STORE_FIXTURE_FOR_TEST_H_
#define STOKER_COORDINATOR_ETCD_ETCD_STORE_FIXTURE_FOR_TEST_H_

// A real etcd (tests/testing/etcd_cluster.h) and gRPC clients of it, for the EtcdStateStore
// tests; records are register_worker updates whose address names their order. Tests only.

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/etcd/etcd_state_store.h"
#include "coordinator/etcd/grpc_etcd_client.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/etcd_cluster.h"

namespace stoker {

inline constexpr char kStorePrefix[] = "/store/";

inline stoker::v1::StateUpdate StoreRecord(uint64_t n, size_t padding = 0) {
  stoker::v1::StateUpdate update;
  update.mutable_register_worker()->set_worker_id(n);
  update.mutable_register_worker()->set_address(absl::StrCat("w", n, std::string(padding, 'x')));
  return update;
}

// The worker ids of `updates`, in order (a restore counts as its workers).
inline std::vector<uint64_t> StoreRecordIds(const std::vector<stoker::v1::StateUpdate>& updates) {
  std::vector<uint64_t> ids;
  for (const stoker::v1::StateUpdate& update : updates) {
    for (const auto& worker : update.restore().workers()) ids.push_back(worker.worker_id());
    if (update.has_register_worker()) ids.push_back(update.register_worker().worker_id());
  }
  return ids;
}

inline std::vector<uint64_t> StoreRange(uint64_t first, uint64_t last) {
  std::vector<uint64_t> ids;
  for (uint64_t n = first; n <= last; ++n) ids.push_back(n);
  return ids;
}

// A restore holding workers 1..n, each with `padding` bytes of address.
inline stoker::v1::StateUpdate StoreSnapshot(uint64_t n, size_t padding) {
  stoker::v1::StateUpdate update;
  for (uint64_t id = 1; id <= n; ++id) {
    *update.mutable_restore()->add_workers() = StoreRecord(id, padding).register_worker();
  }
  return update;
}

// Forwards to a client, counting write transactions; can lose the answers of applied ones
// (what a member that commits and then drops the connection looks like).
class CountingEtcdClient : public EtcdClient {
 public:
  explicit CountingEtcdClient(std::unique_ptr<EtcdClient> client) : client_(std::move(client)) {}
  int64_t txns() const { return txns_.load(); }
  // The next `n` transactions are applied and then answered UNAVAILABLE.
  void LoseAnswers(int n) { lose_answers_ = n; }
  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request) override {
    return client_->Range(request);
  }
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request) override {
    ++txns_;
    absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(request);
    if (response.ok() && lose_answers_.fetch_sub(1) > 0) {
      return absl::UnavailableError("etcd test: the answer of an applied transaction was lost");
    }
    return response;
  }
  absl::StatusOr<etcdserverpb::CompactionResponse> Compact(
      const etcdserverpb::CompactionRequest& request) override {
    return client_->Compact(request);
  }
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(
      const etcdserverpb::LeaseGrantRequest& request) override {
    return client_->LeaseGrant(request);
  }
  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> LeaseKeepAlive(int64_t lease_id) override {
    return client_->LeaseKeepAlive(lease_id);
  }
  absl::StatusOr<etcdserverpb::LeaseRevokeResponse> LeaseRevoke(
      const etcdserverpb::LeaseRevokeRequest& request) override {
    return client_->LeaseRevoke(request);
  }
  absl::StatusOr<std::unique_ptr<EtcdWatch>> Watch(
      const etcdserverpb::WatchCreateRequest& request) override {
    return client_->Watch(request);
  }
  absl::StatusOr<etcdserverpb::AlarmResponse> Alarm(
      const etcdserverpb::AlarmRequest& request) override {
    return client_->Alarm(request);
  }
  absl::StatusOr<etcdserverpb::StatusResponse> Status() override { return client_->Status(); }
  void Shutdown() override { client_->Shutdown(); }

 private:
  std::unique_ptr<EtcdClient> client_;
  std::atomic<int64_t> txns_{0};
  std::atomic<int> lose_answers_{0};
};

// One 1-member etcd for the suite (starting one takes seconds); each test starts on an empty
// prefix. A test that needs other options starts a cluster of its own.
class EtcdStoreTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { shared_etcd_.reset(); }

  // A missing etcd binary fails here, loudly (never a skip).
  void StartEtcd(testing::EtcdClusterOptions options) {
    absl::StatusOr<std::unique_ptr<testing::EtcdCluster>> etcd =
        testing::EtcdCluster::Start(options);
    ASSERT_THAT(etcd, IsOk());
    own_etcd_ = *std::move(etcd);
    etcd_ = own_etcd_.get();
  }
  void SetUp() override {
    if (shared_etcd_ == nullptr) {
      absl::StatusOr<std::unique_ptr<testing::EtcdCluster>> etcd =
          testing::EtcdCluster::Start({.members = 1});
      ASSERT_THAT(etcd, IsOk());
      shared_etcd_ = *std::move(etcd);
    }
    etcd_ = shared_etcd_.get();
    auto client = Client();
    etcdserverpb::TxnRequest wipe;
    wipe.add_success()->mutable_request_delete_range()->set_key(kStorePrefix);
    wipe.mutable_success(0)->mutable_request_delete_range()->set_range_end(
        EtcdPrefixEnd(kStorePrefix));
    ASSERT_THAT(client->Txn(wipe), IsOk());
  }

  // A client of member `member` (-1: all of them).
  std::unique_ptr<CountingEtcdClient> Client(int member = -1) {
    EtcdTarget target{
        member < 0 ? etcd_->endpoints() : std::vector<std::string>{etcd_->endpoint(member)},
        kStorePrefix};
    absl::StatusOr<std::unique_ptr<EtcdClient>> client =
        NewGrpcEtcdClient(target, EtcdTls{}, absl::Seconds(5));
    EXPECT_THAT(client, IsOk());
    return client.ok() ? std::make_unique<CountingEtcdClient>(*std::move(client)) : nullptr;
  }

  void Put(EtcdClient* client, const std::string& key, const std::string& value) {
    etcdserverpb::TxnRequest txn;
    txn.add_success()->mutable_request_put()->set_key(key);
    txn.mutable_success(0)->mutable_request_put()->set_value(value);
    ASSERT_THAT(client->Txn(txn), IsOk());
  }
  std::string Get(EtcdClient* client, const std::string& key) {
    etcdserverpb::RangeRequest range;
    range.set_key(key);
    absl::StatusOr<etcdserverpb::RangeResponse> got = client->Range(range);
    EXPECT_THAT(got, IsOk());
    return got.ok() && got->kvs_size() > 0 ? got->kvs(0).value() : "";
  }
  // Keys under the store's prefix.
  int64_t KeyCount(EtcdClient* client) {
    etcdserverpb::RangeRequest range;
    range.set_key(kStorePrefix);
    range.set_range_end(EtcdPrefixEnd(kStorePrefix));
    range.set_count_only(true);
    absl::StatusOr<etcdserverpb::RangeResponse> got = client->Range(range);
    EXPECT_THAT(got, IsOk());
    return got.ok() ? got->count() : -1;
  }

  inline static std::unique_ptr<testing::EtcdCluster> shared_etcd_;
  std::unique_ptr<testing::EtcdCluster> own_etcd_;
  testing::EtcdCluster* etcd_ = nullptr;
};

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_ETCD_STORE_FIXTURE_FOR_TEST_H_
