// The s3:// adapter without an emulator: where its requests go (virtual-hosted on AWS, path style
// with an endpoint), what it signs (the payload hash, checked against the bytes that arrived),
// and how it classifies S3's XML errors, against a loopback server that answers them on purpose
// (no emulator throttles or denies access): SlowDown and 5xx are retried and then transient,
// NoSuchBucket and AccessDenied are permanent with a hint, and no error carries the secret key. And
// the multipart writer's calls: the parts in order with their ETags, a part's 5xx retried, an error
// that CompleteMultipartUpload sends in a 200 retried, and an abort when the writer is dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aws/sigv4.hpp"
#include "backends/open.hpp"
#include "backends/s3_object_store.hpp"
#include "loopback_server.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {
namespace {

constexpr const char* kSecret = "s3-errors-test-secret-5a4b3c";

S3Addressing addressing(const std::string& url) { return s3_addressing(ports::parse_backend_url(url)); }

TEST(S3Addressing, OnAwsTheBucketIsTheHost) {
  const auto a = addressing("s3://seed-results/runs/2026?region=eu-west-1");
  EXPECT_EQ(a.bucket, "seed-results");
  EXPECT_EQ(a.prefix, "runs/2026");
  EXPECT_EQ(a.region, "eu-west-1");
  EXPECT_FALSE(a.path_style);
  EXPECT_EQ(a.host, "seed-results.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(a.base_url, "https://seed-results.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(s3_object_path(a, "case1/records.csv"), "/runs/2026/case1/records.csv");
}

TEST(S3Addressing, WithAnEndpointTheBucketIsThePath) {
  const auto a = addressing("s3://seed-results/?region=us-east-1&endpoint=http://127.0.0.1:4569/");
  EXPECT_TRUE(a.path_style);
  EXPECT_EQ(a.prefix, "");
  EXPECT_EQ(a.host, "127.0.0.1:4569");
  EXPECT_EQ(a.base_url, "http://127.0.0.1:4569");
  EXPECT_EQ(s3_object_path(a, "a b/ü+.csv"), "/seed-results/a%20b/%C3%BC%2B.csv");
}

TEST(S3Addressing, ABucketWithADotIsAddressedByPath) {
  // BUCKET.with.dots.s3.amazonaws.com would not match the certificate's *.s3 wildcard.
  const auto a = addressing("s3://my.dotted.bucket/p?region=us-west-2");
  EXPECT_TRUE(a.path_style);
  EXPECT_EQ(a.host, "s3.us-west-2.amazonaws.com");
  EXPECT_EQ(s3_object_path(a, "k.csv"), "/my.dotted.bucket/p/k.csv");
}

TEST(S3Addressing, BadUrlsAreRefusedNamingWhatIsWrong) {
  auto message = [](const std::string& url) {
    try {
      (void)open_object_store(url);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  EXPECT_NE(message("s3://Upper_Case/x?region=us-east-1").find("bad bucket name"), std::string::npos);
  EXPECT_NE(message("s3://ok-bucket/x?region=us-east-1&regoin=x").find("regoin"), std::string::npos);
  EXPECT_NE(message("s3://ok-bucket/x?region=us-east-1&endpoint=ftp://h").find("endpoint"), std::string::npos);
  EXPECT_NE(message("s3://ok-bucket/x?region=us-east-1&endpoint=http://h/path").find("path"), std::string::npos);
  EXPECT_NE(message("s3:ok-bucket").find("s3://BUCKET"), std::string::npos);
  EXPECT_NE(message("s3://ok-bucket/../x?region=us-east-1").find(".."), std::string::npos);
}

class S3Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    aws::testing::use_test_keys("AKIDS3ERRORS", kSecret);
  }
  static std::string url(const aws::testing::LoopbackServer& s) {
    return "s3://results/runs?region=eu-west-1&endpoint=" + s.url() + "&timeout_ms=2000";
  }
  static void answer_error(httplib::Response& res, int status, const std::string& code) {
    res.status = status;
    res.set_content("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code +
                        "</Code><Message>as S3 says it</Message><RequestId>R1</RequestId></Error>",
                    "application/xml");
  }
};

TEST_F(S3Errors, PutSendsTheBytesWithTheirSignedHashOnThePathStylePath) {
  aws::testing::LoopbackServer server;
  std::mutex m;
  std::string path, body, hash, auth, type;
  server.http().Put(R"(/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(m);
    path = req.path;
    body = req.body;
    hash = req.get_header_value("x-amz-content-sha256");
    auth = req.get_header_value("Authorization");
    type = req.get_header_value("Content-Type");
    res.status = 200;
  });
  server.start();
  const std::string csv = std::string("id,tokens\r\n1,42\r\n") + '\0' + "\xff";
  open_object_store(url(server))->put("case 1/records.csv", csv);
  std::lock_guard lock(m);
  EXPECT_EQ(path, "/results/runs/case 1/records.csv");  // httplib decodes the wire path %20
  EXPECT_EQ(body, csv);
  EXPECT_EQ(hash, aws::sha256_hex(csv));
  EXPECT_EQ(type, "text/csv");
  EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDS3ERRORS/", 0), 0u) << auth;
  EXPECT_NE(auth.find("/eu-west-1/s3/aws4_request"), std::string::npos) << auth;
  EXPECT_NE(auth.find("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date"), std::string::npos) << auth;
}

TEST_F(S3Errors, GetReturnsTheBodyOfA200) {
  aws::testing::LoopbackServer server;
  server.http().Get("/results/runs/k.csv", [&](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_header_value("x-amz-content-sha256"), aws::sha256_hex(""));
    res.set_content("a,b\n", "text/csv");
  });
  server.start();
  EXPECT_EQ(open_object_store(url(server))->get("k.csv"), "a,b\n");
}

