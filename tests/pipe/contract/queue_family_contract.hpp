// The queue-family contract: what every queue family keeps (ports/queue_family.hpp), as one
// parametrised GoogleTest suite, QueueFamilySemantics. A backend's test binary includes this header
// once and instantiates the suite with its own QueueFamilyBackend values:
//
//   #include "queue_family_contract.hpp"
//   INSTANTIATE_TEST_SUITE_P(Redis, QueueFamilySemantics,
//       ::testing::Values(overhead::pipe::contract::QueueFamilyBackend{"redis", true,
//           [](const std::filesystem::path&, const std::string& name) { return base + "/" + name; }}),
//       overhead::pipe::contract::QueueFamilyBackendName{});
//
// (link the CMake target overhead_contract_tests). The families are opened through
// backends::open_queue_family, the one implementation.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "backends/open.hpp"
#include "ports/queue.hpp"
#include "ports/queue_family.hpp"
#include "ports/queue_name.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct QueueFamilyBackend {
  std::string name;  // shown in the test names
  bool shared;       // whether other processes can reach the family
  // The URL of an input queue called `queue` (a plain name, fresh per test); `dir` is a fresh
  // temporary folder for backends that keep files.
  std::function<std::string(const std::filesystem::path& dir, const std::string& queue)> url;
};

struct QueueFamilyBackendName {
  std::string operator()(const ::testing::TestParamInfo<QueueFamilyBackend>& info) const { return info.param.name; }
};

class QueueFamilySemantics : public ::testing::TestWithParam<QueueFamilyBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("family");
    input_name_ = "fam" + std::to_string(std::random_device{}() % 1000000000);
    input_url_ = GetParam().url(dir_, input_name_);
    family_ = backends::open_queue_family(input_url_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string input_name_, input_url_;
  std::shared_ptr<const ports::QueueFamily> family_;
};

TEST_P(QueueFamilySemantics, TellsWhetherOtherProcessesShareIt) {
  EXPECT_EQ(family_->shared(), GetParam().shared);
  EXPECT_EQ(family_->name(), input_name_);
}

TEST_P(QueueFamilySemantics, EachRoleNamesItsOwnSiblingsOnly) {
  const ports::SiblingRole roles[] = {ports::SiblingRole::reply, ports::SiblingRole::control};
  for (const ports::SiblingRole role : roles) {
    const std::string name = family_->sibling_name(role, "host.example:41");
    EXPECT_TRUE(name.starts_with(input_name_ + "-")) << name;
    EXPECT_TRUE(ports::is_plain_queue_name(name)) << name;  // the suffix made plain
    EXPECT_TRUE(family_->is_sibling(role, name)) << name;
    EXPECT_FALSE(family_->is_sibling(role, input_name_)) << "the input itself";
    EXPECT_FALSE(family_->is_sibling(role, "other-" + name)) << "another family's";
    for (const ports::SiblingRole other : roles) {
      if (other == role) continue;
      EXPECT_FALSE(family_->is_sibling(other, name)) << name;
    }
  }
  EXPECT_EQ(family_->sibling_name(ports::SiblingRole::reply, std::string(200, 'h')).size(), 80u);
  const std::string own = family_->own_sibling_name(ports::SiblingRole::control);
  EXPECT_TRUE(family_->is_sibling(ports::SiblingRole::control, own)) << own;
  EXPECT_TRUE(own.ends_with(std::to_string(::getpid()))) << own;
}

TEST_P(QueueFamilySemantics, ASiblingOpenedByNameIsTheSameQueueForEveryOpener) {
  const std::string name = family_->sibling_name(ports::SiblingRole::reply, "gw");
  const auto writer = family_->open(name);
  // Another opener of the same family (another process, on a shared backend) reads it.
  const auto reader = backends::open_queue_family(input_url_)->open(name);
  const std::vector<std::string> bodies{"one"};
  ASSERT_TRUE(writer->send_batch(bodies).at(0).ok());
  const auto got = reader->receive(10, std::chrono::milliseconds(2000));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "one");
  // ... and it is not the input queue.
  EXPECT_TRUE(backends::open_queue(input_url_)->receive(10, std::chrono::milliseconds(0)).empty());
}

}  // namespace overhead::pipe::contract
