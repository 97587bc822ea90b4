// overhead._overhead.ChatTemplate: a chat template compiled from its source or from a
// tokenizer_config.json (a dict, a file, a folder or a tokenizer name), rendered from Python values.
#include <chrono>
#include <utility>

#include <pybind11/stl.h>

#include "binding/chat_binding.hpp"
#include "bindings.hpp"
#include "py_json.hpp"

namespace py = pybind11;

namespace overhead::python {

void check_date(const std::string& d) {
  bool shaped = d.size() == 10 && d[4] == '-' && d[7] == '-';
  for (const std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u})
    shaped = shaped && i < d.size() && d[i] >= '0' && d[i] <= '9';
  if (shaped) {
    const std::chrono::year_month_day ymd{std::chrono::year(std::stoi(d.substr(0, 4))),
                                          std::chrono::month(static_cast<unsigned>(std::stoi(d.substr(5, 2)))),
                                          std::chrono::day(static_cast<unsigned>(std::stoi(d.substr(8, 2))))};
    if (ymd.ok()) return;
  }
  throw py::value_error("date: '" + d + "' is not a real date of the form YYYY-MM-DD");
}

std::string PyChatTemplate::render(py::handle messages, py::handle tools, py::handle documents,
                                   bool add_generation_prompt, const py::kwargs& variables) const {
  const nlohmann::ordered_json m = to_json(messages, "messages");
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (!tools.is_none()) extra["tools"] = to_json(tools, "tools");
  if (!documents.is_none()) extra["documents"] = to_json(documents, "documents");
  for (const auto& [key, value] : variables) {
    const std::string k = py::cast<std::string>(key);
    extra[k] = to_json(value, k);
  }
  chat::RenderOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.date = date;
  py::gil_scoped_release unlocked;
  return compiled->render(m, options, extra);
}

namespace {

std::optional<std::string> checked_date(std::optional<std::string> date) {
  if (date) check_date(*date);
  return date;
}

PyChatTemplate from_config(py::handle config, std::optional<std::string> name, std::optional<std::string> date) {
  date = checked_date(std::move(date));
  if (PyDict_Check(config.ptr())) {
    // Through JSON text, so that the dict reads exactly as the same tokenizer_config.json file
    // would (numbers past 64 bits, such as model_max_length = 1e30, become doubles).
    const std::string text = py::cast<std::string>(py::module_::import("json").attr("dumps")(config));
    const auto j = nlohmann::ordered_json::parse(text);
    return {chat::ChatTemplate::from_tokenizer_config(j, name.value_or("tokenizer_config.json")), date};
  }
  // A path (str or os.PathLike) to tokenizer_config.json, a folder holding one, or a tokenizer name.
  const std::string where = py::cast<std::string>(py::module_::import("os").attr("fsdecode")(config));
  binding::TokenizerConfig file = binding::read_tokenizer_config(where);
  return {chat::ChatTemplate::from_tokenizer_config(file.json, name.value_or(where)), date};
}

}  // namespace

void bind_chat(py::module_& m) {
  py::class_<PyChatTemplate>(m, "ChatTemplate")
      .def(py::init([](const std::string& source, const std::string& name, std::optional<std::string> date) {
             return PyChatTemplate{chat::ChatTemplate::compile(source, name), checked_date(std::move(date))};
           }),
           py::arg("source"), py::arg("name") = "chat_template", py::kw_only(), py::arg("date") = py::none())
      .def_static("from_config", &from_config, py::arg("config"), py::arg("name") = py::none(), py::kw_only(),
                  py::arg("date") = py::none())
      .def("render", &PyChatTemplate::render, py::arg("messages"), py::kw_only(), py::arg("tools") = py::none(),
           py::arg("documents") = py::none(), py::arg("add_generation_prompt") = false)
      .def_property_readonly("name", [](const PyChatTemplate& t) { return t.compiled->name(); })
      .def_property_readonly("source", [](const PyChatTemplate& t) { return t.compiled->source(); })
      .def_property_readonly("date", [](const PyChatTemplate& t) { return t.date; })
      .def("__repr__", [](const PyChatTemplate& t) { return "<overhead.ChatTemplate " + t.compiled->name() + ">"; });
}

}  // namespace overhead::python
