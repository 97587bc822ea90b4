// The AWS Lambda Runtime API, client side, for a custom runtime (`bootstrap`): the documented
// HTTP protocol at http://$AWS_LAMBDA_RUNTIME_API/2018-06-01/runtime/
//   GET  invocation/next            blocks until an event; the request id, deadline, function ARN
//                                   and trace id come as Lambda-Runtime-* headers, the event as the body;
//   POST invocation/{id}/response   the handler's answer;
//   POST invocation/{id}/error      the handler failed (the whole event is retried by its source);
//   POST init/error                 the runtime could not start (Lambda reports it and stops).
// Errors go as {"errorMessage", "errorType", "stackTrace": []} with Lambda-Runtime-Function-Error-Type.
// One LambdaRuntime serves one invocation at a time, as Lambda sends them.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "aws/http_client.hpp"

namespace overhead::aws {

struct LambdaInvocation {
  std::string request_id;    // Lambda-Runtime-Aws-Request-Id
  std::int64_t deadline_ms = 0;  // Lambda-Runtime-Deadline-Ms: Unix time in ms when the invocation times out
  std::string function_arn;  // Lambda-Runtime-Invoked-Function-Arn
  std::string trace_id;      // Lambda-Runtime-Trace-Id (also put in _X_AMZN_TRACE_ID, as documented)
  std::string event;         // the event JSON, as sent
};

// The Runtime API did not answer as documented (refused connection, unexpected status).
class LambdaRuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LambdaRuntime {
 public:
  // `api` is the value of AWS_LAMBDA_RUNTIME_API: HOST:PORT.
  explicit LambdaRuntime(std::string api, std::shared_ptr<HttpClient> http = std::make_shared<HttpClient>());

  // Waits (without a timeout: Lambda freezes the process between events) for the next event.
  LambdaInvocation next();
  void respond(const std::string& request_id, const std::string& body);
  void invocation_error(const std::string& request_id, const std::string& type, const std::string& message);
  void init_error(const std::string& type, const std::string& message);

  const std::string& api() const { return api_; }

 private:
  void post(const std::string& path, const std::string& body, const std::string& error_type);

  std::string api_;
  std::string base_;  // http://HOST:PORT/2018-06-01/runtime
  std::shared_ptr<HttpClient> http_;
};

// The documented error document: {"errorMessage":..., "errorType":..., "stackTrace":[]}.
std::string lambda_error_json(const std::string& type, const std::string& message);

}  // namespace overhead::aws
