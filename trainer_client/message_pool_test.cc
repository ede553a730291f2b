#include "trainer_client/message_pool.h"

#include "gtest/gtest.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {
namespace {

TEST(MessagePoolTest, RecyclesReleasedMessagesAndTheirBuffers) {
  auto pool = MessagePool::Create(2);
  auto message = pool->Acquire();
  message->mutable_data()->assign(1 << 20, 'x');
  const v1::BatchMessage* address = message.get();
  const size_t capacity = message->data().capacity();
  message.reset();
  EXPECT_EQ(pool->free_count(), 1u);
  auto again = pool->Acquire();
  EXPECT_EQ(again.get(), address);
  again->Clear();  // what parsing does first
  EXPECT_GE(again->data().capacity(), capacity);
  EXPECT_EQ(pool->free_count(), 0u);
}

TEST(MessagePoolTest, KeepsAtMostMaxFree) {
  auto pool = MessagePool::Create(1);
  auto a = pool->Acquire();
  auto b = pool->Acquire();
  a.reset();
  b.reset();
  EXPECT_EQ(pool->free_count(), 1u);
  pool->set_max_free(0);
  EXPECT_EQ(pool->free_count(), 0u);
}

TEST(MessagePoolTest, MessagesOutliveThePool) {
  auto pool = MessagePool::Create(4);
  auto message = pool->Acquire();
  message->set_data("abc");
  pool.reset();
  EXPECT_EQ(message->data(), "abc");
  message.reset();  // deleted, not returned
}

}  // namespace
}  // namespace stoker
