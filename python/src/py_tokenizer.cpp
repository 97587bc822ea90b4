// overhead._overhead.Tokenizer: encode / decode / count from Python with the GIL released while
// the C++ tokenizer runs, so Python threads encode in parallel, and ids handed back as plain
// lists of int (what transformers' tokenizers return).
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "binding/chat_binding.hpp"
#include "bindings.hpp"
#include "py_json.hpp"

namespace py = pybind11;

namespace overhead::python {

namespace {

// Batches at least this large (in UTF-8 bytes) are encoded on all cores when called as
// tok([...]) (transformers' fast tokenizers encode batches in parallel); smaller ones are not
// worth starting threads for.
constexpr std::size_t kParallelBatchBytes = 64 * 1024;
// Templates compiled from a chat_template= argument kept per tokenizer; a caller cycling through
// more sources than this recompiles instead of growing memory.
constexpr std::size_t kMaxCachedTemplates = 16;

std::string_view text_of(py::handle text, const char* what) {
  if (!PyUnicode_Check(text.ptr()))
    throw py::type_error(std::string(what) + " must be str, not " + Py_TYPE(text.ptr())->tp_name);
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(text.ptr(), &n);  // cached in the str object: no copy
  if (p == nullptr) throw py::error_already_set();
  return {p, static_cast<std::size_t>(n)};
}

// The int objects of ids below kSharedIds, made on first use and kept for the module's life (a
// pointer per id, 2 MB at most, and one int per id ever returned): a list of ids then costs a
// reference count per id instead of an int allocation per id (only ints up to 256 are shared by
// Python itself), about 20 ns an id, which for texts of a few KB was a third of the call.
// Touched with the GIL held only.
constexpr std::uint32_t kSharedIds = 1u << 18;

PyObject* shared_int(std::uint32_t id) {
  static std::vector<PyObject*> ints;
  if (id >= kSharedIds) return PyLong_FromUnsignedLong(id);
  if (ints.empty()) ints.assign(kSharedIds, nullptr);
  PyObject*& slot = ints[id];
  if (slot == nullptr) {
    slot = PyLong_FromUnsignedLong(id);
    if (slot == nullptr) return nullptr;
  }
  Py_INCREF(slot);
  return slot;
}

py::list to_list(const tok::Ids& ids) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
  if (list == nullptr) throw py::error_already_set();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    PyObject* v = shared_int(ids[i]);
    if (v == nullptr) {
      Py_DECREF(list);
      throw py::error_already_set();
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
  }
  return py::reinterpret_steal<py::list>(list);
}

py::list ones(std::size_t n) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(n));
  if (list == nullptr) throw py::error_already_set();
  const py::int_ one(1);
  for (std::size_t i = 0; i < n; ++i) {
    Py_INCREF(one.ptr());
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), one.ptr());
  }
  return py::reinterpret_steal<py::list>(list);
}

// A batch's texts as views of each str's own UTF-8 (cached in the object: no copy), with a
// reference to every str held in `keep` so the views outlive the GIL's release even when the
// caller's iterable (a generator) or list lets go of them meanwhile.
struct TextViews {
  std::vector<py::object> keep;
  std::vector<std::string_view> views;
  std::size_t bytes = 0;
};
TextViews texts_of(py::handle texts) {
  if (PyUnicode_Check(texts.ptr())) throw py::type_error("texts must be a list of str, not a str");
  TextViews out;
  if (PyList_Check(texts.ptr()) || PyTuple_Check(texts.ptr())) {
    const auto n = static_cast<std::size_t>(py::len(texts));
    out.keep.reserve(n);
    out.views.reserve(n);
  }
  std::size_t i = 0;
  for (const py::handle t : py::iter(texts)) {
    const std::string what = "texts[" + std::to_string(i++) + "]";
    out.views.push_back(text_of(t, what.c_str()));
    out.keep.push_back(py::reinterpret_borrow<py::object>(t));
    out.bytes += out.views.back().size();
  }
  return out;
}

std::vector<tok::TokenId> ids_of(py::handle ids) {
  std::vector<tok::TokenId> out;
  if (PyList_Check(ids.ptr()) || PyTuple_Check(ids.ptr())) out.reserve(static_cast<std::size_t>(py::len(ids)));
  std::size_t i = 0;
  for (const py::handle v : py::iter(ids)) {
    PyObject* index = PyNumber_Index(v.ptr());  // int, bool, numpy integers
    if (index == nullptr) {
      PyErr_Clear();
      throw py::type_error("ids[" + std::to_string(i) + "] must be an int, not " + Py_TYPE(v.ptr())->tp_name);
    }
    const unsigned long long id = PyLong_AsUnsignedLongLong(index);
    const bool bad = PyErr_Occurred() != nullptr || id > 0xffffffffULL;
    Py_DECREF(index);
    if (bad) {
      PyErr_Clear();
      throw py::value_error("ids[" + std::to_string(i) + "]: " + py::repr(v).cast<std::string>() +
                            " is not a token id (0 to 4294967295)");
    }
    out.push_back(static_cast<tok::TokenId>(id));
    ++i;
  }
  return out;
}

