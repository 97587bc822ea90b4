// SqsQueue: the sqs:// adapter (see sqs_queue.hpp for the mapping onto SQS calls).
#include "backends/sqs_queue.hpp"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "aws/credentials.hpp"
#include "aws/json_protocol.hpp"
#include "backends/aws_provision.hpp"
#include "util/json_writer.hpp"

namespace overhead::backends {

namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

struct SqsConfig {
  std::string queue_name;
  std::string region;
  std::string endpoint;  // scheme://host[:port], no trailing slash
  std::string host;      // Host header
  milliseconds visibility{30000};
  int max_receives = 0;
  std::size_t max_message_bytes = ports::kDefaultMaxMessageBytes;
  milliseconds call_timeout{ports::kDefaultCallTimeout};
  int max_wait_s = 20;
  bool create = false;
};

// Shared by a queue and its dead-letter queue: one signed JSON-protocol client (one connection
// pool, one credential cache, one retry policy), with SQS's wording of what failed.
struct SqsClient {
  explicit SqsClient(aws::JsonServiceEndpoint endpoint) : json_client(std::move(endpoint)) {}
  aws::JsonProtocolClient json_client;

  static std::string hint(const std::string& code) {
    if (code == "QueueDoesNotExist" || code == "AWS.SimpleQueueService.NonExistentQueue")
      return " (check the queue name and the region; create=1 creates it)";
    if (code.find("Signature") != std::string::npos || code == "InvalidClientTokenId" ||
        code == "UnrecognizedClientException" || code == "IncompleteSignature")
      return " (check the access key, the secret and the region)";
    if (code.find("AccessDenied") != std::string::npos) return " (check the IAM policy allows this SQS action)";
    return "";
  }

  // One SQS JSON call with retries, the request already JSON text; returns the answer's text
  // ("{}" when empty). Throws QueueError.
  std::string call_text(const std::string& action, const std::string& request, milliseconds timeout,
                        const std::string& shown_url) {
    std::string body;
    try {
      body = json_client.call(action, request, timeout, shown_url);
    } catch (const aws::JsonCallError& e) {
      if (e.transient()) throw ports::QueueError(e.what(), ports::Failure::transient);
      throw ports::QueueError(e.what() + hint(e.code()), ports::Failure::permanent);
    }
    return body.empty() ? std::string("{}") : body;
  }

  // The same for the calls off the hot path, with nlohmann::json on both sides.
  json call(const std::string& action, const json& request, milliseconds timeout, const std::string& shown_url) {
    json answer = json::parse(call_text(action, request.dump(), timeout, shown_url), nullptr, false);
    if (answer.is_discarded())
      throw ports::QueueError("SQS " + action + " on " + shown_url + ": the answer is not JSON", ports::Failure::transient);
    return answer;
  }
};

// The hot calls (send, receive, delete, extend) build their requests by appending and read their
// answers with simdjson: through nlohmann::json they cost about 33 instructions per byte to
// escape a batch of bodies and 68 per byte to parse ReceiveMessage's answer, most of the client's
// CPU per call (docs/benchmarks/backends.md, "AWS clients: SQS").
class HotAnswer {
 public:
  HotAnswer(const std::string& text, const std::string& action, const std::string& shown_url) {
    thread_local simdjson::dom::parser parser;
    if (parser.parse(text).get(root_) != simdjson::SUCCESS || !root_.is_object())
      throw ports::QueueError("SQS " + action + " on " + shown_url + ": the answer is not a JSON object",
                             ports::Failure::transient);
  }
  // The elements of the array `key` of the answer (none when absent; a default dom::array may not
  // be walked).
  [[nodiscard]] std::vector<simdjson::dom::element> list(const char* key) const {
    std::vector<simdjson::dom::element> out;
    simdjson::dom::array a;
    if (root_[key].get(a) != simdjson::SUCCESS) return out;
    for (const auto e : a) out.push_back(e);
    return out;
  }

