// The credential chain: each link alone, their precedence, region resolution, malformed files
// naming file:line, and IMDSv2 against a fake metadata service on loopback that insists on the
// token header and hands out short-lived keys, so that refreshing can be seen. Secrets are checked
// to stay out of every error message.
#include "aws/credentials.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "aws/ini_file.hpp"
#include "loopback_server.hpp"

namespace overhead::aws {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;

constexpr const char* kEnvSecret = "envSECRETwJalrXUtnFEMI";
constexpr const char* kFileSecret = "fileSECRETbPxRfiCYEXAMPLE";

class FakeEnv {
 public:
  FakeEnv& set(std::string name, std::string value) {
    values_[std::move(name)] = std::move(value);
    return *this;
  }
  EnvLookup lookup() const {
    return [values = values_](std::string_view name) -> std::optional<std::string> {
      auto it = values.find(std::string(name));
      if (it == values.end()) return std::nullopt;
      return it->second;
    };
  }

 private:
  std::map<std::string, std::string> values_;
};

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("overhead_credentials_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string iso8601(system_clock::time_point t) {
  const std::time_t tt = system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The EC2 metadata service as documented for IMDSv2: a PUT for a token (with the TTL header), then
// GETs that are refused (401) without that token. Each credentials fetch hands out the next key set.
class FakeImds {
 public:
  struct KeySet {
    std::string id, secret, token;
    system_clock::time_point expiration;
  };

  FakeImds() {
    server_.http().Put("/latest/api/token", [this](const httplib::Request& req, httplib::Response& res) {
      if (!req.has_header("X-aws-ec2-metadata-token-ttl-seconds")) {
        res.status = 400;
        return;
      }
      ++token_requests;
      res.set_content(kToken, "text/plain");
    });
    server_.http().Get("/latest/meta-data/iam/security-credentials/",
                       [this](const httplib::Request& req, httplib::Response& res) {
                         if (!authorized(req, res)) return;
                         res.set_content("overhead-worker-role\n", "text/plain");
                       });
    server_.http().Get("/latest/meta-data/iam/security-credentials/overhead-worker-role",
                       [this](const httplib::Request& req, httplib::Response& res) {
                         if (!authorized(req, res)) return;
                         if (fail_credentials) {
                           res.status = 500;
                           return;
                         }
                         std::lock_guard lock(mutex_);
                         const std::size_t i = std::min(credential_fetches.load(), key_sets.size() - 1);
                         ++credential_fetches;
                         if (!raw_document.empty()) {
                           res.set_content(raw_document, "application/json");
                           return;
                         }
                         const KeySet& k = key_sets[i];
                         res.set_content(R"({"Code":"Success","Type":"AWS-HMAC","AccessKeyId":")" + k.id +
                                             R"(","SecretAccessKey":")" + k.secret + R"(","Token":")" + k.token +
                                             R"(","Expiration":")" + iso8601(k.expiration) + R"("})",
                                         "application/json");
                       });
    server_.start();
  }

  std::string url() const { return server_.url(); }

  std::vector<KeySet> key_sets;
  std::string raw_document;  // when set, served instead of key_sets
  std::atomic<bool> fail_credentials{false};
  std::atomic<std::size_t> token_requests{0};
  std::atomic<std::size_t> credential_fetches{0};
  std::atomic<std::size_t> refused_without_token{0};
  static constexpr const char* kToken = "AQAEAfaketoken==";

 private:
  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("X-aws-ec2-metadata-token") != kToken) {
      ++refused_without_token;
      res.status = 401;
      return false;
    }
    return true;
  }

  std::mutex mutex_;
  testing::LoopbackServer server_;
};

// Runs `f`, expects a CredentialError, returns its message.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const CredentialError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a CredentialError";
  return {};
}

// ---- link 1: environment ----

TEST(CredentialsEnvironment, ReadsKeysAndSessionToken) {
  FakeEnv env;
  env.set("AWS_ACCESS_KEY_ID", "AKIAENV").set("AWS_SECRET_ACCESS_KEY", kEnvSecret).set("AWS_SESSION_TOKEN", "tok");
  auto found = credentials_from_environment(env.lookup());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->keys.access_key_id, "AKIAENV");
  EXPECT_EQ(found->keys.secret_access_key.reveal(), kEnvSecret);
  EXPECT_EQ(found->keys.session_token.reveal(), "tok");
  EXPECT_FALSE(found->expiration);
  EXPECT_EQ(found->source, "environment");
}

