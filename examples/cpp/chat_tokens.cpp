// Renders a conversation with a tokenizer's chat template and counts its tokens, as the seed's
// worker did: tokenizer(apply_chat_template(messages, tokenize=False), add_special_tokens=True).
//
//   chat_tokens [TOKENIZER]   (a short name, a folder holding tokenizer.json, or an HF model id)
#include <cstdio>
#include <exception>
#include <string>

#include <overhead/binding/chat_binding.hpp>
#include <overhead/tok/tokenizer.hpp>

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "phi-4";
  try {
    const auto binding = overhead::binding::ChatBinding::load(name);
    const overhead::tok::Tokenizer& tokenizer = binding->tokenizer();

    const auto messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "You answer in one line."},
      {"role": "user", "content": "What is a token? トークンとは？"}
    ])");
    overhead::chat::RenderOptions options;
    options.add_generation_prompt = true;
    const std::string text = binding->chat_template().render(messages, options);
    const overhead::tok::Ids ids = tokenizer.encode(text, /*add_special=*/true);

    std::printf("%s: %zu characters rendered, %zu tokens, vocabulary %zu\n", tokenizer.name().c_str(), text.size(),
                ids.size(), tokenizer.vocab_size());
    std::printf("first ids:");
    for (std::size_t i = 0; i < ids.size() && i < 8; ++i) std::printf(" %u", ids[i]);
    std::printf("\nround trip: %s\n", tokenizer.decode(tokenizer.encode(text, false)) == text ? "same text" : "differs");
    return 0;
  } catch (const std::exception& e) {  // tok::LoadError, chat::TemplateError: what() names the file
    std::fprintf(stderr, "chat_tokens: %s\n", e.what());
    return 1;
  }
}
