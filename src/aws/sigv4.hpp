// AWS Signature Version 4 (header-based, AWS4-HMAC-SHA256) on OpenSSL.
//
// Why not libcurl's CURLOPT_AWS_SIGV4: checked against 7.88.1, it signs the query string in the
// order sent instead of sorted (GET /?Param2=value2&Param1=value1 gets a signature the AWS signer
// does not give), sends no x-amz-content-sha256 for S3, and sends X-Amz-Date twice when the caller
// sets it (needed to sign at a chosen time). This signer follows the published algorithm:
// canonical request -> string to sign -> HMAC chain over day/region/service.
//
// The caller describes the request as it will go on the wire; sign() returns the headers to add.
// Paths: for every service but S3 the path is normalised (dot segments, repeated slashes) and
// percent-encoded once more, as the AWS SDKs do; for S3 (`s3_path = true`) the path is signed
// exactly as given, which must already be the encoded wire path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aws/secret.hpp"

namespace overhead::aws {

struct SigningKeyPair {
  std::string access_key_id;
  Secret secret_access_key;
  Secret session_token;  // empty for long-term keys
};

struct SignableRequest {
  std::string method;  // "GET", "POST", ...
  std::string host;    // the Host header: name, and ":port" when not the scheme's default
  std::string path;    // see the header comment; "/" when empty
  // Query parameters, decoded; they are encoded and sorted for signing. The wire query must carry
  // the same parameters (encode_query() builds it).
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign besides host and x-amz-* added by sign(): name (any case), value.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view payload;
};

struct SigningScope {
  std::string region;
  std::string service;  // "sqs", "dynamodb", "s3"
  std::int64_t epoch_seconds = 0;
  bool s3_path = false;               // sign the path as given (S3); else normalise and encode twice
  bool send_content_sha256 = false;   // add x-amz-content-sha256 (S3 requires it)
};

// The headers sign() adds; the Authorization value reveals no secret (only the key id and an HMAC).
struct SignedHeaders {
  std::string authorization;
  std::string amz_date;          // x-amz-date
  std::string content_sha256;    // x-amz-content-sha256, when requested
  std::string security_token;    // x-amz-security-token, when the key pair has one
  std::vector<std::pair<std::string, std::string>> as_list() const;
};

// The intermediate strings, for tests and for the diagnostic of a signature mismatch.
struct SigningTrace {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;  // hex
};

SignedHeaders sign(const SignableRequest& request, const SigningKeyPair& keys, const SigningScope& scope,
                   SigningTrace* trace = nullptr);

// RFC 3986 percent-encoding of everything but A-Z a-z 0-9 - . _ ~ (and '/' when keep_slash).
void uri_encode(std::string& out, std::string_view in, bool keep_slash);
std::string uri_encode(std::string_view in, bool keep_slash = false);
// "a=1&b=x%20y" in the order given (the signer sorts its own copy).
std::string encode_query(const std::vector<std::pair<std::string, std::string>>& query);
// YYYYMMDD'T'HHMMSS'Z' of a Unix time.
std::string amz_date(std::int64_t epoch_seconds);
std::string sha256_hex(std::string_view data);

}  // namespace overhead::aws