TEST(CredentialsEnvironment, AbsentIsNotAnError) {
  EXPECT_FALSE(credentials_from_environment(FakeEnv().lookup()));
}

TEST(CredentialsEnvironment, HalfAPairIsAnErrorWithoutTheSecret) {
  FakeEnv env;
  env.set("AWS_SECRET_ACCESS_KEY", kEnvSecret);
  const std::string message = error_of([&] { credentials_from_environment(env.lookup()); });
  EXPECT_NE(message.find("AWS_ACCESS_KEY_ID"), std::string::npos) << message;
  EXPECT_EQ(message.find(kEnvSecret), std::string::npos) << message;
}

// ---- link 2: profiles ----

TEST(CredentialsProfile, DefaultProfileFromCredentialsFile) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_SHARED_CREDENTIALS_FILE",
          dir.write("credentials", "# comment\n[default]\naws_access_key_id = AKIADEF\n"
                                   "aws_secret_access_key = " + std::string(kFileSecret) + "\n"))
      .set("AWS_CONFIG_FILE", dir.path("missing-config"));
  auto found = credentials_from_profile(env.lookup());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->keys.access_key_id, "AKIADEF");
  EXPECT_EQ(found->keys.secret_access_key.reveal(), kFileSecret);
  EXPECT_TRUE(found->keys.session_token.empty());
  EXPECT_EQ(found->source, "profile default");
}

TEST(CredentialsProfile, HomeDirectoryIsTheDefaultLocation) {
  TempDir dir;
  fs::create_directories(dir.path(".aws"));
  dir.write(".aws/credentials", "[default]\naws_access_key_id=AKIAHOME\naws_secret_access_key=s\n");
  dir.write(".aws/config", "[default]\nregion = eu-north-1\n");
  FakeEnv env;
  env.set("HOME", dir.path(""));
  auto found = credentials_from_profile(env.lookup());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->keys.access_key_id, "AKIAHOME");
  EXPECT_EQ(region_from_profile(env.lookup()), "eu-north-1");
}

TEST(CredentialsProfile, NamedProfileUsesProfileSectionOfConfig) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_PROFILE", "dev")
      .set("AWS_SHARED_CREDENTIALS_FILE", dir.write("credentials", "[default]\naws_access_key_id = AKIADEF\n"
                                                                   "aws_secret_access_key = other\n"))
      .set("AWS_CONFIG_FILE", dir.write("config", "[default]\nregion = us-east-1\n"
                                                  "[profile dev]\nregion = eu-west-1\naws_access_key_id = AKIADEV\n"
                                                  "aws_secret_access_key = devsecret\naws_session_token = devtok\n"
                                                  "[dev]\nregion = wrong-section\n"));
  auto found = credentials_from_profile(env.lookup());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->keys.access_key_id, "AKIADEV");
  EXPECT_EQ(found->keys.session_token.reveal(), "devtok");
  EXPECT_EQ(found->source, "profile dev");
  EXPECT_EQ(region_from_profile(env.lookup()), "eu-west-1");
}

TEST(CredentialsProfile, CredentialsFileWinsOverConfigKeys) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_PROFILE", "dev")
      .set("AWS_SHARED_CREDENTIALS_FILE",
           dir.write("credentials", "[dev]\naws_access_key_id = AKIAFROMCREDS\naws_secret_access_key = a\n"))
      .set("AWS_CONFIG_FILE",
           dir.write("config", "[profile dev]\naws_access_key_id = AKIAFROMCONFIG\naws_secret_access_key = b\n"));
  auto found = credentials_from_profile(env.lookup());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->keys.access_key_id, "AKIAFROMCREDS");
}

TEST(CredentialsProfile, MissingNamedProfileIsAnErrorButMissingDefaultIsNot) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_SHARED_CREDENTIALS_FILE", dir.write("credentials", "[other]\naws_access_key_id=A\naws_secret_access_key=B\n"))
      .set("AWS_CONFIG_FILE", dir.path("none"));
  EXPECT_FALSE(credentials_from_profile(env.lookup()));
  env.set("AWS_PROFILE", "prod");
  const std::string message = error_of([&] { credentials_from_profile(env.lookup()); });
  EXPECT_NE(message.find("'prod'"), std::string::npos) << message;
  EXPECT_NE(message.find(dir.path("credentials")), std::string::npos) << message;
}

