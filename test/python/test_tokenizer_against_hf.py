"""eagerlm's GPT-2 tokenizer (`eagerlm tokenize` / `detokenize`) against Hugging Face `tokenizers`
built as a ByteLevel BPE from the same vocabulary files (engine/tokenizer/data/encoder.json and
vocab.bpe, which are the vocab.json and merges.txt of Hugging Face's GPT-2):

* the shared reference cases (../shared/data/gpt2-tokenizer/cases.jsonl): eagerlm, Hugging Face
  and the cases' own ids (from a third, independent encoder) all agree;
* generated text: seeded random mixes of words, numbers, contractions, punctuation, runs of
  whitespace and newlines, accents, CJK, emoji and combining marks, and the text that decoding
  random token ids gives: identical ids both ways, and decoding round-trips;
* decoding random id sequences (which split UTF-8 characters, as random-weight models do):
  the same text, invalid bytes replaced by U+FFFD the same way.
"""

import json
import random

import pytest
from conftest import REPO, SHARED, eagerlm_binary, missing, run_checked

tokenizers = pytest.importorskip("tokenizers")

EAGERLM = eagerlm_binary()
DATA = REPO / "engine" / "tokenizer" / "data"
N_GENERATED = 150
N_RANDOM_IDS = 60


@pytest.fixture(scope="module")
def hf():
    bpe = tokenizers.models.BPE.from_file(str(DATA / "encoder.json"), str(DATA / "vocab.bpe"))
    tok = tokenizers.Tokenizer(bpe)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = tokenizers.decoders.ByteLevel()
    assert tok.get_vocab_size() == 50257
    return tok


def eagerlm_encode(text):
    result = run_checked([EAGERLM, "tokenize", "--json"], input=text.encode("utf-8"))
    return json.loads(result.stdout)


def eagerlm_decode(ids):
    return run_checked([EAGERLM, "detokenize"], input=json.dumps(ids).encode()).stdout.decode("utf-8")


def hf_encode(hf, text):
    return hf.encode(text, add_special_tokens=False).ids


def hf_decode(hf, ids):
    return hf.decode(ids, skip_special_tokens=False)


PIECES = [
    "the", "The", " quick", "brown", "fox", "naïve", "café", "Ünïcödé", "straße", "日本語", "中文", "한국어",
    "Привет", "مرحبا", "שלום", "हिन्दी", "😀", "👍🏽", "🇫🇷", "e\u0301", "\u200b", "ﬁ", "𝔘𝔫𝔦",
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "don't", "it's",
    "0", "7", "42", "1234567", "3.14159", "1e-5", "0x1F", "100%", "$5",
    "!", "?", "...", "--", "(", ")", "[]", "{}", "<|endoftext|>", "<|", "|>", "#", "@user", "a_b", "snake_case",
    "def f(x):", "return x + 1;", "std::vector<int>", "// comment", "/* c */", "http://example.com/a?b=c",
]
SPACES = [" ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\r\n", "\u00a0", "\u3000", "", ""]


def generated_texts():
    rng = random.Random(20240611)
    texts = []
    for _ in range(N_GENERATED):
        parts = []
        for _ in range(rng.randint(1, 40)):
            parts.append(rng.choice(PIECES))
            parts.append(rng.choice(SPACES))
        if rng.random() < 0.2:  # random code points, surrogates excluded
            ranges = [(0x20, 0x7E), (0xA0, 0xD7FF), (0xE000, 0x10FFFF)]
            parts += [chr(rng.randint(*rng.choice(ranges))) for _ in range(rng.randint(1, 12))]
        texts.append("".join(parts))
    return texts


def random_id_sequences():
    rng = random.Random(99)
    return [[rng.randrange(50257) for _ in range(rng.randint(1, 30))] for _ in range(N_RANDOM_IDS)]


def shared_cases():
    path = SHARED / "data" / "gpt2-tokenizer" / "cases.jsonl"
    if not path.is_file():
        missing(f"{path} is missing (set EAGERLM_SHARED_DIR)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_shared_cases(hf):
    cases = shared_cases()
    assert len(cases) >= 100
    for i, case in enumerate(cases):
        theirs = hf_encode(hf, case["text"])
        assert theirs == case["ids"], f"case {i}: Hugging Face disagrees with the reference ids"
        assert eagerlm_encode(case["text"]) == theirs, f"case {i}: eagerlm disagrees with Hugging Face"
        assert hf_decode(hf, theirs) == case["text"]


def test_generated_text(hf):
    mismatches = []
    for text in generated_texts():
        ours, theirs = eagerlm_encode(text), hf_encode(hf, text)
        if ours != theirs:
            mismatches.append((text, ours, theirs))
        assert hf_decode(hf, theirs) == text
    assert not mismatches, f"{len(mismatches)} texts differ, first: {mismatches[0]!r}"


def test_decoding_random_ids(hf):
    for ids in random_id_sequences():
        text = hf_decode(hf, ids)
        assert eagerlm_decode(ids) == text, f"ids {ids}"
        # And the decoded text (U+FFFD included) encodes the same way in both.
        assert eagerlm_encode(text) == hf_encode(hf, text), f"text of ids {ids}"
