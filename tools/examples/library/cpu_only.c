/* A CPU-only user of libeagerlm: loads a model, generates, then reads /proc/self/maps to check
 * that no CUDA library (nor eagerlm's CUDA module) was ever mapped into the process, even from a
 * CUDA-enabled build. cpu_only MODEL_DIR; exit 0 when clean, 3 when something of CUDA is mapped. */
#include <eagerlm/eagerlm.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* prompt = "Hello";
  eagerlm_model* model = NULL;
  eagerlm_generator* generator = NULL;
  eagerlm_result* result = NULL;
  eagerlm_status s = eagerlm_model_load(argc > 1 ? argv[1] : "gpt2", EAGERLM_DEVICE_CPU, &model);
  if (!s) s = eagerlm_generator_create(model, 1, 64, &generator);
  if (!s) s = eagerlm_generate(generator, &prompt, NULL, 1, NULL, NULL, NULL, &result);
  if (s) {
    fprintf(stderr, "error: %s\n", eagerlm_last_error());
    return 1;
  }
  eagerlm_result_free(result);
  eagerlm_generator_free(generator);
  eagerlm_model_free(model);

  FILE* maps = fopen("/proc/self/maps", "r");
  if (!maps) return 1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, maps))
    if (strstr(line, "libcuda") || strstr(line, "libcublas") || strstr(line, "libeagerlm-cuda")) {
      fprintf(stderr, "mapped: %s", line);
      found = 1;
    }
  fclose(maps);
  return found ? 3 : 0;
}