TEST(CredentialsProfile, MalformedCredentialsFileNamesFileAndLineNotTheSecret) {
  TempDir dir;
  FakeEnv env;
  const std::string path = dir.write(
      "credentials", "[default]\naws_access_key_id = AKIA\naws_secret_access_key " + std::string(kFileSecret) + "\n");
  env.set("AWS_SHARED_CREDENTIALS_FILE", path).set("AWS_CONFIG_FILE", dir.path("none"));
  const std::string message = error_of([&] { credentials_from_profile(env.lookup()); });
  EXPECT_NE(message.find(path + ":3:"), std::string::npos) << message;
  EXPECT_EQ(message.find(kFileSecret), std::string::npos) << message;
}

TEST(CredentialsProfile, MalformedConfigFileNamesFileAndLine) {
  TempDir dir;
  FakeEnv env;
  const std::string path = dir.write("config", "[default]\nregion = us-east-1\n\n[profile dev\nregion = x\n");
  env.set("AWS_CONFIG_FILE", path).set("AWS_SHARED_CREDENTIALS_FILE", dir.path("none"));
  const std::string message = error_of([&] { region_from_profile(env.lookup()); });
  EXPECT_NE(message.find(path + ":4:"), std::string::npos) << message;
  EXPECT_NE(message.find("']'"), std::string::npos) << message;
}

TEST(CredentialsIni, KeyBeforeAnySectionNamesTheLine) {
  std::string message;
  try {
    parse_ini("\n\nregion = x\n", "cfg");
  } catch (const IniError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "cfg:3: a key before any [section] header");
}

// ---- region ----

TEST(CredentialsRegion, UrlThenAwsRegionThenDefaultRegionThenProfile) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_CONFIG_FILE", dir.write("config", "[default]\nregion = ap-south-1\n"))
      .set("AWS_SHARED_CREDENTIALS_FILE", dir.path("none"));
  EXPECT_EQ(resolve_region(std::nullopt, env.lookup()), "ap-south-1");
  env.set("AWS_DEFAULT_REGION", "us-west-2");
  EXPECT_EQ(resolve_region(std::nullopt, env.lookup()), "us-west-2");
  env.set("AWS_REGION", "eu-central-1");
  EXPECT_EQ(resolve_region(std::nullopt, env.lookup()), "eu-central-1");
  EXPECT_EQ(resolve_region(std::string("sa-east-1"), env.lookup()), "sa-east-1");
}

TEST(CredentialsRegion, NoneIsAnErrorNamingWhereToSetIt) {
  TempDir dir;
  FakeEnv env;
  env.set("AWS_CONFIG_FILE", dir.path("none")).set("AWS_SHARED_CREDENTIALS_FILE", dir.path("none"));
  const std::string message = error_of([&] { resolve_region(std::nullopt, env.lookup()); });
  EXPECT_NE(message.find("AWS_REGION"), std::string::npos) << message;
  EXPECT_NE(message.find("?region="), std::string::npos) << message;
}

// ---- link 3: IMDSv2 ----

TEST(CredentialsImds, FetchesWithTokenAndParsesExpiration) {
  FakeImds imds;
  const auto expiry = system_clock::now() + std::chrono::hours(6);
  imds.key_sets = {{"ASIAONE", "imdsSECRETone", "sessTOKENone", expiry}};
  HttpClient http;
  // The fake really refuses a request without the token, so a success below proves we sent it.
  HttpRequest bare;
  bare.url = imds.url() + "/latest/meta-data/iam/security-credentials/";
  EXPECT_EQ(http.send(bare).status, 401);
  ASSERT_EQ(imds.refused_without_token, 1u);

  ImdsOptions options;
  options.endpoint = imds.url();
  const Credentials found = credentials_from_imds(http, options);
  EXPECT_EQ(found.keys.access_key_id, "ASIAONE");
  EXPECT_EQ(found.keys.secret_access_key.reveal(), "imdsSECRETone");
  EXPECT_EQ(found.keys.session_token.reveal(), "sessTOKENone");
  ASSERT_TRUE(found.expiration);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(found.expiration->time_since_epoch()).count(),
            std::chrono::duration_cast<std::chrono::seconds>(expiry.time_since_epoch()).count());
  EXPECT_EQ(found.source, "imds role overhead-worker-role");
  EXPECT_EQ(imds.token_requests, 1u);
  EXPECT_EQ(imds.refused_without_token, 1u);
}

