// Reads tokenizer.json into a TokenizerImpl. Every value the tokenizer depends on is checked here,
// and anything we do not implement is refused with the file and JSON path, so a tokenizer we
// cannot reproduce exactly never loads.
#include <simdjson.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tok/errors.hpp"
#include "tok/tokenizer_impl.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

class Loader {
 public:
  Loader(std::string file, ModelSource prebuilt) : file_(std::move(file)), prebuilt_(std::move(prebuilt)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& reason) const { throw LoadError(file_, path, reason); }

  element field(element obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object");
    element v;
    if (obj[key].get(v)) fail(path + "." + key, "missing");
    return v;
  }
  bool has(element obj, const char* key) const {
    element v;
    return obj.is_object() && !obj[key].get(v) && !v.is_null();
  }
  std::string string(element v, const std::string& path) const {
    std::string_view s;
    if (v.get(s)) fail(path, "expected a string");
    return std::string(s);
  }
  std::string string_field(element obj, const std::string& path, const char* key) const {
    return string(field(obj, path, key), path + "." + key);
  }
  bool bool_field(element obj, const std::string& path, const char* key, bool fallback) const {
    element v;
    if (obj[key].get(v) || v.is_null()) return fallback;
    bool b;
    if (v.get(b)) fail(path + "." + key, "expected true or false");
    return b;
  }
  std::uint64_t uint_field(element obj, const std::string& path, const char* key) const {
    std::uint64_t n;
    if (field(obj, path, key).get(n)) fail(path + "." + key, "expected a non-negative integer");
    return n;
  }
  std::string type_of(element obj, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    return string_field(obj, path, "type");
  }

  // {"String": "x"} or {"Regex": "..."}: returns (is_regex, text).
  std::pair<bool, std::string> pattern(element obj, const std::string& path) const {
    if (has(obj, "String")) return {false, string_field(obj, path, "String")};
    if (has(obj, "Regex")) return {true, string_field(obj, path, "Regex")};
    fail(path, "expected {\"String\": ...} or {\"Regex\": ...}");
  }

  std::unique_ptr<Regex> regex(const std::string& text, const std::string& path) const {
    try {
      return std::make_unique<Regex>(text);
    } catch (const std::exception& e) {
      fail(path, e.what());
    }
  }

