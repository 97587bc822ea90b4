#include "serve/box_reader.hpp"

#include <cstdio>
#include <exception>

#include "serve/deadline_timers.hpp"

namespace overhead::serve {

BoxReader::BoxReader(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
                     std::chrono::steady_clock::time_point deadline)
    : box_(box), id_(std::move(id)), responder_(std::move(responder)), deadline_(deadline) {}

void BoxReader::attach(const std::shared_ptr<BoxReader>& reader, DeadlineTimers& timers) {
  const std::weak_ptr<BoxReader> weak = reader;
  reader->on_deadline_ = std::make_shared<const std::function<void()>>([weak] {
    if (const auto r = weak.lock()) r->wake();
  });
  timers.at(reader->deadline_, reader->on_deadline_);
  reader->responder_->on_cancel([weak] {
    if (const auto r = weak.lock()) {
      r->mark_client_gone();
      r->wake();
    }
  });
  reader->box_.watch(reader->id_, [reader] { reader->wake(); });
}

void BoxReader::wake() {
  if (wakes_.fetch_add(1, std::memory_order_acq_rel) != 0) return;  // the thread at work will look again
  for (;;) {
    int seen = wakes_.load(std::memory_order_acquire);
    work_or_fail();
    // No wake-up since `seen`: done. Else what it announced may have been missed: look again.
    if (wakes_.compare_exchange_strong(seen, 0, std::memory_order_acq_rel)) return;
  }
}

void BoxReader::work_or_fail() noexcept {
  // An exception would leave the counter above zero (every later wake-up returns at once) and the
  // client without an answer until it gives up: the request is answered with an error instead.
  try {
    work();
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "serve: answering request %s failed: %s\n", id_.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "serve: answering request %s failed\n", id_.c_str());
  }
  fail();
}

}  // namespace overhead::serve
