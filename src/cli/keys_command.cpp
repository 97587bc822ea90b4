// `overhead keys create|list|revoke`: the gateway's API keys, kept in the store `serve --store`
// uses (backends::open_key_store). create prints the key's settings and then its secret, alone on
// the last line of stdout, once: the store holds only the secret's SHA-256
// (ports/key_secret.hpp), so nobody can show it again. list shows every key's settings and spend,
// never a secret or its hash.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/open.hpp"
#include "cli/commands.hpp"
#include "cli/key_times.hpp"
#include "cli/option_checks.hpp"
#include "ports/key_secret.hpp"
#include "ports/key_store.hpp"
#include "report/table.hpp"

namespace overhead::cli {

namespace {

struct KeysOptions {
  std::string store;
  std::string name;
  std::int64_t rpm = 0;
  std::int64_t tpm = 0;
  double budget_usd = 0;
  bool has_budget = false;  // --budget-usd given (0 is a budget: nothing may be spent)
  std::vector<std::string> models;
  std::string expires;  // as typed; empty: never
};

// A key's name shows in usage, records, /metrics labels and logs: plain characters only, so it
// needs no quoting anywhere and cannot pass for something else.
std::string key_name_error(const std::string& text) {
  if (text.empty() || text.size() > 64) return "expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '" + text + "'";
  for (const char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return "expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '" + text + "'";
  return "";
}

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string limit_text(std::int64_t v) { return v ? std::to_string(v) : "no limit"; }
std::string usd(double v, int decimals) { return "$" + report::fixed(v, decimals); }
std::string models_text(const std::vector<std::string>& models) {
  if (models.empty()) return "all";
  std::string out;
  for (const auto& m : models) out += (out.empty() ? "" : ",") + m;
  return out;
}

// Opens the key store of --store, or prints why not and returns null.
std::unique_ptr<ports::KeyStore> open_keys(const char* command, const std::string& url, backends::Access access) {
  try {
    return backends::open_key_store(url, access);
  } catch (const std::exception& e) {
    // The errors show the URL redacted; the URL as typed is not repeated here.
    std::fprintf(stderr, "overhead keys %s: %s\n", command, e.what());
    return nullptr;
  }
}

int run_create(const KeysOptions& o) {
  ports::ApiKey key;
  key.name = o.name;
  key.rpm = o.rpm;
  key.tpm = o.tpm;
  if (o.has_budget) key.budget_usd = o.budget_usd;
  key.models = o.models;
  key.created_unix = now_unix();
  if (!o.expires.empty()) {
    key.expires_unix = parse_utc_time(o.expires).value_or(0);  // checked by the option's validator
    if (key.expires_unix <= key.created_unix) {
      std::fprintf(stderr, "overhead keys create: --expires: %s is not in the future\n", utc_time_text(key.expires_unix).c_str());
      return 2;
    }
  }
  const std::string secret = ports::new_key_secret();
  key.secret_hash = ports::key_secret_hash(secret);
  auto store = open_keys("create", o.store, backends::Access::create);
  if (!store) return 1;
  try {
    store->create(key);
  } catch (const ports::KeyExistsError&) {
    std::fprintf(stderr, "overhead keys create: --name: a key named \"%s\" exists already in %s (revoke it, or choose another name)\n",
                 key.name.c_str(), store->url().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead keys create: %s\n", e.what());
    return 1;
  }
  std::printf("name        %s\n", key.name.c_str());
  std::printf("rpm         %s\n", limit_text(key.rpm).c_str());
  std::printf("tpm         %s\n", limit_text(key.tpm).c_str());
  std::printf("budget      %s\n", key.budget_usd ? usd(*key.budget_usd, 2).c_str() : "none");
  std::printf("models      %s\n", models_text(key.models).c_str());
  std::printf("created     %s\n", utc_time_text(key.created_unix).c_str());
  std::printf("expires     %s\n", key.expires_unix ? utc_time_text(key.expires_unix).c_str() : "never");
  std::printf("store       %s\n", store->url().c_str());
  std::printf("The secret, on the next line, is shown this once: the store keeps only its SHA-256. Give it to the key's user now.\n");
  std::printf("%s\n", secret.c_str());
  return 0;
}

int run_list(const KeysOptions& o) {
  auto store = open_keys("list", o.store, backends::Access::existing);
  if (!store) return 1;
  std::vector<ports::ApiKey> keys;
  std::unordered_map<std::string, double> spend;
  try {
    keys = store->list();
    spend = store->spend_by_key();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead keys list: %s\n", e.what());
    return 1;
  }
  report::Table t;
  t.header = {"name", "rpm", "tpm", "budget", "models", "created", "expires", "revoked", "spend"};
  for (const auto& k : keys) {
    const auto s = spend.find(k.name);
    t.rows.push_back({k.name, limit_text(k.rpm), limit_text(k.tpm), k.budget_usd ? usd(*k.budget_usd, 2) : "none",
                      models_text(k.models), utc_time_text(k.created_unix),
                      k.expires_unix ? utc_time_text(k.expires_unix) : "never",
                      k.revoked_unix ? utc_time_text(k.revoked_unix) : "-", usd(s == spend.end() ? 0.0 : s->second, 4)});
  }
  std::printf("%s", report::to_markdown(t).c_str());
  if (keys.empty()) std::fprintf(stderr, "overhead keys list: no keys in %s (overhead keys create makes one)\n", store->url().c_str());
  return 0;
}

int run_revoke(const KeysOptions& o) {
  auto store = open_keys("revoke", o.store, backends::Access::existing);
  if (!store) return 1;
  try {
    const std::int64_t now = now_unix();
    if (store->revoke(o.name, now)) {
      std::printf("revoked key \"%s\" at %s\n", o.name.c_str(), utc_time_text(now).c_str());
      return 0;
    }
    // revoke() says false for both; the list says which.
    for (const auto& k : store->list())
      if (k.name == o.name) {
        std::printf("key \"%s\" was already revoked at %s\n", o.name.c_str(), utc_time_text(k.revoked_unix).c_str());
        return 0;
      }
    std::fprintf(stderr, "overhead keys revoke: --name: no key named \"%s\" in %s (overhead keys list shows them)\n", o.name.c_str(),
                 store->url().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead keys revoke: %s\n", e.what());
    return 1;
  }
}

void add_store_option(CLI::App& cmd, KeysOptions& o) {
  cmd.add_option("--store", o.store,
                 "The gateway's store, as `serve --store` (sqlite:PATH, postgres://..., dynamodb://TABLE?...): keys are kept beside its records")
      ->required();
}

CLI::Validator key_name() {
  return CLI::Validator([](std::string& s) { return key_name_error(s); }, "NAME", "key name");
}

}  // namespace

void add_keys_command(CLI::App& app, int& exit_code) {
  CLI::App* keys = app.add_subcommand("keys", "The gateway's API keys: create (prints the secret once), list, revoke");
  keys->require_subcommand(1);
  keys->footer("Keys live in the store `overhead serve --store` uses; see docs/backends.md (keys) and docs/serve.md.");

  auto c = std::make_shared<KeysOptions>();
  CLI::App* create = keys->add_subcommand("create", "Make a key; prints its settings, then its secret alone on the last line (shown once)");
  add_store_option(*create, *c);
  create->add_option("--name", c->name, "The key's name (unique; shown in usage and metrics, never the secret)")
      ->required()
      ->check(key_name());
  create->add_option("--rpm", c->rpm, "Requests per minute (0: no limit)")->check(integer_in(0, 1000000000));
  create->add_option("--tpm", c->tpm, "Tokens per minute, prompt + completion (0: no limit)")->check(integer_in(0, 1000000000));
  create->add_option("--budget-usd", c->budget_usd, "Spend in USD after which the key is refused (default: no budget)")
      ->check(number_in(0, 1e9))
      ->each([c](const std::string&) { c->has_budget = true; });
  create->add_option("--models", c->models, "The models the key may use (several, or comma-separated; default: all)")
      ->delimiter(',')
      ->check(non_empty());
  create->add_option("--expires", c->expires,
                     "When the key stops working: YYYY-MM-DD (00:00 UTC that day) or an ISO-8601 UTC time (2027-01-01T12:00:00Z)")
      ->check(CLI::Validator([](std::string& s) { return utc_time_error(s); }, "DATE", "UTC time"));
  create->callback([c, &exit_code] { exit_code = run_create(*c); });

  auto l = std::make_shared<KeysOptions>();
  CLI::App* list = keys->add_subcommand("list", "Every key (revoked ones too) with its limits, budget, expiry and spend; never a secret");
  add_store_option(*list, *l);
  list->callback([l, &exit_code] { exit_code = run_list(*l); });

  auto r = std::make_shared<KeysOptions>();
  CLI::App* revoke = keys->add_subcommand("revoke", "Refuse a key from now on (it stays listed, its usage still reads)");
  add_store_option(*revoke, *r);
  revoke->add_option("--name", r->name, "The key's name")->required()->check(key_name());
  revoke->callback([r, &exit_code] { exit_code = run_revoke(*r); });
}

}  // namespace overhead::cli
