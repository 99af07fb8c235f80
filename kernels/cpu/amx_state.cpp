// Whether the bf16 prefill GEMM may use AMX tiles (cpu_ops.h, "AMX"). Compiled once, for the
// baseline: it only asks the CPU (cpuid) and the OS (arch_prctl) what the process may use.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "kernels/cpu/cpu_ops.h"

namespace eagerlm::cpu {

namespace {

// Linux keeps the 8 KiB of tile data out of a thread's saved state until the process asks for it
// (ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile instruction before that raises SIGILL.
bool ask_for_tiles() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;
  if (!amx_bf16 || !amx_tile) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

std::once_flag g_asked;
bool g_available = false;
std::atomic<bool> g_enabled{false};

void ask_once() {
  std::call_once(g_asked, [] {
    g_available = ask_for_tiles();
    const char* env = std::getenv("EAGERLM_CPU_AMX");
    g_enabled.store(g_available && !(env && std::strcmp(env, "0") == 0), std::memory_order_relaxed);
  });
}

}  // namespace

bool amx_available() {
  ask_once();
  return g_available;
}

bool amx_enabled() {
  ask_once();
  return g_enabled.load(std::memory_order_relaxed);
}

ScopedAmx::ScopedAmx(bool on) : previous_(amx_enabled()) {
  g_enabled.store(on && g_available, std::memory_order_relaxed);
}

ScopedAmx::~ScopedAmx() { g_enabled.store(previous_, std::memory_order_relaxed); }

}  // namespace eagerlm::cpu