// An int argument (a Python int, or anything with __index__ such as numpy's) as a long long, with
// the side it overflowed to: -1 below, +1 above, 0 when it fits. Not an int: TypeError naming it.
struct IntArgument {
  long long value = 0;
  int overflow = 0;
};
IntArgument int_argument(py::handle arg, const char* name) {
  PyObject* index = PyNumber_Index(arg.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw py::type_error(std::string(name) + " must be an int, not " + Py_TYPE(arg.ptr())->tp_name);
  }
  IntArgument out;
  out.value = PyLong_AsLongLongAndOverflow(index, &out.overflow);
  Py_DECREF(index);
  if (out.value == -1 && PyErr_Occurred()) throw py::error_already_set();
  return out;
}

// encode_batch's threads=: 0 (all cores) or a positive count, which the tokenizer caps at the
// cores and the texts (a huge count once started that many threads and exhausted the host's).
// A negative or non-integer count is the caller's mistake, said with the argument's name.
unsigned threads_of(py::handle threads) {
  const IntArgument n = int_argument(threads, "threads");
  if (n.overflow > 0) return std::numeric_limits<unsigned>::max();  // capped like any large count
  if (n.overflow < 0 || n.value < 0)
    throw py::value_error("threads must be 0 (all cores) or a positive count, not " + py::repr(threads).cast<std::string>());
  constexpr auto kMax = static_cast<long long>(std::numeric_limits<unsigned>::max());
  return static_cast<unsigned>(n.value > kMax ? kMax : n.value);
}

// An id= argument as a token id: any int (numpy's too); one outside 0..2^32-1 names no token
// (nullopt), however large, as id_to_token's None and is_special's False say.
std::optional<tok::TokenId> token_id_of(py::handle id) {
  const IntArgument n = int_argument(id, "id");
  if (n.overflow != 0 || n.value < 0 || n.value > 0xffffffffLL) return std::nullopt;
  return static_cast<tok::TokenId>(n.value);
}

// tokenizer(text): input_ids, then attention_mask, as transformers gives them.
py::dict encoding(const py::list& ids) {
  py::dict out;
  out["input_ids"] = ids;
  out["attention_mask"] = ones(ids.size());
  return out;
}

// Encodes a batch in parts of about kBatchPartBytes (256 KB of text: its ids fit a core's cache)
// and hands each part's ids to `take` (which makes Python objects of them, with the GIL held)
// while the next part encodes in the background on the tokenizer's threads: making the lists is
// Python's work, one thread at a time, and would otherwise follow the whole encode (a batch on two
// threads then ran at 1.0-1.25 times one thread's speed).
constexpr std::size_t kBatchPartBytes = 256 * 1024;
template <class Take>
void encode_in_parts(const tok::Tokenizer& tokenizer, const TextViews& texts, bool add_special, unsigned threads,
                     Take&& take) {
  const std::size_t n = texts.views.size();
  const auto part_end = [&](std::size_t first) {
    std::size_t last = first, bytes = 0;
    while (last < n && (last == first || bytes < kBatchPartBytes)) bytes += texts.views[last++].size();
    return last;
  };
  const auto part = [&](std::size_t first, std::size_t last) {
    return std::span<const std::string_view>(texts.views.data() + first, last - first);
  };
  if (n == 0) return;
  std::size_t first = 0, last = part_end(0);
  std::optional<tok::Tokenizer::BackgroundBatch> next;
  {
    py::gil_scoped_release unlocked;
    next.emplace(tokenizer.start_batch(part(first, last), add_special, threads));
  }
  while (first < n) {
    std::vector<tok::Ids> ids;
    {
      py::gil_scoped_release unlocked;
      ids = next->finish();
      next.reset();  // lets go of the kept pool before the next part asks for it
      if (last < n) next.emplace(tokenizer.start_batch(part(last, part_end(last)), add_special, threads));
    }
    for (const tok::Ids& one : ids) take(one);
    first = last;
    last = first < n ? part_end(first) : n;
  }
}

}  // namespace

PyTokenizer::PyTokenizer(std::string name_or_path, std::optional<std::string> date)
    : name_or_path_(std::move(name_or_path)), date_(std::move(date)) {
  if (date_) check_date(*date_);
  py::gil_scoped_release unlocked;
  tokenizer_ = binding::load_tokenizer(name_or_path_);
}

