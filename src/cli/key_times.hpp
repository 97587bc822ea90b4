// The times `overhead keys` reads and shows: a key's --expires as typed, and Unix seconds as a
// UTC ISO-8601 time. Only UTC is taken: an expiry must mean one instant on every gateway,
// whatever the time zone of the machine that created the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace overhead::cli {

// Unix seconds of "YYYY-MM-DD" (that day's 00:00:00 UTC, its start) or of an ISO-8601 UTC time
// "YYYY-MM-DDTHH:MM[:SS[.fraction]]" ending in "Z" or "+00:00" (the fraction is dropped);
// nullopt for anything else (another offset, a date that does not exist).
[[nodiscard]] std::optional<std::int64_t> parse_utc_time(const std::string& text);

// "" when `text` is a time parse_utc_time takes, else the reason, for --expires's validator.
[[nodiscard]] std::string utc_time_error(const std::string& text);

// "2026-12-07T01:02:03Z".
[[nodiscard]] std::string utc_time_text(std::int64_t unix_seconds);

}  // namespace overhead::cli