 private:
  simdjson::dom::element root_;
};

// obj[key] as a string, or `fallback` when absent or not a string.
std::string text_of(simdjson::dom::element obj, const char* key, std::string_view fallback = {}) {
  std::string_view v;
  if (obj[key].get(v) != simdjson::SUCCESS) return std::string(fallback);
  return std::string(v);
}

bool bool_of(simdjson::dom::element obj, const char* key, bool fallback) {
  bool v = fallback;
  if (obj[key].get(v) != simdjson::SUCCESS) return fallback;
  return v;
}

// The entry index a batch answer names ("Id" is the decimal index we sent); throws when it is not one.
std::size_t entry_index(simdjson::dom::element entry, std::size_t entries, const std::string& action) {
  const std::string id = text_of(entry, "Id");
  std::size_t i = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), i);
  if (ec != std::errc() || end != id.data() + id.size() || i >= entries)
    throw ports::QueueError("SQS " + action + ": the answer names an entry we did not send (\"" + id + "\")",
                           ports::Failure::transient);
  return i;
}

std::int64_t ceil_seconds(milliseconds ms) { return (ms.count() + 999) / 1000; }

class SqsQueue final : public ports::Queue {
 public:
  SqsQueue(std::shared_ptr<SqsClient> client, SqsConfig config, std::string shown_url)
      : client_(std::move(client)), config_(std::move(config)), url_(std::move(shown_url)) {
    if (config_.create) create_queues();
    queue_url_ = client_->call("GetQueueUrl", {{"QueueName", config_.queue_name}}, config_.call_timeout, url_)
                     .value("QueueUrl", std::string());
    if (queue_url_.empty()) throw ports::QueueError("SQS GetQueueUrl on " + url_ + ": no QueueUrl in the answer");
    find_dead_letter_queue();
  }

