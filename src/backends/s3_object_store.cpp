// S3ObjectStore: the s3:// adapter (see s3_object_store.hpp for the addressing and the errors).
#include "backends/s3_object_store.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "aws/credentials.hpp"
#include "aws/http_client.hpp"
#include "aws/json_protocol.hpp"  // is_expired_credentials_code
#include "aws/retry.hpp"
#include "aws/sigv4.hpp"

namespace overhead::backends {

namespace {

using std::chrono::milliseconds;
using ports::Failure;
using ports::ObjectStoreError;


// The text of the first <Name>...</Name> in an S3 XML error body; empty when absent. S3's error
// document is flat (<Error><Code/><Message/>...), so this is all the XML it takes.
std::string xml_field(const std::string& body, std::string_view name) {
  const std::string open = "<" + std::string(name) + ">";
  const std::string close = "</" + std::string(name) + ">";
  const auto begin = body.find(open);
  if (begin == std::string::npos) return {};
  const auto end = body.find(close, begin + open.size());
  if (end == std::string::npos) return {};
  return body.substr(begin + open.size(), end - begin - open.size());
}

bool transient_code(const std::string& code, long status) {
  return status >= 500 || status == 429 || code == "SlowDown" || code == "Throttling" ||
         code == "ThrottlingException" || code == "RequestTimeout" || code == "InternalError" ||
         code == "ServiceUnavailable" || code == "RequestTimeTooSkewed";
}

std::string hint(const std::string& code, const S3Addressing& c) {
  if (code == "NoSuchBucket") return " (check the bucket name \"" + c.bucket + "\" and the region; create the bucket first)";
  if (code == "NoSuchKey") return "";
  if (code == "AccessDenied" || code == "AllAccessDisabled")
    return " (check the IAM policy allows s3:PutObject/s3:GetObject on arn:aws:s3:::" + c.bucket + "/*)";
  if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken" ||
      code == "ExpiredToken" || code == "TokenRefreshRequired")
    return " (check the access key, the secret, the session token and the region)";
  if (code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException")
    return " (the bucket is in another region: set ?region= to the bucket's region)";
  return "";
}

// A key as the port allows it: relative, '/'-separated, no "..".
void check_key(const std::string& key, const std::string& url) {
  if (key.empty() || key.front() == '/' || key.find("..") != std::string::npos)
    throw std::invalid_argument(url + ": bad object key \"" + key + "\"");
}

std::string content_type_of(const std::string& key) {
  if (key.ends_with(".csv")) return "text/csv";
  if (key.ends_with(".json")) return "application/json";
  if (key.ends_with(".jsonl")) return "application/x-ndjson";
  return "application/octet-stream";
}

// One S3 call as the store makes it: the object, the query (multipart's `uploads`, `uploadId`,
// `partNumber`), a Range, and which answers are a success besides 200 and 204.
struct S3Call {
  std::string action;  // for errors: "PutObject", "UploadPart", ...
  std::string method;
  std::string key;
  std::string_view payload;
  std::vector<std::pair<std::string, std::string>> query;
  std::string range;
  std::string content_type;  // sent (and signed) when not empty
};

struct S3Answer {
  long status = 0;
  std::string body;
  std::string etag;
};

class S3ObjectStore final : public ports::ObjectStore {
 public:
  S3ObjectStore(S3Addressing config, std::string shown_url) : config_(std::move(config)), url_(std::move(shown_url)) {}

  void put(const std::string& key, std::string_view bytes) override {
    check_key(key, url_);
    (void)call({"PutObject", "PUT", key, bytes, {}, {}, content_type_of(key)});
  }

  std::string get(const std::string& key) override {
    check_key(key, url_);
    return call({"GetObject", "GET", key, {}, {}, {}, {}}).body;
  }

  // GetObject with a Range header: 206 with the piece, 416 (InvalidRange) at or past the end, and
  // a 200 with the whole object from a server that ignores Range (cut here, so the caller's
  // memory bound is the object's size only then).
  std::string get_range(const std::string& key, std::uint64_t offset, std::size_t max_bytes) override {
    check_key(key, url_);
    if (max_bytes == 0) return {};
    const std::string range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + max_bytes - 1);
    const S3Answer a = call({"GetObject", "GET", key, {}, {}, range, {}});
    if (a.status == 416) return {};
    if (a.status == 206) return a.body;
    return offset >= a.body.size() ? std::string() : a.body.substr(static_cast<std::size_t>(offset), max_bytes);
  }

  std::unique_ptr<ports::ObjectWriter> write(const std::string& key) override;

  // DeleteObject: S3 answers 204 whether or not the key was there (its delete is idempotent), so
  // true means "not there now".
  bool remove(const std::string& key) override {
    check_key(key, url_);
    (void)call({"DeleteObject", "DELETE", key, {}, {}, {}, {}});
    return true;
  }

  const std::string& url() const override { return url_; }