TEST(CredentialsImds, ProviderRefreshesBeforeExpiration) {
  FakeImds imds;
  const auto t0 = system_clock::now();
  imds.key_sets = {{"ASIAFIRST", "secretFIRST", "tokFIRST", t0 + std::chrono::minutes(15)},
                   {"ASIASECOND", "secretSECOND", "tokSECOND", t0 + std::chrono::minutes(75)},
                   {"ASIATHIRD", "secretTHIRD", "tokTHIRD", t0 + std::chrono::minutes(200)}};
  FakeEnv env;
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url())
      .set("AWS_CONFIG_FILE", "/nonexistent/config")
      .set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
  std::atomic<long> offset_minutes{0};
  CredentialProviderOptions options;
  options.refresh_margin = std::chrono::minutes(5);
  options.now = [&] { return t0 + std::chrono::minutes(offset_minutes.load()); };
  CredentialProvider provider(env.lookup(), std::make_shared<HttpClient>(), options);

  EXPECT_EQ(provider.current().keys.access_key_id, "ASIAFIRST");
  offset_minutes = 9;  // 6 minutes left: still cached
  EXPECT_EQ(provider.current().keys.access_key_id, "ASIAFIRST");
  EXPECT_EQ(imds.credential_fetches, 1u);
  offset_minutes = 11;  // 4 minutes left: inside the margin, so fetched again
  const Credentials refreshed = provider.current();
  EXPECT_EQ(refreshed.keys.access_key_id, "ASIASECOND");
  EXPECT_EQ(refreshed.keys.secret_access_key.reveal(), "secretSECOND");
  EXPECT_EQ(imds.credential_fetches, 2u);
  EXPECT_EQ(provider.current().keys.access_key_id, "ASIASECOND");
  EXPECT_EQ(imds.credential_fetches, 2u);
  offset_minutes = 80;  // past the second set's Expiration: a fetch returns the third
  EXPECT_EQ(provider.current().keys.access_key_id, "ASIATHIRD");
  EXPECT_EQ(imds.credential_fetches, 3u);
}

TEST(CredentialsImds, FailedEarlyRefreshKeepsValidKeysButNotExpiredOnes) {
  FakeImds imds;
  const auto t0 = system_clock::now();
  imds.key_sets = {{"ASIAFIRST", "secretFIRST", "tokFIRST", t0 + std::chrono::minutes(15)}};
  FakeEnv env;
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url())
      .set("AWS_CONFIG_FILE", "/nonexistent/config")
      .set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
  std::atomic<long> offset_minutes{0};
  CredentialProviderOptions options;
  options.now = [&] { return t0 + std::chrono::minutes(offset_minutes.load()); };
  CredentialProvider provider(env.lookup(), std::make_shared<HttpClient>(), options);
  EXPECT_EQ(provider.current().keys.access_key_id, "ASIAFIRST");

  imds.fail_credentials = true;
  offset_minutes = 12;  // inside the margin, refresh fails, the keys are still valid for 3 minutes
  EXPECT_EQ(provider.current().keys.access_key_id, "ASIAFIRST");
  offset_minutes = 16;  // expired and the service still fails: an error, without any secret
  const std::string message = error_of([&] { provider.current(); });
  EXPECT_NE(message.find("500"), std::string::npos) << message;
  EXPECT_EQ(message.find("secretFIRST"), std::string::npos) << message;
  EXPECT_EQ(message.find("tokFIRST"), std::string::npos) << message;
  EXPECT_EQ(message.find(FakeImds::kToken), std::string::npos) << message;
}

