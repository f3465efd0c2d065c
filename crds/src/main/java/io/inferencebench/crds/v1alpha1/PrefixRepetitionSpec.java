package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import java.util.Locale;
import java.util.Objects;

/**
 * Synthetic prompts in groups that share a prefix (vLLM's {@code prefix_repetition} dataset,
 * inference-perf's {@code shared_prefix}): each prompt is one of {@code prefixes} shared prefixes
 * followed by its own suffix, so the prefix-cache reuse of a workload is known by construction.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PrefixRepetitionSpec {

    /** Prefix length when not set (as vLLM's bench). */
    public static final int DEFAULT_PREFIX_TOKENS = 256;

    /** Suffix length when not set (as vLLM's bench). */
    public static final int DEFAULT_SUFFIX_TOKENS = 256;

    /** Number of prefixes when not set (as vLLM's bench). */
    public static final int DEFAULT_PREFIXES = 10;

    /** The most prefixes a workload may have. */
    public static final int MAX_PREFIXES = 100_000;

    @JsonPropertyDescription("Tokens of each shared prefix. Default 256.")
    @Default("256")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer prefixTokens = DEFAULT_PREFIX_TOKENS;

    @JsonPropertyDescription(
            "Tokens of each prompt's own suffix after its prefix (a prompt has prefixTokens +"
                    + " suffixTokens tokens). Default 256.")
    @Default("256")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer suffixTokens = DEFAULT_SUFFIX_TOKENS;

    @JsonPropertyDescription(
            "Number of distinct prefixes; prompts are spread evenly over them, in random order."
                    + " Every runner pod uses the same prefixes (drawn from the run's seed)."
                    + " Default 10.")
    @Default("10")
    @Min(1)
    @Max(MAX_PREFIXES)
    private Integer prefixes = DEFAULT_PREFIXES;

    /** A shape with the given figures. */
    public static PrefixRepetitionSpec of(int prefixTokens, int suffixTokens, int prefixes) {
        PrefixRepetitionSpec spec = new PrefixRepetitionSpec();
        spec.setPrefixTokens(prefixTokens);
        spec.setSuffixTokens(suffixTokens);
        spec.setPrefixes(prefixes);
        return spec;
    }

    /** The prefix length, defaulted. */
    public int resolvedPrefixTokens() {
        return prefixTokens != null ? prefixTokens : DEFAULT_PREFIX_TOKENS;
    }

    /** The suffix length, defaulted. */
    public int resolvedSuffixTokens() {
        return suffixTokens != null ? suffixTokens : DEFAULT_SUFFIX_TOKENS;
    }

    /** The number of prefixes, defaulted. */
    public int resolvedPrefixes() {
        return prefixes != null ? prefixes : DEFAULT_PREFIXES;
    }

    /** The shape as profiles name it: {@code prefixes=10 prefix_len=256 suffix_len=256}. */
    public String describe() {
        return String.format(
                Locale.ROOT,
                "prefixes=%d prefix_len=%d suffix_len=%d",
                resolvedPrefixes(),
                resolvedPrefixTokens(),
                resolvedSuffixTokens());
    }

    public Integer getPrefixTokens() {
        return prefixTokens;
    }

    public void setPrefixTokens(Integer prefixTokens) {
        this.prefixTokens = prefixTokens;
    }

    public Integer getSuffixTokens() {
        return suffixTokens;
    }

    public void setSuffixTokens(Integer suffixTokens) {
        this.suffixTokens = suffixTokens;
    }

    public Integer getPrefixes() {
        return prefixes;
    }

    public void setPrefixes(Integer prefixes) {
        this.prefixes = prefixes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PrefixRepetitionSpec that
                && Objects.equals(prefixTokens, that.prefixTokens)
                && Objects.equals(suffixTokens, that.suffixTokens)
                && Objects.equals(prefixes, that.prefixes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(prefixTokens, suffixTokens, prefixes);
    }
}
