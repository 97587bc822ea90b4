// A read-only array that either owns its elements (built at load from tokenizer.json) or views
// them inside a memory-mapped compiled cache file. The hot paths read through one pointer either
// way, so a tokenizer loaded from the cache encodes at the same speed as one built from JSON.
// Building goes through vec() and ends with seal(); the owner of a view keeps the mapping alive.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace overhead::tok {

template <typename T>
class FlatArray {
  static_assert(std::is_trivially_copyable_v<T>, "cached arrays are stored as raw bytes");

 public:
  FlatArray() = default;
  FlatArray(const FlatArray&) = delete;
  FlatArray& operator=(const FlatArray&) = delete;
  // A moved std::vector keeps its buffer, so the element pointer stays valid.
  FlatArray(FlatArray&& other) noexcept { *this = std::move(other); }
  FlatArray& operator=(FlatArray&& other) noexcept {
    owned_ = std::move(other.owned_);
    data_ = other.data_;
    size_ = other.size_;
    other.owned_.clear();
    other.data_ = nullptr;
    other.size_ = 0;
    return *this;
  }

  // The owned elements, for building; call seal() when done.
  std::vector<T>& vec() { return owned_; }
  void seal() {
    data_ = owned_.data();
    size_ = owned_.size();
  }
  // Views `items` (memory owned elsewhere, e.g. a mapped cache file) instead of owning.
  void view(std::span<const T> items) {
    owned_ = std::vector<T>();
    data_ = items.data();
    size_ = items.size();
  }

  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  std::vector<T> owned_;
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace overhead::tok
