// Link 3 of the chain: the EC2 instance metadata service, IMDSv2. A PUT for a session token, then
// the role name and the role's temporary credentials, both with the token header. Bodies are never
// quoted in errors: the credentials document holds the secret key and the session token.
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <ctime>

#include "aws/credentials.hpp"

namespace overhead::aws {
namespace {

std::string lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

HttpResponse call(HttpClient& http, HttpRequest request, const std::string& what) {
  try {
    HttpResponse response = http.send(request);
    if (response.status != 200) {
      throw CredentialError("the instance metadata service answered " + std::to_string(response.status) + " to " +
                            what);
    }
    return response;
  } catch (const TransportError& e) {
    throw CredentialError("the instance metadata service did not answer " + what + " (" + e.what() +
                          "); off EC2, set AWS_EC2_METADATA_DISABLED=true or give credentials another way");
  }
}

// "2026-12-03T15:04:05Z" -> time point; nullopt when the text is not in that form.
std::optional<std::chrono::system_clock::time_point> parse_iso8601_utc(const std::string& text) {
  std::tm tm{};
  char zone = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &zone) != 7 ||
      zone != 'Z') {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::string required_string(const nlohmann::json& doc, const char* field, const std::string& role) {
  auto it = doc.find(field);
  if (it == doc.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    throw CredentialError("the instance metadata credentials for role '" + role + "' lack the field " + field);
  }
  return it->get<std::string>();
}

}  // namespace

bool imds_enabled(const EnvLookup& env) {
  auto disabled = env("AWS_EC2_METADATA_DISABLED");
  return !(disabled && lowered(*disabled) == "true");
}

ImdsOptions imds_options_from(const EnvLookup& env) {
  ImdsOptions options;
  if (auto endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT"); endpoint && !endpoint->empty()) {
    options.endpoint = *endpoint;
  }
  return options;
}

Credentials credentials_from_imds(HttpClient& http, const ImdsOptions& options) {
  const std::string base = trim_slash(options.endpoint);

  HttpRequest token_request;
  token_request.method = "PUT";
  token_request.url = base + "/latest/api/token";
  token_request.headers = {{"X-aws-ec2-metadata-token-ttl-seconds", std::to_string(options.token_ttl_seconds)}};
  token_request.timeout = options.timeout;
  const std::string token = call(http, token_request, "the IMDSv2 token request").body;
  if (token.empty()) throw CredentialError("the instance metadata service returned an empty IMDSv2 token");

  HttpRequest role_request;
  role_request.url = base + "/latest/meta-data/iam/security-credentials/";
  role_request.headers = {{"X-aws-ec2-metadata-token", token}};
  role_request.timeout = options.timeout;
  std::string role = call(http, role_request, "the role name request").body;
  role = role.substr(0, role.find('\n'));
  while (!role.empty() && (role.back() == '\r' || role.back() == ' ')) role.pop_back();
  if (role.empty()) {
    throw CredentialError("the instance metadata service lists no IAM role; attach an instance profile to the instance");
  }

  HttpRequest credentials_request = role_request;
  credentials_request.url = base + "/latest/meta-data/iam/security-credentials/" + role;
  const HttpResponse answer = call(http, credentials_request, "the credentials request for role '" + role + "'");

  const nlohmann::json doc = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    throw CredentialError("the instance metadata credentials for role '" + role + "' are not a JSON object");
  }
  if (auto code = doc.find("Code"); code != doc.end() && code->is_string() && *code != "Success") {
    throw CredentialError("the instance metadata service reports Code '" + code->get<std::string>() +
                          "' for role '" + role + "'");
  }
  Credentials out;
  out.keys.access_key_id = required_string(doc, "AccessKeyId", role);
  out.keys.secret_access_key = Secret(required_string(doc, "SecretAccessKey", role));
  out.keys.session_token = Secret(required_string(doc, "Token", role));
  const std::string expiration = required_string(doc, "Expiration", role);
  out.expiration = parse_iso8601_utc(expiration);
  if (!out.expiration) {
    throw CredentialError("the instance metadata credentials for role '" + role + "' have an Expiration '" +
                          expiration + "' that is not YYYY-MM-DDTHH:MM:SSZ");
  }
  out.source = "imds role " + role;
  return out;
}

}  // namespace overhead::aws