PyChatTemplate PyTokenizer::template_for(const std::string& source) {
  auto it = templates_.find(source);
  if (it == templates_.end()) {
    if (templates_.size() >= kMaxCachedTemplates) templates_.clear();
    nlohmann::json config = tokenizer_->config();
    if (!config.is_object()) config = nlohmann::json::object();
    config["chat_template"] = source;
    it = templates_.emplace(source, chat::ChatTemplate::from_tokenizer_config(config, name_or_path_)).first;
  }
  return PyChatTemplate{it->second, date_};
}

void bind_tokenizer(py::module_& m) {
  py::class_<PyTokenizer>(m, "Tokenizer")
      .def(py::init<std::string, std::optional<std::string>>(), py::arg("name_or_path"), py::kw_only(),
           py::arg("date") = py::none())
      .def(
          "encode",
          [](const PyTokenizer& self, py::handle text, bool add_special_tokens) {
            const std::string_view t = text_of(text, "text");
            tok::Ids ids;
            {
              py::gil_scoped_release unlocked;
              ids = self.get().encode(t, add_special_tokens);
            }
            return to_list(ids);
          },
          py::arg("text"), py::arg("add_special_tokens") = true)
      .def(
          "__call__",
          [](const PyTokenizer& self, py::handle text, bool add_special_tokens) -> py::dict {
            if (PyUnicode_Check(text.ptr())) {
              const std::string_view t = text_of(text, "text");
              tok::Ids ids;
              {
                py::gil_scoped_release unlocked;
                ids = self.get().encode(t, add_special_tokens);
              }
              return encoding(to_list(ids));
            }
            const TextViews texts = texts_of(text);
            py::list ids, masks;
            encode_in_parts(self.get(), texts, add_special_tokens, texts.bytes >= kParallelBatchBytes ? 0 : 1,
                            [&](const tok::Ids& b) {
                              ids.append(to_list(b));
                              masks.append(ones(b.size()));
                            });
            py::dict out;
            out["input_ids"] = ids;
            out["attention_mask"] = masks;
            return out;
          },
          py::arg("text"), py::arg("add_special_tokens") = true)
      .def(
          "encode_batch",
          [](const PyTokenizer& self, py::handle texts, bool add_special_tokens, py::handle threads) {
            const unsigned pool = threads_of(threads);
            const TextViews views = texts_of(texts);
            py::list out;
            encode_in_parts(self.get(), views, add_special_tokens, pool, [&](const tok::Ids& b) { out.append(to_list(b)); });
            return out;
          },
          py::arg("texts"), py::arg("add_special_tokens") = true, py::arg("threads") = 0)
      .def(
          "count",
          [](const PyTokenizer& self, py::handle text, bool add_special_tokens) {
            const std::string_view t = text_of(text, "text");
            py::gil_scoped_release unlocked;
            return self.get().count(t, add_special_tokens);
          },
          py::arg("text"), py::arg("add_special_tokens") = true)
      .def(
          "decode",
          [](const PyTokenizer& self, py::handle ids, bool skip_special_tokens) {
            const std::vector<tok::TokenId> v = ids_of(ids);
            std::string text;
            {
              py::gil_scoped_release unlocked;
              text = self.get().decode(v, skip_special_tokens);
            }
            // Byte-level decoding can end inside a character when the ids do; HF replaces the
            // broken sequence with U+FFFD, and so does this.
            return py::reinterpret_steal<py::str>(
                PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
          },
          py::arg("ids"), py::arg("skip_special_tokens") = false)
      .def("token_to_id", [](const PyTokenizer& self, const std::string& token) { return self.get().token_to_id(token); },
           py::arg("token"))
      .def(
          "id_to_token",
          [](const PyTokenizer& self, py::handle id) -> std::optional<std::string> {
            const auto t = token_id_of(id);
            if (!t) return std::nullopt;
            return self.get().id_to_token(*t);
          },
          py::arg("id"))
      .def_property_readonly("vocab_size", [](const PyTokenizer& self) { return self.get().vocab_size(); })
      .def("__len__", [](const PyTokenizer& self) { return self.get().vocab_size(); })
      .def_property_readonly("name_or_path", &PyTokenizer::name_or_path)
      .def_property_readonly("source_dir", [](const PyTokenizer& self) { return self.get().source_dir(); })
      .def_property_readonly("date", &PyTokenizer::date)
      .def_property_readonly("config", [](const PyTokenizer& self) { return from_json(self.get().config()); })
      .def("special_token", [](const PyTokenizer& self, const std::string& key) { return self.get().special_token(key); },
           py::arg("key"))
      .def(
          "is_special",
          [](const PyTokenizer& self, py::handle id) {
            const auto t = token_id_of(id);
            return t && self.get().is_special(*t);
          },
          py::arg("id"))
      .def("_template", &PyTokenizer::template_for, py::arg("source"));
}

}  // namespace overhead::python
