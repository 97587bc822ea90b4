// The signature-checking proxies in front of the emulators (scripts/services/aws_sigv4_proxy.js)
// and the faults they make on demand, driven through our own sqs://, dynamodb:// and s3:// adapters.
//
// First that the proxies cannot pass vacuously: a tampered secret, a body changed after signing
// and a key the proxy does not know are each refused with the service's own error, and our
// adapters turn that into a clear, permanent error. Then that throttling, 5xx answers and dropped
// connections (before the emulator saw the call, and after it acted on it) are retried and lose
// nothing, that an expired session is refreshed from the metadata service, and that a revoked key
// fails at once with a hint. Every test signs with its own access key and scopes its faults to that
// key, so tests that share the proxies in parallel never meet each other's faults.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "aws/http_client.hpp"
#include "aws/sigv4.hpp"
#include "backends/open.hpp"
#include "loopback_server.hpp"
#include "ports/errors.hpp"
#include "ports/queue.hpp"
#include "ports/store.hpp"
#include "service_env.hpp"
#include "store_contract.hpp"

namespace overhead::backends {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

std::string aws_env(const std::string& key) { return test_services::service_env("OVERHEAD_AWS_ENV", key); }
std::string region() { return aws_env("AWS_EMULATOR_REGION"); }

// One proxy's control endpoint (unsigned POST/GET under /__proxy/).
class Proxy {
 public:
  explicit Proxy(std::string endpoint) : endpoint_(std::move(endpoint)) {}
  const std::string& endpoint() const { return endpoint_; }

  json post(const std::string& path, const json& body) {
    const std::string text = body.dump();
    aws::HttpRequest req;
    req.method = "POST";
    req.url = endpoint_ + "/__proxy/" + path;
    req.headers = {{"Content-Type", "application/json"}};
    req.body = text;
    const auto res = http_.send(req);
    if (res.status != 200) throw std::runtime_error("proxy " + path + ": HTTP " + std::to_string(res.status) + " " + res.body);
    return json::parse(res.body);
  }
  json stats() {
    aws::HttpRequest req;
    req.url = endpoint_ + "/__proxy/stats";
    return json::parse(http_.send(req).body);
  }
  int faults_made(const std::string& kind) { return stats()["faults"].value(kind, 0); }
  int rejected(const std::string& code) { return stats()["rejected"].value(code, 0); }
  int verified_for(const std::string& key) { return stats()["by_key"].value(key, 0); }
  // Faults met by requests signed with `key` (per key, so tests running at once do not count each other's).
  int faults_for(const std::string& key) { return stats()["faults_by_key"].value(key, 0); }
  void fault(const std::string& kind, const std::string& key, const std::string& action, int count, int delay_ms = 0) {
    post("faults", {{"kind", kind}, {"key", key}, {"action", action}, {"count", count}, {"delay_ms", delay_ms}});
  }

