// Heap-based BPE with GPT-2's "merge every occurrence of the best pair, then look again" rounds.
#include "engine/tokenizer/bpe.h"

#include <algorithm>
#include <limits>

#include "engine/core/error.h"

namespace eagerlm {
namespace {

uint64_t pair_key(int32_t left, int32_t right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

// Min-heap order on (rank, position): std::*_heap keep the "largest" first, so invert.
bool later(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
}

}  // namespace

size_t MergeTable::slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }

void MergeTable::reserve(size_t count) {
  size_t capacity = 16;
  unsigned bits = 4;
  while (capacity < count * 2) {  // load factor at most 1/2 keeps probes short
    capacity *= 2;
    ++bits;
  }
  if (capacity <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{kEmpty, {0, 0}});
  shift_ = 64 - bits;
  size_ = 0;
  for (const Slot& s : old)
    if (s.key != kEmpty) insert(int32_t(s.key >> 32), int32_t(uint32_t(s.key)), s.merge.rank, s.merge.merged);
}

void MergeTable::grow() { reserve(std::max<size_t>(16, size_ + 1)); }

void MergeTable::insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const uint64_t key = pair_key(left, right);
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    if (slots_[i].key == key) {
      slots_[i].merge = {rank, merged};
      return;
    }
    if (slots_[i].key == kEmpty) {
      slots_[i] = Slot{key, {rank, merged}};
      ++size_;
      return;
    }
  }
}

const MergeTable::Merge* MergeTable::find(int32_t left, int32_t right) const {
  if (slots_.empty()) return nullptr;
  const uint64_t key = pair_key(left, right);
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    if (slots_[i].key == key) return &slots_[i].merge;
    if (slots_[i].key == kEmpty) return nullptr;
  }
}

void bpe_encode(std::string_view piece, const std::array<int32_t, 256>& byte_token, const MergeTable& merges,
                BpeScratch& s, std::vector<int32_t>& out) {
  const size_t n = piece.size();
  if (n == 0) return;
  if (n == 1) {
    out.push_back(byte_token[static_cast<unsigned char>(piece[0])]);
    return;
  }
  if (n > size_t(std::numeric_limits<int32_t>::max()))
    throw_error(ErrorCode::kInvalidArgument, "tokenizer: a single piece of text exceeds 2 GiB");

  const int32_t count = int32_t(n);
  s.ids.resize(n);
  s.next.resize(n);
  s.prev.resize(n);
  for (int32_t i = 0; i < count; ++i) {
    s.ids[i] = byte_token[static_cast<unsigned char>(piece[i])];
    s.next[i] = i + 1 < count ? i + 1 : -1;
    s.prev[i] = i - 1;
  }

  s.heap.clear();
  for (int32_t i = 0; i + 1 < count; ++i)
    if (const MergeTable::Merge* m = merges.find(s.ids[i], s.ids[i + 1]))
      s.heap.push_back({m->rank, i, s.ids[i], s.ids[i + 1]});
  std::make_heap(s.heap.begin(), s.heap.end(), later);

  auto consider = [&](int32_t left) {
    const int32_t right = s.next[left];
    if (left < 0 || right < 0) return;
    if (const MergeTable::Merge* m = merges.find(s.ids[left], s.ids[right]))
      s.deferred.push_back({m->rank, left, s.ids[left], s.ids[right]});
  };

  while (!s.heap.empty()) {
    // One round: every occurrence of the best pair, left to right. Pairs that the round creates
    // wait until it ends, even if they rank better, because GPT-2 only looks again then.
    const int32_t rank = s.heap.front().rank;
    s.deferred.clear();
    while (!s.heap.empty() && s.heap.front().rank == rank) {
      std::pop_heap(s.heap.begin(), s.heap.end(), later);
      const BpeScratch::Candidate c = s.heap.back();
      s.heap.pop_back();
      const int32_t left = c.left;
      const int32_t right = s.next[left];
      // Stale if either symbol has merged since: ids only ever change by merging.
      if (s.ids[left] != c.left_id || right < 0 || s.ids[right] != c.right_id) continue;

      s.ids[left] = merges.find(c.left_id, c.right_id)->merged;
      s.ids[right] = -1;
      const int32_t after = s.next[right];
      s.next[left] = after;
      if (after >= 0) s.prev[after] = left;
      if (s.prev[left] >= 0) consider(s.prev[left]);
      consider(left);
    }
    for (const BpeScratch::Candidate& c : s.deferred) {
      s.heap.push_back(c);
      std::push_heap(s.heap.begin(), s.heap.end(), later);
    }
  }

  for (int32_t i = 0; i >= 0; i = s.next[i]) out.push_back(s.ids[i]);
}

}  // namespace eagerlm
