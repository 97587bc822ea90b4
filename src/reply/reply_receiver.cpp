#include "reply/reply_receiver.hpp"

#include "reply/reply_codec.hpp"

namespace overhead::reply {

ReplyReceiver::ReplyReceiver(std::shared_ptr<ports::Queue> replies, ReplyPath& box, RemoteCancels* cancels)
    : box_(box),
      cancels_(cancels),
      // A short wait, so that stop() returns quickly; an idle gateway does not spin either.
      poller_(std::move(replies),
              {.receive_wait = std::chrono::milliseconds(200), .receive_failure = "overhead serve: receiving replies",
               .unreadable = "overhead serve: unreadable reply"},
              [this](ports::Message& m) { return handle(m); }) {}

std::vector<std::string> ReplyReceiver::handle(ports::Message& m) {
  return decode_events(m.body, poller_.queue().url() + " message " + m.id, [&](ReplyEvent&& event) {
    if (auto* d = std::get_if<Delta>(&event)) {
      box_.text(d->id, d->attempt, d->offset, d->text);
    } else if (auto* t = std::get_if<Taken>(&event)) {
      if (cancels_) cancels_->taken(*t);
    } else {
      Reply& r = std::get<Reply>(event);
      if (cancels_) cancels_->finished(r.id);
      box_.deliver(std::move(r));
      received_.fetch_add(1);
    }
  });
}

}  // namespace overhead::reply
