// The thread pool's sizing rule: a caller's thread count is capped at the cores and the items
// (threads_for), and a pool larger than kMaxThreads is refused before any thread starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>
#include <thread>

#include "util/thread_pool.hpp"

namespace overhead::util {
namespace {

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

TEST(ThreadPoolTest, ThreadsForNeverExceedsCoresOrItems) {
  // encode_batch(["a", "b"], threads=10**6) once started a million threads minus one.
  EXPECT_EQ(ThreadPool::threads_for(1'000'000, 2), std::min(2u, cores()));
  EXPECT_EQ(ThreadPool::threads_for(std::numeric_limits<unsigned>::max(), 1'000'000), cores());
  EXPECT_EQ(ThreadPool::threads_for(0, 1'000'000), cores());
  EXPECT_EQ(ThreadPool::threads_for(0, 1), 1u);
  EXPECT_EQ(ThreadPool::threads_for(1, 1'000), 1u);
  EXPECT_EQ(ThreadPool::threads_for(7, 0), 1u);  // an empty batch still gets a (calling-thread) pool
}

TEST(ThreadPoolTest, RefusesMoreThanTheCeilingBeforeStartingAny) {
  try {
    ThreadPool pool(ThreadPool::kMaxThreads + 1);
    FAIL() << "a pool of " << pool.size() << " threads was started";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1024"), std::string::npos) << e.what();
  }
}

TEST(ThreadPoolTest, RunsEveryItemOnceOnACappedPool) {
  ThreadPool pool(ThreadPool::threads_for(64, 3));
  EXPECT_LE(pool.size(), 3u);
  std::atomic<int> sum{0};
  pool.parallel_for(3, [&](std::size_t i) { sum += static_cast<int>(i) + 1; });
  EXPECT_EQ(sum.load(), 6);
}

}  // namespace
}  // namespace overhead::util
