#include "serve/reply_taps.hpp"

#include <exception>

#include "pipe/dead_letter.hpp"
#include "pipe/errors.hpp"

namespace overhead::serve {

template <class Fn>
pipe::ProcessResult ReplyingProcessor::tapped(const pipe::SourceRecord& source, Fn&& fn) const {
  try {
    replies_.note(source);  // may refuse the item (a reply queue it must not answer on)
    return fn();
  } catch (const pipe::ItemError& e) {
    replies_.deliver(Reply{source.id, false, {}, e.kind(), e.what()});
    throw;
  } catch (const std::exception& e) {
    replies_.deliver(Reply{source.id, false, {}, pipe::kind_name(pipe::DeadLetterKind::processing_error), e.what()});
    throw;
  }
}

pipe::ProcessResult ReplyingProcessor::process(const pipe::SourceRecord& source, const std::string& tokenizer) const {
  return tapped(source, [&] { return inner_.process(source, tokenizer); });
}

pipe::ProcessResult ReplyingProcessor::process_for_decoder(const pipe::SourceRecord& source, const std::string& tokenizer,
                                                           bool want_prompt) const {
  return tapped(source, [&] { return inner_.process_for_decoder(source, tokenizer, want_prompt); });
}

void ReplyingSink::put(const pipe::Record& record) {
  inner_.put(record);
  replies_.deliver(Reply{record.id, true, record, {}, {}});
}

}  // namespace overhead::serve
