// Python values <-> JSON for the template engine. A conversation reaches a template as Jinja2
// sees Python values: dicts (key order kept: nlohmann::ordered_json), lists and tuples, str,
// int, float, bool, None. Anything else is refused with a TypeError naming where it sits
// ("messages[1]['content']"), never guessed at.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

namespace overhead::python {

// The template engine takes values nested at most this deep (chat/json_value.cpp).
inline constexpr int kMaxNesting = 256;

// Converts `value`; `what` names it in errors ("messages", "tools", a keyword argument's name).
nlohmann::ordered_json to_json(pybind11::handle value, const std::string& what);

// The other way, for tokenizer_config.json handed to Python.
pybind11::object from_json(const nlohmann::json& value);

}  // namespace overhead::python
