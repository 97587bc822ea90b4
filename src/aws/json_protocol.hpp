// One signed call of an AWS service that speaks the JSON 1.0 protocol (DynamoDB; SQS speaks it
// too): POST / with `X-Amz-Target: PREFIX.Action` and a JSON body, SigV4-signed with the current
// credentials of the standard chain, sent on the pooled client, and repeated under capped
// exponential backoff with jitter (aws/retry.hpp) while the answer is throttling, a 5xx or no
// answer at all. What is left after the retries, or a 4xx, is thrown as JsonCallError carrying the
// service's error code, so the adapter decides what it means (a ConditionalCheckFailed is an
// answer, not a failure) and how to word it for its port. No error text holds a secret: only the
// action, the service's code and message, and the shown URL.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "aws/credentials.hpp"
#include "aws/http_client.hpp"
#include "aws/retry.hpp"

namespace overhead::aws {

class JsonCallError : public std::runtime_error {
 public:
  JsonCallError(const std::string& what, std::string code, long status, bool transient)
      : std::runtime_error(what), code_(std::move(code)), status_(status), transient_(transient) {}
  // The service's error code without its namespace ("ResourceNotFoundException"); for an answer
  // without one "HTTP <status>", for no answer "transport", for missing credentials "credentials".
  const std::string& code() const { return code_; }
  long status() const { return status_; }  // 0 when no HTTP answer arrived
  bool transient() const { return transient_; }

 private:
  std::string code_;
  long status_;
  bool transient_;
};

struct JsonServiceEndpoint {
  std::string service;        // signing name: "dynamodb"
  std::string target_prefix;  // "DynamoDB_20120810"
  std::string region;
  std::string endpoint;       // scheme://host[:port], no trailing slash
  std::string host;           // Host header
  std::string shown_name;     // how errors name the service ("SQS"); the signing name when empty
};

// "https://dynamodb.us-east-1.amazonaws.com/" -> sets `endpoint` without the slash and returns the
// Host header; throws std::invalid_argument for another scheme or a path.
std::string endpoint_host(std::string& endpoint);

// Whether a service error code means "slow down" or "our fault, try again" (the AWS SDKs' lists
// of throttling and transient codes).
bool is_throttling_code(std::string_view code);
bool is_transient_code(std::string_view code);
// Whether a code says the request's temporary credentials have expired (refresh, then retry).
bool is_expired_credentials_code(std::string_view code);

class JsonProtocolClient {
 public:
  JsonProtocolClient(JsonServiceEndpoint endpoint, RetryPolicy retry = {},
                     std::shared_ptr<HttpClient> http = std::make_shared<HttpClient>());

  // Thread-safe. `shown` names the backend in errors (a redacted URL). Returns the answer body.
  std::string call(std::string_view action, std::string_view body, std::chrono::milliseconds timeout,
                   const std::string& shown);

  // The wait before retry `retry` (thread-safe), for callers that repeat parts of an answer
  // (DynamoDB's UnprocessedItems) under the same policy.
  std::chrono::milliseconds backoff(int retry, bool throttled);
  const RetryPolicy& retry_policy() const { return retry_; }
  const JsonServiceEndpoint& endpoint() const { return endpoint_; }
  HttpClient& http() { return *http_; }

 private:
  JsonServiceEndpoint endpoint_;
  RetryPolicy retry_;
  std::shared_ptr<HttpClient> http_;
  CredentialProvider credentials_;
  std::mutex rng_mutex_;
  Backoff backoff_;
};

}  // namespace overhead::aws
