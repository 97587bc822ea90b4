#include "py_json.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace py = pybind11;

namespace overhead::python {

namespace {

// Where a value sits, kept as a chain on the stack and spelled out only when an error needs it.
struct Step {
  const Step* parent;
  std::string_view key;  // a dict key, or empty for a list index
  std::size_t index;
  bool is_index;
};

std::string where(const Step& s) {
  std::vector<const Step*> chain;
  for (const Step* p = &s; p != nullptr; p = p->parent) chain.push_back(p);
  std::string out(chain.back()->key);  // the root's name
  for (auto it = chain.rbegin() + 1; it != chain.rend(); ++it) {
    if ((*it)->is_index) {
      out += "[" + std::to_string((*it)->index) + "]";
    } else {
      out += "['";
      out += (*it)->key;
      out += "']";
    }
  }
  return out;
}

std::string_view utf8_of(py::handle s) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (p == nullptr) throw py::error_already_set();
  return {p, static_cast<std::size_t>(n)};
}

nlohmann::ordered_json convert(py::handle v, const Step& at, int depth) {
  PyObject* o = v.ptr();
  if (o == Py_None) return nullptr;
  if (o == Py_True) return true;
  if (o == Py_False) return false;
  if (PyUnicode_Check(o)) return std::string(utf8_of(v));
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) {
      if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
      return static_cast<std::int64_t>(i);
    }
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return static_cast<std::uint64_t>(u);
      PyErr_Clear();
    }
    throw py::type_error(where(at) + ": integer out of the 64-bit range the template engine takes");
  }
  if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
  if (depth >= kMaxNesting)
    throw py::value_error(where(at) + ": nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
  if (PyDict_Check(o)) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) {
      if (!PyUnicode_Check(key))
        throw py::type_error(where(at) + ": a key of type " + std::string(Py_TYPE(key)->tp_name) +
                             " (the template engine takes str keys)");
      const std::string_view k = utf8_of(key);
      const Step next{&at, k, 0, false};
      out[std::string(k)] = convert(value, next, depth + 1);
    }
    return out;
  }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    const py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
    const std::size_t n = seq.size();
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    out.get_ref<nlohmann::ordered_json::array_t&>().reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Step next{&at, {}, i, true};
      out.push_back(convert(seq[i], next, depth + 1));
    }
    return out;
  }
  if (PyMapping_Check(o) && py::hasattr(v, "items") && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
    // Other mappings (OrderedDict subclasses are dicts already; UserDict, MappingProxy) as dicts.
    return convert(py::dict(py::reinterpret_borrow<py::object>(v)), at, depth);
  }
  throw py::type_error(where(at) + ": a value of type " + std::string(Py_TYPE(o)->tp_name) +
                       " cannot be passed to a chat template (dict, list, tuple, str, int, float, bool or None)");
}

}  // namespace

nlohmann::ordered_json to_json(py::handle value, const std::string& what) {
  const Step root{nullptr, what, 0, false};
  return convert(value, root, 0);
}

py::object from_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& x : value) out.append(from_json(x));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [k, x] : value.items()) out[py::str(k)] = from_json(x);
      return out;
    }
    default:
      return py::none();  // binary and discarded values do not occur in parsed JSON text
  }
}

}  // namespace overhead::python
