// The queue-scheme registry: every registered scheme has its opener, its URL form (shown by --help
// and in docs/backends.md) and a sibling-name rule that round-trips, so a new scheme with a part
// missing fails here (or at the registry's static_assert), not at run time with "has no reply
// queues".
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "backends/open.hpp"
#include "backends/queue_schemes.hpp"
#include "backends/queue_siblings.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {
namespace {

TEST(QueueSchemes, EveryRegisteredSchemeHasItsOpenerFormAndSiblingRule) {
  ASSERT_FALSE(queue_schemes().empty());
  for (const QueueScheme& s : queue_schemes()) {
    SCOPED_TRACE(std::string(s.scheme));
    EXPECT_EQ(find_queue_scheme(s.scheme), &s);
    EXPECT_NE(s.open, nullptr);
    EXPECT_TRUE(s.url_form().starts_with(std::string(s.scheme) + ":"));
    ASSERT_NE(s.naming.name, nullptr);
    ASSERT_NE(s.naming.with_name, nullptr);
    const std::string example(s.example);
    EXPECT_EQ(ports::parse_backend_url(example).scheme, s.scheme);
    EXPECT_EQ(queue_name(example), "jobs");
    // A sibling is the same URL under another name: same scheme, host, credentials, parameters.
    const std::string reply = reply_queue_name(example, "gw-1");
    EXPECT_EQ(reply, "jobs-reply-gw-1");
    EXPECT_TRUE(is_reply_queue_of(example, reply));
    const std::string sibling = sibling_queue_url(example, reply);
    EXPECT_EQ(queue_name(sibling), reply);
    const ports::BackendUrl a = ports::parse_backend_url(example), b = ports::parse_backend_url(sibling);
    EXPECT_EQ(a.scheme, b.scheme);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.password, b.password);
    EXPECT_EQ(a.port, b.port);
    for (const auto& [key, value] : a.params) {
      if (key == "name") continue;
      EXPECT_EQ(b.params.count(key) ? b.params.at(key) : "(absent)", value) << key;
    }
    EXPECT_EQ(sibling_queue_url(sibling, "jobs"), sibling_queue_url(example, "jobs"));
  }
}

TEST(QueueSchemes, HelpListsTheRegisteredForms) {
  std::vector<std::string> forms;
  for (const QueueScheme& s : queue_schemes()) forms.push_back(s.url_form());
  EXPECT_EQ(queue_url_forms(), forms);
}

TEST(QueueSchemes, TheBackendsPageShowsEveryRegisteredForm) {
  std::ifstream in(std::string(OVERHEAD_SOURCE_DIR) + "/docs/backends.md");
  ASSERT_TRUE(in) << "docs/backends.md";
  std::stringstream page;
  page << in.rdbuf();
  for (const QueueScheme& s : queue_schemes()) {
    std::string cell;  // in a Markdown table a '|' is written "\|"
    for (const char c : s.url_form()) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    EXPECT_NE(page.str().find("`" + cell + "`"), std::string::npos) << cell << " is not in docs/backends.md";
  }
}

TEST(QueueSchemes, OnlyTheInProcessSchemeIsNotShared) {
  for (const QueueScheme& s : queue_schemes()) EXPECT_EQ(s.shared, s.scheme != "mem") << s.scheme;
  EXPECT_EQ(shared_queue_prefixes(), "sqlite-queue:, redis://, sqs://");
}

TEST(QueueSchemes, AnUnregisteredSchemeHasNoReplyQueues) {
  EXPECT_EQ(find_queue_scheme("nosuch"), nullptr);
  EXPECT_THROW((void)queue_name("nosuch:jobs"), std::invalid_argument);
  EXPECT_FALSE(is_reply_queue_of("nosuch:jobs", "jobs-reply-x"));
  EXPECT_THROW((void)open_queue("nosuch:jobs"), std::invalid_argument);
  // A URL of a registered scheme that names no queue is refused by its rule, never opened blank.
  EXPECT_THROW((void)queue_name("mem:"), std::invalid_argument);
  EXPECT_THROW((void)sibling_queue_url("redis://localhost:6379", "x"), std::invalid_argument);
}

TEST(QueueSchemes, TheDefaultSqliteQueueNameGetsItsParameter) {
  EXPECT_EQ(queue_name("sqlite-queue:q.db"), "queue");
  EXPECT_EQ(sibling_queue_url("sqlite-queue:q.db", "queue-reply-a"), "sqlite-queue:q.db?name=queue-reply-a");
  EXPECT_EQ(sibling_queue_url("sqlite-queue:q.db?visibility_ms=5", "queue-reply-a"),
            "sqlite-queue:q.db?visibility_ms=5&name=queue-reply-a");
}

}  // namespace
}  // namespace overhead::backends
