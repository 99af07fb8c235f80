/* Compiled as C (C11, -Wall -Wextra -Wpedantic): the C API header is plain C, and a C program can
 * load a model, generate and read the text. Called from test_c_api.cpp. */
#include <eagerlm/eagerlm.h>

int eagerlm_test_c_program(const char* config_path, char* text, size_t capacity);

int eagerlm_test_c_program(const char* config_path, char* text, size_t capacity) {
  eagerlm_model* model = NULL;
  eagerlm_generator* generator = NULL;
  eagerlm_options* options = NULL;
  eagerlm_result* result = NULL;
  const char* prompt = "Hello, my name is";
  size_t size = 0;
  eagerlm_status s = eagerlm_model_initialize(config_path, 7, EAGERLM_DEVICE_CPU, &model);
  if (s == EAGERLM_OK) s = eagerlm_generator_create(model, 1, 32, &generator);
  eagerlm_model_free(model); /* the generator keeps the weights alive */
  if (s == EAGERLM_OK) s = eagerlm_options_create(&options);
  if (s == EAGERLM_OK) s = eagerlm_options_set(options, "max_new_tokens", "5");
  if (s == EAGERLM_OK) s = eagerlm_generate(generator, &prompt, NULL, 1, options, NULL, NULL, &result);
  if (s == EAGERLM_OK) s = eagerlm_result_text(result, 0, text, capacity, &size);
  eagerlm_result_free(result);
  eagerlm_options_free(options);
  eagerlm_generator_free(generator);
  return (int)s;
}
