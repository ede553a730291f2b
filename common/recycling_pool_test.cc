#include "common/recycling_pool.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace stoker {
namespace {

TEST(RecyclingPoolTest, AcquiredObjectsReturnThemselvesWithTheirCapacity) {
  RecyclingPool<std::string> pool(2);
  std::shared_ptr<std::string> buffer = pool.Acquire();
  buffer->assign(1 << 20, 'x');
  const std::string* address = buffer.get();
  const size_t capacity = buffer->capacity();
  std::shared_ptr<std::string> copy = buffer;
  buffer.reset();
  EXPECT_EQ(pool.free_count(), 0u);  // a copy is still out
  copy.reset();
  EXPECT_EQ(pool.free_count(), 1u);
  std::shared_ptr<std::string> again = pool.Acquire();
  EXPECT_EQ(again.get(), address);
  again->clear();
  EXPECT_GE(again->capacity(), capacity);
  EXPECT_EQ(pool.free_count(), 0u);
}

TEST(RecyclingPoolTest, GetAndPutRecycleUniquePointers) {
  RecyclingPool<std::string> pool(2);
  std::unique_ptr<std::string> object = pool.Get();
  const std::string* address = object.get();
  pool.Put(std::move(object));
  EXPECT_EQ(pool.free_count(), 1u);
  EXPECT_EQ(pool.Get().get(), address);
}

TEST(RecyclingPoolTest, KeepsAtMostMaxFree) {
  RecyclingPool<std::string> pool(1);
  std::shared_ptr<std::string> a = pool.Acquire();
  std::unique_ptr<std::string> b = pool.Get();
  a.reset();
  pool.Put(std::move(b));
  EXPECT_EQ(pool.free_count(), 1u);
  pool.set_max_free(0);
  EXPECT_EQ(pool.free_count(), 0u);
  pool.Put(std::make_unique<std::string>());
  EXPECT_EQ(pool.free_count(), 0u);
}

TEST(RecyclingPoolTest, ObjectsAndRecyclersOutliveThePool) {
  auto pool = std::make_unique<RecyclingPool<std::string>>(4);
  std::shared_ptr<std::string> shared = pool->Acquire();
  std::unique_ptr<std::string> owned = pool->Get();
  RecyclingPool<std::string>::Recycler recycle = pool->recycler();
  *shared = "abc";
  pool.reset();
  EXPECT_EQ(*shared, "abc");
  shared.reset();             // returned to the free list the recycler keeps alive
  recycle(std::move(owned));  // likewise; freed with the last recycler
  recycle = nullptr;
}

}  // namespace
}  // namespace stoker