  std::unique_ptr<Normalizer> normalizer(element obj, const std::string& path) const {
    const std::string type = type_of(obj, path);
    if (type == "Sequence") {
      std::vector<std::unique_ptr<Normalizer>> steps;
      simdjson::dom::array list;
      if (field(obj, path, "normalizers").get(list)) fail(path + ".normalizers", "expected an array");
      std::size_t k = 0;
      for (element step : list) steps.push_back(normalizer(step, path + ".normalizers[" + std::to_string(k++) + "]"));
      return std::make_unique<SequenceNormalizer>(std::move(steps));
    }
    if (type == "Replace") {
      auto [is_regex, text] = pattern(field(obj, path, "pattern"), path + ".pattern");
      std::string content = string_field(obj, path, "content");
      if (is_regex) return std::make_unique<ReplaceNormalizer>("", regex(text, path + ".pattern.Regex"), content);
      return std::make_unique<ReplaceNormalizer>(text, nullptr, content);
    }
    if (type == "Prepend") return std::make_unique<PrependNormalizer>(string_field(obj, path, "prepend"));
    if (type == "Strip")
      return std::make_unique<StripNormalizer>(bool_field(obj, path, "strip_left", false),
                                               bool_field(obj, path, "strip_right", false));
    if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeNormalizer::Form::kNFC);
    if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeNormalizer::Form::kNFD);
    if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeNormalizer::Form::kNFKC);
    if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeNormalizer::Form::kNFKD);
    if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
    fail(path + ".type", "unsupported normalizer \"" + type + "\"");
  }

  SplitBehavior behavior(const std::string& name, const std::string& path) const {
    if (name == "Removed") return SplitBehavior::kRemoved;
    if (name == "Isolated") return SplitBehavior::kIsolated;
    if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
    if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
    if (name == "Contiguous") return SplitBehavior::kContiguous;
    fail(path, "unknown split behavior \"" + name + "\"");
  }

  MetaspacePreTokenizer::Prepend prepend_scheme(element obj, const std::string& path) const {
    if (has(obj, "prepend_scheme")) {
      const std::string s = string_field(obj, path, "prepend_scheme");
      if (s == "always") return MetaspacePreTokenizer::Prepend::kAlways;
      if (s == "first") return MetaspacePreTokenizer::Prepend::kFirst;
      if (s == "never") return MetaspacePreTokenizer::Prepend::kNever;
      fail(path + ".prepend_scheme", "unknown prepend scheme \"" + s + "\"");
    }
    // Files older than prepend_scheme carry add_prefix_space instead.
    return bool_field(obj, path, "add_prefix_space", true) ? MetaspacePreTokenizer::Prepend::kAlways
                                                           : MetaspacePreTokenizer::Prepend::kNever;
  }

  std::string single_char(element obj, const std::string& path, const char* key) const {
    std::string s = string_field(obj, path, key);
    if (util::utf8::count_code_points(s) != 1) fail(path + "." + key, "expected exactly one character");
    return s;
  }

  std::unique_ptr<PreTokenizer> pre_tokenizer(element obj, const std::string& path, bool& byte_level) const {
    const std::string type = type_of(obj, path);
    if (byte_level) fail(path, "a pre-tokenizer after ByteLevel is not supported");
    if (type == "Sequence") {
      std::vector<std::unique_ptr<PreTokenizer>> steps;
      simdjson::dom::array list;
      if (field(obj, path, "pretokenizers").get(list)) fail(path + ".pretokenizers", "expected an array");
      std::size_t k = 0;
      for (element step : list)
        steps.push_back(pre_tokenizer(step, path + ".pretokenizers[" + std::to_string(k++) + "]", byte_level));
      return std::make_unique<SequencePreTokenizer>(std::move(steps));
    }
    if (type == "Split") {
      auto [is_regex, text] = pattern(field(obj, path, "pattern"), path + ".pattern");
      Matcher m = Matcher::literal(text);
      if (is_regex) {
        try {
          m = Matcher::regex(text);
        } catch (const std::exception& e) {
          fail(path + ".pattern.Regex", e.what());
        }
      }
      return std::make_unique<SplitPreTokenizer>(
          std::move(m), behavior(string_field(obj, path, "behavior"), path + ".behavior"),
          bool_field(obj, path, "invert", false));
    }
    if (type == "ByteLevel") {
      byte_level = true;
      return std::make_unique<ByteLevelPreTokenizer>(bool_field(obj, path, "add_prefix_space", true),
                                                     bool_field(obj, path, "use_regex", true));
    }
    if (type == "Metaspace")
      return std::make_unique<MetaspacePreTokenizer>(single_char(obj, path, "replacement"), prepend_scheme(obj, path),
                                                     bool_field(obj, path, "split", true));
    if (type == "Digits") return std::make_unique<DigitsPreTokenizer>(bool_field(obj, path, "individual_digits", false));
    fail(path + ".type", "unsupported pre-tokenizer \"" + type + "\"");
  }

  std::unique_ptr<Detokenizer> detokenizer(element obj, const std::string& path) const {
    const std::string type = type_of(obj, path);
    if (type == "Sequence") {
      std::vector<std::unique_ptr<Detokenizer>> steps;
      simdjson::dom::array list;
      if (field(obj, path, "decoders").get(list)) fail(path + ".decoders", "expected an array");
      std::size_t k = 0;
      for (element step : list) steps.push_back(detokenizer(step, path + ".decoders[" + std::to_string(k++) + "]"));
      return std::make_unique<SequenceDetokenizer>(std::move(steps));
    }
    if (type == "ByteLevel") return std::make_unique<ByteLevelDetokenizer>();
    if (type == "ByteFallback") return std::make_unique<ByteFallbackDetokenizer>();
    if (type == "Fuse") return std::make_unique<FuseDetokenizer>();
    if (type == "Replace") {
      auto [is_regex, text] = pattern(field(obj, path, "pattern"), path + ".pattern");
      if (is_regex) fail(path + ".pattern", "a Regex pattern in the Replace decoder is not supported");
      return std::make_unique<ReplaceDetokenizer>(text, string_field(obj, path, "content"));
    }
    if (type == "Strip") {
      const std::string c = single_char(obj, path, "content");
      std::size_t i = 0;
      return std::make_unique<StripDetokenizer>(util::utf8::next(c, i), uint_field(obj, path, "start"),
                                            uint_field(obj, path, "stop"));
    }
    if (type == "Metaspace") {
      const std::string r = single_char(obj, path, "replacement");
      std::size_t i = 0;
      return std::make_unique<MetaspaceDetokenizer>(util::utf8::next(r, i),
                                                prepend_scheme(obj, path) != MetaspacePreTokenizer::Prepend::kNever);
    }
    fail(path + ".type", "unsupported decoder \"" + type + "\"");
  }

  // Resolves a special token name of a post-processor to its ids.
  std::vector<std::uint32_t> special_ids(element specials, const std::string& name, const std::string& path) const {
    element entry;
    if (!specials.is_object() || specials[name].get(entry))
      fail(path, "special token \"" + name + "\" is not listed in special_tokens");
    simdjson::dom::array ids;
    if (field(entry, path, "ids").get(ids)) fail(path + ".ids", "expected an array");
    std::vector<std::uint32_t> out;
    for (element id : ids) {
      std::uint64_t n;
      if (id.get(n)) fail(path + ".ids", "expected integers");
      out.push_back(static_cast<std::uint32_t>(n));
    }
    return out;
  }

  void post_processor(element obj, const std::string& path, PostProcessor& post) const {
    const std::string type = type_of(obj, path);
    if (type == "Sequence") {
      simdjson::dom::array list;
      if (field(obj, path, "processors").get(list)) fail(path + ".processors", "expected an array");
      std::size_t k = 0;
      for (element step : list) post_processor(step, path + ".processors[" + std::to_string(k++) + "]", post);
      return;
    }
    if (type == "ByteLevel") return;  // offsets only; ids are unchanged
    if (type == "TemplateProcessing") {
      simdjson::dom::array single;
      const std::string spath = path + ".single";
      if (field(obj, path, "single").get(single)) fail(spath, "expected an array");
      const element specials = field(obj, path, "special_tokens");
      bool seen_sequence = false;
      std::size_t k = 0;
      PostProcessor mine;
      for (element item : single) {
        const std::string ipath = spath + "[" + std::to_string(k++) + "]";
        if (has(item, "SpecialToken")) {
          const std::string id = string_field(field(item, ipath, "SpecialToken"), ipath + ".SpecialToken", "id");
          auto ids = special_ids(specials, id, ipath);
          auto& target = seen_sequence ? mine.suffix : mine.prefix;
          target.insert(target.end(), ids.begin(), ids.end());
        } else if (has(item, "Sequence")) {
          const std::string id = string_field(field(item, ipath, "Sequence"), ipath + ".Sequence", "id");
          if (id != "A") fail(ipath, "the single template must use sequence A");
          if (seen_sequence) fail(ipath, "sequence A appears twice");
          seen_sequence = true;
        } else {
          fail(ipath, "expected SpecialToken or Sequence");
        }
      }
      if (!seen_sequence) fail(spath, "no Sequence in the template");
      post.prefix.insert(post.prefix.end(), mine.prefix.begin(), mine.prefix.end());
      post.suffix.insert(post.suffix.begin(), mine.suffix.begin(), mine.suffix.end());
      return;
    }
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      auto id_of = [&](const char* key) {
        simdjson::dom::array pair;
        if (field(obj, path, key).get(pair) || pair.size() != 2) fail(path + "." + key, "expected [token, id]");
        std::uint64_t n;
        if (pair.at(1).get(n)) fail(path + "." + key, "expected [token, id]");
        return static_cast<std::uint32_t>(n);
      };
      post.prefix.push_back(id_of("cls"));
      post.suffix.insert(post.suffix.begin(), id_of("sep"));
      return;
    }
    fail(path + ".type", "unsupported post-processor \"" + type + "\"");
  }

  std::unique_ptr<BpeModel> model(element obj, const std::string& path, bool byte_level) const {
    if (has(obj, "type")) {
      const std::string type = string_field(obj, path, "type");
      if (type != "BPE") fail(path + ".type", "unsupported model \"" + type + "\" (only BPE is implemented)");
    }
    element dropout;
    if (!obj["dropout"].get(dropout) && !dropout.is_null()) {
      double d;
      if (dropout.get(d) || d != 0.0) fail(path + ".dropout", "BPE dropout is random; only null or 0 is supported");
    }
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (has(obj, key) && !string_field(obj, path, key).empty())
        fail(path + "." + key, "a non-empty value is not supported");
    }
    BpeConfig config;
    config.byte_level = byte_level;
    config.ignore_merges = bool_field(obj, path, "ignore_merges", false);
    config.byte_fallback = bool_field(obj, path, "byte_fallback", false);
    config.fuse_unk = bool_field(obj, path, "fuse_unk", false);
    if (has(obj, "unk_token")) config.unk_token = string_field(obj, path, "unk_token");

    // The compiled cache's tables, built from this same file (its key is the file's sha256).
    if (prebuilt_) return prebuilt_(config);

    simdjson::dom::object vocab_obj;
    if (field(obj, path, "vocab").get(vocab_obj)) fail(path + ".vocab", "expected an object");
    std::vector<std::pair<std::string_view, std::uint32_t>> vocab;
    vocab.reserve(vocab_obj.size());
    for (auto [key, value] : vocab_obj) {
      std::uint64_t id;
      if (value.get(id) || id > 0xFFFFFFF0u) fail(path + ".vocab[\"" + std::string(key) + "\"]", "expected an id");
      vocab.emplace_back(key, static_cast<std::uint32_t>(id));
    }

    // Views into the parsed document, which outlives the model's construction.
    std::vector<std::pair<std::string_view, std::string_view>> merges;
    simdjson::dom::array merges_arr;
    if (has(obj, "merges")) {
      if (field(obj, path, "merges").get(merges_arr)) fail(path + ".merges", "expected an array");
      merges.reserve(merges_arr.size());
      std::size_t k = 0;
      for (element m : merges_arr) {
        const auto mpath = [&] { return path + ".merges[" + std::to_string(k) + "]"; };
        std::string_view s;
        simdjson::dom::array pair;
        if (!m.get(s)) {
          // "left right": exactly one space, as HF requires.
          const std::size_t sp = s.find(' ');
          if (sp == std::string_view::npos || s.find(' ', sp + 1) != std::string_view::npos)
            fail(mpath(), "expected \"left right\"");
          merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
        } else if (!m.get(pair) && pair.size() == 2) {
          std::string_view left, right;
          if (pair.at(0).get(left)) fail(mpath() + "[0]", "expected a string");
          if (pair.at(1).get(right)) fail(mpath() + "[1]", "expected a string");
          merges.emplace_back(left, right);
        } else {
          fail(mpath(), "expected \"left right\" or [left, right]");
        }
        ++k;
      }
    }
    try {
      return std::make_unique<BpeModel>(vocab, merges, config);
    } catch (const std::invalid_argument& e) {
      fail(path, e.what());
    }
  }

  std::vector<AddedToken> added_tokens(element root) const {
    std::vector<AddedToken> out;
    if (!has(root, "added_tokens")) return out;
    simdjson::dom::array list;
    if (field(root, "$", "added_tokens").get(list)) fail("$.added_tokens", "expected an array");
    std::size_t k = 0;
    for (element t : list) {
      const std::string path = "$.added_tokens[" + std::to_string(k++) + "]";
      AddedToken a;
      const std::uint64_t id = uint_field(t, path, "id");
      if (id > 0xFFFFFFF0u) fail(path + ".id", "expected an id below 4294967281");
      a.id = static_cast<std::uint32_t>(id);
      a.content = string_field(t, path, "content");
      a.single_word = bool_field(t, path, "single_word", false);
      a.lstrip = bool_field(t, path, "lstrip", false);
      a.rstrip = bool_field(t, path, "rstrip", false);
      a.special = bool_field(t, path, "special", false);
      a.normalized = bool_field(t, path, "normalized", !a.special);
      out.push_back(std::move(a));
    }
    return out;
  }

  std::string file_;
  ModelSource prebuilt_;
};