  // One S3 call with retries; the answer of a success (200, 204, or with a range 206 and 416).
  // Throws ObjectStoreError.
  S3Answer call(const S3Call& c) {
    const std::string wire_path = s3_object_path(config_, c.key);
    const std::string where = "S3 " + c.action + " " + c.key + " on " + url_;
    std::string last;
    bool refreshed = false;  // one fresh set of credentials per call after an ExpiredToken answer
    for (int attempt = 0;; ++attempt) {
      bool throttled = false;
      try {
        const aws::Credentials creds = credentials_.current();
        aws::SignableRequest sreq{c.method, config_.host, wire_path, c.query, {}, c.payload};
        if (!c.content_type.empty()) sreq.headers.emplace_back("content-type", c.content_type);
        if (!c.range.empty()) sreq.headers.emplace_back("range", c.range);
        const auto now =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        aws::SigningScope scope{config_.region, "s3", now, /*s3_path=*/true, /*send_content_sha256=*/true};
        const aws::SignedHeaders signed_headers = aws::sign(sreq, creds.keys, scope);
        aws::HttpRequest req;
        req.method = c.method;
        req.url = config_.base_url + wire_path + (c.query.empty() ? std::string() : "?" + aws::encode_query(c.query));
        if (!c.content_type.empty()) req.headers.emplace_back("Content-Type", c.content_type);
        if (!c.range.empty()) req.headers.emplace_back("Range", c.range);
        for (auto& h : signed_headers.as_list()) req.headers.push_back(h);
        req.body = c.payload;
        req.timeout = config_.call_timeout;
        aws::HttpResponse res = http_->send(req);
        std::string code = xml_field(res.body, "Code");
        // CompleteMultipartUpload can fail after its 200 is sent: the error is then in the body.
        const bool error_in_200 = res.status == 200 && c.method == "POST" && res.body.find("<Error>") != std::string::npos;
        if (!error_in_200 &&
            (res.status == 200 || res.status == 204 || (!c.range.empty() && (res.status == 206 || res.status == 416))))
          return {res.status, std::move(res.body), std::string(res.header("etag"))};
        const std::string message = xml_field(res.body, "Message");
        if (code.empty()) code = "HTTP " + std::to_string(res.status);
        last = where + ": " + code + (message.empty() ? "" : ": " + message);
        if (aws::is_expired_credentials_code(code) && !refreshed && credentials_.expire(creds.keys.access_key_id)) {
          refreshed = true;
          --attempt;  // a retry with fresh credentials, at once
          continue;
        }
        throttled = code == "SlowDown" || code == "Throttling" || code == "ThrottlingException" || res.status == 429 ||
                    res.status == 503;
        if (!transient_code(code, error_in_200 ? 500 : res.status))
          throw ObjectStoreError(last + hint(code, config_), Failure::permanent);
      } catch (const aws::TransportError& e) {
        last = where + ": " + e.what();
      } catch (const aws::CredentialError& e) {
        throw ObjectStoreError(where + ": no credentials: " + e.what(), Failure::permanent);
      }
      if (attempt + 1 >= retry_.max_attempts) throw ObjectStoreError(last, Failure::transient);
      milliseconds pause;
      {
        std::lock_guard lock(backoff_mutex_);
        pause = backoff_.delay(attempt, throttled);
      }
      std::this_thread::sleep_for(pause);
    }
  }

 private:
  const S3Addressing config_;
  const std::string url_;
  std::shared_ptr<aws::HttpClient> http_ = std::make_shared<aws::HttpClient>();
  aws::CredentialProvider credentials_{aws::process_environment(), http_};
  aws::RetryPolicy retry_;
  std::mutex backoff_mutex_;
  aws::Backoff backoff_{retry_};
};

// An object written in pieces with S3's multipart upload: the pieces are gathered into parts of
// kPartBytes (S3's smallest part is 5 MiB, all but the last), each sent as it fills
// (UploadPart), and CompleteMultipartUpload makes the object appear whole. An object smaller than
// one part is a single PutObject. Dropped unfinished, the upload is aborted (its parts are billed
// until then), best effort: the object is not there either way.
class S3MultipartWriter final : public ports::ObjectWriter {
 public:
  static constexpr std::size_t kPartBytes = std::size_t{8} << 20;

  S3MultipartWriter(S3ObjectStore& store, std::string key) : store_(store), key_(std::move(key)) {}
  ~S3MultipartWriter() override {
    if (finished_ || upload_id_.empty()) return;
    try {
      (void)store_.call({"AbortMultipartUpload", "DELETE", key_, {}, {{"uploadId", upload_id_}}, {}, {}});
    } catch (const std::exception&) {
      // Left to the bucket's lifecycle rule for incomplete uploads: the object was never made.
    }
  }
  S3MultipartWriter(const S3MultipartWriter&) = delete;
  S3MultipartWriter& operator=(const S3MultipartWriter&) = delete;

  void append(std::string_view bytes) override {
    while (!bytes.empty()) {
      const std::size_t take = std::min(bytes.size(), kPartBytes - buffer_.size());
      buffer_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (buffer_.size() == kPartBytes) send_part();
    }
  }

