// The per-thread, bounded piece cache.
#include "engine/tokenizer/word_cache.h"

#include <array>
#include <atomic>

namespace eagerlm {

uint64_t WordCache::new_owner_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

WordCache& WordCache::for_thread(uint64_t owner) {
  thread_local std::array<WordCache, kCachesPerThread> caches;
  thread_local size_t next_to_recycle = 0;
  for (WordCache& cache : caches)
    if (cache.owner_ == owner) return cache;
  WordCache& recycled = caches[next_to_recycle];
  next_to_recycle = (next_to_recycle + 1) % kCachesPerThread;
  recycled.entries_.clear();
  recycled.owner_ = owner;
  return recycled;
}

bool WordCache::lookup(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.size() > kMaxPieceBytes) return false;
  const auto it = entries_.find(piece);
  if (it == entries_.end()) return false;
  out.insert(out.end(), it->second.begin(), it->second.end());
  return true;
}

void WordCache::store(std::string_view piece, const int32_t* ids, size_t count) {
  if (piece.size() > kMaxPieceBytes) return;
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.emplace(std::string(piece), std::vector<int32_t>(ids, ids + count));
}

}  // namespace eagerlm
