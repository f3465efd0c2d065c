package io.inferencebench.runner.dataset;

/** Counts tokens of generated text when the server reports no usage. */
public interface TokenCounter {
    int count(String text);

    /** A name for profiles, e.g. the tokenizer file. */
    String id();
}
