#include "reply/control_receiver.hpp"

#include <vector>

#include "reply/cancel_message.hpp"

namespace overhead::reply {

ControlReceiver::ControlReceiver(std::shared_ptr<ports::Queue> control, OnCancel on_cancel)
    : on_cancel_(std::move(on_cancel)),
      // One broker call a second while no cancel comes.
      poller_(std::move(control), {.receive_wait = std::chrono::milliseconds(1000), .receive_failure = "receiving cancels",
                                   .unreadable = "unreadable cancel"},
              [this](ports::Message& m) {
        return decode_cancels(m.body, poller_.queue().url() + " message " + m.id, [&](std::string&& id) {
          on_cancel_(id);
          cancels_.fetch_add(1);
        });
      }) {}

}  // namespace overhead::reply
