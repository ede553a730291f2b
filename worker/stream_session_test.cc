#include "worker/stream_session.h"

#include <vector>

#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

class RecordingSink : public BatchSink {
 public:
  void Send(std::unique_ptr<pb::BatchMessage> batch) override { sent.push_back(std::move(batch)); }
  void Fail(const absl::Status& status) override { failure = status; }
  std::vector<std::unique_ptr<pb::BatchMessage>> sent;
  absl::Status failure;
};

class StreamSessionTest : public ::testing::Test {
 protected:
  StreamSessionTest()
      : pool_(4), session_(nullptr, 0, "client", &sink_, &pool_, [this] { ++wakes_; }) {}

  uint32_t Wanted(absl::Time now) {
    absl::Time next = absl::InfiniteFuture();
    return session_.WantedTasks(now, &next);
  }

  RecordingSink sink_;
  BatchMessagePool pool_;
  int wakes_ = 0;
  StreamSession session_;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(StreamSessionTest, WantsCreditMinusOutstanding) {
  EXPECT_EQ(Wanted(t0_), 0u);
  session_.AddCredit(5);
  EXPECT_EQ(wakes_, 1);
  EXPECT_EQ(Wanted(t0_), 5u);
  session_.OnLeased(3, t0_, absl::Seconds(1));
  EXPECT_EQ(Wanted(t0_), 2u);
  session_.OnSent(0);  // Consumes a credit and a lease.
  EXPECT_EQ(Wanted(t0_), 2u);
  EXPECT_EQ(wakes_, 2);
}

TEST_F(StreamSessionTest, EmptyLeaseBacksOffDoublingUpToMax) {
  session_.AddCredit(1);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(4)), 0u);
  absl::Time next = absl::InfiniteFuture();
  EXPECT_EQ(session_.WantedTasks(t0_, &next), 0u);
  EXPECT_EQ(next, t0_ + absl::Milliseconds(5));
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(5)), 1u);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));  // 10 ms.
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(9)), 0u);
  session_.OnLeased(0, t0_, absl::Milliseconds(12));  // Capped at 12 ms.
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(11)), 0u);
  EXPECT_EQ(Wanted(t0_ + absl::Milliseconds(12)), 1u);
  session_.OnLeased(1, t0_, absl::Milliseconds(12));  // A grant resets the backoff.
  session_.AddCredit(1);
  EXPECT_EQ(Wanted(t0_), 1u);
}

TEST_F(StreamSessionTest, ProducedBatchesGoToSinkUntilDetached) {
  session_.OnProduced(absl::OkStatus(), std::make_unique<pb::BatchMessage>());
  EXPECT_EQ(sink_.sent.size(), 1u);
  session_.OnProduced(absl::InternalError("kernel failed"), nullptr);
  EXPECT_EQ(sink_.failure.code(), absl::StatusCode::kInternal);
  session_.Detach();
  EXPECT_TRUE(session_.detached());
  session_.OnProduced(absl::OkStatus(), std::make_unique<pb::BatchMessage>());
  EXPECT_EQ(sink_.sent.size(), 1u);
  session_.AddCredit(3);
  EXPECT_EQ(Wanted(t0_), 0u);  // Detached sessions lease nothing.
}

TEST_F(StreamSessionTest, CountsQueuedAndSentBytes) {
  auto batch = std::make_unique<pb::BatchMessage>();
  batch->set_data(std::string(1000, 'x'));
  session_.OnProduced(absl::OkStatus(), std::move(batch));
  EXPECT_EQ(session_.queued_bytes(), 1000u);
  EXPECT_EQ(session_.sent_bytes(), 0u);
  session_.OnSent(sink_.sent.back()->data().size());
  EXPECT_EQ(session_.queued_bytes(), 0u);
  EXPECT_EQ(session_.sent_bytes(), 1000u);
}

}  // namespace
}  // namespace stoker