TEST_F(S3Errors, SlowDownIsRetriedUntilItPasses) {
  aws::testing::LoopbackServer server;
  std::atomic<int> calls{0};
  server.http().Put(R"(/.*)", [&](const httplib::Request&, httplib::Response& res) {
    if (++calls <= 2) return answer_error(res, 503, "SlowDown");
    res.status = 200;
  });
  server.start();
  open_object_store(url(server))->put("k.csv", "x");
  EXPECT_EQ(calls.load(), 3);
}

TEST_F(S3Errors, ServerErrorsThatPersistAreTransient) {
  aws::testing::LoopbackServer server;
  std::atomic<int> calls{0};
  server.http().Get(R"(/.*)", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    answer_error(res, 500, "InternalError");
  });
  server.start();
  auto store = open_object_store(url(server));
  try {
    (void)store->get("k.csv");
    FAIL() << "get returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("InternalError"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 5);  // the retry policy's attempts, no more
}

// A loopback S3 that speaks the multipart upload: CreateMultipartUpload (POST ?uploads),
// UploadPart (PUT ?partNumber&uploadId, answering its ETag), CompleteMultipartUpload (POST
// ?uploadId with the parts' list), AbortMultipartUpload (DELETE ?uploadId).
struct MultipartS3 {
  std::mutex m;
  std::vector<std::pair<int, std::size_t>> parts;  // part number, bytes, as received
  std::string completed;                          // the CompleteMultipartUpload body
  int part_failures = 0, complete_errors_in_200 = 0, aborts = 0, puts = 0;

  void serve(aws::testing::LoopbackServer& server) {
    server.http().Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m);
      if (req.has_param("uploads")) {
        res.set_content("<InitiateMultipartUploadResult><UploadId>U-1</UploadId></InitiateMultipartUploadResult>", "application/xml");
      } else if (req.get_param_value("uploadId") == "U-1") {
        if (complete_errors_in_200 > 0) {
          --complete_errors_in_200;  // S3 may fail a completion after its 200 went out
          res.set_content("<Error><Code>InternalError</Code><Message>try again</Message></Error>", "application/xml");
          return;
        }
        completed = req.body;
        res.set_content("<CompleteMultipartUploadResult><ETag>\"all\"</ETag></CompleteMultipartUploadResult>", "application/xml");
      } else {
        res.status = 404;
      }
    });
    server.http().Put(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m);
      if (!req.has_param("partNumber")) {
        ++puts;
        res.status = 200;
        return;
      }
      if (part_failures > 0) {
        --part_failures;
        res.status = 500;
        res.set_content("<Error><Code>InternalError</Code></Error>", "application/xml");
        return;
      }
      const int number = std::stoi(req.get_param_value("partNumber"));
      parts.emplace_back(number, req.body.size());
      res.set_header("ETag", "\"etag-" + std::to_string(number) + "\"");
      res.status = 200;
    });
    server.http().Delete(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m);
      if (req.get_param_value("uploadId") == "U-1") ++aborts;
      res.status = 204;
    });
  }
};

