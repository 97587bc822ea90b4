// Bad server URLs as a user meets them on the command line: a wrong password, a port nothing
// listens on, a missing database, for `enqueue`, `worker`, `consume` and `run` against the shared
// Redis and PostgreSQL fixtures. Each must be one line naming what went wrong, exit 1, and never
// show a password (neither the wrong one typed nor the server's real one). (`analyze` and
// `status` are checked in postgres_store_test and tests/cli/status_test.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fault_support.hpp"

namespace overhead::fault_test {
namespace {

const std::string kWrong = "not-the-secret-4711";

std::string redis(const char* key) { return service_env("OVERHEAD_REDIS_ENV", key); }
std::string pg(const char* key) { return service_env("OVERHEAD_POSTGRES_ENV", key); }

using test_services::closed_port;

std::string redis_url(const std::string& password, int port, const std::string& stream) {
  return "redis://default:" + password + "@127.0.0.1:" + std::to_string(port) + "/" + stream + "?connect_timeout_ms=1000";
}
std::string pg_url(const std::string& password, int port, const std::string& db) {
  return "postgres://" + pg("PG_USER") + ":" + password + "@127.0.0.1:" + std::to_string(port) + "/" + db;
}

struct Case {
  std::string name;
  std::string args;  // after `overhead`
  std::string says;  // a phrase the line must hold
};

TEST(BadUrls, EachCommandPrintsOneLineExitsOneAndShowsNoPassword) {
  const std::string dir = ::testing::TempDir() + unique_name("bad-url-");
  const int rport = std::stoi(redis("REDIS_PORT"));
  const int pport = std::stoi(pg("PG_PORT"));
  const std::string good_in = redis_url(redis("REDIS_PASSWORD"), rport, unique_name("badurl-in-"));
  const std::string good_log = redis_url(redis("REDIS_PASSWORD"), rport, unique_name("badurl-log-"));
  const std::string wrong_pw = redis_url(kWrong, rport, "in");
  const std::string no_redis = redis_url(redis("REDIS_PASSWORD"), closed_port(), "in");
  const std::string pg_wrong_pw = pg_url(kWrong, pport, pg("PG_DB"));
  const std::string pg_closed = pg_url(pg("PG_PASSWORD"), closed_port(), pg("PG_DB"));
  const std::string pg_no_db = pg_url(pg("PG_PASSWORD"), pport, "no_such_db");
  const std::string common = " --no-progress --out '" + dir + "'";
  const std::string worker = "worker --tokenizers phi-4 --idle-exit 0" + common;
  const std::string consume = "consume --idle-exit 0" + common;
  const std::string run = "run --case 5 --limit 1 --tokenizers phi-4 --no-report" + common;
  const std::vector<Case> cases = {
      {"enqueue, Redis wrong password", "enqueue --limit 1 --queue '" + wrong_pw + "' --out '" + dir + "'", "authentication failed"},
      {"enqueue, Redis unreachable", "enqueue --limit 1 --queue '" + no_redis + "' --out '" + dir + "'", "cannot connect"},
      {"worker, input wrong password", worker + " --queue '" + wrong_pw + "' --log-queue '" + good_log + "'", "authentication failed"},
      {"worker, input unreachable", worker + " --queue '" + no_redis + "' --log-queue '" + good_log + "'", "cannot connect"},
      {"worker, log wrong password", worker + " --queue '" + good_in + "' --log-queue '" + wrong_pw + "'", "authentication failed"},
      {"consume, log unreachable", consume + " --log-queue '" + no_redis + "' --store '" + pg("PG_URL") + "'", "cannot connect"},
      {"consume, store wrong password", consume + " --log-queue '" + good_log + "' --store '" + pg_wrong_pw + "'",
       "password authentication failed"},
      {"consume, store unreachable", consume + " --log-queue '" + good_log + "' --store '" + pg_closed + "'", "cannot connect"},
      {"consume, store missing database", consume + " --log-queue '" + good_log + "' --store '" + pg_no_db + "'", "no_such_db"},
      {"run, store wrong password", run + " --queue '" + good_in + "' --log-queue '" + good_log + "' --store '" + pg_wrong_pw + "'",
       "password authentication failed"},
      {"run, store missing database", run + " --queue '" + good_in + "' --log-queue '" + good_log + "' --store '" + pg_no_db + "'",
       "no_such_db"},
      {"run, input wrong password", run + " --queue '" + wrong_pw + "' --log-queue '" + good_log + "' --store '" + pg("PG_URL") + "'",
       "authentication failed"},
      {"run, log unreachable", run + " --queue '" + good_in + "' --log-queue '" + no_redis + "' --store '" + pg("PG_URL") + "'",
       "cannot connect"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string out;
    EXPECT_EQ(run_overhead(c.args, out), 1) << out;
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.find('\n'), out.size() - 1) << "not one line:\n" << out;
    EXPECT_NE(out.find(c.says), std::string::npos) << out;
    EXPECT_NE(out.find("***"), std::string::npos) << "the URL should be named, redacted: " << out;
    EXPECT_EQ(out.find(kWrong), std::string::npos) << out;
    EXPECT_EQ(out.find(redis("REDIS_PASSWORD")), std::string::npos) << out;
    EXPECT_EQ(out.find(pg("PG_PASSWORD")), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace overhead::fault_test
