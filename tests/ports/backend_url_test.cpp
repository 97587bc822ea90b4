// BackendUrl: both shapes, percent-decoding, unknown parameters, and that a password never shows.
#include <gtest/gtest.h>

#include <stdexcept>

#include "backends/open.hpp"
#include "ports/backend_url.hpp"

namespace overhead::pipe {
using ports::BackendUrl;
using ports::parse_backend_url;
using ports::redact_url;
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(BackendUrl, OpaqueShapeKeepsThePathAsWritten) {
  const auto u = parse_backend_url("sqlite-queue:out/a%20b.db?name=in%2F1&visibility_ms=5");
  EXPECT_EQ(u.scheme, "sqlite-queue");
  EXPECT_FALSE(u.has_authority);
  EXPECT_EQ(u.path, "out/a%20b.db");
  EXPECT_EQ(u.param("name", ""), "in/1");
  EXPECT_EQ(u.int_param("visibility_ms", 0), 5);
  EXPECT_EQ(u.int_param("max_receives", 7), 7);
  EXPECT_EQ(u.redacted(), "sqlite-queue:out/a%20b.db?name=in%2F1&visibility_ms=5");
}

TEST(BackendUrl, AuthorityShapeSplitsAndDecodes) {
  const auto u = parse_backend_url("postgresql://bob:p%40ss%3Aw@db.example:5433/rec%20ords?table=r&sslmode=disable");
  EXPECT_TRUE(u.has_authority);
  EXPECT_EQ(u.scheme, "postgresql");
  EXPECT_EQ(u.user, "bob");
  EXPECT_EQ(u.password, "p@ss:w");
  EXPECT_EQ(u.host, "db.example");
  EXPECT_EQ(u.port, 5433);
  EXPECT_EQ(u.path, "/rec ords");
  EXPECT_EQ(u.param("table", ""), "r");
  EXPECT_EQ(u.param("sslmode", ""), "disable");
  EXPECT_EQ(u.redacted(), "postgresql://bob:***@db.example:5433/rec%20ords?table=r&sslmode=disable");

  const auto v = parse_backend_url("redis://[::1]:6380");
  EXPECT_EQ(v.host, "::1");
  EXPECT_EQ(v.port, 6380);
  EXPECT_EQ(v.path, "");
  const auto w = parse_backend_url("redis://:secret@127.0.0.1/0");
  EXPECT_EQ(w.user, "");
  EXPECT_EQ(w.password, "secret");
  EXPECT_EQ(w.port, 0);
  EXPECT_EQ(w.path, "/0");
  EXPECT_EQ(w.redacted(), "redis://:***@127.0.0.1/0");
}

TEST(BackendUrl, BadInputIsAnErrorThatHidesThePassword) {
  for (const char* bad : {"redis://u:hunter2@h:99999", "redis://u:hunter2@h:x", "redis://u:hunter2@h?a=%zz",
                          "redis://u:hunter2@[::1", "no-colon", ":x"}) {
    const std::string e = error_of([&] { (void)parse_backend_url(bad); });
    EXPECT_FALSE(e.empty()) << bad;
    EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  }
}

TEST(BackendUrl, UnknownParameterIsNamedWithTheKnownOnes) {
  const std::string e = error_of([] { (void)backends::open_queue("mem:x?visiblity_ms=5"); });
  EXPECT_NE(e.find("unknown parameter \"visiblity_ms\""), std::string::npos) << e;
  EXPECT_NE(e.find("visibility_ms, max_receives"), std::string::npos) << e;
  EXPECT_THROW((void)backends::open_store("sqlite:x.db?journal=off"), std::invalid_argument);
  EXPECT_THROW((void)backends::open_object_store("file:out?x=1"), std::invalid_argument);
}

TEST(BackendUrl, UnknownSchemeListsTheKnownOnes) {
  const std::string e = error_of([] { (void)backends::open_queue("kafka://u:hunter2@h:1/0"); });
  EXPECT_NE(e.find("mem:[NAME], sqlite-queue:PATH"), std::string::npos) << e;
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  EXPECT_NE(error_of([] { (void)backends::open_store("dynamo:x"); }).find("sqlite:PATH"), std::string::npos);
}

// A password typed with '#', '/', '?' or '@' unescaped: the parser and the redaction read the URL
// the same way, so the password parsed is the password hidden. (The redaction used to stop at '#',
// '/' or '?', and printed such a password in clear, in url() and in every error.)
TEST(BackendUrl, APasswordWithDelimitersIsParsedWholeAndHiddenWhole) {
  struct Case {
    const char* url;
    const char* password;
    const char* host;
    const char* path;
    const char* redacted;
  };
  const Case cases[] = {
      {"redis://:pa#ss@127.0.0.1:6379/0", "pa#ss", "127.0.0.1", "/0", "redis://:***@127.0.0.1:6379/0"},
      {"redis://u:pa/ss@h:1/0?timeout_ms=5", "pa/ss", "h", "/0", "redis://u:***@h:1/0?timeout_ms=5"},
      {"redis://u:pa?ss@h:1", "pa?ss", "h", "", "redis://u:***@h:1"},
      {"postgres://u:a#b/c?d@e@db:5432/records?table=t", "a#b/c?d@e", "db", "/records", "postgres://u:***@db:5432/records?table=t"},
  };
  for (const auto& c : cases) {
    const auto u = parse_backend_url(c.url);
    EXPECT_EQ(u.password, c.password) << c.url;
    EXPECT_EQ(u.host, c.host) << c.url;
    EXPECT_EQ(u.path, c.path) << c.url;
    EXPECT_EQ(u.redacted(), c.redacted) << c.url;
    EXPECT_EQ(redact_url(c.url), c.redacted) << c.url;
  }
  EXPECT_EQ(parse_backend_url("redis://u:pa/ss@h:1/0?timeout_ms=5").int_param("timeout_ms", 0), 5);
  // Errors on such URLs hide the password too.
  for (const char* bad : {"redis://u:hunter2#x@h:99999", "redis://u:hunter2/x@h:x", "redis://u:hunter2?x@h?a=%zz"}) {
    const std::string e = error_of([&] { (void)parse_backend_url(bad); });
    EXPECT_FALSE(e.empty()) << bad;
    EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  }
  const std::string e = error_of([] { (void)backends::open_queue("redis://:hunter2#x@127.0.0.1:1/0?nope=1"); });
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
}

// A URL typed with a slash too few (or none) is no "scheme://" URL, yet what reads as user info
// in it is hidden: in the redaction and in every error that echoes it (the error used to show it
// whole). A path with an '@' in a file name is left as it is.
TEST(BackendUrl, UserInfoInAMalformedUrlIsHiddenToo) {
  EXPECT_EQ(redact_url("redis:/u:SECRET@host:1/q"), "redis:/u:***@host:1/q");
  EXPECT_EQ(redact_url("redis:u:SECRET@host:1/q"), "redis:u:***@host:1/q");
  EXPECT_EQ(redact_url("redis:/SECRET@host:1"), "redis:/***@host:1");
  EXPECT_EQ(redact_url("u:SECRET@host"), "u:***@host");
  EXPECT_EQ(redact_url("sqlite:/tmp/a@b.db"), "sqlite:/tmp/a@b.db");
  EXPECT_EQ(redact_url("http:/u:SECRET@host/v1"), "http:/u:***@host/v1");
  for (const char* bad : {"redis:/u:SECRET@host:1/q", "redis:u:SECRET@host:1/q", "nosuch:/u:SECRET@h", "redis:/SECRET@host:1"}) {
    const std::string e = error_of([&] { (void)backends::open_queue(bad); });
    EXPECT_FALSE(e.empty()) << bad;
    EXPECT_EQ(e.find("SECRET"), std::string::npos) << e;
    const std::string s = error_of([&] { (void)backends::open_store(bad); });
    EXPECT_FALSE(s.empty()) << bad;
    EXPECT_EQ(s.find("SECRET"), std::string::npos) << s;
  }
}

TEST(BackendUrl, RedactUrlNeverThrows) {
  EXPECT_EQ(redact_url("redis://u:pw@h:1/0?x=1"), "redis://u:***@h:1/0?x=1");
  EXPECT_EQ(redact_url("mem:in"), "mem:in");
  EXPECT_EQ(redact_url("redis://u@h"), "redis://u@h");
  EXPECT_EQ(redact_url("%%%"), "%%%");
}

}  // namespace
}  // namespace overhead::pipe
