"""Builds the small byte-level BPE tokenizer.json used by the runner's tests.

Run: python3 make_tokenizer.py  (needs the `tokenizers` package). The output is committed so tests
never need Python or a model hub; rerunning gives the same file.
"""
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

WORDS = (
    "the of and to in is was for on that with as by at from this be are it an or which his "
    "have not had but were they has their one all been more when who can there will would "
    "model server token latency request throughput benchmark stream prompt output input rate "
    "time first second inference generate text answer question language large small fast slow"
).split()


def corpus():
    for i in range(4000):
        yield " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(12)) + "."


tokenizer = Tokenizer(models.BPE(unk_token=None))
tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tokenizer.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(
    vocab_size=600,
    min_frequency=1,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    show_progress=False,
)
tokenizer.train_from_iterator(corpus(), trainer=trainer)
tokenizer.save("tokenizer.json")
print("vocab", tokenizer.get_vocab_size(), "example", tokenizer.encode("the model server is fast").tokens)
