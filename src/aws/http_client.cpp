#include "aws/http_client.hpp"

#include <cstdlib>

#include <curl/curl.h>
#include <strings.h>

#include <array>
#include <cctype>

namespace overhead::aws {
namespace {

// curl_global_init is not thread-safe; run it once before the first handle.
void init_curl_once() {
  static const bool ok = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!ok) throw std::runtime_error("libcurl could not be initialised");
}

std::string lower_header_name(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim_header_text(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<HeaderList*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    headers->clear();  // a new status line (after 100 Continue or a redirect) starts over
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    headers->emplace_back(lower_header_name(trim_header_text(line.substr(0, colon))), std::string(trim_header_text(line.substr(colon + 1))));
  }
  return size * n;
}

TransportError::Kind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return TransportError::Kind::connect;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportError::Kind::timeout;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return TransportError::Kind::dropped;
    default:
      return TransportError::Kind::other;
  }
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

std::string_view HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return {};
}

// The connection cache (and DNS cache) shared by all handles, with the locks curl asks for.
struct HttpClient::Shared {
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Shared*>(user)->locks[static_cast<std::size_t>(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Shared*>(user)->locks[static_cast<std::size_t>(data)].unlock();
  }
};

HttpClient::HttpClient(HttpClientOptions options) : options_(options), shared_(std::make_unique<Shared>()) {
  init_curl_once();
  shared_->share = curl_share_init();
  if (!shared_->share) throw std::runtime_error("libcurl: cannot create a connection cache");
  curl_share_setopt(shared_->share, CURLSHOPT_LOCKFUNC, &Shared::lock);
  curl_share_setopt(shared_->share, CURLSHOPT_UNLOCKFUNC, &Shared::unlock);
  curl_share_setopt(shared_->share, CURLSHOPT_USERDATA, shared_.get());
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
}

HttpClient::~HttpClient() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
  curl_share_cleanup(shared_->share);
}

void* HttpClient::acquire_handle() {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  if (!h) throw std::runtime_error("libcurl: cannot create a handle");
  return h;
}

void HttpClient::release_handle(void* handle) {
  std::lock_guard lock(pool_mutex_);
  if (pool_.size() < options_.max_pooled_handles) {
    pool_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

HttpResponse HttpClient::send(const HttpRequest& request) {
  CURL* h = static_cast<CURL*>(acquire_handle());
  struct Release {
    HttpClient* self;
    CURL* h;
    ~Release() { self->release_handle(h); }
  } release{this, h};

  curl_easy_reset(h);
  HttpResponse response;
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (!next) throw std::bad_alloc();
    (void)headers.release();
    headers.reset(next);
  };
  bool typed = false;
  for (const auto& [name, value] : request.headers) {
    add_header(name + ": " + value);
    typed = typed || (name.size() == 12 && strncasecmp(name.c_str(), "content-type", 12) == 0);
  }
  add_header("Expect:");  // no 100-continue round trip before a body
  // A body the caller gave no type goes without one: curl's default for a body it posts would
  // label it a form (application/x-www-form-urlencoded), which servers may parse and refuse.
  if (!typed) add_header("Content-Type:");

  curl_easy_setopt(h, CURLOPT_SHARE, shared_->share);
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  // AWS_CA_BUNDLE, as the AWS SDKs read it: the CA file for TLS where this build's default path
  // does not exist (e.g. the Lambda zip's Debian libcurl on Amazon Linux, whose bundle lives in
  // /etc/pki/tls/certs; the zip's bootstrap sets it).
  static const std::string ca_bundle = [] {
    const char* v = std::getenv("AWS_CA_BUNDLE");
    return std::string(v ? v : "");
  }();
  if (!ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, ca_bundle.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.headers);
  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    if (request.method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  CURLcode rc = curl_easy_perform(h);
  long new_connections = 0;
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &new_connections);
  connections_opened_.fetch_add(static_cast<std::uint64_t>(new_connections), std::memory_order_relaxed);
  if (rc != CURLE_OK) {
    throw TransportError(kind_of(rc), request.method + " " + request.url + ": " + curl_easy_strerror(rc));
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace overhead::aws
