"""Writes a tiny random-weight Llama that `transformers serve DIR` loads without any download.

Run with the transformers venv's Python:  python make_tiny_model.py OUT_DIR

- config.json + model.safetensors: LlamaForCausalLM, 2 layers, hidden 256, 4 heads (head_dim 64),
  random weights from a fixed seed (~1.3 M parameters: loads in a second, a forward pass on a
  small CPU takes milliseconds).
- tokenizer.json + tokenizer_config.json: a byte-level BPE of 1,000 tokens trained here on a fixed
  pseudo-English corpus (words split into several tokens, as with real models), with a chat
  template, so that /v1/chat/completions works as well as /v1/completions.
- generation_config.json without an end-of-sequence token: the server refuses `ignore_eos` (a field
  outside OpenAI's API), so this is what makes every answer exactly `max_tokens` long - random
  weights would otherwise stop at a random `</s>`.
- The output rows of the tokens that decode to no text of their own (the three special tokens, which
  the server skips, and the 128 lone bytes 0x80-0xFF of the byte-level alphabet, which its stream
  decoder holds back as incomplete UTF-8) are zero, so greedy decoding (temperature 0, the runner's
  default) never picks one: with random weights 13 % of the tokens were such, and one prompt in 70
  got an answer of 16 tokens and no text at all, which a client rightly counts as an empty response.
  Every generated token now arrives as text.
"""

import json
import os
import random
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

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


def tokenizer():
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
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=2048,
        chat_template=CHAT_TEMPLATE,
    )


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    tok = tokenizer()
    tok.save_pretrained(out_dir)
    vocab = len(tok)

    torch.manual_seed(7)
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=64,
        max_position_embeddings=2048,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=None,
        pad_token_id=None,
    )
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(bos_token_id=1)
    backend = tok.backend_tokenizer
    texts = [backend.decode([i], skip_special_tokens=True) for i in range(vocab)]
    textless = [i for i, text in enumerate(texts) if text == "" or "\ufffd" in text]
    assert 0 < len(textless) < vocab // 4, len(textless)
    with torch.no_grad():
        # A zero row gives logit 0 whatever the hidden state; some of the other ~870 random rows
        # always score above 0, so the argmax is never one of these.
        model.lm_head.weight[textless] = 0.0
    rng = random.Random(3)
    for _ in range(8):
        prompt = [rng.randrange(len(SPECIALS), vocab) for _ in range(32)]
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=24, do_sample=False, pad_token_id=0
        )[0][len(prompt) :].tolist()
        assert len(out) == 24 and not set(out) & set(textless), out
    model.save_pretrained(out_dir, safe_serialization=True)

    # What the server reads must be what was meant: no end-of-sequence token anywhere it looks.
    with open(os.path.join(out_dir, "generation_config.json")) as f:
        generation = json.load(f)
    assert generation.get("eos_token_id") is None, generation
    ids = tok("the model server kalomi")["input_ids"]
    assert 0 < len(ids) and all(i < vocab for i in ids), ids
    chat = tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert len(chat) > 0, chat
    print(out_dir)


if __name__ == "__main__":
    main(sys.argv[1])
