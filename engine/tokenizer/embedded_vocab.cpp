// Embeds engine/tokenizer/data/{encoder.json,vocab.bpe} with the assembler's .incbin: no code
// generation step and no huge generated source, so the build stays fast. The directory comes from
// the EAGERLM_TOKENIZER_DATA_DIR definition (set in CMakeLists.txt, which also makes this object
// depend on the two files so that it is rebuilt when they change).
#include "engine/tokenizer/embedded_vocab.h"

#ifndef EAGERLM_TOKENIZER_DATA_DIR
#error "EAGERLM_TOKENIZER_DATA_DIR must name engine/tokenizer/data"
#endif

#define EAGERLM_EMBED(symbol, file)                \
  ".pushsection .rodata." #symbol                  \
  ", \"a\", @progbits\n"                           \
  ".balign 16\n"                                   \
  ".globl " #symbol                                \
  "_begin\n"                                       \
  ".hidden " #symbol "_begin\n" #symbol            \
  "_begin:\n"                                      \
  ".incbin \"" EAGERLM_TOKENIZER_DATA_DIR "/" file \
  "\"\n"                                           \
  ".globl " #symbol                                \
  "_end\n"                                         \
  ".hidden " #symbol "_end\n" #symbol              \
  "_end:\n"                                        \
  ".popsection\n"

__asm__(EAGERLM_EMBED(eagerlm_gpt2_encoder_json, "encoder.json"));
__asm__(EAGERLM_EMBED(eagerlm_gpt2_vocab_bpe, "vocab.bpe"));

extern "C" {
extern const char eagerlm_gpt2_encoder_json_begin[];
extern const char eagerlm_gpt2_encoder_json_end[];
extern const char eagerlm_gpt2_vocab_bpe_begin[];
extern const char eagerlm_gpt2_vocab_bpe_end[];
}

namespace eagerlm {

std::string_view embedded_gpt2_encoder_json() {
  return {eagerlm_gpt2_encoder_json_begin, size_t(eagerlm_gpt2_encoder_json_end - eagerlm_gpt2_encoder_json_begin)};
}

std::string_view embedded_gpt2_vocab_bpe() {
  return {eagerlm_gpt2_vocab_bpe_begin, size_t(eagerlm_gpt2_vocab_bpe_end - eagerlm_gpt2_vocab_bpe_begin)};
}

}  // namespace eagerlm
