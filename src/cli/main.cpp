// `overhead`: the non-GPU path of LLM serving, measured. See README.md for the subcommands.
#include <cstdio>
#include <cstring>
#include <exception>

#include "cli/commands.hpp"

namespace {

void add_bench_commands(CLI::App& app, int& exit_code) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of single components");
  bench->require_subcommand(1);
  overhead::cli::add_bench_tokenize_command(*bench, exit_code);
  overhead::cli::add_bench_template_command(*bench, exit_code);
}

// Each subcommand name and the function that registers it (some register a group of names).
struct Registration {
  const char* name;
  void (*add)(CLI::App&, int&);
};

constexpr Registration kRegistrations[] = {
    {"tokenize", overhead::cli::add_tokenize_command},
    {"run", overhead::cli::add_run_commands},
    {"enqueue", overhead::cli::add_run_commands},
    {"worker", overhead::cli::add_run_commands},
    {"consume", overhead::cli::add_run_commands},
    {"status", overhead::cli::add_status_command},
    {"template", overhead::cli::add_template_command},
    {"analyze", overhead::cli::add_analyze_command},
    {"serve", overhead::cli::add_serve_command},
    {"keys", overhead::cli::add_keys_command},
    {"batch", overhead::cli::add_batch_command},
    {"cost", overhead::cli::add_cost_command},
    {"simulate", overhead::cli::add_simulate_command},
    {"calibrate", overhead::cli::add_calibrate_command},
    {"lambda", overhead::cli::add_lambda_command},
    {"aws-init", overhead::cli::add_aws_init_command},
    {"bench", add_bench_commands},
};

// Registers what this command line needs. Setting up every subcommand's options is most of the
// start of a short command (thousands of small allocations), and one process runs one
// subcommand: when the first argument names one, only it is registered (its --help and errors
// are the same); --version needs none; anything else (no argument, --help, a typo) gets them all,
// so the listing and the error name every subcommand.
void register_subcommands(CLI::App& app, int& exit_code, int argc, char** argv) {
  const char* first = argc > 1 ? argv[1] : "";
  if (std::strcmp(first, "--version") == 0) return;
  for (const Registration& r : kRegistrations)
    if (std::strcmp(first, r.name) == 0) return r.add(app, exit_code);
  void (*added)(CLI::App&, int&) = nullptr;
  for (const Registration& r : kRegistrations)
    if (r.add != added) (added = r.add)(app, exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  // `overhead --version` alone is answered before the command-line parser exists: its set-up and
  // the exception it answers --version with (an unwind through the binary's frame tables) are most
  // of such a short process's own work. With other arguments the parser answers as usual.
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::puts("overhead " OVERHEAD_VERSION);
    return 0;
  }
  CLI::App app{"overhead: tokenizer, chat templates and the serving pipeline around the GPU, measured"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "overhead " OVERHEAD_VERSION, "Print the version and exit");
  int exit_code = 0;
  register_subcommands(app, exit_code, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
