// The tool-call families by name: adding a family is its file under families/ and one line in
// each list below (its factory and its entry).
#include <array>

#include "agent/family.hpp"

namespace overhead::agent::detail {

std::unique_ptr<Family> make_llama3_json();
std::unique_ptr<Family> make_hermes();
std::unique_ptr<Family> make_mistral();
std::unique_ptr<Family> make_deepseek_v3();
std::unique_ptr<Family> make_gpt_oss();
std::unique_ptr<Family> make_phi4();

namespace {

constexpr std::array kFamilies = {
    FamilyEntry{"llama3_json", &make_llama3_json},  //
    FamilyEntry{"hermes", &make_hermes},            //
    FamilyEntry{"mistral", &make_mistral},          //
    FamilyEntry{"deepseek_v3", &make_deepseek_v3},  //
    FamilyEntry{"gpt_oss", &make_gpt_oss},          //
    FamilyEntry{"phi4", &make_phi4},
};

constexpr auto kNames = [] {
  std::array<std::string_view, kFamilies.size()> names{};
  for (std::size_t i = 0; i < kFamilies.size(); ++i) names[i] = kFamilies[i].name;
  return names;
}();

}  // namespace

std::span<const FamilyEntry> families() { return kFamilies; }
std::span<const std::string_view> family_names() { return kNames; }

}  // namespace overhead::agent::detail
