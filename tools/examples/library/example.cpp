// Generates text with eagerlm's C++ API: example MODEL_DIR [PROMPT] (a Hugging Face GPT-2 dir).
#include <eagerlm/eagerlm.hpp>
#include <iostream>

int main(int argc, char** argv) try {
  const std::string prompt = argc > 2 ? argv[2] : "Hello, my name is";
  const eagerlm::Model model = eagerlm::Model::load(argc > 1 ? argv[1] : "gpt2", eagerlm::Device::kCpu);
  eagerlm::Generator generator(model, /*max_batch=*/1, /*max_length=*/256);
  eagerlm::GenerateOptions options;  // greedy unless temperature > 0
  options.max_new_tokens = 16;
  std::cout << prompt;
  generator.generate(prompt, options, [](const eagerlm::TokenEvent& event) {
    std::cout << event.text << std::flush;  // stream the text as it comes
    return true;                            // false would stop generating
  });
  std::cout << "\n";
} catch (const eagerlm::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
