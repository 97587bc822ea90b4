// overhead._overhead: the extension module behind the `overhead` Python package. Errors reach
// Python with the message the `overhead` command prints: LoadError (an OSError, as transformers
// raises for a tokenizer it cannot load) and TemplateError, whose `message` is the bare message
// and str() the located one ("<template>:<line>:<col>: <message>"); a text the tokenizer refuses
// to encode (tok::EncodeError) is a ValueError.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "tok/errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_overhead, m) {
  m.doc() = "HF-exact tokenizers and chat templates (the overhead C++ libraries)";
  // Never destroyed: a static's destructor would run after the interpreter is gone.
  static auto& load_error = *new py::exception<overhead::tok::LoadError>(m, "LoadError", PyExc_OSError);
  static auto& template_error = *new py::exception<overhead::chat::TemplateError>(m, "TemplateError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const overhead::tok::LoadError& e) {
      PyErr_SetString(load_error.ptr(), e.what());
    } catch (const overhead::tok::EncodeError& e) {
      // A text the tokenizer refuses (its normalized form would pass the size limit): a bad value.
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const overhead::chat::TemplateError& e) {
      py::object error = py::reinterpret_borrow<py::object>(template_error.ptr())(e.what());
      error.attr("message") = e.message().empty() ? std::string(e.what()) : e.message();
      PyErr_SetObject(template_error.ptr(), error.ptr());
    }
  });
  overhead::python::bind_chat(m);
  overhead::python::bind_tokenizer(m);
}
