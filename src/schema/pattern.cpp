#define PCRE2_CODE_UNIT_WIDTH 8
#include "schema/pattern.hpp"

#include <pcre2.h>

#include <stdexcept>

#include "schema/limits.hpp"

namespace overhead::schema {

namespace {

// Per thread: a compiled pattern is shared between the gateway's threads, matching state is not.
// One ovector pair is enough: only whether there is a match is asked.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context, kPatternMatchLimit);
    pcre2_set_depth_limit(context, kPatternDepthLimit);
  }
  ~MatchState() {
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

}  // namespace

Pattern::Pattern(const std::string& source) : source_(source) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // DOLLAR_ENDONLY: in ECMA-262, `$` (without the m flag) matches at the very end only, not
  // before a final newline as Perl's and PCRE2's default `$` does.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                   PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument("the pattern does not compile at offset " + std::to_string(offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
  // The JIT honours the match limit too; without JIT support the interpreter is used.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ = code;
}

Pattern::~Pattern() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

Pattern::Match Pattern::search(std::string_view subject) const {
  MatchState& st = match_state();
  // Strings come from parsed JSON, hence valid UTF-8: PCRE2 need not check again.
  const int rc = pcre2_match(static_cast<const pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), 0, PCRE2_NO_UTF_CHECK, st.data, st.context);
  if (rc >= 0) return Match::kYes;  // 0: matched, ovector too small for the groups (not asked for)
  if (rc == PCRE2_ERROR_NOMATCH) return Match::kNo;
  // Match, depth or heap limit, JIT stack exhausted: the answer is not known in bounded time.
  return Match::kTooCostly;
}

}  // namespace overhead::schema
