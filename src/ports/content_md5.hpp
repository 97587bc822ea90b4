// The MD5 of bytes seen a piece at a time, in hex: the check a client sends with its upload
// (OpenAI's Uploads API `md5`), computed by the gateway putting the parts together and by
// `overhead batch submit` sending them. Not for security: MD5 only catches bytes changed in transit.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace overhead::ports {

class ContentMd5 {
 public:
  ContentMd5();
  ~ContentMd5();
  ContentMd5(const ContentMd5&) = delete;
  ContentMd5& operator=(const ContentMd5&) = delete;

  void update(std::string_view bytes);
  // The digest of everything updated so far (32 lower-case hex digits); call once.
  [[nodiscard]] std::string hex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace overhead::ports
