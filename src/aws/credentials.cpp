#include "aws/credentials.hpp"

#include <cstdlib>

#include "aws/ini_file.hpp"

namespace overhead::aws {
namespace {

std::optional<std::string> non_empty(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string home_path(const EnvLookup& env, const char* relative) {
  auto home = non_empty(env, "HOME");
  return (home ? *home : std::string(".")) + "/" + relative;
}

std::string credentials_file_path(const EnvLookup& env) {
  auto path = non_empty(env, "AWS_SHARED_CREDENTIALS_FILE");
  return path ? *path : home_path(env, ".aws/credentials");
}

std::string config_file_path(const EnvLookup& env) {
  auto path = non_empty(env, "AWS_CONFIG_FILE");
  return path ? *path : home_path(env, ".aws/config");
}

struct ActiveProfile {
  std::string name;
  bool explicit_choice = false;  // AWS_PROFILE was set, so a missing profile is an error
};

ActiveProfile active_profile(const EnvLookup& env) {
  auto name = non_empty(env, "AWS_PROFILE");
  if (name) return {*name, true};
  return {"default", false};
}

// The config file names profiles `[profile NAME]`, except `[default]`.
const IniSection* config_section(const IniFile& config, const std::string& profile) {
  auto it = config.find(profile == "default" ? "default" : "profile " + profile);
  if (it == config.end() && profile == "default") it = config.find("profile default");
  return it == config.end() ? nullptr : &it->second;
}

const IniSection* credentials_section(const IniFile& credentials, const std::string& profile) {
  auto it = credentials.find(profile);
  return it == credentials.end() ? nullptr : &it->second;
}

std::optional<std::string> lookup(const IniSection* section, const std::string& key) {
  if (section == nullptr) return std::nullopt;
  auto it = section->find(key);
  if (it == section->end() || it->second.empty()) return std::nullopt;
  return it->second;
}

IniFile load_or_empty(const std::string& path) {
  IniFile file;
  try {
    load_ini_file(path, file);
  } catch (const IniError& e) {
    throw CredentialError(e.what());
  }
  return file;
}

}  // namespace

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<Credentials> credentials_from_environment(const EnvLookup& env) {
  auto id = non_empty(env, "AWS_ACCESS_KEY_ID");
  auto secret = non_empty(env, "AWS_SECRET_ACCESS_KEY");
  if (!id && !secret) return std::nullopt;
  if (!id) throw CredentialError("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not; set both or neither");
  if (!secret) throw CredentialError("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both or neither");
  Credentials out;
  out.keys.access_key_id = *id;
  out.keys.secret_access_key = Secret(*secret);
  if (auto token = non_empty(env, "AWS_SESSION_TOKEN")) out.keys.session_token = Secret(*token);
  out.source = "environment";
  return out;
}

std::optional<Credentials> credentials_from_profile(const EnvLookup& env) {
  const ActiveProfile profile = active_profile(env);
  const std::string credentials_path = credentials_file_path(env);
  const std::string config_path = config_file_path(env);
  const IniFile credentials = load_or_empty(credentials_path);
  const IniFile config = load_or_empty(config_path);
  const IniSection* from_credentials = credentials_section(credentials, profile.name);
  const IniSection* from_config = config_section(config, profile.name);
  if (from_credentials == nullptr && from_config == nullptr) {
    if (!profile.explicit_choice) return std::nullopt;
    throw CredentialError("AWS_PROFILE names profile '" + profile.name + "', which is neither [" + profile.name +
                          "] in " + credentials_path + " nor [profile " + profile.name + "] in " + config_path);
  }
  // The credentials file wins over keys written into the config file, as in the AWS CLI.
  auto pick = [&](const std::string& key) {
    auto value = lookup(from_credentials, key);
    return value ? value : lookup(from_config, key);
  };
  auto id = pick("aws_access_key_id");
  auto secret = pick("aws_secret_access_key");
  if (!id && !secret) {
    if (!profile.explicit_choice) return std::nullopt;  // e.g. a [default] that only sets the region
    throw CredentialError("profile '" + profile.name + "' has no aws_access_key_id / aws_secret_access_key in " +
                          credentials_path + " or " + config_path);
  }
  if (!id || !secret) {
    throw CredentialError("profile '" + profile.name + "' sets only one of aws_access_key_id and " +
                          "aws_secret_access_key (in " + credentials_path + " or " + config_path + ")");
  }
  Credentials out;
  out.keys.access_key_id = *id;
  out.keys.secret_access_key = Secret(*secret);
  if (auto token = pick("aws_session_token")) out.keys.session_token = Secret(*token);
  out.source = "profile " + profile.name;
  return out;
}

std::optional<std::string> region_from_profile(const EnvLookup& env) {
  const IniFile config = load_or_empty(config_file_path(env));
  return lookup(config_section(config, active_profile(env).name), "region");
}

std::string resolve_region(const std::optional<std::string>& url_region, const EnvLookup& env) {
  if (url_region && !url_region->empty()) return *url_region;
  if (auto region = non_empty(env, "AWS_REGION")) return *region;
  if (auto region = non_empty(env, "AWS_DEFAULT_REGION")) return *region;
  if (auto region = region_from_profile(env)) return *region;
  throw CredentialError("no AWS region: add ?region=R to the URL, set AWS_REGION or AWS_DEFAULT_REGION, or put "
                        "region = R in profile '" + active_profile(env).name + "' of " + config_file_path(env));
}

CredentialProvider::CredentialProvider(EnvLookup env, std::shared_ptr<HttpClient> http,
                                       CredentialProviderOptions options)
    : env_(std::move(env)), http_(std::move(http)), options_(std::move(options)) {}

Credentials CredentialProvider::resolve_chain() {
  if (auto found = credentials_from_environment(env_)) return *found;
  if (auto found = credentials_from_profile(env_)) return *found;
  if (!imds_enabled(env_)) {
    throw CredentialError("no AWS credentials: AWS_ACCESS_KEY_ID is unset, profile '" + active_profile(env_).name +
                          "' has no keys in " + credentials_file_path(env_) +
                          ", and the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)");
  }
  if (!http_) http_ = std::make_shared<HttpClient>();
  try {
    return credentials_from_imds(*http_, imds_options_from(env_));
  } catch (const CredentialError& e) {
    throw CredentialError("no AWS credentials: AWS_ACCESS_KEY_ID is unset, profile '" + active_profile(env_).name +
                          "' has no keys in " + credentials_file_path(env_) + ", and " + e.what());
  }
}

Credentials CredentialProvider::current() {
  std::lock_guard lock(mutex_);
  if (cached_) {
    if (!cached_->expiration) return *cached_;
    if (options_.now() + options_.refresh_margin < *cached_->expiration) return *cached_;
  }
  try {
    cached_ = resolve_chain();
  } catch (const CredentialError&) {
    // A failed early refresh keeps the credentials that are still valid; an expired set is not reused.
    if (cached_ && options_.now() < *cached_->expiration) return *cached_;
    throw;
  }
  return *cached_;
}

bool CredentialProvider::expire(const std::string& rejected) {
  std::lock_guard lock(mutex_);
  if (!cached_ || !cached_->expiration) return false;
  if (cached_->keys.access_key_id == rejected) cached_.reset();  // another thread may have refreshed already
  return true;
}

}  // namespace overhead::aws
