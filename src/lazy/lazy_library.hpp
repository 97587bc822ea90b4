// Opening a shared library at its first use instead of at process start. The stand-ins of
// curl_shim.cpp and pq_shim.cpp call these: a command that never speaks HTTP or PostgreSQL never
// loads libcurl or libpq, nor the ~30 libraries they pull in (TLS, Kerberos, LDAP, SSH, ...),
// whose loading and relocation used to be most of every command's start.
#pragma once

namespace overhead::lazy {

// The handle of `soname`, opened on the first call for that name (thread-safe; later calls are
// one load). Throws std::runtime_error naming the library, the loader's reason and `package`
// (what provides it) when it cannot be opened.
void* library(const char* soname, const char* package);

// The address of `name` in `handle`; throws std::runtime_error naming both when it is missing.
void* symbol(void* handle, const char* soname, const char* name);

// The real function `name` of type F in `soname`.
template <class F>
F function(const char* soname, const char* package, const char* name) {
  return reinterpret_cast<F>(symbol(library(soname, package), soname, name));
}

}  // namespace overhead::lazy