TEST_F(S3Errors, AWriterSendsItsPartsInOrderAndCompletesWithTheirETags) {
  aws::testing::LoopbackServer server;
  MultipartS3 s3;
  s3.part_failures = 1;           // the first UploadPart gets a 500: retried
  s3.complete_errors_in_200 = 1;  // the first completion fails inside its 200: retried
  s3.serve(server);
  server.start();
  const auto store = open_object_store(url(server));
  {
    auto out = store->write("big.jsonl");
    out->append(std::string(12 << 20, 'a'));
    out->append(std::string(5 << 20, 'b'));
    out->finish();
  }
  std::lock_guard lock(s3.m);
  ASSERT_EQ(s3.parts.size(), 3u);
  EXPECT_EQ(s3.parts[0], (std::pair<int, std::size_t>{1, 8u << 20}));
  EXPECT_EQ(s3.parts[1], (std::pair<int, std::size_t>{2, 8u << 20}));
  EXPECT_EQ(s3.parts[2], (std::pair<int, std::size_t>{3, 1u << 20}));
  EXPECT_EQ(s3.completed,
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"etag-1\"</ETag></Part><Part><PartNumber>2</PartNumber>"
            "<ETag>\"etag-2\"</ETag></Part><Part><PartNumber>3</PartNumber><ETag>\"etag-3\"</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(s3.aborts, 0);
  EXPECT_EQ(s3.puts, 0);
}

TEST_F(S3Errors, ASmallWrittenObjectIsOnePutAndADroppedWriterAborts) {
  aws::testing::LoopbackServer server;
  MultipartS3 s3;
  s3.serve(server);
  server.start();
  auto store = open_object_store(url(server));
  {
    auto small = store->write("small.jsonl");
    small->append("{}\n");
    small->finish();
  }
  {
    auto dropped = store->write("dropped.jsonl");
    dropped->append(std::string(9 << 20, 'x'));  // a part went out: an upload to abort
  }
  std::lock_guard lock(s3.m);
  EXPECT_EQ(s3.puts, 1);
  EXPECT_EQ(s3.parts.size(), 1u);
  EXPECT_EQ(s3.aborts, 1);
  EXPECT_TRUE(s3.completed.empty());
}

TEST_F(S3Errors, ALostConnectionIsTransient) {
  int port = 0;
  {
    aws::testing::LoopbackServer gone;
    gone.start();
    port = gone.port();
  }  // nothing listens there any more
  auto store = open_object_store("s3://results?region=eu-west-1&endpoint=http://127.0.0.1:" + std::to_string(port) +
                                 "&timeout_ms=500");
  try {
    store->put("k.csv", "x");
    FAIL() << "put returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
  }
}

struct PermanentCase {
  int status;
  std::string code;
  std::string hint;
};

TEST_F(S3Errors, NoSuchBucketAccessDeniedAndBadKeysArePermanentWithAHintAndNoSecret) {
  for (const PermanentCase& c : {PermanentCase{404, "NoSuchBucket", "check the bucket name"},
                                 PermanentCase{403, "AccessDenied", "s3:PutObject"},
                                 PermanentCase{403, "SignatureDoesNotMatch", "check the access key"},
                                 PermanentCase{403, "InvalidAccessKeyId", "check the access key"},
                                 PermanentCase{301, "PermanentRedirect", "another region"},
                                 PermanentCase{404, "NoSuchKey", "k.csv"}}) {
    aws::testing::LoopbackServer server;
    std::atomic<int> calls{0};
    server.http().Get(R"(/.*)", [&](const httplib::Request&, httplib::Response& res) {
      ++calls;
      answer_error(res, c.status, c.code);
    });
    server.start();
    auto store = open_object_store(url(server));
    try {
      (void)store->get("k.csv");
      ADD_FAILURE() << c.code << ": get returned";
    } catch (const ports::ObjectStoreError& e) {
      const std::string what = e.what();
      EXPECT_FALSE(e.retryable()) << what;
      EXPECT_NE(what.find(c.code), std::string::npos) << what;
      EXPECT_NE(what.find(c.hint), std::string::npos) << what;
      EXPECT_EQ(what.find(kSecret), std::string::npos) << what;
    }
    EXPECT_EQ(calls.load(), 1) << c.code << " must not be retried";
  }
}

TEST_F(S3Errors, NoCredentialsIsPermanentAndSaysWhereItLooked) {
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  aws::testing::LoopbackServer server;
  server.start();
  try {
    open_object_store(url(server))->put("k.csv", "x");
    FAIL() << "put returned";
  } catch (const ports::ObjectStoreError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("no credentials"), std::string::npos) << e.what();
  }
  unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  unsetenv("AWS_CONFIG_FILE");
}

}  // namespace
}  // namespace overhead::backends
