// SqsQueue: the sqs:// adapter (see sqs_queue.hpp for the mapping onto SQS calls).
#include "backends/sqs_queue.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "aws/credentials.hpp"
#include "aws/json_protocol.hpp"

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
  std::size_t max_message_bytes = pipe::kDefaultMaxMessageBytes;
  milliseconds call_timeout{pipe::kDefaultCallTimeout};
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

  // One SQS JSON call with retries; returns the parsed answer. Throws QueueError.
  json call(const std::string& action, const json& request, milliseconds timeout, const std::string& shown_url) {
    std::string body;
    try {
      body = json_client.call(action, request.dump(), timeout, shown_url);
    } catch (const aws::JsonCallError& e) {
      if (e.transient()) throw pipe::QueueError(e.what(), pipe::Failure::transient);
      throw pipe::QueueError(e.what() + hint(e.code()), pipe::Failure::permanent);
    }
    if (body.empty()) return json::object();
    json answer = json::parse(body, nullptr, false);
    if (answer.is_discarded())
      throw pipe::QueueError("SQS " + action + " on " + shown_url + ": the answer is not JSON", pipe::Failure::transient);
    return answer;
  }
};

std::int64_t ceil_seconds(milliseconds ms) { return (ms.count() + 999) / 1000; }

class SqsQueue final : public pipe::Queue {
 public:
  SqsQueue(std::shared_ptr<SqsClient> client, SqsConfig config, std::string shown_url)
      : client_(std::move(client)), config_(std::move(config)), url_(std::move(shown_url)) {
    if (config_.create) create_queues();
    queue_url_ = client_->call("GetQueueUrl", {{"QueueName", config_.queue_name}}, config_.call_timeout, url_)
                     .value("QueueUrl", std::string());
    if (queue_url_.empty()) throw pipe::QueueError("SQS GetQueueUrl on " + url_ + ": no QueueUrl in the answer");
    find_dead_letter_queue();
  }

