#include "pipe/crash_point.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace overhead::pipe {

namespace {
constexpr const char* kVariable = "OVERHEAD_WORKER_CRASH";

WorkerStage parse_stage(const std::string& name, const std::string& spec) {
  static const std::pair<const char*, WorkerStage> kStages[] = {
      {"after_receive", WorkerStage::after_receive}, {"after_render", WorkerStage::after_render},
      {"after_publish", WorkerStage::after_publish}, {"before_delete", WorkerStage::before_delete},
      {"after_delete", WorkerStage::after_delete}};
  for (const auto& [n, stage] : kStages)
    if (name == n) return stage;
  throw std::invalid_argument(std::string(kVariable) + "=" + spec + ": unknown stage \"" + name +
                              "\" (after_receive, after_render, after_publish, before_delete, after_delete)");
}
}  // namespace

std::function<void(WorkerStage)> crash_point(const std::string& spec) {
  if (spec.empty()) return {};
  const auto colon = spec.find(':');
  const std::string count_text = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  const WorkerStage stage = parse_stage(spec.substr(0, colon), spec);
  long count = 0;
  try {
    std::size_t used = 0;
    count = std::stol(count_text, &used);
    if (used != count_text.size()) count = 0;
  } catch (const std::exception&) {
    count = 0;
  }
  if (count < 1)
    throw std::invalid_argument(std::string(kVariable) + "=" + spec + ": expected STAGE:N with N >= 1");
  auto reached = std::make_shared<std::atomic<long>>(0);
  return [stage, count, reached](WorkerStage at) {
    if (at == stage && reached->fetch_add(1) + 1 == count) std::raise(SIGKILL);
  };
}

std::function<void(WorkerStage)> crash_point_from_env() {
  const char* spec = std::getenv(kVariable);
  return crash_point(spec ? spec : "");
}

}  // namespace overhead::pipe
