// eagerlm-bench-linear: the typed-weight matrix products (linear_typed, linear_transposed_typed)
// on GPT-2 124M's shapes, for every weight type and a few row counts, next to the machine's read
// bandwidth and FMA peak measured in the same run (Backend::measure_limits, at the vector width of
// the variant that runs).
//
//   eagerlm-bench-linear [--isa NAME] [--runs N] [--math fp32|bf16] [--m 1,8,32,128]
//                        [--types f32,bf16,f16,int8,blas,f32p,bf16p,f16p,int8p]
//
// f32p, bf16p, f16p and int8p are W held in panels (linear_row_panels for f32 and f16,
// linear_paired, linear_int8_panels: the layout the CPU backend holds such layers in where it picks panels, and a
// copy of the head), under --math.
//
// Per (shape, type, m), over --runs timed calls (default 15), medians of
//   ms      wall time of one call (and best ms, the fastest: on a shared machine the two differ);
//   GB/s    weight bytes (scales included) / time: what decode streams per call;
//   floor   bytes / best read bandwidth, the least time the call could take when W comes from
//           memory, and x floor = ms / floor (1.0 is bandwidth-bound; <= 1.2 is the target);
//   GFLOP/s 2·m·k·n / time and its fraction of the FMA peak (reported for m >= 32);
// and, per shape and type, what 8 rows cost against one.
// "blas" is the float32 path of before the products were made batch-invariant: OpenBLAS sgemm
// (sgemv for one row), single-threaded, output columns split over the OpenMP threads as the
// kernels split them (column_split.h), beside which "f32" (eagerlm's own fixed-order kernels) is
// measured.
// Every timed call reads a different copy of W, copies cycled over at least 256 MiB, so W comes
// from memory as it does in a model's decode step, never from the 32 MiB L3 of the last call.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/backend.h"
#include "kernels/common/dtype.h"
#include "kernels/common/weights.h"
#include "kernels/cpu/column_split.h"
#include "kernels/cpu/cpu_ops.h"

using namespace eagerlm;

namespace {

struct Shape {
  const char* name;
  int64_t k, n;
  bool transposed;  // output-major W [n, k]: the tied head, and linear layers held so (bf16 math on AMX)
};

const Shape kShapes[] = {
    {"c_attn 768x2304", 768, 2304, false},    {"attn c_proj 768x768", 768, 768, false},
    {"c_fc 768x3072", 768, 3072, false},      {"mlp c_proj 3072x768", 3072, 768, false},
    {"head 50257x768 (T)", 768, 50257, true}, {"c_attn (T)", 768, 2304, true},
    {"attn c_proj (T)", 768, 768, true},      {"c_fc (T)", 768, 3072, true},
    {"mlp c_proj (T)", 3072, 768, true},
};

constexpr int64_t kRotateBytes = int64_t(256) << 20;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// The "blas" products: y = x·W + bias (W [k, n]) or y = x·Wᵀ (W [n, k]), dense rows.
void blas_product(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t k, int64_t n,
                  bool transposed) {
  static const bool single_threaded = (openblas_set_num_threads(1), true);
  (void)single_threaded;
  const auto bm = blasint(m), bk = blasint(k), bn = blasint(n);
  cpu::detail::split_columns(m, k, n, [&](int64_t n0, int64_t n1) {
    const auto cols = blasint(n1 - n0);
    // Bias (or zeros) first, then accumulate with beta = 1, as linear.cpp did.
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = n0; j < n1; ++j) y[r * n + j] = bias && !transposed ? bias[j] : 0.0f;
    if (transposed) {
      if (m == 1) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, cols, bk, 1.0f, w + n0 * k, bk, x, 1, 1.0f, y + n0, 1);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bm, cols, bk, 1.0f, x, bk, w + n0 * k, bk, 1.0f, y + n0,
                    bn);
      }
    } else if (m == 1) {
      cblas_sgemv(CblasRowMajor, CblasTrans, bk, cols, 1.0f, w + n0, bn, x, 1, 1.0f, y + n0, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bm, cols, bk, 1.0f, x, bk, w + n0, bn, 1.0f, y + n0, bn);
    }
  });
}

// One stored copy of W in one type (or the float32 of the blas path).
struct Copy {
  std::vector<unsigned char> data;
  std::vector<float> scales;
  Weights view(WeightType t) const { return {t, data.data(), t == WeightType::kInt8 ? scales.data() : nullptr}; }
};

