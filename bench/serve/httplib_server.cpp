// The cpp-httplib side of the HTTP-library comparison (bench/serve/http_libs.sh): a bare server
// configured as src/serve/server.cpp configures the gateway's (tcp_nodelay, 1000 requests per
// kept-alive connection) but on httplib's default thread pool, answering POST /v1/tokenize and
// GET /ping through the shared TokenizeHandler.
// Usage: overhead_bench_httplib_server PORT [TOKENIZER...]   (PORT 0: any; stdout's first line is the port)
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tokenize_handler.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PORT [TOKENIZER...]\n", argv[0]);
    return 2;
  }
  const int wanted = std::atoi(argv[1]);
  overhead::bench::TokenizeHandler handler(std::vector<std::string>(argv + 2, argv + argc));

  httplib::Server http;
  // As the gateway: without it the body waits for the client's delayed ACK (httplib sends the
  // headers and the body separately), and the default of 5 requests per connection would make
  // wrk reconnect every few requests.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  http.Post("/v1/tokenize", [&handler](const httplib::Request& req, httplib::Response& res) {
    auto reply = handler.tokenize(req.body);
    res.status = reply.status;
    res.set_content(std::move(reply.body), "application/json");
  });
  http.Get("/ping", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(overhead::bench::kPingBody), "text/plain");
  });

  const int port = wanted == 0 ? http.bind_to_any_port("127.0.0.1") : (http.bind_to_port("127.0.0.1", wanted) ? wanted : -1);
  if (port <= 0) {
    std::fprintf(stderr, "cannot bind 127.0.0.1:%d\n", wanted);
    return 1;
  }
  std::printf("%d\n", port);
  std::fflush(stdout);
  return http.listen_after_bind() ? 0 : 1;
}