  std::vector<ports::SendOutcome> send_batch(std::span<const std::string> bodies) override {
    const auto too_large = ports::check_send_batch(bodies, config_.max_message_bytes, url_);
    std::vector<ports::SendOutcome> out(bodies.size());
    std::size_t request_bytes = 64 + queue_url_.size();
    for (const auto& b : bodies) request_bytes += b.size() + b.size() / 8 + 40;
    std::string request;
    request.reserve(request_bytes);
    request += "{\"QueueUrl\":";
    util::append_json_string(request, queue_url_);
    request += ",\"Entries\":[";
    bool any = false;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (too_large[i]) {
        out[i].failure = too_large[i];
        continue;
      }
      request += any ? ",{\"Id\":\"" : "{\"Id\":\"";
      request += std::to_string(i);
      request += "\",\"MessageBody\":";
      util::append_json_string(request, bodies[i]);
      request += '}';
      any = true;
    }
    request += "]}";
    if (!any) return out;
    const HotAnswer res(client_->call_text("SendMessageBatch", request, config_.call_timeout, url_),
                        "SendMessageBatch", url_);
    for (const auto ok : res.list("Successful"))
      out[entry_index(ok, out.size(), "SendMessageBatch")].id = text_of(ok, "MessageId");
    for (const auto bad : res.list("Failed")) {
      const std::string code = text_of(bad, "Code");
      out[entry_index(bad, out.size(), "SendMessageBatch")].failure =
          ports::EntryFailure{!bool_of(bad, "SenderFault", true) || aws::is_transient_code(code),
                             "SQS refused the message: " + code + ": " + text_of(bad, "Message")};
    }
    return out;
  }

  std::vector<ports::Message> receive(std::size_t max, milliseconds wait) override {
    if (max < 1 || max > ports::kMaxQueueBatch)
      throw ports::QueueError(url_ + ": receive takes 1..10 messages, not " + std::to_string(max));
    const std::int64_t wait_s = std::min<std::int64_t>(ceil_seconds(wait), config_.max_wait_s);
    std::string request = "{\"QueueUrl\":";
    util::append_json_string(request, queue_url_);
    request += ",\"MaxNumberOfMessages\":" + std::to_string(max) + ",\"WaitTimeSeconds\":" + std::to_string(wait_s) +
               ",\"VisibilityTimeout\":" + std::to_string(ceil_seconds(config_.visibility)) +
               ",\"AttributeNames\":[\"ApproximateReceiveCount\"]"
               ",\"MessageSystemAttributeNames\":[\"ApproximateReceiveCount\"]}";
    const HotAnswer res(
        client_->call_text("ReceiveMessage", request, config_.call_timeout + milliseconds(wait_s * 1000), url_),
        "ReceiveMessage", url_);
    std::vector<ports::Message> out;
    for (const auto m : res.list("Messages")) {
      ports::Message msg;
      msg.id = text_of(m, "MessageId");
      msg.receipt = text_of(m, "ReceiptHandle");
      std::string_view body;
      if (msg.receipt.empty() || m["Body"].get(body) != simdjson::SUCCESS)
        throw ports::QueueError("SQS ReceiveMessage on " + url_ + ": a message without a body or receipt",
                               ports::Failure::transient);
      msg.body = std::string(body);
      simdjson::dom::element attrs;
      const std::string count =
          m["Attributes"].get(attrs) == simdjson::SUCCESS ? text_of(attrs, "ApproximateReceiveCount", "1") : "1";
      msg.receive_count = std::stoi(count);
      out.push_back(std::move(msg));
    }
    return out;
  }

  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override {
    return by_receipt("DeleteMessageBatch", receipts, std::nullopt);
  }

  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                   milliseconds timeout) override {
    return by_receipt("ChangeMessageVisibilityBatch", receipts, ceil_seconds(timeout));
  }

  ports::QueueCounts counts() override {
    const json res = client_->call(
        "GetQueueAttributes",
        {{"QueueUrl", queue_url_},
         {"AttributeNames", {"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}}},
        config_.call_timeout, url_);
    const json attrs = res.value("Attributes", json::object());
    return ports::QueueCounts{std::stoul(attrs.value("ApproximateNumberOfMessages", std::string("0"))),
                             std::stoul(attrs.value("ApproximateNumberOfMessagesNotVisible", std::string("0")))};
  }

  std::shared_ptr<ports::Queue> dead_letter_queue() override {
    std::lock_guard lock(dlq_mutex_);
    if (!dead_letters_ && !dlq_name_.empty()) {
      SqsConfig c = config_;
      c.queue_name = dlq_name_;
      c.create = false;
      c.max_receives = 0;
      dead_letters_ = std::make_shared<SqsQueue>(client_, c, "sqs://" + dlq_name_);
    }
    return dead_letters_;
  }

  milliseconds visibility_timeout() const override { return config_.visibility; }
  std::size_t max_message_bytes() const override { return config_.max_message_bytes; }
  const std::string& url() const override { return url_; }

 private:
  // DeleteMessageBatch / ChangeMessageVisibilityBatch: the receipts SQS reports as failed.
  std::vector<std::string> by_receipt(const std::string& action, std::span<const std::string> receipts,
                                      std::optional<std::int64_t> visibility_s) {
    if (receipts.empty()) return {};
    if (receipts.size() > ports::kMaxQueueBatch)
      throw ports::QueueError(url_ + ": " + action + " takes at most 10 receipts");
    for (std::size_t i = 0; i < receipts.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (receipts[i] == receipts[j]) throw ports::QueueError(url_ + ": " + action + ": a receipt appears twice");
    std::string request = "{\"QueueUrl\":";
    util::append_json_string(request, queue_url_);
    request += ",\"Entries\":[";
    for (std::size_t i = 0; i < receipts.size(); ++i) {
      request += i ? ",{\"Id\":\"" : "{\"Id\":\"";
      request += std::to_string(i);
      request += "\",\"ReceiptHandle\":";
      util::append_json_string(request, receipts[i]);
      if (visibility_s) request += ",\"VisibilityTimeout\":" + std::to_string(*visibility_s);
      request += '}';
    }
    request += "]}";
    const HotAnswer res(client_->call_text(action, request, config_.call_timeout, url_), action, url_);
    std::vector<bool> failed(receipts.size(), false);
    for (const auto bad : res.list("Failed")) {
      if (!bool_of(bad, "SenderFault", true))
        throw ports::QueueError("SQS " + action + " on " + url_ + ": " + text_of(bad, "Code"), ports::Failure::transient);
      failed[entry_index(bad, receipts.size(), action)] = true;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < receipts.size(); ++i)
      if (failed[i]) out.push_back(receipts[i]);
    return out;
  }

  // create=1: the queue and its dead-letter queue, made as `overhead aws-init` makes them.
  void create_queues() {
    SqsQueueProvision spec;
    spec.name = config_.queue_name;
    spec.visibility_s = static_cast<int>(ceil_seconds(config_.visibility));
    spec.max_receives = config_.max_receives;
    try {
      (void)provision_sqs_queue(client_->json_client, spec, config_.call_timeout, url_);
    } catch (const aws::JsonCallError& e) {
      throw ports::QueueError(e.what() + SqsClient::hint(e.code()), e.transient() ? ports::Failure::transient : ports::Failure::permanent);
    } catch (const std::runtime_error& e) {
      throw ports::QueueError(e.what(), ports::Failure::transient);
    }
  }

  void find_dead_letter_queue() {
    const json res = client_->call("GetQueueAttributes", {{"QueueUrl", queue_url_}, {"AttributeNames", {"RedrivePolicy"}}},
                                   config_.call_timeout, url_);
    const std::string policy = res.value("Attributes", json::object()).value("RedrivePolicy", std::string());
    if (policy.empty()) return;
    const json p = json::parse(policy, nullptr, false);
    const std::string arn = p.is_object() ? p.value("deadLetterTargetArn", std::string()) : std::string();
    const auto colon = arn.rfind(':');
    if (colon != std::string::npos) dlq_name_ = arn.substr(colon + 1);
  }

  std::shared_ptr<SqsClient> client_;
  const SqsConfig config_;
  const std::string url_;
  std::string queue_url_;
  std::string dlq_name_;
  std::mutex dlq_mutex_;
  std::shared_ptr<ports::Queue> dead_letters_;
};

}  // namespace

std::shared_ptr<ports::Queue> open_sqs_queue(const ports::BackendUrl& u, const ports::ClockMs&) {
  u.check_params({"region", "endpoint", "visibility_ms", "wait_s", "max_receives", "max_message_bytes", "timeout_ms",
                  "create"});
  SqsConfig c;
  c.queue_name = u.host;
  if (!u.has_authority || c.queue_name.empty() || (!u.path.empty() && u.path != "/"))
    throw std::invalid_argument(u.describe("queue", "expected sqs://QUEUE_NAME"));
  const auto region_param = u.params.count("region") ? std::optional<std::string>(u.param("region", "")) : std::nullopt;
  try {
    c.region = aws::resolve_region(region_param, aws::process_environment());
  } catch (const aws::CredentialError& e) {
    throw std::invalid_argument(u.describe("queue", e.what()));
  }
  c.endpoint = u.param("endpoint", "https://sqs." + c.region + ".amazonaws.com");
  try {
    c.host = aws::endpoint_host(c.endpoint);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(u.describe("queue", e.what()));
  }
  // SQS counts visibility in whole seconds: a timeout under one second is rounded up to one.
  c.visibility = milliseconds(u.int_param("visibility_ms", 30000, 0, ports::kMaxVisibilityMs));
  c.max_receives = static_cast<int>(u.int_param("max_receives", 0, 0, ports::kMaxReceivesBound));
  c.max_message_bytes =
      static_cast<std::size_t>(u.int_param("max_message_bytes", ports::kDefaultMaxMessageBytes, 1, ports::kMaxMessageBytesBound));
  c.max_wait_s = static_cast<int>(u.int_param("wait_s", 20, 0, 20));
  c.call_timeout = u.call_timeout();
  c.create = u.int_param("create", 0, 0, 1) == 1;
  auto client = std::make_shared<SqsClient>(aws::JsonServiceEndpoint{"sqs", "AmazonSQS", c.region, c.endpoint, c.host, "SQS"});
  return std::make_shared<SqsQueue>(std::move(client), std::move(c), u.redacted());
}

}  // namespace overhead::backends
