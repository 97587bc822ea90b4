#include "aws/json_protocol.hpp"

#include <nlohmann/json.hpp>

#include <thread>

#include "aws/sigv4.hpp"

namespace overhead::aws {

namespace {

using json = nlohmann::json;

// "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" -> "ResourceNotFoundException".
std::string short_code(const std::string& type) {
  const auto hash = type.rfind('#');
  std::string code = hash == std::string::npos ? type : type.substr(hash + 1);
  const auto colon = code.find(':');  // some services append ":http://internal.amazon.com/..."
  return colon == std::string::npos ? code : code.substr(0, colon);
}

}  // namespace

std::string endpoint_host(std::string& endpoint) {
  while (endpoint.ends_with('/')) endpoint.pop_back();
  const auto sep = endpoint.find("://");
  if (sep == std::string::npos || (endpoint.substr(0, sep) != "http" && endpoint.substr(0, sep) != "https"))
    throw std::invalid_argument("endpoint must be http://HOST[:PORT] or https://HOST[:PORT]");
  std::string host = endpoint.substr(sep + 3);
  if (host.empty() || host.find('/') != std::string::npos)
    throw std::invalid_argument("endpoint must be http://HOST[:PORT] or https://HOST[:PORT], without a path");
  return host;
}

bool is_throttling_code(std::string_view code) {
  return code.find("Throttl") != std::string_view::npos || code == "ProvisionedThroughputExceededException" ||
         code == "RequestLimitExceeded" || code == "LimitExceededException" || code == "TooManyRequestsException" ||
         code == "SlowDown" || code == "TransactionInProgressException";
}

bool is_transient_code(std::string_view code) {
  return is_throttling_code(code) || code == "InternalServerError" || code == "InternalFailure" ||
         code == "InternalError" || code == "ServiceUnavailable" || code == "ServiceUnavailableException" ||
         code == "RequestTimeout" || code == "RequestTimeoutException" || code == "TransactionConflictException";
}

bool is_expired_credentials_code(std::string_view code) {
  return code == "ExpiredToken" || code == "ExpiredTokenException" || code == "TokenRefreshRequired";
}

JsonProtocolClient::JsonProtocolClient(JsonServiceEndpoint endpoint, RetryPolicy retry, std::shared_ptr<HttpClient> http)
    : endpoint_(std::move(endpoint)),
      retry_(retry),
      http_(std::move(http)),
      credentials_(process_environment(), http_),
      backoff_(retry_) {}

std::chrono::milliseconds JsonProtocolClient::backoff(int retry, bool throttled) {
  std::lock_guard lock(rng_mutex_);
  return backoff_.delay(retry, throttled);
}

std::string JsonProtocolClient::call(std::string_view action, std::string_view body, std::chrono::milliseconds timeout,
                                     const std::string& shown) {
  const std::string target = endpoint_.target_prefix + "." + std::string(action);
  const std::string& name = endpoint_.shown_name.empty() ? endpoint_.service : endpoint_.shown_name;
  const std::string what = name + " " + std::string(action) + " on " + shown + ": ";
  bool refreshed = false;  // one fresh set of credentials per call after an ExpiredToken answer
  for (int attempt = 0;; ++attempt) {
    std::string last, code;
    long status = 0;
    bool throttled = false;
    try {
      const Credentials creds = credentials_.current();
      SignableRequest sreq{"POST", endpoint_.host, "/", {},
                           {{"content-type", "application/x-amz-json-1.0"}, {"x-amz-target", target}}, body};
      const auto now =
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      const SignedHeaders signed_headers = sign(sreq, creds.keys, SigningScope{endpoint_.region, endpoint_.service, now});
      HttpRequest req;
      req.method = "POST";
      req.url = endpoint_.endpoint + "/";
      req.headers = {{"Content-Type", "application/x-amz-json-1.0"}, {"X-Amz-Target", target}};
      for (auto& h : signed_headers.as_list()) req.headers.push_back(std::move(h));
      req.body = body;
      req.timeout = timeout;
      HttpResponse res = http_->send(req);
      if (res.status == 200) return std::move(res.body);
      status = res.status;
      const json err = json::parse(res.body, nullptr, false);
      std::string message;
      if (err.is_object()) {
        code = short_code(err.value("__type", std::string()));
        message = err.value("message", err.value("Message", std::string()));
      }
      if (code.empty()) code = "HTTP " + std::to_string(res.status);
      last = what + code + (message.empty() ? "" : ": " + message);
      throttled = is_throttling_code(code) || res.status == 429;
      if (is_expired_credentials_code(code) && !refreshed && credentials_.expire(creds.keys.access_key_id)) {
        refreshed = true;
        --attempt;  // not the service's fault: a retry with fresh credentials, at once
        continue;
      }
      if (!(throttled || is_transient_code(code) || res.status >= 500)) throw JsonCallError(last, code, status, false);
    } catch (const TransportError& e) {
      code = "transport";
      last = what + e.what();
    } catch (const CredentialError& e) {
      throw JsonCallError(what + "no credentials: " + e.what(), "credentials", 0, false);
    }
    if (attempt + 1 >= retry_.max_attempts) throw JsonCallError(last, code, status, true);
    std::this_thread::sleep_for(backoff(attempt, throttled));
  }
}

}  // namespace overhead::aws