// The document without model.vocab and model.merges: what the compiled cache keeps as JSON (the
// small parts, parsed through the same checks on every load) beside the model's binary tables.
std::string skeleton_of(element root) {
  simdjson::dom::object top;
  if (root.get(top)) return "{}";
  std::string out = "{";
  bool first = true;
  for (auto [key, value] : top) {
    if (!first) out += ',';
    first = false;
    out += nlohmann::json(std::string(key)).dump() + ":";
    simdjson::dom::object model;
    if (key != "model" || value.get(model)) {
      out += simdjson::to_string(value);
      continue;
    }
    out += '{';
    bool first_field = true;
    for (auto [mkey, mvalue] : model) {
      if (mkey == "vocab" || mkey == "merges") continue;
      if (!first_field) out += ',';
      first_field = false;
      out += nlohmann::json(std::string(mkey)).dump() + ":" + simdjson::to_string(mvalue);
    }
    out += '}';
  }
  return out + "}";
}

}  // namespace

namespace {

// simdjson says what is wrong but not where. On this error path only, nlohmann's parser is run
// over the same text for the place: a byte offset, and the line and column an editor shows.
std::string invalid_json_reason(std::string_view text, const char* simdjson_reason) {
  try {
    const auto parsed = nlohmann::json::parse(text);  // only for the error it throws
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t offset = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
    const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    const std::size_t column = offset - (line_start == std::string_view::npos || offset == 0 ? 0 : line_start + 1) + 1;
    return "invalid JSON at byte " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
           std::to_string(column) + "): " + simdjson_reason;
  } catch (const std::exception&) {
  }
  return std::string("invalid JSON: ") + simdjson_reason;
}

}  // namespace

