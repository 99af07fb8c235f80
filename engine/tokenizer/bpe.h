// Byte-pair encoding of one pre-tokenized piece: start from one token per byte and apply merges
// by rank. Semantics are GPT-2's exactly: repeatedly take the lowest-ranked adjacent pair present
// and merge all of its occurrences left to right (non-overlapping), until no pair has a rank.
// Implemented with a min-heap over (rank, position) and a linked list of symbols, so a piece of n
// bytes costs O(n log n) (a million spaces is one piece), not GPT-2's O(n^2).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace eagerlm {

// (left id, right id) -> (rank, merged id), open addressing; read-only after construction.
class MergeTable {
 public:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };

  void reserve(size_t count);
  // Adds a merge; adding the same pair again replaces it (the later line wins, as in GPT-2).
  void insert(int32_t left, int32_t right, int32_t rank, int32_t merged);
  const Merge* find(int32_t left, int32_t right) const;
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  size_t slot_of(uint64_t key) const;
  void grow();

  std::vector<Slot> slots_;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

// Working memory for bpe_encode, reused across pieces to avoid allocations.
struct BpeScratch {
  struct Candidate {
    int32_t rank;
    int32_t left;     // position of the left symbol
    int32_t left_id;  // ids at the time the candidate was made, to detect stale candidates
    int32_t right_id;
  };
  std::vector<int32_t> ids, next, prev;
  std::vector<Candidate> heap, deferred;
};

// Appends the token ids for `piece` (raw bytes, non-empty) to `out`. byte_token[b] is the id of
// the single-byte token for b.
void bpe_encode(std::string_view piece, const std::array<int32_t, 256>& byte_token, const MergeTable& merges,
                BpeScratch& scratch, std::vector<int32_t>& out);

}  // namespace eagerlm
