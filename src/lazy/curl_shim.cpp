// Stand-ins for libcurl's API, linked in place of libcurl (see src/lazy/CMakeLists.txt): each one
// calls the real function, looked up in libcurl.so.4 on its first call. Code that uses libcurl
// includes <curl/curl.h> and links CURL::libcurl exactly as before. A libcurl function missing
// here is a link error ("undefined reference to curl_..."): add its stand-in below.
//
// The variadic setters cannot pass their `...` on; they read the one argument with the type the
// option's number range says (as libcurl itself reads it) and pass that.
#define CURL_DISABLE_TYPECHECK  // the type-checking macros would rename the definitions below
#include <curl/curl.h>

#include <cstdarg>

#include "lazy/lazy_library.hpp"

namespace {
constexpr const char* kSoname = "libcurl.so.4";
constexpr const char* kPackage = "libcurl4 (libcurl)";
}  // namespace

// The real function of this name, resolved once.
#define OVERHEAD_REAL(name) \
  static const auto real = overhead::lazy::function<decltype(&::name)>(kSoname, kPackage, #name)

extern "C" {

CURLcode curl_global_init(long flags) { OVERHEAD_REAL(curl_global_init); return real(flags); }
void curl_global_cleanup(void) { OVERHEAD_REAL(curl_global_cleanup); real(); }
char* curl_version(void) { OVERHEAD_REAL(curl_version); return real(); }
curl_version_info_data* curl_version_info(CURLversion v) { OVERHEAD_REAL(curl_version_info); return real(v); }
void curl_free(void* p) { OVERHEAD_REAL(curl_free); real(p); }
time_t curl_getdate(const char* p, const time_t* unused) { OVERHEAD_REAL(curl_getdate); return real(p, unused); }

curl_slist* curl_slist_append(curl_slist* list, const char* data) {
  OVERHEAD_REAL(curl_slist_append);
  return real(list, data);
}
void curl_slist_free_all(curl_slist* list) { OVERHEAD_REAL(curl_slist_free_all); real(list); }

CURL* curl_easy_init(void) { OVERHEAD_REAL(curl_easy_init); return real(); }
CURLcode curl_easy_perform(CURL* curl) { OVERHEAD_REAL(curl_easy_perform); return real(curl); }
void curl_easy_cleanup(CURL* curl) { OVERHEAD_REAL(curl_easy_cleanup); real(curl); }
CURL* curl_easy_duphandle(CURL* curl) { OVERHEAD_REAL(curl_easy_duphandle); return real(curl); }
void curl_easy_reset(CURL* curl) { OVERHEAD_REAL(curl_easy_reset); real(curl); }
CURLcode curl_easy_pause(CURL* curl, int bitmask) { OVERHEAD_REAL(curl_easy_pause); return real(curl, bitmask); }
CURLcode curl_easy_upkeep(CURL* curl) { OVERHEAD_REAL(curl_easy_upkeep); return real(curl); }
const char* curl_easy_strerror(CURLcode code) { OVERHEAD_REAL(curl_easy_strerror); return real(code); }
CURLcode curl_easy_recv(CURL* curl, void* buffer, size_t buflen, size_t* n) {
  OVERHEAD_REAL(curl_easy_recv);
  return real(curl, buffer, buflen, n);
}
CURLcode curl_easy_send(CURL* curl, const void* buffer, size_t buflen, size_t* n) {
  OVERHEAD_REAL(curl_easy_send);
  return real(curl, buffer, buflen, n);
}
char* curl_easy_escape(CURL* curl, const char* string, int length) {
  OVERHEAD_REAL(curl_easy_escape);
  return real(curl, string, length);
}
char* curl_easy_unescape(CURL* curl, const char* string, int length, int* outlength) {
  OVERHEAD_REAL(curl_easy_unescape);
  return real(curl, string, length, outlength);
}

CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  OVERHEAD_REAL(curl_easy_setopt);
  va_list ap;
  va_start(ap, option);
  CURLcode result;
  if (option < CURLOPTTYPE_OBJECTPOINT) result = real(curl, option, va_arg(ap, long));
  else if (option < CURLOPTTYPE_FUNCTIONPOINT) result = real(curl, option, va_arg(ap, void*));
  else if (option < CURLOPTTYPE_OFF_T) result = real(curl, option, va_arg(ap, void (*)()));
  else if (option < CURLOPTTYPE_BLOB) result = real(curl, option, va_arg(ap, curl_off_t));
  else result = real(curl, option, va_arg(ap, curl_blob*));
  va_end(ap);
  return result;
}

// Every CURLINFO argument is a pointer to the result (char**, long*, double*, curl_off_t*, ...);
// all object pointers are passed alike.
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  OVERHEAD_REAL(curl_easy_getinfo);
  va_list ap;
  va_start(ap, info);
  void* out = va_arg(ap, void*);
  va_end(ap);
  return real(curl, info, out);
}

