// The test side of scripts/services/: reading a value from the env file a service script wrote
// (KEY=value lines; CTest passes the file's path in an environment variable such as
// OVERHEAD_REDIS_ENV), names no earlier run on a long-lived server has used, and a loopback port
// that nothing listens on (for "unreachable server" cases).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace overhead::test_services {

// KEY's value in the env file at `path`; throws naming the file when it or the key is missing.
inline std::string env_file_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (did the service's *_start fixture run?)");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key + "=")) return line.substr(key.size() + 1);
  throw std::runtime_error(path + ": no " + key + "= line");
}

// KEY's value in the env file named by the environment variable `var`.
inline std::string service_env(const char* var, const std::string& key) {
  const char* path = std::getenv(var);
  if (!path || !*path)
    throw std::runtime_error(std::string(var) +
                             " is not set (run through ctest, whose fixtures start the services with scripts/services/)");
  return env_file_value(path, key);
}

// PREFIX plus digits and underscores, unique across calls and processes: a name for a stream,
// queue, table or folder that a server kept from an earlier run cannot already hold.
inline std::string unique_name(const std::string& prefix) {
  static const std::string run = std::to_string(getpid()) + "_" + std::to_string(std::random_device{}() % 1000000);
  static std::atomic<int> counter{0};
  return prefix + run + "_" + std::to_string(++counter);
}

// A port on 127.0.0.1 that nothing listens on: bound, read, closed.
inline int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind failed");
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace overhead::test_services
