/* Generates text with eagerlm's C API: example_c MODEL_DIR [PROMPT] (a Hugging Face GPT-2 dir). */
#include <eagerlm/eagerlm.h>
#include <stdio.h>

int main(int argc, char** argv) {
  const char* prompt = argc > 2 ? argv[2] : "Hello, my name is";
  eagerlm_model* model = NULL; eagerlm_generator* generator = NULL;
  eagerlm_options* options = NULL; eagerlm_result* result = NULL;
  char text[4096]; size_t size = 0;
  eagerlm_status s = eagerlm_model_load(argc > 1 ? argv[1] : "gpt2", EAGERLM_DEVICE_CPU, &model);
  if (!s) s = eagerlm_generator_create(model, 1, 256, &generator);
  if (!s) s = eagerlm_options_create(&options);
  if (!s) s = eagerlm_options_set(options, "max_new_tokens", "16");
  if (!s) s = eagerlm_generate(generator, &prompt, NULL, 1, options, NULL, NULL, &result);
  if (!s) s = eagerlm_result_text(result, 0, text, sizeof text, &size);
  if (s) fprintf(stderr, "error: %s\n", eagerlm_last_error()); else printf("%s%s\n", prompt, text);
  eagerlm_result_free(result); eagerlm_options_free(options);
  eagerlm_generator_free(generator); eagerlm_model_free(model);
  return s ? 1 : 0;
}
