// The INI dialect of ~/.aws/credentials and ~/.aws/config: `[section]` headers, `key = value`
// lines, `#` and `;` comments, blank lines. Nested sub-keys (indented lines under `s3 =`) are kept
// as their own keys of the section. A malformed line is an error naming the file and line, and it
// never quotes the line, because the line may hold a secret key.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace overhead::aws {

using IniSection = std::map<std::string, std::string>;
using IniFile = std::map<std::string, IniSection>;

class IniError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses text; `file_name` only labels errors ("FILE:LINE: what").
IniFile parse_ini(std::string_view text, const std::string& file_name);

// Reads and parses a file. Returns false (and leaves `out` empty) when the file does not exist;
// throws IniError when it exists but cannot be read or parsed.
bool load_ini_file(const std::string& path, IniFile& out);

}  // namespace overhead::aws
