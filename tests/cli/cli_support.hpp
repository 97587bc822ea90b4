// Shared by the CLI tests: running the built `overhead` binary and comparing its
// `tokenize --chat` output with the reference goldens of data/chat/goldens/tokenize/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace overhead::cli_test {

inline const std::filesystem::path kData = OVERHEAD_DATA_DIR;
inline const std::filesystem::path kGoldens = kData / "chat" / "goldens" / "tokenize";
inline const std::vector<std::string> kSeedTokenizers = {"llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4"};

struct RunResult {
  int exit_code = -1;
  std::vector<std::string> lines;  // stdout
  std::string err;                 // stderr
};

// Runs build/overhead with `args` (shell words, quoted by the caller where needed).
RunResult run_overhead(const std::string& args);
// The same with shell variable assignments before the command (`env` = "A='x' B='y'").
RunResult run_overhead_env(const std::string& env, const std::string& args);

bool have_tokenizer(const std::string& name);
// "--tokenizer '<models>/<name>'"
std::string tokenizer_arg(const std::string& name);

// Runs `tokenize --chat` as the header of `golden_file` says (input, field, date, generation prompt)
// plus `extra_args`, expects `expected_exit`, and compares every output line with the golden rows;
// `ids_key` is "ids" (add_special_tokens=True) or "ids_no_special". Reports through gtest.
void check_against(const std::string& name, const std::string& golden_file, const std::string& extra_args,
                   const char* ids_key, int expected_exit);

// A fresh empty folder under the system temp folder, e.g. for a command's --out and input files.
std::filesystem::path temp_dir(const std::string& tag);
// Writes `text` to `path` (binary, as given) and returns the path as a string.
std::string write_file(const std::filesystem::path& path, const std::string& text);

// gtest parameter names: tokenizer names with non-alphanumerics replaced.
std::string param_name(const std::string& s);

}  // namespace overhead::cli_test
