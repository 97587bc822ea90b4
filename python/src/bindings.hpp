// The classes of overhead._overhead and the functions that register them (module.cpp calls
// them). The Python-facing behaviour (transformers' apply_chat_template rules, from_pretrained)
// is finished in python/overhead/__init__.py; this layer is the fast part: conversion, GIL
// release, and the calls into the C++ libraries.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "chat/chat_template.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::python {

// Throws ValueError unless `date` is "YYYY-MM-DD" naming a real day (the CLI's --date rule).
void check_date(const std::string& date);

// A compiled chat template with the date its strftime_now is pinned to (none: the clock).
struct PyChatTemplate {
  std::shared_ptr<const chat::ChatTemplate> compiled;
  std::optional<std::string> date;

  // apply_chat_template's render: messages, then tools / documents / further variables as
  // transformers passes them (an extra variable overrides a special token of the same name).
  std::string render(pybind11::handle messages, pybind11::handle tools, pybind11::handle documents,
                     bool add_generation_prompt, const pybind11::kwargs& variables) const;
};

class PyTokenizer {
 public:
  PyTokenizer(std::string name_or_path, std::optional<std::string> date);

  const tok::Tokenizer& get() const { return *tokenizer_; }
  const std::string& name_or_path() const { return name_or_path_; }
  const std::optional<std::string>& date() const { return date_; }
  // The template `source` compiled with this tokenizer's special tokens (tokenizer_config.json),
  // kept for the next call with the same source.
  PyChatTemplate template_for(const std::string& source);

 private:
  std::string name_or_path_;
  std::optional<std::string> date_;
  std::shared_ptr<const tok::Tokenizer> tokenizer_;
  std::map<std::string, std::shared_ptr<const chat::ChatTemplate>> templates_;  // guarded by the GIL
};

void bind_chat(pybind11::module_& m);
void bind_tokenizer(pybind11::module_& m);

}  // namespace overhead::python
