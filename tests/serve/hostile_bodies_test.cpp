// Bodies a hostile or careless client sends, through a real gateway with its in-process pipeline:
// nesting past the one depth limit is refused before anything copies it (depth 200,000 used to
// overflow the stack and take the whole gateway down); request ids are the kernel's random bytes.
#include <httplib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstring>
#include <string>

#include "chat_fixture.hpp"
#include "util/json_depth.hpp"

// While set, getrandom(2) answers with this byte repeated: the ids a gateway prints must then be
// exactly those bytes, which shows every bit of them comes from the kernel's CSPRNG and none from a
// userspace engine. Defined here, it takes the place of the C library's getrandom for the whole test.
static std::atomic<int> g_random_pattern{-1};
extern "C" ssize_t getrandom(void* buf, size_t len, unsigned flags) {
  const int pattern = g_random_pattern.load();
  if (pattern >= 0) {
    std::memset(buf, pattern, len);
    return static_cast<ssize_t>(len);
  }
  return static_cast<ssize_t>(::syscall(SYS_getrandom, buf, len, flags));
}

namespace {

using HostileTest = overhead::serve::testing::ChatServeTest;
using nlohmann::json;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string chat_with(const std::string& extra_member) {
  return R"({"model":"phi-4","messages":[{"role":"user","content":"hi")" + extra_member + "}]}";
}

TEST_F(HostileTest, DeepNestingAnywhereIsRefusedBeforeAnyCopyAndTheGatewayStaysUp) {
  start();
  // 200,000 levels in a key other than content (400 KB): this crashed the gateway.
  const std::string deep = nested(200000);
  for (const char* path : {"/v1/chat/completions", "/v1/requests"}) {
    const json e = post(path, chat_with(R"(,"x":)" + deep), 400);
    EXPECT_EQ(e["error"]["code"], "nested_too_deep") << path;
  }
  EXPECT_EQ(post("/v1/tokenize", R"({"model":"phi-4","prompt":"a","x":)" + deep + "}", 400)["error"]["code"], "nested_too_deep");
  EXPECT_EQ(post("/v1/render", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}],"x":)" + deep + "}", 400)["error"]["code"],
            "nested_too_deep");
  EXPECT_EQ(post("/v1/detokenize", R"({"model":"phi-4","tokens":)" + deep + "}", 400)["error"]["code"], "nested_too_deep");
  // One level past the limit is refused; the limit itself passes the gateway and the worker alike.
  const std::size_t limit = overhead::util::kMaxJsonDepth;
  // The body, messages, the message: 3 levels before the value of "x".
  EXPECT_EQ(post("/v1/chat/completions", chat_with(R"(,"x":)" + nested(limit - 2)), 400)["error"]["code"], "nested_too_deep");
  const json ok = post("/v1/chat/completions", chat_with(R"(,"x":)" + nested(limit - 3)), 200);
  EXPECT_GT(ok["usage"]["prompt_tokens"].get<int>(), 0);
}

TEST_F(HostileTest, RequestIdsAreTheKernelsRandomBytes) {
  start();
  g_random_pattern = 0xa5;
  const json sync = post("/v1/chat/completions", chat_with(""), 200);
  auto r = client_->Post("/v1/requests", chat_with(""), "application/json");
  g_random_pattern = -1;
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 202) << r->body;
  std::string hex;
  for (int i = 0; i < 16; ++i) hex += "a5";
  EXPECT_EQ(sync["id"], "chatcmpl-" + hex);
  EXPECT_EQ(json::parse(r->body)["id"], "req_" + hex);
}

}  // namespace