  std::vector<pipe::SendOutcome> send_batch(std::span<const std::string> bodies) override {
    const auto too_large = pipe::check_send_batch(bodies, config_.max_message_bytes, url_);
    std::vector<pipe::SendOutcome> out(bodies.size());
    json entries = json::array();
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (too_large[i]) out[i].failure = too_large[i];
      else entries.push_back({{"Id", std::to_string(i)}, {"MessageBody", bodies[i]}});
    }
    if (entries.empty()) return out;
    const json res = client_->call("SendMessageBatch", {{"QueueUrl", queue_url_}, {"Entries", entries}},
                                   config_.call_timeout, url_);
    for (const auto& ok : res.value("Successful", json::array()))
      out.at(std::stoul(ok.at("Id").get<std::string>())).id = ok.at("MessageId").get<std::string>();
    for (const auto& bad : res.value("Failed", json::array())) {
      const std::string code = bad.value("Code", std::string());
      out.at(std::stoul(bad.at("Id").get<std::string>())).failure =
          pipe::EntryFailure{!bad.value("SenderFault", true) || aws::is_transient_code(code),
                             "SQS refused the message: " + code + ": " + bad.value("Message", std::string())};
    }
    return out;
  }

  std::vector<pipe::Message> receive(std::size_t max, milliseconds wait) override {
    if (max < 1 || max > pipe::kMaxQueueBatch)
      throw pipe::QueueError(url_ + ": receive takes 1..10 messages, not " + std::to_string(max));
    const std::int64_t wait_s = std::min<std::int64_t>(ceil_seconds(wait), config_.max_wait_s);
    const json req = {{"QueueUrl", queue_url_},
                      {"MaxNumberOfMessages", max},
                      {"WaitTimeSeconds", wait_s},
                      {"VisibilityTimeout", ceil_seconds(config_.visibility)},
                      {"AttributeNames", {"ApproximateReceiveCount"}},
                      {"MessageSystemAttributeNames", {"ApproximateReceiveCount"}}};
    const json res = client_->call("ReceiveMessage", req, config_.call_timeout + milliseconds(wait_s * 1000), url_);
    std::vector<pipe::Message> out;
    for (const auto& m : res.value("Messages", json::array())) {
      pipe::Message msg;
      msg.id = m.at("MessageId").get<std::string>();
      msg.receipt = m.at("ReceiptHandle").get<std::string>();
      msg.body = m.at("Body").get<std::string>();
      const json attrs = m.value("Attributes", json::object());
      msg.receive_count = std::stoi(attrs.value("ApproximateReceiveCount", std::string("1")));
      out.push_back(std::move(msg));
    }
    return out;
  }

  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override {
    return by_receipt("DeleteMessageBatch", receipts, json());
  }

  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                   milliseconds timeout) override {
    return by_receipt("ChangeMessageVisibilityBatch", receipts, ceil_seconds(timeout));
  }

  pipe::QueueCounts counts() override {
    const json res = client_->call(
        "GetQueueAttributes",
        {{"QueueUrl", queue_url_},
         {"AttributeNames", {"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}}},
        config_.call_timeout, url_);
    const json attrs = res.value("Attributes", json::object());
    return pipe::QueueCounts{std::stoul(attrs.value("ApproximateNumberOfMessages", std::string("0"))),
                             std::stoul(attrs.value("ApproximateNumberOfMessagesNotVisible", std::string("0")))};
  }

  std::shared_ptr<pipe::Queue> dead_letter_queue() override {
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
                                      const json& visibility_s) {
    if (receipts.empty()) return {};
    if (receipts.size() > pipe::kMaxQueueBatch)
      throw pipe::QueueError(url_ + ": " + action + " takes at most 10 receipts");
    for (std::size_t i = 0; i < receipts.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (receipts[i] == receipts[j]) throw pipe::QueueError(url_ + ": " + action + ": a receipt appears twice");
    json entries = json::array();
    for (std::size_t i = 0; i < receipts.size(); ++i) {
      json e = {{"Id", std::to_string(i)}, {"ReceiptHandle", receipts[i]}};
      if (!visibility_s.is_null()) e["VisibilityTimeout"] = visibility_s;
      entries.push_back(std::move(e));
    }
    const json res = client_->call(action, {{"QueueUrl", queue_url_}, {"Entries", entries}}, config_.call_timeout, url_);
    std::vector<bool> failed(receipts.size(), false);
    for (const auto& bad : res.value("Failed", json::array())) {
      if (!bad.value("SenderFault", true))
        throw pipe::QueueError("SQS " + action + " on " + url_ + ": " + bad.value("Code", std::string()),
                               pipe::Failure::transient);
      failed.at(std::stoul(bad.at("Id").get<std::string>())) = true;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < receipts.size(); ++i)
      if (failed[i]) out.push_back(receipts[i]);
    return out;
  }

  std::string arn_of(const std::string& queue_url) {
    const json res = client_->call("GetQueueAttributes", {{"QueueUrl", queue_url}, {"AttributeNames", {"QueueArn"}}},
                                   config_.call_timeout, url_);
    return res.value("Attributes", json::object()).value("QueueArn", std::string());
  }

  // CreateQueue is idempotent in SQS for the same attributes, so it runs every time create=1.
  void create_queues() {
    json attrs = {{"VisibilityTimeout", std::to_string(ceil_seconds(config_.visibility))}};
    if (config_.max_receives > 0) {
      const std::string dlq_url =
          client_->call("CreateQueue", {{"QueueName", config_.queue_name + "-dlq"}}, config_.call_timeout, url_)
              .value("QueueUrl", std::string());
      const json policy = {{"deadLetterTargetArn", arn_of(dlq_url)}, {"maxReceiveCount", config_.max_receives}};
      attrs["RedrivePolicy"] = policy.dump();
    }
    (void)client_->call("CreateQueue", {{"QueueName", config_.queue_name}, {"Attributes", attrs}}, config_.call_timeout,
                        url_);
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
  std::shared_ptr<pipe::Queue> dead_letters_;
};

}  // namespace

std::shared_ptr<pipe::Queue> open_sqs_queue(const pipe::BackendUrl& u, const pipe::ClockMs&) {
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
  c.visibility = milliseconds(u.int_param("visibility_ms", 30000, 0, pipe::kMaxVisibilityMs));
  c.max_receives = static_cast<int>(u.int_param("max_receives", 0, 0, pipe::kMaxReceivesBound));
  c.max_message_bytes =
      static_cast<std::size_t>(u.int_param("max_message_bytes", pipe::kDefaultMaxMessageBytes, 1, pipe::kMaxMessageBytesBound));
  c.max_wait_s = static_cast<int>(u.int_param("wait_s", 20, 0, 20));
  c.call_timeout = u.call_timeout();
  c.create = u.int_param("create", 0, 0, 1) == 1;
  auto client = std::make_shared<SqsClient>(aws::JsonServiceEndpoint{"sqs", "AmazonSQS", c.region, c.endpoint, c.host, "SQS"});
  return std::make_shared<SqsQueue>(std::move(client), std::move(c), u.redacted());
}

}  // namespace overhead::backends