TEST(CredentialsImds, ConcurrentCallersShareOneFetch) {
  FakeImds imds;
  imds.key_sets = {{"ASIASHARED", "s", "t", system_clock::now() + std::chrono::hours(1)}};
  FakeEnv env;
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url())
      .set("AWS_CONFIG_FILE", "/nonexistent/config")
      .set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
  CredentialProvider provider(env.lookup(), std::make_shared<HttpClient>());
  std::vector<std::thread> threads;
  std::atomic<int> matched{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 20; ++j) matched += provider.current().keys.access_key_id == "ASIASHARED";
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(matched, 160);
  EXPECT_EQ(imds.credential_fetches, 1u);
}

TEST(CredentialsImds, BadDocumentErrorNeverContainsTheSecret) {
  FakeImds imds;
  imds.raw_document = R"({"Code":"Success","AccessKeyId":"ASIAX","SecretAccessKey":"leakyIMDSsecret",)"
                      R"("Token":"leakyIMDStoken"})";  // no Expiration
  HttpClient http;
  ImdsOptions options;
  options.endpoint = imds.url();
  std::string message = error_of([&] { credentials_from_imds(http, options); });
  EXPECT_NE(message.find("Expiration"), std::string::npos) << message;
  EXPECT_EQ(message.find("leakyIMDSsecret"), std::string::npos) << message;
  EXPECT_EQ(message.find("leakyIMDStoken"), std::string::npos) << message;

  imds.raw_document = R"({"SecretAccessKey":"leakyIMDSsecret", broken)";
  message = error_of([&] { credentials_from_imds(http, options); });
  EXPECT_NE(message.find("not a JSON object"), std::string::npos) << message;
  EXPECT_EQ(message.find("leakyIMDSsecret"), std::string::npos) << message;
}

TEST(CredentialsImds, DisabledIsNeverAsked) {
  FakeImds imds;
  imds.key_sets = {{"ASIANO", "s", "t", system_clock::now() + std::chrono::hours(1)}};
  FakeEnv env;
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url())
      .set("AWS_EC2_METADATA_DISABLED", "TRUE")
      .set("AWS_CONFIG_FILE", "/nonexistent/config")
      .set("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
  CredentialProvider provider(env.lookup(), std::make_shared<HttpClient>());
  const std::string message = error_of([&] { provider.current(); });
  EXPECT_NE(message.find("AWS_EC2_METADATA_DISABLED"), std::string::npos) << message;
  EXPECT_EQ(imds.token_requests, 0u);
}

TEST(CredentialsImds, UnreachableEndpointIsAClearError) {
  int free_port = 0;
  {
    testing::LoopbackServer closed;
    closed.start();
    free_port = closed.port();
  }
  HttpClient http;
  ImdsOptions options;
  options.endpoint = "http://127.0.0.1:" + std::to_string(free_port);
  const std::string message = error_of([&] { credentials_from_imds(http, options); });
  EXPECT_NE(message.find("did not answer"), std::string::npos) << message;
  EXPECT_NE(message.find("AWS_EC2_METADATA_DISABLED"), std::string::npos) << message;
}

// ---- the chain's order ----

TEST(CredentialsChain, EnvironmentThenProfileThenImds) {
  FakeImds imds;
  imds.key_sets = {{"ASIAIMDS", "s", "t", system_clock::now() + std::chrono::hours(1)}};
  TempDir dir;
  FakeEnv env;
  env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()).set("AWS_CONFIG_FILE", dir.path("none"));
  env.set("AWS_SHARED_CREDENTIALS_FILE", dir.path("none"));
  EXPECT_EQ(CredentialProvider(env.lookup(), nullptr).current().source, "imds role overhead-worker-role");

  env.set("AWS_SHARED_CREDENTIALS_FILE",
          dir.write("credentials", "[default]\naws_access_key_id=AKIAPROFILE\naws_secret_access_key=p\n"));
  EXPECT_EQ(CredentialProvider(env.lookup(), nullptr).current().keys.access_key_id, "AKIAPROFILE");

  env.set("AWS_ACCESS_KEY_ID", "AKIAENV").set("AWS_SECRET_ACCESS_KEY", kEnvSecret);
  EXPECT_EQ(CredentialProvider(env.lookup(), nullptr).current().keys.access_key_id, "AKIAENV");
  EXPECT_EQ(imds.credential_fetches, 1u);
}

}  // namespace
}  // namespace overhead::aws
