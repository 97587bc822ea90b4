#include "serve/reply_taps.hpp"

#include <exception>

#include "pipe/dead_letter.hpp"
#include "pipe/errors.hpp"

namespace overhead::serve {

pipe::ProcessResult ReplyingProcessor::process(const pipe::SourceRecord& source, const std::string& tokenizer) const {
  try {
    return inner_.process(source, tokenizer);
  } catch (const pipe::ItemError& e) {
    replies_.deliver(Reply{source.id, false, {}, e.kind(), e.what()});
    throw;
  } catch (const std::exception& e) {
    replies_.deliver(Reply{source.id, false, {}, pipe::kind_name(pipe::DeadLetterKind::processing_error), e.what()});
    throw;
  }
}

void ReplyingSink::put(const pipe::Record& record) {
  inner_.put(record);
  replies_.deliver(Reply{record.id, true, record, {}, {}});
}

}  // namespace overhead::serve
