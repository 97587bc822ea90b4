// Helpers shared by the pipeline tests: a clock moved by hand and a fresh temporary folder.
#pragma once

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

#include "ports/clock.hpp"

namespace overhead::pipe::testing {

struct ManualClock {
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(1'000'000);
  ports::ClockMs fn() const {
    auto p = now;
    return [p] { return p->load(); };
  }
  void advance(std::int64_t ms) { now->fetch_add(ms); }
};

inline std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() / ("overhead-pipe-" + tag + "-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace overhead::pipe::testing