 private:
  std::string endpoint_;
  aws::HttpClient http_;
};

Proxy& sqs_proxy() { static Proxy p(aws_env("AWS_SQS_ENDPOINT")); return p; }
Proxy& ddb_proxy() { static Proxy p(aws_env("AWS_DYNAMODB_ENDPOINT")); return p; }
Proxy& s3_proxy() { static Proxy p(aws_env("AWS_S3_ENDPOINT")); return p; }

// A key pair only this test signs with, known to all three proxies, put in the environment (the
// first link of the credential chain). s3rver accepts only the key id S3RVER, so S3 tests use it.
std::string private_keys(const std::string& secret = "proxy-test-secret-0123456789") {
  const std::string id = test_services::unique_name("AKIDPROXY");
  for (Proxy* p : {&sqs_proxy(), &ddb_proxy()}) p->post("keys", {{"accessKeyId", id}, {"secretAccessKey", secret}});
  aws::testing::use_test_keys(id.c_str(), secret.c_str());
  return id;
}

std::string sqs_url(const std::string& name) {
  return "sqs://" + name + "?region=" + region() + "&endpoint=" + sqs_proxy().endpoint() + "&create=1&wait_s=0";
}
std::string ddb_url(const std::string& table) {
  // tokenizers=: scan by experiment is a Query per tokenizer, as `overhead analyze` reads.
  return "dynamodb://" + table + "?region=" + region() + "&endpoint=" + ddb_proxy().endpoint() +
         "&create=1&tokenizers=phi-4,t";
}
std::string s3_url(const std::string& prefix) {
  return "s3://" + aws_env("AWS_S3_BUCKET") + "/" + prefix + "?region=" + region() + "&endpoint=" + s3_proxy().endpoint();
}

// --- The proxy refuses what is not signed right

TEST(SigV4Proxy, ATamperedSecretIsRefusedOnEveryService) {
  const std::string id = private_keys();
  setenv("AWS_SECRET_ACCESS_KEY", "proxy-test-secret-0123456780", 1);  // one character off
  const int sqs_before = sqs_proxy().rejected("SignatureDoesNotMatch");
  try {
    (void)open_queue(sqs_url(test_services::unique_name("tamper-")));
    FAIL() << "SQS accepted a request signed with the wrong secret";
  } catch (const ports::QueueError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << m;
    EXPECT_NE(m.find("SignatureDoesNotMatch"), std::string::npos) << m;
    EXPECT_NE(m.find("check the access key, the secret and the region"), std::string::npos) << m;
    EXPECT_EQ(m.find("proxy-test-secret"), std::string::npos) << m;
  }
  EXPECT_EQ(sqs_proxy().rejected("SignatureDoesNotMatch"), sqs_before + 1) << "retried a permanent error";

  const int ddb_before = ddb_proxy().rejected("InvalidSignatureException");
  try {
    (void)open_store(ddb_url(test_services::unique_name("tamper-")));
    FAIL() << "DynamoDB accepted a request signed with the wrong secret";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << e.what();
    EXPECT_NE(std::string(e.what()).find("InvalidSignatureException"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ddb_proxy().rejected("InvalidSignatureException"), ddb_before + 1);

  aws::testing::use_test_keys("S3RVER", "S3RVER-tampered");
  const int s3_before = s3_proxy().rejected("SignatureDoesNotMatch");
  try {
    open_object_store(s3_url("tamper"))->put("a.csv", "x\n");
    FAIL() << "S3 accepted a request signed with the wrong secret";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << e.what();
    EXPECT_NE(std::string(e.what()).find("SignatureDoesNotMatch"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s3_proxy().rejected("SignatureDoesNotMatch"), s3_before + 1);
  EXPECT_EQ(sqs_proxy().verified_for(id), 0) << "nothing signed with the wrong secret passed";
}

// Signed right, then changed on the way: the body (JSON protocol) and the payload hash (S3).
TEST(SigV4Proxy, ABodyChangedAfterSigningIsRefused) {
  const std::string id = private_keys();
  aws::HttpClient http;
  std::string endpoint = sqs_proxy().endpoint();
  const std::string host = endpoint.substr(endpoint.find("://") + 3);
  const std::string body = R"({"QueueNamePrefix":"a"})";
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  aws::SigningKeyPair keys;
  keys.access_key_id = id;
  keys.secret_access_key = aws::Secret("proxy-test-secret-0123456789");
  auto send = [&](const std::string& sent_body) {
    aws::SignableRequest sreq{"POST", host, "/", {},
                              {{"content-type", "application/x-amz-json-1.0"}, {"x-amz-target", "AmazonSQS.ListQueues"}}, body};
    aws::HttpRequest req;
    req.method = "POST";
    req.url = endpoint + "/";
    req.headers = {{"Content-Type", "application/x-amz-json-1.0"}, {"X-Amz-Target", "AmazonSQS.ListQueues"}};
    for (auto& h : aws::sign(sreq, keys, aws::SigningScope{region(), "sqs", now}).as_list()) req.headers.push_back(h);
    req.body = sent_body;
    return http.send(req);
  };
  EXPECT_EQ(send(body).status, 200) << "the untouched request must pass, or the refusal below proves nothing";
  const auto changed = send(R"({"QueueNamePrefix":"b"})");
  EXPECT_EQ(changed.status, 403);
  EXPECT_NE(changed.body.find("SignatureDoesNotMatch"), std::string::npos) << changed.body;
  // S3: a payload hash that does not match the body is refused before the emulator sees it.
  std::string s3_endpoint = s3_proxy().endpoint();
  const std::string s3_host = s3_endpoint.substr(s3_endpoint.find("://") + 3);
  aws::SigningKeyPair s3_keys;
  s3_keys.access_key_id = "S3RVER";
  s3_keys.secret_access_key = aws::Secret("S3RVER");
  const std::string path = "/" + aws_env("AWS_S3_BUCKET") + "/" + test_services::unique_name("hash-") + ".txt";
  aws::SignableRequest sreq{"PUT", s3_host, path, {}, {}, "signed body"};
  aws::HttpRequest req;
  req.method = "PUT";
  req.url = s3_endpoint + path;
  for (auto& h : aws::sign(sreq, s3_keys, aws::SigningScope{region(), "s3", now, true, true}).as_list()) req.headers.push_back(h);
  req.body = "another body";
  const auto res = http.send(req);
  EXPECT_EQ(res.status, 400);
  EXPECT_NE(res.body.find("XAmzContentSHA256Mismatch"), std::string::npos) << res.body;
}

TEST(SigV4Proxy, AnUnknownKeyIsRefusedAsAWSDoes) {
  aws::testing::use_test_keys("AKIDNOTKNOWNANYWHERE", "whatever-secret");
  try {
    (void)open_queue(sqs_url(test_services::unique_name("unknown-")));
    FAIL() << "an unknown key id passed";
  } catch (const ports::QueueError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent);
    EXPECT_NE(std::string(e.what()).find("InvalidClientTokenId"), std::string::npos) << e.what();
  }
}

// --- Faults are retried and lose nothing

std::vector<std::string> numbered(int n, const std::string& prefix) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(ProxyFaults, SqsThrottling5xxAndDropsLoseNoMessage) {
  const std::string key = private_keys();
  auto queue = open_queue(sqs_url(test_services::unique_name("faults-")));
  Proxy& p = sqs_proxy();
  const int throttles = p.faults_made("throttle"), errors = p.faults_made("5xx"), drops = p.faults_made("drop"),
            late_drops = p.faults_made("drop_after");
  p.fault("throttle", key, "SendMessageBatch", 2);
  p.fault("drop_after", key, "SendMessageBatch", 1);  // sent, answer lost: resent, so one batch twice
  p.fault("5xx", key, "ReceiveMessage", 2);
  p.fault("drop", key, "DeleteMessageBatch", 2);
  p.fault("slow", key, "ReceiveMessage", 1, 300);

  const auto bodies = numbered(30, "m");
  for (std::size_t i = 0; i < bodies.size(); i += ports::kMaxQueueBatch) {
    const auto outcomes = queue->send_batch(std::span(bodies).subspan(i, ports::kMaxQueueBatch));
    for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.failure->message;
  }
  std::multiset<std::string> seen;
  for (int round = 0; round < 40 && queue->counts().visible + queue->counts().in_flight > 0; ++round) {
    const auto got = queue->receive(ports::kMaxQueueBatch, milliseconds(200));
    std::vector<std::string> receipts;
    for (const auto& m : got) {
      seen.insert(m.body);
      receipts.push_back(m.receipt);
    }
    if (!receipts.empty()) {
      const auto failed = queue->delete_batch(receipts);
      EXPECT_TRUE(failed.empty()) << failed.size() << " deletes failed";
    }
  }
  for (const auto& b : bodies) EXPECT_GE(seen.count(b), 1u) << b << " was lost";
  EXPECT_LE(seen.size(), bodies.size() + ports::kMaxQueueBatch) << "more duplicates than the one resent batch";
  const auto left = queue->counts();
  EXPECT_EQ(left.visible + left.in_flight, 0u);
  // The faults really happened (else this test proves nothing): 2 + 1 + 2 + 2 + 1 slow, all this key's.
  EXPECT_EQ(p.faults_for(key), 8);
  EXPECT_GE(p.faults_made("throttle"), throttles + 2);
  EXPECT_GE(p.faults_made("drop_after"), late_drops + 1);
  EXPECT_GE(p.faults_made("5xx"), errors + 2);
  EXPECT_GE(p.faults_made("drop"), drops + 2);
}

TEST(ProxyFaults, DynamoDbThrottling5xxAndDropsStoreEveryRecordOnce) {
  const std::string key = private_keys();
  const std::string table = test_services::unique_name("faults-");
  auto store = open_store(ddb_url(table));
  Proxy& p = ddb_proxy();
  const int throttles = p.faults_made("throttle"), errors = p.faults_made("5xx"), drops = p.faults_made("drop"),
            late_drops = p.faults_made("drop_after");
  p.fault("throttle", key, "BatchWriteItem", 3);  // ProvisionedThroughputExceededException
  p.fault("5xx", key, "BatchWriteItem", 1);
  p.fault("drop", key, "BatchWriteItem", 1);
  p.fault("drop_after", key, "PutItem", 1);  // written, answer lost: written again, still one row
  p.fault("5xx", key, "Query", 1);

  std::vector<ports::Record> batch;
  for (int i = 0; i < 60; ++i) batch.push_back(pipe::contract::make_record("e", "phi-4", "id" + std::to_string(i), i));
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  store->upsert(pipe::contract::make_record("e", "phi-4", "single", 7));
  std::map<std::string, int> rows;
  store->scan("e", [&](const ports::Record& r) { ++rows[r.tokenizer + "/" + r.id]; });
  EXPECT_EQ(rows.size(), 61u);
  for (const auto& [k, n] : rows) EXPECT_EQ(n, 1) << k;
  EXPECT_EQ(rows.count("phi-4/single"), 1u);
  EXPECT_EQ(p.faults_for(key), 7);  // 3 + 1 + 1 + 1 + 1, all this key's
  EXPECT_GE(p.faults_made("throttle"), throttles + 3);
  EXPECT_GE(p.faults_made("5xx"), errors + 2);
  EXPECT_GE(p.faults_made("drop"), drops + 1);
  EXPECT_GE(p.faults_made("drop_after"), late_drops + 1);
}

TEST(ProxyFaults, S3PutIsRetriedThroughSlowDown5xxAndDrops) {
  aws::testing::use_test_keys("S3RVER", "S3RVER");
  Proxy& p = s3_proxy();
  // S3 tests must sign as S3RVER, so this test's faults are scoped to its own object by action
  // order instead: the proxy's rules are taken in order by the next PutObject calls.
  const int before = p.faults_made("throttle") + p.faults_made("5xx") + p.faults_made("drop");
  auto store = open_object_store(s3_url(test_services::unique_name("faults")));
  p.fault("throttle", "S3RVER", "PutObject", 1);
  p.fault("5xx", "S3RVER", "PutObject", 1);
  p.fault("drop", "S3RVER", "PutObject", 1);
  const std::string csv = "tokenizer,id,tokens\nphi-4,1,12\n";
  store->put("case1.csv", csv);
  EXPECT_EQ(store->get("case1.csv"), csv);
  // Another test putting at the same moment may take a rule; the three were made all the same.
  EXPECT_GE(p.faults_made("throttle") + p.faults_made("5xx") + p.faults_made("drop"), before + 3);
}

// --- Credentials: an expired session is refreshed, a revoked key fails clearly

// An hour from now as IMDS writes it ("2026-01-01T12:00:00Z"): far from the refresh margin.
std::string in_one_hour() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + std::chrono::hours(1));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A loopback EC2 metadata service (IMDSv2) handing out the current session; rotate() starts the
// next one, as the role's credentials are renewed.
class FakeImds {
 public:
  explicit FakeImds(std::vector<std::pair<std::string, std::string>> sessions) : sessions_(std::move(sessions)) {
    server_.http().Put("/latest/api/token", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("imds-test-token", "text/plain");
    });
    server_.http().Get("/latest/meta-data/iam/security-credentials/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("overhead-test-role", "text/plain");
    });
    server_.http().Get("/latest/meta-data/iam/security-credentials/overhead-test-role",
                       [this](const httplib::Request& req, httplib::Response& res) {
                         if (req.get_header_value("X-aws-ec2-metadata-token") != "imds-test-token") {
                           res.status = 401;
                           return;
                         }
                         ++fetches_;
                         const auto& [id, token] = sessions_[std::min(current_.load(), sessions_.size() - 1)];
                         res.set_content(json{{"Code", "Success"}, {"AccessKeyId", id},
                                              {"SecretAccessKey", "secret-of-" + id}, {"Token", token},
                                              {"Expiration", in_one_hour()}}.dump(),
                                         "application/json");
                       });
    server_.start();
  }
  std::string url() const { return server_.url(); }
  std::size_t fetches() const { return fetches_; }
  void rotate() { ++current_; }

 private:
  std::vector<std::pair<std::string, std::string>> sessions_;
  std::atomic<std::size_t> fetches_{0}, current_{0};
  aws::testing::LoopbackServer server_;
};

// Credentials from IMDS only (no keys in the environment, no profile files).
void use_imds(const std::string& url) {
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_SESSION_TOKEN");
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_EC2_METADATA_DISABLED", "false", 1);
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url.c_str(), 1);
}

