// `overhead batch`: the Batch API of a running gateway (`overhead serve`, docs/serve.md "Batches")
// for people without a client: `submit FILE` uploads a JSONL and creates a batch (a file past
// --part-bytes goes as an upload of parts, one in memory at a time, with its MD5 and the bytes
// sent on stderr), with --wait a
// progress bar on stderr until it ends), `status ID` prints the batch, `results ID` its output file
// (or, with --errors, its error file). The gateway is --url; the bearer token is read as `serve`
// reads its own (--auth-token-file, else $OVERHEAD_AUTH_TOKEN).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "aws/http_client.hpp"
#include "cli/commands.hpp"
#include "ports/content_md5.hpp"
#include "serve/bearer_auth.hpp"
#include "util/random_id.hpp"

namespace overhead::cli {
namespace {

using Json = nlohmann::ordered_json;

struct BatchArgs {
  std::string url = "http://127.0.0.1:8000";
  std::string auth_token_file;
  std::string file;
  std::string endpoint = "/v1/chat/completions";
  std::string window = "24h";
  bool wait = false;
  double poll_s = 1.0;
  std::string id;
  bool errors = false;
  std::size_t part_bytes = std::size_t{32} << 20;  // a file past this goes as an upload of parts
};

class Gateway {
 public:
  explicit Gateway(const BatchArgs& a) : base_(a.url), token_(serve::load_token(a.auth_token_file, "OVERHEAD_AUTH_TOKEN")) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  // The answer's body; throws std::runtime_error with the gateway's error message on a non-2xx.
  std::string call(const std::string& method, const std::string& path, std::string_view body = {}, const std::string& type = {}) {
    aws::HttpRequest req;
    req.method = method;
    req.url = base_ + path;
    req.body = body;
    req.timeout = std::chrono::milliseconds(600000);
    if (!type.empty()) req.headers.emplace_back("Content-Type", type);
    if (!token_.empty()) req.headers.emplace_back("Authorization", "Bearer " + token_);
    aws::HttpResponse res = client_.send(req);
    if (res.status < 200 || res.status >= 300) {
      const Json j = Json::parse(res.body, nullptr, false);
      const std::string message = j.is_object() && j.contains("error") ? j["error"].value("message", res.body) : res.body;
      throw std::runtime_error(method + " " + path + ": " + std::to_string(res.status) + " " + message);
    }
    return std::move(res.body);
  }
  Json json(const std::string& method, const std::string& path, const Json& body = Json()) {
    const std::string text = body.is_null() ? std::string() : body.dump();
    return Json::parse(call(method, path, text, body.is_null() ? std::string() : "application/json"));
  }

 private:
  std::string base_, token_;
  aws::HttpClient client_;
};

// A multipart/form-data body of `fields` (name, value) and one file part named `file_field`.
std::string form_body(const std::string& boundary, const std::vector<std::pair<std::string, std::string>>& fields,
                      const std::string& file_field, const std::string& filename, std::string_view content) {
  std::string form;
  for (const auto& [name, value] : fields)
    form += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n";
  form += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + file_field + "\"; filename=\"" + filename +
          "\"\r\nContent-Type: application/jsonl\r\n\r\n";
  form += content;
  form += "\r\n--" + boundary + "--\r\n";
  return form;
}

// Up to `max` bytes from `in`; empty at the end.
std::string read_piece(std::ifstream& in, std::size_t max) {
  std::string piece(max, '\0');
  in.read(piece.data(), static_cast<std::streamsize>(max));
  piece.resize(static_cast<std::size_t>(in.gcount()));
  return piece;
}

// The uploaded file's id: one POST /v1/files for a file of at most --part-bytes, else OpenAI's
// Uploads API (create, a part per --part-bytes read in turn, complete with the MD5).
std::string upload(Gateway& g, const BatchArgs& a) {
  std::ifstream in(a.file, std::ios::binary | std::ios::ate);
  if (!in) throw CLI::ValidationError("FILE", "cannot read " + a.file);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  const std::string name = a.file.substr(a.file.find_last_of('/') + 1);
  const std::string boundary = util::random_hex_id("overhead-", 12);
  const std::string multipart = "multipart/form-data; boundary=" + boundary;
  if (size <= a.part_bytes) {
    const std::string content = read_piece(in, static_cast<std::size_t>(size));
    return Json::parse(g.call("POST", "/v1/files", form_body(boundary, {{"purpose", "batch"}}, "file", name, content), multipart))["id"];
  }
  const Json up = g.json("POST", "/v1/uploads",
                         Json{{"bytes", size}, {"filename", name}, {"mime_type", "application/jsonl"}, {"purpose", "batch"}});
  const std::string upload_id = up["id"];
  Json part_ids = Json::array();
  ports::ContentMd5 md5;
  std::uint64_t sent = 0;
  for (std::string piece = read_piece(in, a.part_bytes); !piece.empty(); piece = read_piece(in, a.part_bytes)) {
    md5.update(piece);
    const Json part = Json::parse(g.call("POST", "/v1/uploads/" + upload_id + "/parts", form_body(boundary, {}, "data", name, piece), multipart));
    part_ids.push_back(part["id"]);
    sent += piece.size();
    std::fprintf(stderr, "\rupload %s: %.1f/%.1f MiB", upload_id.c_str(), static_cast<double>(sent) / (1 << 20),
                 static_cast<double>(size) / (1 << 20));
    std::fflush(stderr);
  }
  std::fputc('\n', stderr);
  const Json done = g.json("POST", "/v1/uploads/" + upload_id + "/complete", Json{{"part_ids", part_ids}, {"md5", md5.hex()}});
  return done["file"]["id"];
}

// A one-line bar on stderr: "[#####-----] 120/400 answered, 2 failed  in_progress".
void draw(const Json& b) {
  const auto& c = b["request_counts"];
  const std::int64_t total = c.value("total", 0), done = c.value("completed", 0) + c.value("failed", 0);
  constexpr int kWidth = 30;
  const int filled = total > 0 ? static_cast<int>(kWidth * done / total) : 0;
  std::fprintf(stderr, "\r[%s%s] %lld/%lld answered, %lld failed  %-12s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), '-').c_str(), static_cast<long long>(done), static_cast<long long>(total),
               static_cast<long long>(c.value("failed", 0)), b.value("status", "").c_str());
  std::fflush(stderr);
}

bool finished(const Json& b) {
  const std::string s = b.value("status", "");
  return s == "completed" || s == "failed" || s == "expired" || s == "cancelled";
}

int submit(const BatchArgs& a) {
  Gateway g(a);
  const std::string file_id = upload(g, a);
  Json b = g.json("POST", "/v1/batches", Json{{"input_file_id", file_id}, {"endpoint", a.endpoint}, {"completion_window", a.window}});
  if (a.wait) {
    while (!finished(b)) {
      draw(b);
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<std::int64_t>(a.poll_s * 1000)));
      b = g.json("GET", "/v1/batches/" + b["id"].get<std::string>());
    }
    draw(b);
    std::fputc('\n', stderr);
  }
  std::printf("%s\n", b.dump().c_str());
  return finished(b) && b["status"] != "completed" ? 1 : 0;
}

