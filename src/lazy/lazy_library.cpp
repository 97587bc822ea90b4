#include "lazy/lazy_library.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace overhead::lazy {

void* library(const char* soname, const char* package) {
  static std::mutex mutex;
  static std::map<std::string, void*> opened;
  const std::lock_guard lock(mutex);
  void*& handle = opened[soname];
  if (!handle) {
    // RTLD_LOCAL: the library's symbols stay out of the global scope, so they can never be
    // mistaken for the stand-ins of the same names (and the stand-ins never for them).
    handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      throw std::runtime_error(std::string("cannot load ") + soname + " (" + (why ? why : "unknown reason") +
                               "); is " + package + " installed?");
    }
  }
  return handle;
}

void* symbol(void* handle, const char* soname, const char* name) {
  ::dlerror();
  void* p = ::dlsym(handle, name);
  if (!p) throw std::runtime_error(std::string(soname) + " has no " + name + " (too old a version?)");
  return p;
}

}  // namespace overhead::lazy