TEST(ProxyCredentials, AnExpiredSessionIsRefreshedAndTheCallGoesThrough) {
  const std::string first = test_services::unique_name("ASIAONE"), second = test_services::unique_name("ASIATWO");
  for (Proxy* p : {&sqs_proxy(), &ddb_proxy()}) {
    p->post("keys", {{"accessKeyId", first}, {"secretAccessKey", "secret-of-" + first}, {"sessionToken", "tok-1"}});
    p->post("keys", {{"accessKeyId", second}, {"secretAccessKey", "secret-of-" + second}, {"sessionToken", "tok-2"}});
  }
  FakeImds imds({{first, "tok-1"}, {second, "tok-2"}});
  use_imds(imds.url());

  auto queue = open_queue(sqs_url(test_services::unique_name("expire-")));
  auto store = open_store(ddb_url(test_services::unique_name("expire-")));
  ASSERT_TRUE(queue->send_batch(std::vector<std::string>{"before"})[0].ok());
  const std::size_t fetched = imds.fetches();
  EXPECT_EQ(sqs_proxy().verified_for(second), 0);
  // The session ends before its stated Expiration; the metadata service has the next one.
  imds.rotate();
  sqs_proxy().post("expire", {{"accessKeyId", first}});
  ddb_proxy().post("expire", {{"accessKeyId", first}});
  const int sqs_expired = sqs_proxy().rejected("ExpiredToken"), ddb_expired = ddb_proxy().rejected("ExpiredTokenException");
  ASSERT_TRUE(queue->send_batch(std::vector<std::string>{"after"})[0].ok());
  store->upsert(pipe::contract::make_record("e", "t", "1", 1));
  EXPECT_EQ(sqs_proxy().rejected("ExpiredToken"), sqs_expired + 1) << "the old session was not refused";
  EXPECT_EQ(ddb_proxy().rejected("ExpiredTokenException"), ddb_expired + 1) << "the old session was not refused";
  EXPECT_EQ(imds.fetches(), fetched + 2) << "not one fresh session per client";
  EXPECT_GE(sqs_proxy().verified_for(second), 1);
  EXPECT_GE(ddb_proxy().verified_for(second), 1);
  EXPECT_EQ(queue->counts().visible, 2u);
  EXPECT_EQ(ports::scan_in_key_order(*store, "e").size(), 1u);
}

TEST(ProxyCredentials, ARevokedKeyFailsAtOnceWithAHint) {
  const std::string key = private_keys();
  auto queue = open_queue(sqs_url(test_services::unique_name("revoke-")));
  auto store = open_store(ddb_url(test_services::unique_name("revoke-")));
  sqs_proxy().post("revoke", {{"accessKeyId", key}});
  ddb_proxy().post("revoke", {{"accessKeyId", key}});
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)queue->send_batch(std::vector<std::string>{"x"});
    FAIL() << "a revoked key still sends";
  } catch (const ports::QueueError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << e.what();
    EXPECT_NE(std::string(e.what()).find("InvalidClientTokenId"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check the access key"), std::string::npos) << e.what();
  }
  try {
    store->upsert(pipe::contract::make_record("e", "t", "1", 1));
    FAIL() << "a revoked key still writes";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::permanent) << e.what();
    EXPECT_NE(std::string(e.what()).find("UnrecognizedClientException"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "a permanent error was retried";
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StoreTest);  // only make_record is used here
}  // namespace overhead::pipe::contract
