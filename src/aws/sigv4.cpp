#include "aws/sigv4.hpp"

#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <ctime>

#include "util/hex.hpp"

namespace overhead::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest sha256(std::string_view data) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data());
  return d;
}

Digest hmac(const void* key, std::size_t key_len, std::string_view data) {
  Digest d{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key, static_cast<int>(key_len), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       d.data(), &len);
  return d;
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Trims the ends and folds inner runs of spaces to one, as the canonical header value wants.
std::string canonical_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool pending_space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

// Removes "." and ".." segments and empty segments, keeping a leading and a trailing slash.
std::string normalise_path(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!seg.empty() && seg != ".") {
      segments.push_back(seg);
    }
    i = j + 1;
  }
  std::string out = "/";
  for (std::size_t k = 0; k < segments.size(); ++k) {
    if (k) out.push_back('/');
    out.append(segments[k]);
  }
  if (!segments.empty() && path.size() > 1 && path.back() == '/') out.push_back('/');
  return out;
}

std::string canonical_uri(std::string_view path, bool s3_path) {
  if (path.empty()) return "/";
  if (s3_path) return std::string(path);
  return uri_encode(normalise_path(path), true);
}

std::string canonical_query(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(uri_encode(k), uri_encode(v));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out.push_back('&');
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

// The signing key depends only on the secret, the day, the region and the service, so it is
// computed once per day per thread instead of four HMACs per request.
struct KeyCacheEntry {
  std::string secret, day, region, service;
  Digest key{};
};

const Digest& signing_key(const std::string& secret, const std::string& day, const std::string& region,
                          const std::string& service) {
  thread_local std::array<KeyCacheEntry, 4> cache;
  thread_local std::size_t next = 0;
  for (const auto& e : cache) {
    if (e.day == day && e.region == region && e.service == service && e.secret == secret && !e.day.empty()) return e.key;
  }
  std::string k = "AWS4" + secret;
  Digest d = hmac(k.data(), k.size(), day);
  d = hmac(d.data(), d.size(), region);
  d = hmac(d.data(), d.size(), service);
  d = hmac(d.data(), d.size(), "aws4_request");
  KeyCacheEntry& slot = cache[next];
  next = (next + 1) % cache.size();
  slot = KeyCacheEntry{secret, day, region, service, d};
  return slot.key;
}

}  // namespace

void uri_encode(std::string& out, std::string_view in, bool keep_slash) {
  for (unsigned char c : in) {
    if (unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back("0123456789ABCDEF"[c >> 4]);
      out.push_back("0123456789ABCDEF"[c & 0xF]);
    }
  }
}

std::string uri_encode(std::string_view in, bool keep_slash) {
  std::string out;
  out.reserve(in.size() + 8);
  uri_encode(out, in, keep_slash);
  return out;
}

std::string encode_query(const std::vector<std::pair<std::string, std::string>>& query) {
  std::string out;
  for (const auto& [k, v] : query) {
    if (!out.empty()) out.push_back('&');
    uri_encode(out, k, false);
    out.push_back('=');
    uri_encode(out, v, false);
  }
  return out;
}

std::string amz_date(std::int64_t epoch_seconds) {
  std::time_t t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string sha256_hex(std::string_view data) {
  Digest d = sha256(data);
  std::string out;
  out.reserve(64);
  util::append_hex(out, d.data(), d.size());
  return out;
}

std::vector<std::pair<std::string, std::string>> SignedHeaders::as_list() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("Authorization", authorization);
  out.emplace_back("X-Amz-Date", amz_date);
  if (!content_sha256.empty()) out.emplace_back("X-Amz-Content-Sha256", content_sha256);
  if (!security_token.empty()) out.emplace_back("X-Amz-Security-Token", security_token);
  return out;
}

SignedHeaders sign(const SignableRequest& request, const SigningKeyPair& keys, const SigningScope& scope,
                   SigningTrace* trace) {
  SignedHeaders out;
  out.amz_date = amz_date(scope.epoch_seconds);
  const std::string day = out.amz_date.substr(0, 8);
  const std::string payload_hash = sha256_hex(request.payload);
  if (scope.send_content_sha256) out.content_sha256 = payload_hash;
  if (!keys.session_token.empty()) out.security_token = keys.session_token.reveal();

  // Lower-cased names, canonical values; repeated names join their values with commas.
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(request.headers.size() + 4);
  headers.emplace_back("host", request.host);
  headers.emplace_back("x-amz-date", out.amz_date);
  if (!out.content_sha256.empty()) headers.emplace_back("x-amz-content-sha256", out.content_sha256);
  if (!out.security_token.empty()) headers.emplace_back("x-amz-security-token", out.security_token);
  for (const auto& [name, value] : request.headers) headers.emplace_back(lower(name), canonical_value(value));
  std::stable_sort(headers.begin(), headers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  std::string canonical_headers;
  std::string signed_headers;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    if (i > 0 && headers[i].first == headers[i - 1].first) {
      canonical_headers.pop_back();  // the newline
      canonical_headers.push_back(',');
    } else {
      if (!signed_headers.empty()) signed_headers.push_back(';');
      signed_headers += headers[i].first;
      canonical_headers += headers[i].first;
      canonical_headers.push_back(':');
    }
    canonical_headers += headers[i].second;
    canonical_headers.push_back('\n');
  }

  std::string canonical;
  canonical.reserve(256 + canonical_headers.size());
  canonical += request.method;
  canonical.push_back('\n');
  canonical += canonical_uri(request.path, scope.s3_path);
  canonical.push_back('\n');
  canonical += canonical_query(request.query);
  canonical.push_back('\n');
  canonical += canonical_headers;
  canonical.push_back('\n');
  canonical += signed_headers;
  canonical.push_back('\n');
  canonical += payload_hash;

  const std::string credential_scope = day + "/" + scope.region + "/" + scope.service + "/aws4_request";
  std::string to_sign;
  to_sign.reserve(160);
  to_sign += kAlgorithm;
  to_sign.push_back('\n');
  to_sign += out.amz_date;
  to_sign.push_back('\n');
  to_sign += credential_scope;
  to_sign.push_back('\n');
  to_sign += sha256_hex(canonical);

  const Digest& key = signing_key(keys.secret_access_key.reveal(), day, scope.region, scope.service);
  Digest sig = hmac(key.data(), key.size(), to_sign);
  std::string signature;
  signature.reserve(64);
  util::append_hex(signature, sig.data(), sig.size());

  out.authorization.reserve(200);
  out.authorization += kAlgorithm;
  out.authorization += " Credential=";
  out.authorization += keys.access_key_id;
  out.authorization.push_back('/');
  out.authorization += credential_scope;
  out.authorization += ", SignedHeaders=";
  out.authorization += signed_headers;
  out.authorization += ", Signature=";
  out.authorization += signature;
  if (trace) *trace = SigningTrace{std::move(canonical), std::move(to_sign), std::move(signature)};
  return out;
}

}  // namespace overhead::aws
