// LambdaRuntime: the Runtime API calls (see lambda_runtime.hpp for the protocol).
#include "aws/lambda_runtime.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>

#include "aws/sigv4.hpp"

namespace overhead::aws {

std::string lambda_error_json(const std::string& type, const std::string& message) {
  return nlohmann::json{{"errorMessage", message}, {"errorType", type}, {"stackTrace", nlohmann::json::array()}}.dump();
}

LambdaRuntime::LambdaRuntime(std::string api, std::shared_ptr<HttpClient> http)
    : api_(std::move(api)), http_(std::move(http)) {
  if (api_.empty() || api_.find('/') != std::string::npos)
    throw LambdaRuntimeError("AWS_LAMBDA_RUNTIME_API must be HOST:PORT, not \"" + api_ + "\"");
  base_ = "http://" + api_ + "/2018-06-01/runtime";
}

LambdaInvocation LambdaRuntime::next() {
  HttpRequest req;
  req.method = "GET";
  req.url = base_ + "/invocation/next";
  req.timeout = std::chrono::milliseconds(0);  // none: the call waits for the next event however long
  HttpResponse res;
  try {
    res = http_->send(req);
  } catch (const TransportError& e) {
    throw LambdaRuntimeError(std::string("Runtime API next: ") + e.what());
  }
  if (res.status != 200)
    throw LambdaRuntimeError("Runtime API next: HTTP " + std::to_string(res.status) + ": " + res.body);
  LambdaInvocation inv;
  inv.request_id = std::string(res.header("lambda-runtime-aws-request-id"));
  if (inv.request_id.empty()) throw LambdaRuntimeError("Runtime API next: no Lambda-Runtime-Aws-Request-Id header");
  const std::string deadline(res.header("lambda-runtime-deadline-ms"));
  inv.deadline_ms = deadline.empty() ? 0 : std::strtoll(deadline.c_str(), nullptr, 10);
  inv.function_arn = std::string(res.header("lambda-runtime-invoked-function-arn"));
  inv.trace_id = std::string(res.header("lambda-runtime-trace-id"));
  // The documented hand-over of the X-Ray trace id to the function's SDK calls.
  if (!inv.trace_id.empty()) setenv("_X_AMZN_TRACE_ID", inv.trace_id.c_str(), 1);
  else unsetenv("_X_AMZN_TRACE_ID");
  inv.event = std::move(res.body);
  return inv;
}

void LambdaRuntime::post(const std::string& path, const std::string& body, const std::string& error_type) {
  HttpRequest req;
  req.method = "POST";
  req.url = base_ + path;
  req.headers = {{"Content-Type", "application/json"}};
  if (!error_type.empty()) req.headers.emplace_back("Lambda-Runtime-Function-Error-Type", error_type);
  req.body = body;
  req.timeout = std::chrono::milliseconds(30000);
  HttpResponse res;
  try {
    res = http_->send(req);
  } catch (const TransportError& e) {
    throw LambdaRuntimeError("Runtime API POST " + path + ": " + e.what());
  }
  // 202 Accepted is the documented answer; 400/403/413 mean the post was refused (e.g. a
  // response over 6 MB, or an invocation that already timed out).
  if (res.status != 202 && res.status != 200)
    throw LambdaRuntimeError("Runtime API POST " + path + ": HTTP " + std::to_string(res.status) + ": " + res.body);
}

// The request id comes from the Runtime API's header and goes back as one path segment: encoded
// (RFC 3986), so an id holding '/', '?', '#' or '..' cannot aim the post at another path.
void LambdaRuntime::respond(const std::string& request_id, const std::string& body) {
  post("/invocation/" + uri_encode(request_id) + "/response", body, "");
}

void LambdaRuntime::invocation_error(const std::string& request_id, const std::string& type, const std::string& message) {
  post("/invocation/" + uri_encode(request_id) + "/error", lambda_error_json(type, message), type);
}

void LambdaRuntime::init_error(const std::string& type, const std::string& message) {
  post("/init/error", lambda_error_json(type, message), type);
}

}  // namespace overhead::aws
