// The C API (include/overhead/overhead.h) over tok::Tokenizer and binding::ChatBinding: opaque
// handles holding the shared C++ objects, every C++ exception turned into a status code and a
// per-thread message, and results copied into malloc'd memory the caller gives back to us.
#include "overhead/overhead.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binding/chat_binding.hpp"
#include "chat/chat_template.hpp"
#include "tok/errors.hpp"
#include "tok/tokenizer.hpp"

struct overhead_tokenizer {
  std::shared_ptr<const overhead::tok::Tokenizer> tokenizer;
};

struct overhead_chat {
  std::shared_ptr<const overhead::binding::ChatBinding> binding;
  overhead_tokenizer tokenizer;  // the binding's tokenizer, handed out by overhead_chat_tokenizer
};

namespace {

using overhead::chat::TemplateError;
using overhead::tok::LoadError;

thread_local std::string last_error;

// A caller's mistake (NULL pointer, bad value, ill-shaped JSON), reported with its own status.
struct CallError : std::runtime_error {
  CallError(overhead_status s, const std::string& message) : std::runtime_error(message), status(s) {}
  overhead_status status;
};

// Runs `body`; any exception becomes a status and the thread's message. `fallback` is the status
// of an exception of no more specific kind (a load's I/O error is a load error, say).
template <typename Body>
overhead_status guarded(overhead_status fallback, Body&& body) noexcept {
  try {
    try {
      body();
      last_error.clear();
      return OVERHEAD_OK;
    } catch (const CallError& e) {
      last_error = e.what();
      return e.status;
    } catch (const LoadError& e) {
      last_error = e.what();
      return OVERHEAD_ERROR_LOAD;
    } catch (const TemplateError& e) {
      last_error = e.what();
      return OVERHEAD_ERROR_TEMPLATE;
    } catch (const overhead::tok::EncodeError& e) {
      // A text the tokenizer refuses (its normalized form would pass the size limit).
      last_error = e.what();
      return OVERHEAD_ERROR_ARGUMENT;
    } catch (const std::bad_alloc&) {
      last_error = "out of memory";
      return OVERHEAD_ERROR_MEMORY;
    } catch (const std::exception& e) {
      last_error = e.what();
      return fallback;
    } catch (...) {
      last_error = "unknown error";
      return OVERHEAD_ERROR_INTERNAL;
    }
  } catch (...) {  // assigning the message itself failed
    return OVERHEAD_ERROR_MEMORY;
  }
}

void require(const void* p, const char* what) {
  if (p == nullptr) throw CallError(OVERHEAD_ERROR_ARGUMENT, std::string(what) + " is NULL");
}

std::string_view text_of(const char* text, std::size_t length, const char* what) {
  if (text == nullptr && length != 0) throw CallError(OVERHEAD_ERROR_ARGUMENT, std::string(what) + " is NULL");
  return {text == nullptr ? "" : text, length};
}

overhead_ids copy_ids(const overhead::tok::Ids& ids) {
  overhead_ids out{nullptr, 0};
  if (ids.empty()) return out;
  out.data = static_cast<std::uint32_t*>(std::malloc(ids.size() * sizeof(std::uint32_t)));
  if (out.data == nullptr) throw std::bad_alloc();
  std::memcpy(out.data, ids.data(), ids.size() * sizeof(std::uint32_t));
  out.size = ids.size();
  return out;
}

void copy_string(const std::string& s, char** out, std::size_t* out_length) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  *out = p;
  if (out_length != nullptr) *out_length = s.size();
}

// The template engine takes values nested at most 256 levels deep; deeper input is the caller's
// JSON at fault, said before rendering. Counted without recursion: the input is untrusted.
constexpr std::size_t kMaxDepth = 256;
std::size_t nesting_depth(const nlohmann::ordered_json& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const nlohmann::ordered_json*, std::size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    const auto [j, depth] = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    if (deepest > kMaxDepth) break;
    for (const auto& child : *j) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

nlohmann::ordered_json parse_json(const char* text, const char* what, bool want_array) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CallError(OVERHEAD_ERROR_JSON, std::string(what) + ": invalid JSON: " + e.what());
  }
  if (want_array ? !j.is_array() : !j.is_object())
    throw CallError(OVERHEAD_ERROR_JSON, std::string(what) + ": not a JSON " + (want_array ? "array" : "object"));
  if (nesting_depth(j) > kMaxDepth)
    throw CallError(OVERHEAD_ERROR_JSON,
                    std::string(what) + ": nested too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
  return j;
}

// "YYYY-MM-DD" naming a real calendar day; anything else is refused before rendering.
void check_date(const char* date) {
  const std::string d(date);
  bool shaped = d.size() == 10 && d[4] == '-' && d[7] == '-';
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) shaped = shaped && i < d.size() && d[i] >= '0' && d[i] <= '9';
  if (shaped) {
    const std::chrono::year_month_day ymd{std::chrono::year(std::stoi(d.substr(0, 4))),
                                          std::chrono::month(static_cast<unsigned>(std::stoi(d.substr(5, 2)))),
                                          std::chrono::day(static_cast<unsigned>(std::stoi(d.substr(8, 2))))};
    if (ymd.ok()) return;
  }
  throw CallError(OVERHEAD_ERROR_ARGUMENT, "date: '" + d + "' is not a real date of the form YYYY-MM-DD");
}

}  // namespace

