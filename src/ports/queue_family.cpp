#include "ports/queue_family.hpp"

#include <cstdio>
#include <unistd.h>

namespace overhead::ports {

std::string QueueFamily::process_suffix() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "host");
  return std::string(host) + "-" + std::to_string(::getpid());
}

}  // namespace overhead::ports
