// Linked when eagerlm is built without CUDA: the graph and staging types of
// kernels/cuda/cuda_graph.h and the scratch reservation of kernels/cuda/attention_split.h. Only
// code holding a CUDA context calls them, and ExecContext refuses kCuda in such a build, so each
// one only guards against a broken invariant. Destructors of the (always empty) objects do
// nothing.
#include <string>

#include "engine/core/error.h"
#include "kernels/cuda/attention_split.h"
#include "kernels/cuda/cuda_graph.h"

namespace eagerlm::cuda {

namespace {
[[noreturn]] void absent(const char* what) {
  throw_error(ErrorCode::kUnsupported,
              std::string("CUDA ") + what + ": eagerlm was built without CUDA");
}
}  // namespace

CudaGraph::~CudaGraph() = default;
CudaGraph CudaGraph::capture(CudaContext&, const std::function<void()>&) {
  absent("graph capture");
}
bool CudaGraph::stale(const CudaContext&) const { absent("graph check"); }
void CudaGraph::launch(CudaContext&) const { absent("graph launch"); }

StagingBuffer::StagingBuffer(size_t) { absent("pinned staging buffer"); }
StagingBuffer::~StagingBuffer() = default;
void* StagingBuffer::writable() { absent("pinned staging buffer"); }
void StagingBuffer::upload(CudaContext&, void*, size_t) { absent("pinned staging upload"); }

void reserve_attention_scratch(CudaContext&, int64_t, int64_t, int64_t, int64_t) {
  absent("attention scratch");
}

}  // namespace eagerlm::cuda
