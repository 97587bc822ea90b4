#include "reply/reply_receiver.hpp"

#include "reply/reply_codec.hpp"

namespace overhead::reply {
namespace {

// A short wait, so that stop() returns quickly; an idle gateway does not spin either.
QueuePollerOptions reply_poller_options() {
  QueuePollerOptions o;
  o.receive_wait = std::chrono::milliseconds(200);
  o.receive_failure = "overhead serve: receiving replies";
  o.unreadable = "overhead serve: unreadable reply";
  return o;
}

}  // namespace

ReplyReceiver::ReplyReceiver(std::shared_ptr<pipe::Queue> replies, ReplyPath& box, RemoteCancels* cancels)
    : box_(box), cancels_(cancels), poller_(std::move(replies), reply_poller_options(), [this](pipe::Message& m) { return handle(m); }) {}

std::vector<std::string> ReplyReceiver::handle(pipe::Message& m) {
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