CURLSH* curl_share_init(void) { OVERHEAD_REAL(curl_share_init); return real(); }
CURLSHcode curl_share_cleanup(CURLSH* share) { OVERHEAD_REAL(curl_share_cleanup); return real(share); }
const char* curl_share_strerror(CURLSHcode code) { OVERHEAD_REAL(curl_share_strerror); return real(code); }
CURLSHcode curl_share_setopt(CURLSH* share, CURLSHoption option, ...) {
  OVERHEAD_REAL(curl_share_setopt);
  va_list ap;
  va_start(ap, option);
  CURLSHcode result;
  switch (option) {
    case CURLSHOPT_SHARE:
    case CURLSHOPT_UNSHARE: result = real(share, option, va_arg(ap, int)); break;  // a curl_lock_data
    case CURLSHOPT_LOCKFUNC:
    case CURLSHOPT_UNLOCKFUNC: result = real(share, option, va_arg(ap, void (*)())); break;
    default: result = real(share, option, va_arg(ap, void*)); break;
  }
  va_end(ap);
  return result;
}

CURLM* curl_multi_init(void) { OVERHEAD_REAL(curl_multi_init); return real(); }
CURLMcode curl_multi_cleanup(CURLM* multi) { OVERHEAD_REAL(curl_multi_cleanup); return real(multi); }
CURLMcode curl_multi_add_handle(CURLM* multi, CURL* curl) { OVERHEAD_REAL(curl_multi_add_handle); return real(multi, curl); }
CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* curl) {
  OVERHEAD_REAL(curl_multi_remove_handle);
  return real(multi, curl);
}
CURLMcode curl_multi_perform(CURLM* multi, int* running) { OVERHEAD_REAL(curl_multi_perform); return real(multi, running); }
CURLMcode curl_multi_wait(CURLM* multi, curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int* numfds) {
  OVERHEAD_REAL(curl_multi_wait);
  return real(multi, extra_fds, extra_nfds, timeout_ms, numfds);
}
CURLMcode curl_multi_poll(CURLM* multi, curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int* numfds) {
  OVERHEAD_REAL(curl_multi_poll);
  return real(multi, extra_fds, extra_nfds, timeout_ms, numfds);
}
CURLMcode curl_multi_wakeup(CURLM* multi) { OVERHEAD_REAL(curl_multi_wakeup); return real(multi); }
CURLMcode curl_multi_fdset(CURLM* multi, fd_set* read_fds, fd_set* write_fds, fd_set* exc_fds, int* max_fd) {
  OVERHEAD_REAL(curl_multi_fdset);
  return real(multi, read_fds, write_fds, exc_fds, max_fd);
}
CURLMcode curl_multi_timeout(CURLM* multi, long* milliseconds) {
  OVERHEAD_REAL(curl_multi_timeout);
  return real(multi, milliseconds);
}
CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  OVERHEAD_REAL(curl_multi_info_read);
  return real(multi, msgs_in_queue);
}
const char* curl_multi_strerror(CURLMcode code) { OVERHEAD_REAL(curl_multi_strerror); return real(code); }
CURLMcode curl_multi_socket_action(CURLM* multi, curl_socket_t s, int ev_bitmask, int* running) {
  OVERHEAD_REAL(curl_multi_socket_action);
  return real(multi, s, ev_bitmask, running);
}
CURLMcode curl_multi_assign(CURLM* multi, curl_socket_t sockfd, void* sockp) {
  OVERHEAD_REAL(curl_multi_assign);
  return real(multi, sockfd, sockp);
}
CURLMcode curl_multi_setopt(CURLM* multi, CURLMoption option, ...) {
  OVERHEAD_REAL(curl_multi_setopt);
  va_list ap;
  va_start(ap, option);
  CURLMcode result;
  if (option < CURLOPTTYPE_OBJECTPOINT) result = real(multi, option, va_arg(ap, long));
  else if (option < CURLOPTTYPE_FUNCTIONPOINT) result = real(multi, option, va_arg(ap, void*));
  else if (option < CURLOPTTYPE_OFF_T) result = real(multi, option, va_arg(ap, void (*)()));
  else result = real(multi, option, va_arg(ap, curl_off_t));
  va_end(ap);
  return result;
}

CURLU* curl_url(void) { OVERHEAD_REAL(curl_url); return real(); }
void curl_url_cleanup(CURLU* url) { OVERHEAD_REAL(curl_url_cleanup); real(url); }
CURLU* curl_url_dup(CURLU* url) { OVERHEAD_REAL(curl_url_dup); return real(url); }
CURLUcode curl_url_get(CURLU* url, CURLUPart what, char** part, unsigned int flags) {
  OVERHEAD_REAL(curl_url_get);
  return real(url, what, part, flags);
}
CURLUcode curl_url_set(CURLU* url, CURLUPart what, const char* part, unsigned int flags) {
  OVERHEAD_REAL(curl_url_set);
  return real(url, what, part, flags);
}
const char* curl_url_strerror(CURLUcode code) { OVERHEAD_REAL(curl_url_strerror); return real(code); }

}  // extern "C"
