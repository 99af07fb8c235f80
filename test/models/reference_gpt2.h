// A plain, obviously-correct GPT-2 forward pass in double precision, for tests only: the whole
// sequence at once, no cache, no batching, loops written straight from the GPT-2 equations
// (OpenAI's model.py): LN → attention (causal, 1/√d_head) → residual → LN → MLP (tanh GELU) →
// residual, final LN, logits = h · wteᵀ.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/gpt2/parameters.h"

namespace eagerlm::reference {

class Gpt2Reference {
 public:
  Gpt2Reference(const gpt2::Config& c, const gpt2::ParameterTensors& p) : c_(c), p_(p) {}

  // Logits [tokens.size()][vocab] for every position of one sequence.
  std::vector<std::vector<double>> logits(const std::vector<int32_t>& tokens) const {
    const int64_t T = int64_t(tokens.size()), d = c_.n_embd;
    Mat x(T, d);
    const float* wte = w("wte.weight");
    const float* wpe = w("wpe.weight");
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < d; ++j) x(t, j) = double(wte[tokens[t] * d + j]) + double(wpe[t * d + j]);
    for (int64_t l = 0; l < c_.n_layer; ++l) block(x, "h." + std::to_string(l) + ".");
    Mat h = layer_norm(x, "ln_f.");
    std::vector<std::vector<double>> out(size_t(T), std::vector<double>(size_t(c_.vocab_size)));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t v = 0; v < c_.vocab_size; ++v) {
        double s = 0;
        for (int64_t j = 0; j < d; ++j) s += h(t, j) * double(wte[v * d + j]);
        out[size_t(t)][size_t(v)] = s;
      }
    return out;
  }

 private:
  struct Mat {
    Mat(int64_t r, int64_t c) : rows(r), cols(c), v(size_t(r * c), 0.0) {}
    double& operator()(int64_t i, int64_t j) { return v[size_t(i * cols + j)]; }
    double operator()(int64_t i, int64_t j) const { return v[size_t(i * cols + j)]; }
    int64_t rows, cols;
    std::vector<double> v;
  };

  const float* w(const std::string& name) const { return p_.get(name).f32(); }

  Mat layer_norm(const Mat& x, const std::string& prefix) const {
    const float* g = w(prefix + "weight");
    const float* b = w(prefix + "bias");
    Mat y(x.rows, x.cols);
    for (int64_t t = 0; t < x.rows; ++t) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < x.cols; ++j) mean += x(t, j);
      mean /= double(x.cols);
      for (int64_t j = 0; j < x.cols; ++j) var += (x(t, j) - mean) * (x(t, j) - mean);
      var /= double(x.cols);
      const double inv = 1.0 / std::sqrt(var + c_.layer_norm_epsilon);
      for (int64_t j = 0; j < x.cols; ++j) y(t, j) = (x(t, j) - mean) * inv * double(g[j]) + double(b[j]);
    }
    return y;
  }

  // y = x · W + b with W [in, out].
  Mat linear(const Mat& x, const std::string& prefix, int64_t out) const {
    const float* W = w(prefix + "weight");
    const float* b = w(prefix + "bias");
    Mat y(x.rows, out);
    for (int64_t t = 0; t < x.rows; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = double(b[o]);
        for (int64_t i = 0; i < x.cols; ++i) s += x(t, i) * double(W[i * out + o]);
        y(t, o) = s;
      }
    return y;
  }

  void block(Mat& x, const std::string& p) const {
    const int64_t T = x.rows, d = c_.n_embd, H = c_.n_head, dh = d / H;
    Mat qkv = linear(layer_norm(x, p + "ln_1."), p + "attn.c_attn.", 3 * d);
    Mat a(T, d);
    for (int64_t hd = 0; hd < H; ++hd)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> s(size_t(i + 1));
        double mx = -1e300;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < dh; ++e) dot += qkv(i, hd * dh + e) * qkv(j, d + hd * dh + e);
          s[size_t(j)] = dot / std::sqrt(double(dh));
          mx = std::max(mx, s[size_t(j)]);
        }
        double sum = 0;
        for (auto& v : s) sum += (v = std::exp(v - mx));
        for (int64_t e = 0; e < dh; ++e) {
          double acc = 0;
          for (int64_t j = 0; j <= i; ++j) acc += s[size_t(j)] / sum * qkv(j, 2 * d + hd * dh + e);
          a(i, hd * dh + e) = acc;
        }
      }
    Mat proj = linear(a, p + "attn.c_proj.", d);
    for (size_t k = 0; k < x.v.size(); ++k) x.v[k] += proj.v[k];
    Mat m = linear(layer_norm(x, p + "ln_2."), p + "mlp.c_fc.", c_.mlp_width());
    for (auto& v : m.v) v = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    Mat out = linear(m, p + "mlp.c_proj.", d);
    for (size_t k = 0; k < x.v.size(); ++k) x.v[k] += out.v[k];
  }

  gpt2::Config c_;
  const gpt2::ParameterTensors& p_;
};

}  // namespace eagerlm::reference
