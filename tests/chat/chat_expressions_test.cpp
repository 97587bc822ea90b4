// The expression table: every template of data/chat/expressions.txt rendered by the engine and
// compared with the reference's output (Python Jinja2 set up as transformers' apply_chat_template,
// written by scripts/make_chat_expr_goldens.py to data/chat/goldens/expressions.jsonl). A row with
// "text" must match byte for byte; a row with "error" must fail with a TemplateError.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"

namespace {

using overhead::chat::ChatTemplate;
using overhead::chat::RenderOptions;
using overhead::chat::TemplateError;
using Json = nlohmann::ordered_json;

TEST(ChatExpressions, EveryRowMatchesJinja2) {
  const auto path = std::filesystem::path(OVERHEAD_DATA_DIR) / "chat" / "goldens" / "expressions.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  Json context = Json::parse(line).at("context");
  const Json messages = context.at("messages");
  context.erase("messages");
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++rows;
    const Json row = Json::parse(line);
    const std::string tmpl = row.at("template").get<std::string>();
    std::string got, error;
    bool failed = false;
    try {
      got = ChatTemplate::compile(tmpl, "expr")->render(messages, RenderOptions{}, context);
    } catch (const TemplateError& e) {
      failed = true;
      error = e.what();
    }
    if (row.contains("error")) {
      EXPECT_TRUE(failed) << tmpl << "\n  Jinja2 fails (" << row.at("error").get<std::string>() << "), we render: " << got;
    } else {
      EXPECT_FALSE(failed) << tmpl << "\n  we fail: " << error;
      if (!failed) {
        EXPECT_EQ(got, row.at("text").get<std::string>()) << tmpl;
      }
    }
  }
  EXPECT_GE(rows, 150);
}

}  // namespace
