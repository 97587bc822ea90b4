// The AWS credential chain and region resolution, as the AWS SDKs order them:
//   1. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN;
//   2. AWS_PROFILE (default "default") in ~/.aws/credentials and ~/.aws/config
//      (paths overridable by AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE);
//   3. the EC2 instance metadata service, IMDSv2 (token first), unless AWS_EC2_METADATA_DISABLED=true.
// CredentialProvider caches what the chain found and refreshes temporary credentials before they
// expire. Secret parts stay in Secret; no error text built here contains them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "aws/http_client.hpp"
#include "aws/sigv4.hpp"

namespace overhead::aws {

class CredentialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads an environment variable; tests pass their own so they need not touch the process env.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup process_environment();

struct Credentials {
  SigningKeyPair keys;
  // Set for temporary credentials (IMDS); long-term keys never expire.
  std::optional<std::chrono::system_clock::time_point> expiration;
  std::string source;  // "environment", "profile NAME", "imds role ROLE": for messages, never secret
};

// Link 1. nullopt when AWS_ACCESS_KEY_ID is unset; an error when only half of the pair is set.
std::optional<Credentials> credentials_from_environment(const EnvLookup& env);

// Link 2. nullopt when neither file has the profile and AWS_PROFILE was not set explicitly; an
// error for a named profile that is missing, a profile without both keys, or a malformed file.
std::optional<Credentials> credentials_from_profile(const EnvLookup& env);

// The `region` of the active profile in the config file, when there is one.
std::optional<std::string> region_from_profile(const EnvLookup& env);

// Region: the URL's parameter, then AWS_REGION, then AWS_DEFAULT_REGION, then the profile.
// Throws CredentialError naming all four places when none has one.
std::string resolve_region(const std::optional<std::string>& url_region, const EnvLookup& env);

struct ImdsOptions {
  std::string endpoint = "http://169.254.169.254";  // AWS_EC2_METADATA_SERVICE_ENDPOINT overrides
  std::chrono::milliseconds timeout{1000};
  int token_ttl_seconds = 21600;
};

// Link 3: one IMDSv2 round (token, role name, role credentials). Throws CredentialError.
Credentials credentials_from_imds(HttpClient& http, const ImdsOptions& options);

// Whether IMDS may be asked (AWS_EC2_METADATA_DISABLED is not "true"), and where.
bool imds_enabled(const EnvLookup& env);
ImdsOptions imds_options_from(const EnvLookup& env);

struct CredentialProviderOptions {
  // Temporary credentials are fetched again this long before their Expiration.
  std::chrono::seconds refresh_margin{300};
  std::function<std::chrono::system_clock::time_point()> now = [] { return std::chrono::system_clock::now(); };
};

// Thread-safe: the first caller walks the chain; later callers get the cached credentials until
// they are within refresh_margin of expiring, then one caller refreshes while the others wait.
class CredentialProvider {
 public:
  CredentialProvider(EnvLookup env, std::shared_ptr<HttpClient> http, CredentialProviderOptions options = {});

  // Throws CredentialError when no link of the chain yields credentials (the message lists them).
  Credentials current();

  // The service answered that `rejected` (the access key id a request was signed with) has expired
  // (ExpiredToken): the cached set is dropped so the next current() walks the chain again, as the
  // AWS SDKs refresh on that answer, since a session can end before its stated Expiration. Returns
  // whether a new set may differ: false for long-term keys, which no refresh can change.
  bool expire(const std::string& rejected);

 private:
  Credentials resolve_chain();

  EnvLookup env_;
  std::shared_ptr<HttpClient> http_;
  CredentialProviderOptions options_;
  std::mutex mutex_;
  std::optional<Credentials> cached_;
};

}  // namespace overhead::aws
