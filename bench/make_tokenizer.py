"""Writes a small word-level Hugging Face tokenizer into a directory.

The peers need a tokenizer to build random/synthetic prompts and to count tokens; none may be
fetched from a model hub here, so the harness makes one locally. One whitespace-separated word is
one token, matching the simulator's own tokenizer, so every tool and the server count alike.
Run with a Python that has `transformers` and `tokenizers` (any peer venv has them):
    python make_tokenizer.py OUT_DIR
"""

import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast


def main(out_dir: str) -> None:
    # Unknown words map to the ordinary word "x" (not a special token), so text built from any
    # corpus decodes to words again instead of vanishing with skip_special_tokens. Random-token
    # datasets draw ids from the whole vocabulary, so every id decodes to one word.
    specials = ["[PAD]", "[BOS]", "[EOS]"]
    words = ["x"] + specials + [f"w{i}" for i in range(5000)]
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="x"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with single spaces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        bos_token="[BOS]",
        eos_token="[EOS]",
        model_max_length=1_000_000,
    )
    fast.save_pretrained(out_dir)
    # transformers 5 writes its own backend class name; the generic fast-tokenizer class loads in
    # every transformers version the peers pin.
    config_path = os.path.join(out_dir, "tokenizer_config.json")
    with open(config_path) as f:
        config = json.load(f)
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config.pop("backend", None)
    with open(config_path, "w") as f:
        json.dump(config, f, indent=2)
    ids = fast("w1 w2 unknown", add_special_tokens=False)["input_ids"]
    text = fast.decode(ids, skip_special_tokens=True)
    assert len(ids) == 3 and text == "w1 w2 x", (ids, text)
    print(out_dir)


if __name__ == "__main__":
    main(sys.argv[1])
