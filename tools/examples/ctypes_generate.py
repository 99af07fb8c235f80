#!/usr/bin/env python3
"""Generates text with eagerlm from Python through its C API and ctypes: no compiled binding.

    python3 tools/examples/ctypes_generate.py MODEL_DIR [PROMPT] [--lib PATH] [--max-new-tokens N]
                                              [--temperature T] [--seed S]

MODEL_DIR is a Hugging Face GPT-2 directory. The library comes from --lib, else $EAGERLM_LIBRARY,
else the system loader (libeagerlm.so.0). Prints the prompt and then the generated text as it
streams, as tools/examples/library/example.c does; errors go to stderr with exit status 1.
"""
import argparse
import ctypes
import os
import sys

# typedef int (*eagerlm_token_callback)(size_t index, int32_t token, const char* text,
#                                       size_t text_size, void* user_data);
TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_int32,
                                  ctypes.POINTER(ctypes.c_char), ctypes.c_size_t, ctypes.c_void_p)


class EagerlmError(RuntimeError):
    """A failed call: the status name and eagerlm_last_error()'s message."""


def load_library(path=None):
    lib = ctypes.CDLL(path or os.environ.get("EAGERLM_LIBRARY") or "libeagerlm.so.0")
    c, P = ctypes, ctypes.POINTER
    handle = c.c_void_p
    signatures = {  # name: (result type, argument types), as in include/eagerlm/eagerlm.h
        "eagerlm_version": (c.c_char_p, []),
        "eagerlm_last_error": (c.c_char_p, []),
        "eagerlm_status_name": (c.c_char_p, [c.c_int]),
        "eagerlm_model_load": (c.c_int, [c.c_char_p, c.c_int, P(handle)]),
        "eagerlm_model_free": (None, [handle]),
        "eagerlm_options_create": (c.c_int, [P(handle)]),
        "eagerlm_options_set": (c.c_int, [handle, c.c_char_p, c.c_char_p]),
        "eagerlm_options_free": (None, [handle]),
        "eagerlm_generator_create": (c.c_int, [handle, c.c_size_t, c.c_size_t, P(handle)]),
        "eagerlm_generator_free": (None, [handle]),
        "eagerlm_generate": (c.c_int, [handle, P(c.c_char_p), P(c.c_size_t), c.c_size_t, handle,
                                       TOKEN_CALLBACK, c.c_void_p, P(handle)]),
        "eagerlm_result_text": (c.c_int, [handle, c.c_size_t, c.c_char_p, c.c_size_t, P(c.c_size_t)]),
        "eagerlm_result_free": (None, [handle]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def check(lib, status):
    if status != 0:
        name = lib.eagerlm_status_name(status).decode()
        raise EagerlmError(f"{name}: {lib.eagerlm_last_error().decode(errors='replace')}")


def generate(lib, model_dir, prompt, options, on_text):
    """Loads the model, generates from one prompt, and returns the generated text. on_text gets
    each streamed piece. Every handle is freed whatever happens."""
    model, generator, opts, result = (ctypes.c_void_p() for _ in range(4))
    try:
        check(lib, lib.eagerlm_model_load(model_dir.encode(), 0, ctypes.byref(model)))  # 0: CPU
        check(lib, lib.eagerlm_generator_create(model, 1, 0, ctypes.byref(generator)))
        check(lib, lib.eagerlm_options_create(ctypes.byref(opts)))
        for name, value in options.items():
            check(lib, lib.eagerlm_options_set(opts, name.encode(), str(value).encode()))

        def stream(index, token, text, size, user_data):
            on_text(ctypes.string_at(text, size).decode())  # whole UTF-8 characters only
            return 1  # 0 would stop this prompt

        callback = TOKEN_CALLBACK(stream)  # kept alive until generate returns
        prompts = (ctypes.c_char_p * 1)(prompt.encode())
        sizes = (ctypes.c_size_t * 1)(len(prompt.encode()))
        check(lib, lib.eagerlm_generate(generator, prompts, sizes, 1, opts, callback, None,
                                        ctypes.byref(result)))
        size = ctypes.c_size_t()
        check(lib, lib.eagerlm_result_text(result, 0, None, 0, ctypes.byref(size)))  # size query
        text = ctypes.create_string_buffer(size.value + 1)
        check(lib, lib.eagerlm_result_text(result, 0, text, len(text), ctypes.byref(size)))
        return text.raw[:size.value].decode()
    finally:
        lib.eagerlm_result_free(result)
        lib.eagerlm_options_free(opts)
        lib.eagerlm_generator_free(generator)
        lib.eagerlm_model_free(model)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("prompt", nargs="?", default="Hello, my name is")
    parser.add_argument("--lib", help="path of libeagerlm.so")
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    lib = load_library(args.lib)
    options = {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "seed": args.seed}
    streamed = []

    def on_text(piece):
        if not streamed:
            sys.stdout.write(args.prompt)  # once the model is loaded and generating
        streamed.append(piece)
        sys.stdout.write(piece)
        sys.stdout.flush()

    try:
        text = generate(lib, args.model_dir, args.prompt, options, on_text)
    except EagerlmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(("" if streamed else args.prompt) + "\n")
    # The streamed pieces make up the result's text exactly.
    assert "".join(streamed) == text, (streamed, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
