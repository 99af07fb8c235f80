// A cache of piece -> token ids. Natural text repeats its words, so most pieces skip BPE.
// Each thread has its own cache (no locks, no shared cache lines), which makes encode on one
// const Tokenizer safe and fast from many threads at once. A thread keeps caches for its last few
// tokenizers, each named by an id that is never reused (a new tokenizer at a freed address
// cannot see stale entries). Bounded: only short pieces are kept, a full cache is simply
// emptied, and the oldest of a thread's caches is recycled for a new tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace eagerlm {

class WordCache {
 public:
  static constexpr size_t kMaxPieceBytes = 48;  // longer pieces are rare; not worth keeping
  static constexpr size_t kMaxEntries = 1 << 15;
  static constexpr size_t kCachesPerThread = 4;

  // A fresh id for a newly loaded tokenizer.
  static uint64_t new_owner_id();
  // The calling thread's cache for `owner` (an empty one the first time).
  static WordCache& for_thread(uint64_t owner);

  // Appends the cached ids of `piece` to `out` and returns true, or returns false if absent.
  bool lookup(std::string_view piece, std::vector<int32_t>& out) const;
  void store(std::string_view piece, const int32_t* ids, size_t count);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  uint64_t owner_ = 0;
  std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> entries_;
};

}  // namespace eagerlm
