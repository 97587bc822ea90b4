#define PCRE2_CODE_UNIT_WIDTH 8
#include "tok/regex.hpp"

#include <pcre2.h>

#include <stdexcept>

namespace overhead::tok {

namespace {

// Match data and JIT stack are per thread: a compiled pattern is shared, matching state is not.
struct ThreadMatchState {
  pcre2_match_data* data = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* context = nullptr;
  ThreadMatchState() {
    data = pcre2_match_data_create(1, nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    context = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

ThreadMatchState& thread_state() {
  thread_local ThreadMatchState state;
  return state;
}

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument("regex does not compile at offset " + std::to_string(offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::find_all(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) const {
  (void)find_some(s, begin, end, out, static_cast<std::size_t>(-1));
}

std::size_t Regex::find_some(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                             std::size_t max) const {
  auto* code = static_cast<pcre2_code*>(code_);
  ThreadMatchState& st = thread_state();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  std::size_t pos = begin;
  for (std::size_t found = 0; pos <= end; ++found) {
    if (found == max) return pos;
    const int rc = pcre2_match(code, subject, end, pos, PCRE2_NO_UTF_CHECK, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) return kDone;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw std::runtime_error(std::string("regex match failed: ") + reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    const std::size_t mb = ov[0], me = ov[1];
    out.emplace_back(mb, me);
    if (me > mb) {
      pos = me;
    } else {
      // Empty match: step over one character.
      if (me >= end) return kDone;
      pos = me + 1;
      while (pos < end && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
  return kDone;
}

}  // namespace overhead::tok
