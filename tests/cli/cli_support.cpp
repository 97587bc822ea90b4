#include "cli_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "util/hash.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli_test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string models_dir() {
  if (const char* env = std::getenv("OVERHEAD_MODELS")) return env;
  return OVERHEAD_MODELS_DIR;
}

}  // namespace

// stderr goes to a temp file, read back after the run.
RunResult run_overhead(const std::string& args) { return run_overhead_env("", args); }

RunResult run_overhead_env(const std::string& env, const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("overhead_cli_test_" + std::to_string(::getpid()) + ".err");
  const std::string cmd =
      env + (env.empty() ? "" : " ") + "'" + OVERHEAD_BINARY + "' " + args + " 2>'" + err_file.string() + "'";
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::string out;
  std::array<char, 1 << 16> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) r.lines.push_back(line);
  r.err = overhead::util::read_file(err_file.string());
  fs::remove(err_file);
  return r;
}

namespace {
std::vector<json> read_golden(const fs::path& p) {
  std::vector<json> rows;
  overhead::util::LineReader reader(p.string());
  std::string line;
  while (reader.next(line)) rows.push_back(json::parse(line));
  return rows;
}

}  // namespace

bool have_tokenizer(const std::string& name) {
  return fs::exists(fs::path(models_dir()) / name / "tokenizer_config.json");
}

std::string tokenizer_arg(const std::string& name) {
  return "--tokenizer '" + (fs::path(models_dir()) / name).string() + "'";
}

namespace {
// Compares one output line with one golden row; returns "" when they agree, else what differs.
// `ids_key` picks the encoding ("ids": add_special_tokens=True, "ids_no_special").
std::string compare_line(const std::string& got_line, const json& golden, const char* ids_key) {
  const std::size_t n = golden["n"].get<std::size_t>();
  const std::string at = "line " + std::to_string(n) + ": ";
  const json got = json::parse(got_line, nullptr, false);
  if (got.is_discarded() || !got.is_object()) return at + "output is not a JSON object: " + got_line;
  if (golden.contains("error")) {
    if (!got.contains("error")) return at + "expected an error, got " + got_line;
    const std::string msg = got["error"].get<std::string>();
    if (msg.rfind(at, 0) != 0) return at + "error does not start with \"" + at + "\": " + msg;
    // A render error carries the template's own message (raise_exception) after "file:line:col: ".
    const std::string want = ": " + golden["error"].get<std::string>();
    if (golden["stage"] == "render" &&
        (msg.size() < want.size() || msg.compare(msg.size() - want.size(), want.size(), want) != 0))
      return at + "expected the template's message " + golden["error"].dump() + ", got " + msg;
    return "";
  }
  if (!got.contains("ids")) return at + "expected ids, got " + got_line;
  const auto ids = got["ids"].get<std::vector<std::uint32_t>>();
  if (golden[ids_key].is_array()) {
    if (ids != golden[ids_key].get<std::vector<std::uint32_t>>())
      return at + "ids differ: got " + got_line + "\n expected " + golden[ids_key].dump();
    return "";
  }
  const std::string count_key = std::string(ids_key) == "ids" ? "count" : "count_no_special";
  if (ids.size() != golden[count_key].get<std::size_t>() ||
      overhead::util::ids_digest(ids) != golden[ids_key].get<std::string>())
    return at + "got " + std::to_string(ids.size()) + " ids, digest " + overhead::util::ids_digest(ids) +
           "; expected " + golden[count_key].dump() + " ids, digest " + golden[ids_key].dump();
  return "";
}

}  // namespace

void check_against(const std::string& name, const std::string& golden_file, const std::string& extra_args,
                   const char* ids_key, int expected_exit) {
  const auto golden = read_golden(kGoldens / golden_file);
  ASSERT_GE(golden.size(), 2u);
  const json& header = golden[0];
  const std::string input = header["field"] == "prompt" ? (kData / "jmtbench" / "records.jsonl.gz").string()
                                                        : (kData / "chat" / "tokenize_cases.jsonl").string();
  std::string args = "tokenize --chat " + tokenizer_arg(name) + " --input '" + input + "' --field " +
                     header["field"].get<std::string>() + " --date " + header["date"].get<std::string>() + " " +
                     extra_args;
  if (header["add_generation_prompt"].get<bool>()) args += " --add-generation-prompt";
  const RunResult r = run_overhead(args);
  const std::string what = name + " " + golden_file + " " + extra_args;
  EXPECT_EQ(r.exit_code, expected_exit) << what << "\nstderr: " << r.err;
  ASSERT_EQ(r.lines.size(), golden.size() - 1) << what << "\nstderr: " << r.err;
  int failures = 0;
  for (std::size_t i = 1; i < golden.size() && failures < 5; ++i) {
    const std::string diff = compare_line(r.lines[i - 1], golden[i], ids_key);
    if (!diff.empty()) {
      ADD_FAILURE() << what << ": " << diff;
      ++failures;
    }
  }
}

fs::path temp_dir(const std::string& tag) {
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("overhead-cli-" + tag + "-" + std::to_string(rd()));
  fs::create_directories(dir);
  return dir;
}

std::string write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string param_name(const std::string& s) {
  std::string r = s;
  for (auto& c : r)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return r;
}

}  // namespace overhead::cli_test