int status(const BatchArgs& a) {
  Gateway g(a);
  std::printf("%s\n", g.json("GET", "/v1/batches/" + a.id).dump().c_str());
  return 0;
}

int results(const BatchArgs& a) {
  Gateway g(a);
  const Json b = g.json("GET", "/v1/batches/" + a.id);
  const char* field = a.errors ? "error_file_id" : "output_file_id";
  if (!b.contains(field) || !b[field].is_string()) {
    std::fprintf(stderr, "overhead batch results: batch %s (%s) has no %s file yet\n", a.id.c_str(), b.value("status", "").c_str(),
                 a.errors ? "error" : "output");
    return finished(b) ? 0 : 1;
  }
  const std::string text = g.call("GET", "/v1/files/" + b[field].get<std::string>() + "/content");
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

template <class Fn>
void guarded(int& exit_code, Fn fn) {
  try {
    exit_code = fn();
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "overhead batch: %s\n", e.what());
    exit_code = 1;
  }
}

}  // namespace

void add_batch_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand("batch", "The Batch API of a running gateway: submit a JSONL, follow it, fetch its results");
  cmd->require_subcommand(1);
  const auto common = [&](CLI::App* sub) {
    sub->add_option("--url", args->url, "The gateway's base URL")->capture_default_str();
    sub->add_option("--auth-token-file", args->auth_token_file, "File whose first line is the gateway's bearer token (else $OVERHEAD_AUTH_TOKEN)");
  };
  CLI::App* sub = cmd->add_subcommand("submit", "Upload FILE (JSONL of custom_id, method, url, body) and create a batch; prints the batch");
  common(sub);
  sub->add_option("FILE", args->file, "The batch's input")->required();
  sub->add_option("--endpoint", args->endpoint, "The endpoint every line names")->capture_default_str();
  sub->add_option("--completion-window", args->window, "When the batch expires (\"24h\", or \"<N>h\")")->capture_default_str();
  sub->add_option("--part-bytes", args->part_bytes,
                  "A file past this many bytes is sent as an upload of parts of this size (at most the gateway's --max-part-bytes)")
      ->capture_default_str()->check(CLI::Range(std::size_t{4} << 10, std::size_t{64} << 20));
  sub->add_flag("--wait", args->wait, "Follow the batch to its end, with a progress bar on stderr; exit 1 unless it completed");
  sub->callback([args, &exit_code] { guarded(exit_code, [&] { return submit(*args); }); });
  sub = cmd->add_subcommand("status", "Print a batch (status, request_counts, file ids)");
  common(sub);
  sub->add_option("ID", args->id, "The batch's id")->required();
  sub->callback([args, &exit_code] { guarded(exit_code, [&] { return status(*args); }); });
  sub = cmd->add_subcommand("results", "Print a batch's output file (one line per custom_id)");
  common(sub);
  sub->add_option("ID", args->id, "The batch's id")->required();
  sub->add_flag("--errors", args->errors, "The error file instead");
  sub->callback([args, &exit_code] { guarded(exit_code, [&] { return results(*args); }); });
}

}  // namespace overhead::cli
