#include "reference_bpe.hpp"

#include <fstream>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace overhead::tok::reference {

namespace {

constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

// GPT-2's byte-to-character table, from its definition: printable Latin-1 bytes are themselves,
// the other bytes take the code points from U+0100 up in byte order.
std::string gpt2_char(unsigned char b) {
  const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
  unsigned code = b;
  if (!printable) {
    unsigned n = 0;
    for (unsigned x = 0; x < b; ++x) {
      const bool p = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE);
      if (!p) ++n;
    }
    code = 256 + n;
  }
  std::string s;
  if (code < 0x80) {
    s += static_cast<char>(code);
  } else {
    s += static_cast<char>(0xC0 | (code >> 6));
    s += static_cast<char>(0x80 | (code & 0x3F));
  }
  return s;
}

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

std::string byte_token(unsigned char b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
}

}  // namespace

NaiveBpe::NaiveBpe(const std::string& tokenizer_json, bool byte_level) : byte_level_(byte_level) {
  std::ifstream in(tokenizer_json);
  if (!in) throw std::runtime_error("cannot read " + tokenizer_json);
  const nlohmann::json j = nlohmann::json::parse(in);
  const nlohmann::json& model = j.at("model");
  for (const auto& [token, id] : model.at("vocab").items()) vocab_[token] = id.get<std::uint32_t>();
  byte_fallback_ = model.value("byte_fallback", false);
  fuse_unk_ = model.value("fuse_unk", false);
  ignore_merges_ = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) unk_token_ = model["unk_token"].get<std::string>();
  std::uint32_t rank = 0;
  for (const auto& m : model.at("merges")) {
    std::string left, right;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const std::size_t sp = s.find(' ');
      left = s.substr(0, sp);
      right = s.substr(sp + 1);
    } else {
      left = m.at(0).get<std::string>();
      right = m.at(1).get<std::string>();
    }
    ranks_.emplace(left + '\xFF' + right, rank++);  // emplace keeps the first (lowest) rank
  }
}

std::uint32_t NaiveBpe::rank_of(const std::string& left, const std::string& right) const {
  const auto it = ranks_.find(left + '\xFF' + right);
  return it == ranks_.end() ? kNoRank : it->second;
}

std::vector<std::string> NaiveBpe::initial_symbols(std::string_view piece) const {
  std::vector<std::string> symbols;
  if (byte_level_) {
    for (const char c : piece) symbols.push_back(gpt2_char(static_cast<unsigned char>(c)));
    return symbols;
  }
  bool previous_unk = false;
  for (std::size_t i = 0; i < piece.size();) {
    const std::size_t n = utf8_length(static_cast<unsigned char>(piece[i]));
    const std::string ch(piece.substr(i, n));
    i += n;
    if (vocab_.count(ch)) {
      symbols.push_back(ch);
      previous_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (const char b : ch) all = all && vocab_.count(byte_token(static_cast<unsigned char>(b)));
      if (all) {
        for (const char b : ch) symbols.push_back(byte_token(static_cast<unsigned char>(b)));
        previous_unk = false;
        continue;
      }
    }
    if (unk_token_.empty()) continue;  // no unknown token: the character is dropped
    if (!(previous_unk && fuse_unk_)) symbols.push_back(unk_token_);
    previous_unk = true;
  }
  return symbols;
}

std::vector<std::uint32_t> NaiveBpe::encode_piece(std::string_view piece) const {
  std::vector<std::uint32_t> ids;
  if (piece.empty()) return ids;
  if (ignore_merges_) {
    std::string whole;
    if (byte_level_) {
      for (const char c : piece) whole += gpt2_char(static_cast<unsigned char>(c));
    } else {
      whole = piece;
    }
    if (const auto it = vocab_.find(whole); it != vocab_.end()) return {it->second};
  }
  std::vector<std::string> symbols = initial_symbols(piece);
  while (symbols.size() > 1) {
    std::size_t best = 0;
    std::uint32_t best_rank = kNoRank;
    for (std::size_t k = 0; k + 1 < symbols.size(); ++k) {
      const std::uint32_t r = rank_of(symbols[k], symbols[k + 1]);
      if (r < best_rank) best_rank = r, best = k;
    }
    if (best_rank == kNoRank) break;
    symbols[best] += symbols[best + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  for (const std::string& s : symbols) ids.push_back(vocab_.at(s));
  return ids;
}

}  // namespace overhead::tok::reference
