// aws_init: the SQS, DynamoDB and S3 calls behind `overhead aws-init` (see aws_init.hpp).
#include "cli/aws_init.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "aws/credentials.hpp"
#include "aws/http_client.hpp"
#include "aws/json_protocol.hpp"
#include "aws/retry.hpp"
#include "aws/sigv4.hpp"
#include "backends/aws_provision.hpp"
#include "backends/s3_object_store.hpp"
#include "ports/backend_url.hpp"

namespace overhead::cli {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr milliseconds kCallTimeout{15000};
constexpr milliseconds kTableWait = std::chrono::minutes(5);

std::string endpoint_for(const std::string& specific, const std::string& common) {
  return specific.empty() ? common : specific;
}

aws::JsonServiceEndpoint json_endpoint(const std::string& service, const std::string& prefix, const std::string& shown,
                                       const std::string& region, const std::string& endpoint) {
  aws::JsonServiceEndpoint e;
  e.service = service;
  e.target_prefix = prefix;
  e.region = region;
  e.endpoint = endpoint.empty() ? "https://" + service + "." + region + ".amazonaws.com" : endpoint;
  e.host = aws::endpoint_host(e.endpoint);
  e.shown_name = shown;
  return e;
}

// A failed call as the command reports it: the service's words, and what to check.
[[noreturn]] void fail(const aws::JsonCallError& e) {
  std::string hint;
  const std::string& code = e.code();
  if (code.find("AccessDenied") != std::string::npos)
    hint = " (the IAM policy must allow this action; README \"Running on AWS\" lists the policy for aws-init)";
  else if (code.find("Signature") != std::string::npos || code == "InvalidClientTokenId" ||
           code == "UnrecognizedClientException" || code == "ExpiredToken" || code == "ExpiredTokenException")
    hint = " (check the access key, the secret and the region)";
  else if (code == "credentials")
    hint = "";
  throw std::runtime_error(std::string(e.what()) + hint);
}

// The queue and its DLQ (backends/aws_provision.hpp), as the adapters make them with create=1.
void ensure_queue_pair(aws::JsonProtocolClient& sqs, const std::string& name, const AwsInitOptions& o,
                       const std::string& shown, AwsInitResult& out) {
  backends::SqsQueuePair pair;
  try {
    pair = backends::provision_sqs_queue(sqs, {name, o.visibility_s, o.max_receives}, kCallTimeout, shown);
  } catch (const aws::JsonCallError& e) {
    fail(e);
  }
  out.items.push_back({"queue", pair.queue.name, pair.queue.where, pair.queue.created});
  if (pair.dlq) out.items.push_back({"dlq", pair.dlq->name, pair.dlq->where, pair.dlq->created});
}

using ProvisionTable = backends::ProvisionedResource (*)(aws::JsonProtocolClient&, const std::string&, std::chrono::milliseconds,
                                                          std::chrono::milliseconds, const std::string&);

// A table made by `provision` (the records table with the seed's keys, or one beside it), waited on
// until ACTIVE; an existing table is checked.
AwsInitResult::Item ensure_table(aws::JsonProtocolClient& ddb, const std::string& name, const std::string& shown, ProvisionTable provision) {
  try {
    const auto table = provision(ddb, name, kCallTimeout, kTableWait, shown);
    return {"table", table.name, table.where, table.created};
  } catch (const aws::JsonCallError& e) {
    fail(e);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + ": delete it or choose another --prefix");
  }
}

// S3 answers in XML: the <Code> of an error, "" when there is none.
std::string xml_code(const std::string& body) {
  const auto start = body.find("<Code>");
  if (start == std::string::npos) return "";
  const auto end = body.find("</Code>", start);
  return end == std::string::npos ? "" : body.substr(start + 6, end - start - 6);
}

