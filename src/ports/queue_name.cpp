#include "ports/queue_name.hpp"

#include <algorithm>

namespace overhead::ports {

bool is_plain_queue_name(std::string_view name) {
  return !name.empty() && name.size() <= 80 && std::all_of(name.begin(), name.end(), is_plain_queue_char);
}

}  // namespace overhead::ports