std::unique_ptr<TokenizerImpl> load_tokenizer_files(const std::string& dir, const std::string& file) {
  simdjson::padded_string json;
  if (simdjson::padded_string::load(file).get(json)) throw LoadError(file, "", "cannot read the file");
  return load_tokenizer_json(dir, file, json, nullptr, std::nullopt, nullptr);
}

std::unique_ptr<TokenizerImpl> load_tokenizer_json(const std::string& dir, const std::string& file,
                                                   const simdjson::padded_string& json, ModelSource model,
                                                   std::optional<std::string_view> config_json, std::string* skeleton,
                                                   bool config_known_valid) {
  Loader L(file, std::move(model));
  simdjson::dom::parser parser;
  element root;
  if (auto err = parser.parse(json).get(root))
    throw LoadError(file, "", invalid_json_reason(std::string_view(json.data(), json.size()), simdjson::error_message(err)));
  if (!root.is_object()) L.fail("$", "expected an object");

  for (const char* key : {"truncation", "padding"}) {
    if (L.has(root, key)) L.fail(std::string("$.") + key, "truncation/padding in tokenizer.json is not supported");
  }

  auto impl = std::make_unique<TokenizerImpl>();
  impl->dir = dir;
  impl->file = file;
  impl->name = std::filesystem::path(dir).filename().string();

  if (L.has(root, "normalizer")) impl->normalizer = L.normalizer(L.field(root, "$", "normalizer"), "$.normalizer");
  bool byte_level = false;
  if (L.has(root, "pre_tokenizer"))
    impl->pre_tokenizer = L.pre_tokenizer(L.field(root, "$", "pre_tokenizer"), "$.pre_tokenizer", byte_level);
  impl->model = L.model(L.field(root, "$", "model"), "$.model", byte_level);
  if (L.has(root, "post_processor")) L.post_processor(L.field(root, "$", "post_processor"), "$.post_processor", impl->post);
  if (L.has(root, "decoder")) impl->detokenizer = L.detokenizer(L.field(root, "$", "decoder"), "$.decoder");

  const Normalizer* normalizer = impl->normalizer.get();
  impl->added = std::make_unique<AddedVocabulary>(L.added_tokens(root), [normalizer, &L](const std::string& content) {
    std::string s = content;
    try {
      if (normalizer) normalizer->normalize(s);
    } catch (const EncodeError& e) {
      // An added token the file's own normalizer cannot normalize: the file is at fault.
      L.fail("$.normalizer", std::string("cannot normalize an added token: ") + e.what());
    }
    return s;
  });

  const std::string config_path = (std::filesystem::path(dir) / "tokenizer_config.json").string();
  std::string config_text;
  if (!config_json && std::filesystem::exists(config_path)) {
    std::ifstream in(config_path, std::ios::binary);
    config_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw LoadError(config_path, "", "cannot read the file");
    config_json = config_text;
  }
  if (config_json && config_known_valid) {
    impl->defer_config(std::string(*config_json), config_path);
  } else if (config_json) {
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(*config_json);
    } catch (const std::exception& e) {
      throw LoadError(config_path, "", std::string("invalid JSON: ") + e.what());
    }
    if (!parsed.is_object()) throw LoadError(config_path, "$", "expected an object");
    impl->set_config(std::move(parsed));
  }
  if (skeleton) *skeleton = skeleton_of(root);
  return impl;
}

}  // namespace overhead::tok
