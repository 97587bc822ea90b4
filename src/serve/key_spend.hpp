// What each key has spent, for its budget: the sum of cost_usd over the key's stored records
// (ports::KeyStore::spend_by_key, read every `refresh` on its own thread while any key has a
// budget), plus what this gateway answered since, which the store may not hold yet.
//
// Spend is recorded with the record (the at-least-once, idempotent path every record takes), so a
// store outage delays it and never loses it; the store is the one source of truth. The overlay
// only closes the gap between an answer and its record reaching the store: an answer is counted
// in the overlay until a read of the store that began `kStoreLag` after it, by which time its
// record has been stored (the consumer's flush takes well under that; a slower store only makes
// the overlay count an answer twice for a while, which refuses early, never late).
//
// What a budget therefore bounds: one gateway stops a key at its budget plus the requests already
// admitted when the limit was crossed; several gateways, each also plus what the others answered in
// the last refresh (2 s by default).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "ports/key_store.hpp"

namespace overhead::serve {

class KeySpend {
 public:
  static constexpr std::chrono::milliseconds kStoreLag{3000};

  // `store` null: only this gateway's answers count (nothing read). `active` says whether any key
  // has a budget (the store is read only then). `now` gives monotonic milliseconds (tests).
  KeySpend(std::shared_ptr<ports::KeyStore> store, std::chrono::milliseconds refresh, std::function<bool()> active,
           std::function<std::int64_t()> now = {});
  ~KeySpend();
  KeySpend(const KeySpend&) = delete;
  KeySpend& operator=(const KeySpend&) = delete;

  // An answer of `key` that cost `usd`.
  void add(const std::string& key, double usd);
  // What `key` has spent, as far as this gateway knows.
  [[nodiscard]] double spent(const std::string& key);
  // Reads the store now (the thread calls it); false when the read failed (the last one stays).
  bool refresh_now();
  [[nodiscard]] std::uint64_t refresh_failures() const;

 private:
  void loop();

  std::shared_ptr<ports::KeyStore> store_;
  std::chrono::milliseconds refresh_;
  std::function<bool()> active_;
  std::function<std::int64_t()> now_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, double> stored_;
  struct Pending {
    std::int64_t at_ms;
    double usd;
  };
  std::unordered_map<std::string, std::deque<Pending>> pending_;
  std::uint64_t failures_ = 0;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace overhead::serve