extern "C" {

const char* overhead_last_error(void) { return last_error.c_str(); }

overhead_status overhead_tokenizer_load(const char* name_or_path, overhead_tokenizer** out) {
  return guarded(OVERHEAD_ERROR_LOAD, [&] {
    require(out, "out");
    *out = nullptr;
    require(name_or_path, "name_or_path");
    auto handle = std::make_unique<overhead_tokenizer>();
    handle->tokenizer = overhead::binding::load_tokenizer(name_or_path);
    *out = handle.release();
  });
}

void overhead_tokenizer_free(overhead_tokenizer* tokenizer) { delete tokenizer; }

overhead_status overhead_encode(const overhead_tokenizer* tokenizer, const char* text, size_t length, int add_special,
                                overhead_ids* out) {
  return guarded(OVERHEAD_ERROR_INTERNAL, [&] {
    require(out, "out");
    *out = overhead_ids{nullptr, 0};
    require(tokenizer, "tokenizer");
    thread_local overhead::tok::Ids scratch;
    scratch.clear();
    tokenizer->tokenizer->encode_into(text_of(text, length, "text"), scratch, add_special != 0);
    *out = copy_ids(scratch);
  });
}

overhead_status overhead_encode_batch(const overhead_tokenizer* tokenizer, const char* const* texts,
                                      const size_t* lengths, size_t count, int add_special, unsigned threads,
                                      overhead_ids* out) {
  return guarded(OVERHEAD_ERROR_INTERNAL, [&] {
    if (count == 0) return;
    require(out, "out");
    for (std::size_t i = 0; i < count; ++i) out[i] = overhead_ids{nullptr, 0};
    require(tokenizer, "tokenizer");
    require(texts, "texts");
    require(lengths, "lengths");
    std::vector<std::string_view> views;
    views.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
      views.push_back(text_of(texts[i], lengths[i], ("texts[" + std::to_string(i) + "]").c_str()));
    const auto ids = tokenizer->tokenizer->encode_batch(std::span<const std::string_view>(views), add_special != 0, threads);
    try {
      for (std::size_t i = 0; i < count; ++i) out[i] = copy_ids(ids[i]);
    } catch (...) {
      for (std::size_t i = 0; i < count; ++i) overhead_ids_free(&out[i]);
      throw;
    }
  });
}

overhead_status overhead_count(const overhead_tokenizer* tokenizer, const char* text, size_t length, int add_special,
                               size_t* out) {
  return guarded(OVERHEAD_ERROR_INTERNAL, [&] {
    require(out, "out");
    require(tokenizer, "tokenizer");
    *out = tokenizer->tokenizer->count(text_of(text, length, "text"), add_special != 0);
  });
}

overhead_status overhead_decode(const overhead_tokenizer* tokenizer, const uint32_t* ids, size_t count,
                                int skip_special, char** out, size_t* out_length) {
  return guarded(OVERHEAD_ERROR_INTERNAL, [&] {
    require(out, "out");
    *out = nullptr;
    require(tokenizer, "tokenizer");
    if (count != 0) require(ids, "ids");
    const std::span<const std::uint32_t> view(ids, count);
    copy_string(tokenizer->tokenizer->decode(view, skip_special != 0), out, out_length);
  });
}

size_t overhead_vocab_size(const overhead_tokenizer* tokenizer) {
  return tokenizer == nullptr ? 0 : tokenizer->tokenizer->vocab_size();
}

overhead_status overhead_chat_load(const char* name_or_path, overhead_chat** out) {
  return guarded(OVERHEAD_ERROR_LOAD, [&] {
    require(out, "out");
    *out = nullptr;
    require(name_or_path, "name_or_path");
    auto handle = std::make_unique<overhead_chat>();
    handle->binding = overhead::binding::ChatBinding::load(name_or_path);
    // The binding owns its tokenizer; share ownership so the handle outlives nothing it points to.
    handle->tokenizer.tokenizer =
        std::shared_ptr<const overhead::tok::Tokenizer>(handle->binding, &handle->binding->tokenizer());
    *out = handle.release();
  });
}

void overhead_chat_free(overhead_chat* chat) { delete chat; }

const overhead_tokenizer* overhead_chat_tokenizer(const overhead_chat* chat) {
  return chat == nullptr ? nullptr : &chat->tokenizer;
}

overhead_status overhead_chat_render(const overhead_chat* chat, const char* messages_json, const char* variables_json,
                                     int add_generation_prompt, const char* date, char** out, size_t* out_length) {
  return guarded(OVERHEAD_ERROR_INTERNAL, [&] {
    require(out, "out");
    *out = nullptr;
    require(chat, "chat");
    require(messages_json, "messages_json");
    const auto messages = parse_json(messages_json, "messages", true);
    const auto variables = variables_json == nullptr ? nlohmann::ordered_json::object()
                                                     : parse_json(variables_json, "variables", false);
    overhead::chat::RenderOptions options;
    options.add_generation_prompt = add_generation_prompt != 0;
    if (date != nullptr) {
      check_date(date);
      options.date = date;
    }
    copy_string(chat->binding->chat_template().render(messages, options, variables), out, out_length);
  });
}

void overhead_ids_free(overhead_ids* ids) {
  if (ids == nullptr) return;
  std::free(ids->data);
  *ids = overhead_ids{nullptr, 0};
}

void overhead_string_free(char* text) { std::free(text); }

}  // extern "C"
