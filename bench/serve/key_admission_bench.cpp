// What admission by API key costs the gateway per request (serve/key_admission.hpp): the bearer
// token hashed and looked up, the model and budget checked, the prompt counted exactly (a key with
// a token limit: the chat template rendered and tokenized), the rate limits asked of the
// in-process counters or of Redis (one script run). Each variant admits N requests on one thread;
// printed per admission: CPU time of this process (thread CPU clock), wall time, and the Redis
// commands it took (INFO commandstats before and after: the goal is one round trip).
//
//   build/bench/key_admission_bench REDIS_URL [N]        (REDIS_URL: redis://[:PASSWORD@]HOST:PORT)
//
// The key store is a SQLite file in a temporary folder; the prompt is a three-message chat of
// about 1 KB (Llama-3.3's template and tokenizer). Goal (issue): at most 30 µs of gateway CPU.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "backends/redis_connection.hpp"
#include "backends/redis_rate_limiter.hpp"
#include "ports/backend_url.hpp"
#include "ports/key_secret.hpp"
#include "serve/api_keys.hpp"
#include "serve/binding_cache.hpp"
#include "serve/chat_request.hpp"
#include "serve/http/message.hpp"
#include "serve/key_admission.hpp"
#include "serve/key_metrics.hpp"
#include "serve/key_spend.hpp"
#include "serve/prompt_tokens.hpp"
#include "serve/window_rate_limiter.hpp"

namespace {

using namespace overhead;

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
// User and system CPU time of this thread (the system part: the socket's syscalls).
std::pair<double, double> thread_user_sys_s() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return {s(u.ru_utime), s(u.ru_stime)};
}
double wall_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Script runs (EVALSHA) the Redis server has counted since it started.
long long redis_script_calls(const std::string& url) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  backends::RedisEndpoint e;
  e.host = u.host;
  e.port = u.port == 0 ? 6379 : u.port;
  e.user = u.user;
  e.password = u.password;
  e.shown = u.redacted();
  backends::RedisConnection conn(e);
  const std::string info = backends::reply_string(conn.command({"INFO", "commandstats"}).get());
  const auto at = info.find("cmdstat_evalsha:calls=");
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + 22));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: key_admission_bench REDIS_URL [N]\n");
    return 2;
  }
  const std::string redis_url = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  const auto dir = std::filesystem::temp_directory_path() / ("key_admission_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string store_url = "sqlite:" + (dir / "keys.db").string();

  std::shared_ptr<ports::KeyStore> store = backends::open_key_store(store_url);
  std::vector<std::string> auth;
  const auto add = [&](const std::string& name, std::int64_t rpm, std::int64_t tpm) {
    const std::string secret = ports::new_key_secret();
    ports::ApiKey k;
    k.name = name;
    k.secret_hash = ports::key_secret_hash(secret);
    k.rpm = rpm;
    k.tpm = tpm;
    k.budget_usd = 1e9;
    store->create(k);
    auth.push_back("Bearer " + secret);
  };
  // Limits far above N per window: every admission is admitted, as in a gateway under its limits.
  add("plain", 0, 0);
  add("rpm", 1'000'000'000, 0);
  add("rpm-tpm", 1'000'000'000, 1'000'000'000'000LL);
  for (int i = 0; i < 200; ++i) add("other-" + std::to_string(i), 0, 0);  // a store of a few hundred keys

  const std::string model = "llama-3.3-70b-instruct";
  serve::BindingCache bindings({model});
  std::string load_error;
  const auto binding = bindings.get(model, load_error);
  if (!binding) {
    std::fprintf(stderr, "cannot load %s: %s\n", model.c_str(), load_error.c_str());
    return 1;
  }
  const nlohmann::ordered_json body = {
      {"model", model},
      {"messages",
       {{{"role", "system"}, {"content", "You are a helpful assistant. Answer in the language of the question, briefly and exactly."}},
        {{"role", "user"},
         {"content", "東京から大阪まで新幹線で行くと、どのくらい時間がかかりますか？また、料金の目安と、途中で立ち寄るのにおすすめの駅を"
                     "三つ教えてください。できれば、それぞれの駅の名物も一緒にお願いします。"}},
        {{"role", "assistant"}, {"content", "The Nozomi takes about 2 h 15 min; a reserved seat costs about 14,000 yen."}},
        {{"role", "user"}, {"content", "And what if I take the slower Kodama, stopping at every station along the Tokaido line? "
                                       "Is it much cheaper, and how long does it take in all?"}}}}};
  const serve::ChatRequest request = serve::parse_chat_request(body, 1024);
  std::printf("prompt: %lld tokens as the engine reads it; N = %d admissions per variant; Redis %s\n",
              static_cast<long long>(serve::count_prompt_tokens(*binding, request)), n,
              ports::parse_backend_url(redis_url).redacted().c_str());

  struct Variant {
    const char* name;
    int key;  // index into auth
    bool redis;
  };
  const Variant variants[] = {{"key, no limits", 0, false},  {"key, rpm, in-process", 1, false},
                              {"key, rpm + tpm, in-process", 2, false}, {"key, rpm, Redis", 1, true},
                              {"key, rpm + tpm, Redis", 2, true}};
  std::printf("%-30s %12s %12s %12s %12s %16s\n", "variant", "CPU us/adm.", "user", "system", "wall us/adm.", "Redis calls/adm.");
  for (const auto& v : variants) {
    serve::ApiKeys keys(store, "", std::chrono::seconds(60));
    serve::KeySpend spend(store, std::chrono::seconds(60), [] { return true; });
    serve::KeyMetrics metrics;
    std::shared_ptr<ports::RateLimiter> limiter =
        v.redis ? backends::open_rate_limiter(redis_url + "/bench" + std::to_string(::getpid()) + ":")
                : std::shared_ptr<ports::RateLimiter>(std::make_shared<serve::WindowRateLimiter>());
    serve::KeyAdmission admission(keys, spend, limiter, metrics, serve::LimitsOnError::closed);
    const auto once = [&] {
      const serve::Caller caller = admission.caller(auth[static_cast<std::size_t>(v.key)]);
      const std::int64_t tokens = serve::KeyAdmission::needs_prompt_tokens(caller) ? serve::count_prompt_tokens(*binding, request) : 0;
      serve::http::Response res;
      serve::KeyGrant grant;
      if (admission.admit(caller, model, tokens, res, grant)) {
        std::fprintf(stderr, "refused\n");
        std::exit(1);
      }
    };
    for (int i = 0; i < 200; ++i) once();  // warm: connections, caches
    const long long calls_before = v.redis ? redis_script_calls(redis_url) : 0;
    const auto [u0, s0] = thread_user_sys_s();
    const double c0 = thread_cpu_s(), w0 = wall_s();
    for (int i = 0; i < n; ++i) once();
    const double cpu = thread_cpu_s() - c0, wall = wall_s() - w0;
    const auto [u1, s1] = thread_user_sys_s();
    const long long calls = v.redis ? redis_script_calls(redis_url) - calls_before : 0;
    std::printf("%-30s %12.2f %12.2f %12.2f %12.2f %16.2f\n", v.name, cpu / n * 1e6, (u1 - u0) / n * 1e6, (s1 - s0) / n * 1e6,
                wall / n * 1e6, static_cast<double>(calls) / n);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
