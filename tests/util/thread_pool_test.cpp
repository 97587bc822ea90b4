// The thread pool's sizing rule: a caller's thread count is capped at the cores and the items
// (threads_for), and a pool larger than kMaxThreads is refused before any thread starts; a job
// takes part of a kept pool when it asks for fewer threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
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

// The threads that ran a job's items (each item sleeps a little, so every idle thread that may
// take part gets the chance to).
std::set<std::thread::id> threads_running(ThreadPool& pool, std::size_t items, unsigned threads) {
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<std::size_t> done{0};
  pool.parallel_for(
      items,
      [&](std::size_t) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        ++done;
        std::lock_guard lock(mutex);
        seen.insert(std::this_thread::get_id());
      },
      threads);
  EXPECT_EQ(done.load(), items);
  return seen;
}

TEST(ThreadPoolTest, AJobOfOneThreadRunsOnTheCallerAlone) {
  ThreadPool pool(4);
  const auto seen = threads_running(pool, 64, 1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(*seen.begin(), std::this_thread::get_id());
}

TEST(ThreadPoolTest, AJobTakesNoMoreThreadsThanItAsksFor) {
  ThreadPool pool(4);
  EXPECT_LE(threads_running(pool, 200, 2).size(), 2u);
  // The same pool then runs a job on all of its threads, and later ones on the same threads.
  const auto all = threads_running(pool, 200, 0);
  EXPECT_LE(all.size(), 4u);
  auto again = threads_running(pool, 200, 0);
  again.insert(all.begin(), all.end());
  EXPECT_LE(again.size(), 4u);
}

TEST(ThreadPoolTest, AStartedJobRunsWhileTheCallerWorksAndFinishRethrows) {
  ThreadPool pool(3);
  std::atomic<int> sum{0};
  const std::function<void(std::size_t)> add = [&](std::size_t i) { sum += static_cast<int>(i); };
  pool.start(100, add, 0);
  pool.finish();  // the caller takes what the workers left
  EXPECT_EQ(sum.load(), 4950);
  const std::function<void(std::size_t)> fail = [](std::size_t i) {
    if (i == 7) throw std::runtime_error("item 7");
  };
  pool.start(50, fail, 0);
  EXPECT_THROW(pool.finish(), std::runtime_error);
  // The pool goes on after an error, and a job for one thread runs on the caller in finish().
  sum = 0;
  pool.start(10, add, 1);
  pool.finish();
  EXPECT_EQ(sum.load(), 45);
  EXPECT_TRUE(pool.threads_alive());
}

}  // namespace
}  // namespace overhead::util