// HeadBucket, then CreateBucket when there is none: idempotent on AWS and on s3rver alike.
AwsInitResult::Item ensure_bucket(const std::string& bucket, const std::string& region, const std::string& endpoint) {
  const std::string url = "s3://" + bucket + "?region=" + region + (endpoint.empty() ? "" : "&endpoint=" + endpoint);
  const backends::S3Addressing where = backends::s3_addressing(ports::parse_backend_url(url));
  const std::string path = where.path_style ? "/" + aws::uri_encode(bucket) : "/";
  const std::string shown = where.base_url + path;
  auto http = std::make_shared<aws::HttpClient>();
  aws::CredentialProvider credentials(aws::process_environment(), http);
  aws::RetryPolicy policy;
  aws::Backoff backoff(policy);
  const std::string body =
      region == "us-east-1" ? std::string()
                            : "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>" +
                                  region + "</LocationConstraint></CreateBucketConfiguration>";
  auto send = [&](const std::string& method) {
    for (int attempt = 0;; ++attempt) {
      std::string last;
      try {
        const aws::Credentials creds = credentials.current();
        const std::string_view payload = method == "PUT" ? std::string_view(body) : std::string_view();
        aws::SignableRequest sreq{method, where.host, path, {}, {}, payload};
        const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
        aws::HttpRequest req;
        req.method = method;
        req.url = where.base_url + path;
        for (auto& h : aws::sign(sreq, creds.keys, aws::SigningScope{region, "s3", now, true, true}).as_list())
          req.headers.push_back(std::move(h));
        req.body = payload;
        req.timeout = kCallTimeout;
        aws::HttpResponse res = http->send(req);
        if (res.status < 500 && res.status != 429) return res;
        last = "HTTP " + std::to_string(res.status) + " " + xml_code(res.body);
      } catch (const aws::TransportError& e) {
        last = e.what();
      } catch (const aws::CredentialError& e) {
        throw std::runtime_error("S3 on " + shown + ": no credentials: " + e.what());
      }
      if (attempt + 1 >= policy.max_attempts) throw std::runtime_error("S3 " + method + " " + shown + ": " + last);
      std::this_thread::sleep_for(backoff.delay(attempt, true));
    }
  };
  AwsInitResult::Item item{"bucket", bucket, shown, false};
  const aws::HttpResponse head = send("HEAD");
  if (head.status == 200) return item;
  if (head.status == 403)
    throw std::runtime_error("S3 bucket " + bucket + " exists but this account may not use it (HeadBucket: 403): "
                             "it belongs to someone else, or the IAM policy lacks s3:ListBucket; choose another --prefix");
  if (head.status != 404)
    throw std::runtime_error("S3 HeadBucket " + shown + ": HTTP " + std::to_string(head.status));
  const aws::HttpResponse put = send("PUT");
  const std::string code = xml_code(put.body);
  if (put.status == 200) {
    item.created = true;
  } else if (code != "BucketAlreadyOwnedByYou") {
    std::string hint = code == "BucketAlreadyExists" ? " (bucket names are global: choose another --prefix)"
                       : code == "AccessDenied"      ? " (the IAM policy must allow s3:CreateBucket)"
                                                     : "";
    throw std::runtime_error("S3 CreateBucket " + shown + ": " + (code.empty() ? "HTTP " + std::to_string(put.status) : code) +
                             hint);
  }
  return item;
}

std::string with_endpoint(const std::string& url, const std::string& endpoint) {
  return endpoint.empty() ? url : url + "&endpoint=" + endpoint;
}

}  // namespace

AwsInitNames aws_init_names(const std::string& prefix) {
  if (prefix.empty() || prefix.size() > 40)
    throw std::invalid_argument("--prefix must have 1 to 40 characters (got " + std::to_string(prefix.size()) + ")");
  for (char c : prefix) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      throw std::invalid_argument("--prefix \"" + prefix +
                                  "\": only lower-case letters, digits and '-' (it names an S3 bucket too)");
  }
  if (prefix.front() == '-') throw std::invalid_argument("--prefix \"" + prefix + "\" must not start with '-'");
  const std::string table = prefix + "-experiment_records";
  return {prefix + "-experiment-prompt-queue", prefix + "-experiment-db-queue", table, prefix + "-experiment-results",
          table + std::string(backends::kKeysTableSuffix), table + std::string(backends::kBatchesTableSuffix)};
}

AwsInitResult aws_init(const AwsInitOptions& o) {
  const AwsInitNames names = aws_init_names(o.prefix);
  if (o.region.empty()) throw std::invalid_argument("--region is required");
  if (o.max_receives < 1 || o.max_receives > 1000)
    throw std::invalid_argument("--max-receives must be in 1..1000 (SQS's maxReceiveCount)");
  if (o.visibility_s < 0 || o.visibility_s > 43200)
    throw std::invalid_argument("--visibility-s must be in 0..43200 (SQS's VisibilityTimeout)");
  const std::string sqs_ep = endpoint_for(o.sqs_endpoint, o.endpoint);
  const std::string ddb_ep = endpoint_for(o.dynamodb_endpoint, o.endpoint);
  const std::string s3_ep = endpoint_for(o.s3_endpoint, o.endpoint);

  AwsInitResult out;
  auto http = std::make_shared<aws::HttpClient>();
  aws::JsonProtocolClient sqs(json_endpoint("sqs", "AmazonSQS", "SQS", o.region, sqs_ep), {}, http);
  const std::string sqs_shown = sqs.endpoint().endpoint;
  ensure_queue_pair(sqs, names.prompt_queue, o, sqs_shown, out);
  ensure_queue_pair(sqs, names.log_queue, o, sqs_shown, out);

  aws::JsonProtocolClient ddb(json_endpoint("dynamodb", "DynamoDB_20120810", "DynamoDB", o.region, ddb_ep), {}, http);
  out.items.push_back(ensure_table(ddb, names.table, ddb.endpoint().endpoint, &backends::provision_records_table));
  // The API keys' and the Batch API's stores beside the records (`overhead serve --store` on it).
  out.items.push_back(ensure_table(ddb, names.keys_table, ddb.endpoint().endpoint, &backends::provision_keys_table));
  out.items.push_back(ensure_table(ddb, names.batches_table, ddb.endpoint().endpoint, &backends::provision_batches_table));
  out.items.push_back(ensure_bucket(names.bucket, o.region, s3_ep));

  const std::string r = "?region=" + o.region;
  out.queue_url = with_endpoint("sqs://" + names.prompt_queue + r, sqs_ep);
  out.log_queue_url = with_endpoint("sqs://" + names.log_queue + r, sqs_ep);
  out.store_url = with_endpoint("dynamodb://" + names.table + r, ddb_ep);
  out.object_store_url = with_endpoint("s3://" + names.bucket + r, s3_ep);
  return out;
}

}  // namespace overhead::cli
