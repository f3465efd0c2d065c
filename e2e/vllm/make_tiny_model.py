"""Writes a tiny Llama model directory that `vllm serve DIR --load-format dummy` accepts.

No weights: vLLM fills them with random values (--load-format dummy), so only the shape matters.
The directory holds config.json (LlamaForCausalLM, 2 layers, hidden 128, 2 heads: head_dim 64, one
of the sizes the CPU attention kernels accept - 32, 64, 80, 96, 112, 128, 160, 192, 224, 256 - with
16 the server reports healthy and dies on its first request), tokenizer.json (a byte-level BPE of
1,000 tokens trained here on a fixed corpus, so words split into several tokens as with real
models and a decoded/re-encoded text can change length) and tokenizer_config.json (with a chat
template, which /v1/chat/completions needs).

Run with the vLLM venv's Python (it has `tokenizers`):  python make_tiny_model.py OUT_DIR
"""

import json
import os
import random
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

VOCAB_SIZE = 1000
SPECIALS = ["<unk>", "<s>", "</s>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|> {{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def corpus():
    """A fixed pseudo-English corpus: common words plus words made of syllables (seeded)."""
    common = (
        "the of and to in is was for on that with as by at from this be are it an or which "
        "his have not had but were they has their one all been more when who can there will "
        "would said what so if about out up time into some other than then only its also after "
        "new first two over most could like made people year may back any way many well where "
        "much see our just great good man long day get make world state life model server "
        "token request latency throughput benchmark"
    ).split()
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "str", "an", "er"]
    rng = random.Random(1000)
    made = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    lines = []
    for i in range(2000):
        words = [rng.choice(common) if rng.random() < 0.6 else rng.choice(made) for _ in range(12)]
        lines.append(" ".join(words) + ("." if i % 3 == 0 else ""))
    return lines


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    vocab = tok.get_vocab_size()
    tok.save(os.path.join(out_dir, "tokenizer.json"))

    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": 512,
                "add_bos_token": False,
                "chat_template": CHAT_TEMPLATE,
            },
            f,
            indent=2,
        )
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "vocab_size": vocab,
        "max_position_embeddings": 512,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "bfloat16",
    }
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    ids = tok.encode("the model server kalomi").ids
    assert 0 < len(ids) and all(i < vocab for i in ids), ids
    print(out_dir)


if __name__ == "__main__":
    main(sys.argv[1])
