// Bodies a hostile or careless client sends, through a real gateway with its in-process pipeline:
// nesting past the one depth limit is refused before anything copies it (depth 200,000 used to
// overflow the stack and take the whole gateway down).
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "chat_fixture.hpp"
#include "util/json_depth.hpp"

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

}  // namespace
