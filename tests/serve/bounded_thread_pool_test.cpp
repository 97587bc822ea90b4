// The gateway's handler pool: past `max_queued` waiting tasks, enqueue waits for a place and
// try_enqueue (the event loop's, which must not block) refuses, instead of queueing without
// limit; shutdown runs what is queued.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "serve/bounded_thread_pool.hpp"

namespace {

using namespace std::chrono_literals;
using overhead::serve::BoundedThreadPool;

TEST(BoundedThreadPool, PastTheBoundEnqueueWaitsForAPlace) {
  BoundedThreadPool pool(1, 1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> ran{0};
  std::promise<void> first_started;
  pool.enqueue([&, released] {
    first_started.set_value();
    released.wait();
    ++ran;
  });
  first_started.get_future().wait();  // the only thread is busy
  pool.enqueue([&] { ++ran; });       // waits in the queue: the one place
  EXPECT_EQ(pool.queued(), 1u);
  auto third = std::async(std::launch::async, [&] { pool.enqueue([&] { ++ran; }); });
  EXPECT_EQ(third.wait_for(200ms), std::future_status::timeout) << "the third task was queued past the bound";
  EXPECT_EQ(pool.queued(), 1u);
  release.set_value();
  EXPECT_EQ(third.wait_for(5s), std::future_status::ready);
  pool.shutdown();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(pool.waits(), 1u);
}

TEST(BoundedThreadPool, PastTheBoundTryEnqueueRefusesAtOnce) {
  BoundedThreadPool pool(1, 1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> first_started;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.try_enqueue([&, released] {
    first_started.set_value();
    released.wait();
    ++ran;
  }));
  first_started.get_future().wait();
  EXPECT_TRUE(pool.try_enqueue([&] { ++ran; }));   // the one place
  EXPECT_FALSE(pool.try_enqueue([&] { ++ran; }));  // refused, not waited for
  release.set_value();
  pool.shutdown();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_FALSE(pool.try_enqueue([&] { ++ran; }));  // after shutdown
}

TEST(BoundedThreadPool, ShutdownRunsWhatIsQueuedAndIsIdempotent) {
  std::atomic<int> ran{0};
  {
    BoundedThreadPool pool(2, 100);
    for (int i = 0; i < 50; ++i) pool.enqueue([&] {
      std::this_thread::sleep_for(1ms);
      ++ran;
    });
    pool.shutdown();
    EXPECT_EQ(ran.load(), 50);
    pool.shutdown();
  }  // and the destructor after it
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