Copy make_copy(const std::vector<float>& w, WeightType t, const Shape& s) {
  Copy c;
  c.data.resize(size_t(weight_data_bytes(t, s.k, s.n)));
  switch (t) {
    case WeightType::kF32: std::memcpy(c.data.data(), w.data(), c.data.size()); break;
    case WeightType::kBF16: cpu::convert_from_f32(w.data(), DType::kBF16, c.data.data(), int64_t(w.size())); break;
    case WeightType::kF16: cpu::convert_from_f32(w.data(), DType::kF16, c.data.data(), int64_t(w.size())); break;
    case WeightType::kInt8:
      c.scales.resize(size_t(weight_scale_count(t, s.k, s.n)));
      // Input-major: [k, n] with blocks down the rows; output-major: [n, k] with blocks along them.
      cpu::quantize_int8(w.data(), s.transposed ? s.n : s.k, s.transposed ? s.k : s.n, !s.transposed,
                         reinterpret_cast<int8_t*>(c.data.data()), c.scales.data());
      break;
  }
  return c;
}

// The copy of W rearranged into panels (weights.h): bf16 paired, f32, f16 and int8 (with its
// scales) in row panels; what a model holds where Backend::linear_layout picks panels. A
// transposed shape (the head) gives its output-major W as panels just the same.
Copy make_panel_copy(const std::vector<float>& w, WeightType t, const Shape& s) {
  const Copy plain = make_copy(w, t, s);
  const int64_t padded = panel_count(s.n) * kPanelColumns;
  auto plain_index = [&](int64_t i, int64_t j) { return s.transposed ? j * s.k + i : i * s.n + j; };
  Copy c;
  if (t == WeightType::kInt8) {
    c.data.assign(size_t(padded * s.k), 0);
    c.scales.assign(size_t(padded / kPanelColumns * s.k), 0.0f);
    const int64_t blocks = s.k / kInt8Block;
    for (int64_t j = 0; j < s.n; ++j) {
      for (int64_t i = 0; i < s.k; ++i) c.data[size_t(panel_index(i, j, s.k))] = plain.data[size_t(plain_index(i, j))];
      for (int64_t b = 0; b < blocks; ++b)
        c.scales[size_t(int8_panel_scale_index(b, j, s.k))] =
            plain.scales[size_t(s.transposed ? j * blocks + b : b * s.n + j)];
    }
    return c;
  }
  // The other types element by element: f32 and f16 in row panels, bf16 paired.
  auto rearrange = [&](auto element, int64_t (*at)(int64_t, int64_t, int64_t)) {
    using E = decltype(element);
    const auto* values = reinterpret_cast<const E*>(plain.data.data());
    c.data.assign(size_t(padded * s.k) * sizeof(E), 0);
    auto* panels = reinterpret_cast<E*>(c.data.data());
    for (int64_t i = 0; i < s.k; ++i)
      for (int64_t j = 0; j < s.n; ++j) panels[at(i, j, s.k)] = values[plain_index(i, j)];
  };
  if (t == WeightType::kF32) {
    rearrange(float{}, panel_index);
  } else if (t == WeightType::kF16) {
    rearrange(uint16_t{}, panel_index);
  } else {
    rearrange(uint16_t{}, paired_panel_index);
  }
  return c;
}

struct Options {
  std::string isa;
  int runs = 15;
  GemmMath math = GemmMath::kFp32;
  std::vector<int64_t> ms = {1, 8, 32, 128};
  std::vector<std::string> types = {"f32", "bf16", "f16", "int8", "blas"};
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const char* value = a + 1 < argc ? argv[a + 1] : nullptr;
    if (!value) {
      std::fprintf(stderr,
                   "usage: %s [--isa NAME] [--runs N] [--math fp32|bf16] [--m LIST] [--types LIST]\n"
                   "types: f32 bf16 f16 int8 blas, and f32p bf16p f16p int8p (in panels: "
                   "linear_row_panels, linear_paired, linear_int8_panels)\n",
                   argv[0]);
      std::exit(2);
    }
    ++a;
    if (arg == "--isa") {
      o.isa = value;
    } else if (arg == "--runs") {
      o.runs = std::max(1, std::atoi(value));
    } else if (arg == "--math") {
      o.math = std::string(value) == "bf16" ? GemmMath::kBf16 : GemmMath::kFp32;
    } else if (arg == "--m") {
      o.ms.clear();
      for (const std::string& m : split(value)) o.ms.push_back(std::atoll(m.c_str()));
    } else if (arg == "--types") {
      o.types = split(value);
    } else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      std::exit(2);
    }
  }
  return o;
}

