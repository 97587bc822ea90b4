// Walks the compiled node tree for one render. An Interpreter lives for one render only, so the
// shared tree stays immutable; all per-render state (variables, output, counters) is here.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/ast.hpp"
#include "chat/value.hpp"

namespace overhead::chat {

// Error raised at a known node; the renderer turns it into "name:line:col: message".
struct LocatedError {
  std::string message;
  std::uint32_t offset;
};

struct Limits {
  std::size_t max_output_bytes = 64u << 20;        // also bounds every string a template builds
  std::uint64_t max_loop_iterations = 10'000'000;  // over the whole render
  int max_call_depth = 200;                        // macro / caller recursion
  // Wall time of one render, in ms; 0 = none. Counted from the render's first clock check (after
  // kClockStride steps), so short renders never read the clock.
  std::uint32_t max_render_ms = 10'000;
};

class Interpreter {
 public:
  Interpreter(std::string& out, const Limits& limits, std::optional<std::string> pinned_date);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Defines a variable of the outermost frame (the render context).
  void define(SymbolId name, Value v);
  void run(const Node& root);

  // Used by builtins.
  Value eval(const Node& n);
  Value call_value(const Value& callee, CallArgs& args, std::string_view name_for_errors);
  Value getattr(const Value& obj, std::string_view name);
  Value getitem(const Value& obj, const Value& key);
  // obj[start:stop:step]; a null bound is an omitted one.
  Value getslice(const Value& obj, const Value* start, const Value* stop, const Value* step);
  const std::optional<std::string>& pinned_date() const { return pinned_date_; }
  const Limits& limits() const { return limits_; }
  void count_iterations(std::uint64_t n);
  // Refuses a string or list of `bytes` over max_output_bytes before it is built; a large one
  // also counts as work towards the time budget (a step per 4 KiB), since copying it is the cost.
  void check_size(std::size_t bytes);
  // One step of work (a loop iteration, a macro call, 4 KiB of a string built): every kClockStride
  // steps the wall clock is checked against max_render_ms. Throws EvalError when the render is
  // over its time.
  void step() {
    if (++steps_ >= next_clock_check_) check_clock();
  }
  static constexpr std::uint64_t kClockStride = 1024;
  // Calls the filter or test `name` (for map/select/reject).
  Value apply_filter(std::string_view name, const Value& v, CallArgs& args);
  bool apply_test(std::string_view name, const Value& v, CallArgs& args);

 private:
  enum class Flow : std::uint8_t { Normal, Break, Continue };
 public:
  struct Frame {
    std::uint32_t start;   // first variable in vars_
    std::int32_t parent;   // frame to search next, -1 at the root
  };

 private:

  std::string& out_;
  const Limits& limits_;
  std::optional<std::string> pinned_date_;
  std::vector<std::pair<SymbolId, Value>> vars_;
  std::vector<Frame> frames_;
  bool scratch_borrowed_ = false;  // vars_ and frames_ came from this thread's spare buffers
  std::uint64_t iterations_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t next_clock_check_ = kClockStride;
  std::chrono::steady_clock::time_point clock_start_{};  // set at the first clock check
  int depth_ = 0;

  void check_clock();

  Flow exec(const Node& n);
  Flow exec_body(const Node& body);
  Flow exec_for(const Node& n);
  void exec_set(const Node& n);
  std::string capture(const Node& body);
  void print_sum(const Node& sum);
  Value eval_inner(const Node& n);
  Value eval_call(const Node& n);
  Value eval_filter(const Node& n, const Value* operand);
  void collect_args(const Node& n, CallArgs& args, std::size_t first_positional);
  Value make_macro(const Node& n, std::int32_t caller_frame);
  Value call_macro(const Node& macro, CallArgs& args, const Value* caller, std::int32_t parent_frame);

  const Value* lookup(SymbolId name) const;
  void assign(SymbolId name, Value v);
  void push_frame(std::int32_t parent);
  void pop_frame();

  friend struct MacroCallable;
};

// namespace(...): the one object whose attributes a sandboxed template may set.
Value make_namespace(const CallArgs& args);

}  // namespace overhead::chat
