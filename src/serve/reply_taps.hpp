// The two places where the worker's outcome for an item is known, tapped to answer the gateway
// without changing the worker: a Processor wrapper that reports an item the processor refused
// (template error, unknown tokenizer, ...) before the worker dead-letters it as usual, and a
// RecordSink wrapper that reports a record once its sink confirmed it (stored, or accepted by
// the log queue). The worker, its publisher and its dead letters run exactly as in `overhead
// worker`; the taps only add a ReplyPath::deliver call.
#pragma once

#include <span>

#include "pipe/processor.hpp"
#include "pipe/record_sink.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

class ReplyingProcessor final : public pipe::Processor {
 public:
  ReplyingProcessor(const pipe::Processor& inner, ReplyPath& replies) : inner_(inner), replies_(replies) {}
  // Rethrows whatever the inner processor throws, after delivering a failed reply for it.
  pipe::ProcessResult process(const pipe::SourceRecord& source, const std::string& tokenizer) const override;
  pipe::ProcessResult process_for_decoder(const pipe::SourceRecord& source, const std::string& tokenizer,
                                          bool want_prompt) const override;
  std::optional<std::int64_t> count_text(const std::string& tokenizer, std::string_view text) const override {
    return inner_.count_text(tokenizer, text);
  }

 private:
  template <class Fn>
  pipe::ProcessResult tapped(const pipe::SourceRecord& source, Fn&& fn) const;

  const pipe::Processor& inner_;
  ReplyPath& replies_;
};

class ReplyingSink final : public pipe::RecordSink {
 public:
  ReplyingSink(pipe::RecordSink& inner, ReplyPath& replies) : inner_(inner), replies_(replies) {}
  // Delivers the reply only when the inner put returned: a put that throws is retried by the
  // publisher (or dead-lettered), and only a confirmed record is an answer.
  void put(const pipe::Record& record) override;
  void put_stamps(std::span<const pipe::StampPatch> patches) override { inner_.put_stamps(patches); }

 private:
  pipe::RecordSink& inner_;
  ReplyPath& replies_;
};

}  // namespace overhead::serve