WeightType type_of(const std::string& name) {
  return name == "bf16" || name == "bf16p"   ? WeightType::kBF16
         : name == "f16p"                    ? WeightType::kF16
         : name == "f16"                     ? WeightType::kF16
         : name == "int8" || name == "int8p" ? WeightType::kInt8
                                             : WeightType::kF32;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  std::unique_ptr<cpu::ScopedIsa> isa;
  if (!opt.isa.empty()) isa = std::make_unique<cpu::ScopedIsa>(opt.isa);
  const int threads = omp_get_max_threads();
  const DeviceLimits machine = backend_for(Device::kCpu).measure_limits(threads);
  std::printf("%s, %d threads, variant %s, math %s\n", machine.name.c_str(), threads, cpu::active_isa(),
              gemm_math_name(opt.math));
  std::printf("read bandwidth %.1f GB/s best, %.1f median; FMA peak %.1f GFLOP/s\n\n", machine.read_gbps,
              machine.read_gbps_median, machine.peak_gflops);
  std::printf("%-21s %-5s %4s %9s %9s %7s %9s %8s %8s %6s\n", "shape", "type", "m", "ms", "best ms", "GB/s", "floor ms",
              "x floor", "GFLOP/s", "%peak");

  std::mt19937 rng(1234);
  for (const Shape& s : kShapes) {
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> w(size_t(s.k * s.n));
    for (float& v : w) v = normal(rng);
    std::vector<float> bias(size_t(s.n), 0.01f);
    for (const std::string& type_name : opt.types) {
      const bool blas = type_name == "blas", panels = type_name.back() == 'p';
      const WeightType t = type_of(type_name);
      const int64_t bytes = weight_total_bytes(t, s.k, s.n);
      const int64_t n_copies = std::max<int64_t>(1, (kRotateBytes + bytes - 1) / bytes);
      std::vector<Copy> copies;
      copies.push_back(panels ? make_panel_copy(w, t, s) : make_copy(w, t, s));
      for (int64_t c = 1; c < n_copies; ++c) copies.push_back(copies[0]);
      double ms_one = 0, ms_eight = 0;  // for the 8-rows / 1-row ratio
      for (const int64_t m : opt.ms) {
        std::vector<float> x(size_t(m * s.k)), y(size_t(m * s.n));
        for (float& v : x) v = normal(rng) * 50.0f;
        auto call = [&](const Copy& c) {
          const Weights wv = c.view(t);
          const float* wf = reinterpret_cast<const float*>(c.data.data());
          const float* b = s.transposed ? nullptr : bias.data();
          if (panels && (t == WeightType::kF32 || t == WeightType::kF16)) {
            cpu::linear_row_panels(x.data(), s.k, wv, b, y.data(), s.n, m, s.k, s.n);
          } else if (panels && t == WeightType::kInt8) {
            cpu::linear_int8_panels(x.data(), s.k, wv, b, y.data(), s.n, m, s.k, s.n);
          } else if (panels) {
            cpu::linear_paired(x.data(), s.k, wv, b, y.data(), s.n, m, s.k, s.n, opt.math);
          } else if (blas) {
            blas_product(x.data(), wf, bias.data(), y.data(), m, s.k, s.n, s.transposed);
          } else if (s.transposed) {
            cpu::linear_transposed_typed(x.data(), s.k, wv, y.data(), s.n, m, s.k, s.n, opt.math);
          } else {
            cpu::linear_typed(x.data(), s.k, wv, bias.data(), y.data(), s.n, m, s.k, s.n, opt.math);
          }
        };
        call(copies[0]);  // warm-up: thread pool, scratch buffers
        call(copies[copies.size() > 1 ? 1 : 0]);
        std::vector<double> times;
        for (int r = 0; r < opt.runs; ++r) {
          const Copy& c = copies[size_t(r + 2) % copies.size()];
          const double t0 = now_seconds();
          call(c);
          times.push_back(now_seconds() - t0);
        }
        const double sec = median(times);
        if (m == 1) ms_one = sec * 1e3;
        if (m == 8) ms_eight = sec * 1e3;
        const double floor = double(bytes) / (machine.read_gbps * 1e9);
        const double gflops = 2.0 * double(m) * double(s.k) * double(s.n) / sec / 1e9;
        std::printf("%-21s %-5s %4lld %9.4f %9.4f %7.1f %9.4f %8.2f", s.name, type_name.c_str(),
                    static_cast<long long>(m), sec * 1e3, *std::min_element(times.begin(), times.end()) * 1e3,
                    double(bytes) / sec / 1e9, floor * 1e3, sec / floor);
        if (m >= 32) {
          std::printf(" %8.1f %5.0f%%\n", gflops, 100.0 * gflops / machine.peak_gflops);
        } else {
          std::printf("\n");
        }
        std::fflush(stdout);
      }
      if (ms_one > 0 && ms_eight > 0)
        std::printf("%-21s %-5s 8 rows cost %.2fx one row\n", s.name, type_name.c_str(), ms_eight / ms_one);
    }
  }
  return 0;
}
