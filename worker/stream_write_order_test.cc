// The reactor's rules for writes and Finish under errors that race a write (gRPC callback API:
// one write outstanding, Finish only once no write is, nothing written after the end).

#include "worker/stream_write_order.h"

#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using Next = StreamWriteOrder::Next;
using ::testing::HasSubstr;

TEST(StreamWriteOrderTest, OneWriteAtATime) {
  StreamWriteOrder order;
  EXPECT_TRUE(order.CanWrite());
  order.WriteStarted();
  EXPECT_FALSE(order.CanWrite());
  EXPECT_EQ(order.WriteDone(true), Next::kWrite);
  EXPECT_TRUE(order.CanWrite());
}

TEST(StreamWriteOrderTest, AnErrorDuringAWriteFinishesWhenTheWriteCompletes) {
  StreamWriteOrder order;
  order.WriteStarted();
  EXPECT_FALSE(order.End(absl::InvalidArgumentError("set_compression.level: 40")))
      << "Finish with a write outstanding";
  EXPECT_FALSE(order.CanWrite()) << "no write after the stream began to end";
  EXPECT_FALSE(order.End(absl::InternalError("a producer failed"))) << "finished once";
  EXPECT_FALSE(order.ReadsDone());
  EXPECT_EQ(order.WriteDone(true), Next::kFinish);
  EXPECT_THAT(order.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("set_compression")))
      << "the first error wins";
  EXPECT_FALSE(order.CanWrite());
  EXPECT_FALSE(order.End(absl::InternalError("late")));
}

TEST(StreamWriteOrderTest, AnErrorWithNoWriteOutstandingFinishesAtOnceAndOnce) {
  StreamWriteOrder order;
  EXPECT_TRUE(order.End(absl::InvalidArgumentError("ack.tasks: task")));
  EXPECT_FALSE(order.CanWrite());
  EXPECT_FALSE(order.End(absl::InvalidArgumentError("again")));
  EXPECT_FALSE(order.ReadsDone());
}

TEST(StreamWriteOrderTest, HalfCloseFinishesOkAfterTheWriteInFlight) {
  StreamWriteOrder order;
  order.WriteStarted();
  EXPECT_FALSE(order.ReadsDone());
  EXPECT_EQ(order.WriteDone(true), Next::kFinish);
  EXPECT_THAT(order.status(), IsOk());

  StreamWriteOrder idle;
  EXPECT_TRUE(idle.ReadsDone());
  EXPECT_THAT(idle.status(), IsOk());
}

TEST(StreamWriteOrderTest, ABrokenWriteEndsUnavailable) {
  StreamWriteOrder order;
  order.WriteStarted();
  EXPECT_EQ(order.WriteDone(false), Next::kFinish);
  EXPECT_THAT(order.status(), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("broke")));
}

}  // namespace
}  // namespace stoker