  void finish() override {
    if (upload_id_.empty()) {
      store_.put(key_, buffer_);
    } else {
      if (!buffer_.empty()) send_part();
      std::string xml = "<CompleteMultipartUpload>";
      for (std::size_t i = 0; i < etags_.size(); ++i)
        xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags_[i] + "</ETag></Part>";
      xml += "</CompleteMultipartUpload>";
      (void)store_.call({"CompleteMultipartUpload", "POST", key_, xml, {{"uploadId", upload_id_}}, {}, "application/xml"});
    }
    finished_ = true;
  }

 private:
  void send_part() {
    if (upload_id_.empty()) {
      const S3Answer a = store_.call({"CreateMultipartUpload", "POST", key_, {}, {{"uploads", ""}}, {}, content_type_of(key_)});
      upload_id_ = xml_field(a.body, "UploadId");
      if (upload_id_.empty())
        throw ObjectStoreError("S3 CreateMultipartUpload " + key_ + " on " + store_.url() + ": no UploadId in the answer",
                               Failure::transient);
    }
    const std::string number = std::to_string(etags_.size() + 1);
    const S3Answer a =
        store_.call({"UploadPart", "PUT", key_, buffer_, {{"partNumber", number}, {"uploadId", upload_id_}}, {}, "application/octet-stream"});
    if (a.etag.empty())
      throw ObjectStoreError("S3 UploadPart " + key_ + " on " + store_.url() + ": no ETag in the answer", Failure::transient);
    etags_.push_back(a.etag);
    buffer_.clear();
  }

  S3ObjectStore& store_;
  std::string key_;
  std::string upload_id_;
  std::vector<std::string> etags_;  // part i + 1's ETag, as S3 sent it (quoted)
  std::string buffer_;
  bool finished_ = false;
};

std::unique_ptr<ports::ObjectWriter> S3ObjectStore::write(const std::string& key) {
  check_key(key, url_);
  return std::make_unique<S3MultipartWriter>(*this, key);
}

// S3's bucket naming rules (3-63 characters of a-z 0-9 . -, starting and ending with a letter or
// digit): anything else cannot be addressed, so it is refused before any call.
bool valid_bucket(const std::string& b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char ch : b)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-')) return false;
  auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  return alnum(b.front()) && alnum(b.back());
}

}  // namespace

S3Addressing s3_addressing(const ports::BackendUrl& u) {
  u.check_params({"region", "endpoint", "timeout_ms"});
  S3Addressing c;
  c.bucket = u.host;
  if (!u.has_authority || c.bucket.empty())
    throw std::invalid_argument(u.describe("object store", "expected s3://BUCKET[/PREFIX]"));
  if (!valid_bucket(c.bucket))
    throw std::invalid_argument(u.describe(
        "object store", "bad bucket name \"" + c.bucket + "\" (3-63 characters of a-z, 0-9, '.', '-')"));
  if (u.port != 0) throw std::invalid_argument(u.describe("object store", "a bucket has no port; use ?endpoint="));
  std::string prefix = u.path;
  while (prefix.starts_with('/')) prefix.erase(0, 1);
  while (prefix.ends_with('/')) prefix.pop_back();
  if (prefix.find("..") != std::string::npos)
    throw std::invalid_argument(u.describe("object store", "the prefix must not contain \"..\""));
  c.prefix = prefix;
  const auto region_param = u.params.count("region") ? std::optional<std::string>(u.param("region", "")) : std::nullopt;
  try {
    c.region = aws::resolve_region(region_param, aws::process_environment());
  } catch (const aws::CredentialError& e) {
    throw std::invalid_argument(u.describe("object store", e.what()));
  }
  c.call_timeout = u.call_timeout();
  if (u.params.count("endpoint")) {
    std::string endpoint = u.param("endpoint", "");
    while (endpoint.ends_with('/')) endpoint.pop_back();
    const auto sep = endpoint.find("://");
    if (sep == std::string::npos || (endpoint.substr(0, sep) != "http" && endpoint.substr(0, sep) != "https"))
      throw std::invalid_argument(u.describe("object store", "endpoint must be http://HOST[:PORT] or https://HOST[:PORT]"));
    c.host = endpoint.substr(sep + 3);
    if (c.host.empty() || c.host.find('/') != std::string::npos)
      throw std::invalid_argument(u.describe("object store", "endpoint must not have a path"));
    c.base_url = endpoint;
    c.path_style = true;
  } else if (c.bucket.find('.') != std::string::npos) {
    c.host = "s3." + c.region + ".amazonaws.com";
    c.base_url = "https://" + c.host;
    c.path_style = true;
  } else {
    c.host = c.bucket + ".s3." + c.region + ".amazonaws.com";
    c.base_url = "https://" + c.host;
  }
  return c;
}

std::string s3_object_path(const S3Addressing& where, const std::string& key) {
  const std::string object = where.prefix.empty() ? key : where.prefix + "/" + key;
  return (where.path_style ? "/" + aws::uri_encode(where.bucket) : std::string()) + "/" +
         aws::uri_encode(object, /*keep_slash=*/true);
}

std::unique_ptr<ports::ObjectStore> open_s3_object_store(const ports::BackendUrl& u) {
  return std::make_unique<S3ObjectStore>(s3_addressing(u), u.redacted());
}

}  // namespace overhead::backends
