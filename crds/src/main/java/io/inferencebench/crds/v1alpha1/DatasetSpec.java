package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** The prompts a run sends. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!(self.type in ['random', 'prefix_repetition']) || !has(self.source)",
        message =
                "source must not be set for type random or prefix_repetition (prompts are"
                        + " synthetic)",
        fieldPath = ".source",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.type in ['random', 'prefix_repetition'] || has(self.source)",
        message = "source is required for type sharegpt, jsonl and trace",
        fieldPath = ".source",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "self.type == 'random' || !has(self.inputTokens)",
        message =
                "inputTokens applies only to type random; filter dataset prompts with"
                        + " minInputTokens/maxInputTokens, size prefix_repetition prompts with"
                        + " prefixRepetition",
        fieldPath = ".inputTokens",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.type == 'prefix_repetition' || !has(self.prefixRepetition)",
        message = "prefixRepetition applies only to type prefix_repetition",
        fieldPath = ".prefixRepetition",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.type in ['random', 'sharegpt'] || !has(self.conversation)",
        message =
                "conversation applies only to type random (synthetic sessions) or sharegpt"
                        + " (recorded conversations)",
        fieldPath = ".conversation",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.type == 'trace' || !has(self.trace)",
        message = "trace applies only to type trace",
        fieldPath = ".trace",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "self.type != 'trace' || !(has(self.outputTokens) || has(self.minInputTokens)"
                        + " || has(self.maxInputTokens) || has(self.minOutputTokens)"
                        + " || has(self.maxOutputTokens))",
        message =
                "a trace's requests keep their recorded lengths: outputTokens and the length"
                        + " filters do not apply to type trace",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "!has(self.minInputTokens) || !has(self.maxInputTokens)"
                        + " || self.minInputTokens <= self.maxInputTokens",
        message = "minInputTokens must not be greater than maxInputTokens",
        fieldPath = ".minInputTokens")
@ValidationRule(
        value =
                "!has(self.minOutputTokens) || !has(self.maxOutputTokens)"
                        + " || self.minOutputTokens <= self.maxOutputTokens",
        message = "minOutputTokens must not be greater than maxOutputTokens",
        fieldPath = ".minOutputTokens")
public class DatasetSpec {

    /** Input length of random prompts when {@code inputTokens} is not set (as vLLM's bench). */
    public static final int DEFAULT_INPUT_TOKENS = 1024;

    /** Output length of random prompts when {@code outputTokens} is not set (as vLLM's bench). */
    public static final int DEFAULT_OUTPUT_TOKENS = 128;

    @JsonPropertyDescription(
            "random (synthetic prompts of inputTokens length), prefix_repetition (synthetic"
                    + " prompts in groups sharing a prefix, see prefixRepetition), sharegpt"
                    + " (ShareGPT JSON: conversations, first human turn is the prompt, first reply"
                    + " gives the output length), jsonl (JSON Lines, one object per prompt) or trace"
                    + " (a request trace replayed on its own clock, see trace).")
    @Default("random")
    private DatasetType type = DatasetType.RANDOM;

    @JsonPropertyDescription(
            "Where the dataset file is read from; required for type sharegpt, jsonl and trace.")
    private DatasetSource source;

    @JsonPropertyDescription(
            "Prompt length distribution for type random. Default: fixed 1024 tokens.")
    private TokenDistribution inputTokens;

    @JsonPropertyDescription(
            "For type prefix_repetition: the shared prefixes and each prompt's own suffix."
                    + " Default: 10 prefixes of 256 tokens, suffixes of 256 tokens.")
    private PrefixRepetitionSpec prefixRepetition;

    @JsonPropertyDescription(
            "For type trace: the file's layout, the part of its clock replayed, how fast, and the"
                    + " tokens of a hash id's block. Each recorded request is sent at its recorded"
                    + " offset (times timeScale) with a prompt of its recorded input length (shared"
                    + " blocks where hash_ids are given) asking for its recorded output length.")
    private TraceSpec trace;

    @JsonPropertyDescription(
            "For type random or sharegpt: send the prompts as conversations, sessions of turns"
                    + " whose requests carry the whole history (chat API) with a think time"
                    + " between a reply and the next turn. random: each turn's question has"
                    + " inputTokens, each turn asks for outputTokens, and the history carries a"
                    + " reply of that length. sharegpt: the first turns of each conversation"
                    + " with at least that many, the recorded replies in the history, each turn"
                    + " asking for its recorded reply's length. The load's concurrency is then"
                    + " the sessions in progress at once and numPrompts the sessions of a stage.")
    private ConversationSpec conversation;

    @JsonPropertyDescription(
            "Output length distribution (sent as max_tokens; with ignoreEos the server generates"
                    + " exactly this many). For sharegpt and jsonl it overrides the dataset's"
                    + " reference output length. Default for random and prefix_repetition: fixed"
                    + " 128 tokens.")
    private TokenDistribution outputTokens;

    @JsonPropertyDescription("Drop dataset prompts shorter than this many tokens.")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer minInputTokens;

    @JsonPropertyDescription("Drop dataset prompts longer than this many tokens.")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer maxInputTokens;

    @JsonPropertyDescription("Drop dataset entries whose reference output is shorter than this.")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer minOutputTokens;

    @JsonPropertyDescription("Drop dataset entries whose reference output is longer than this.")
    @Min(1)
    @Max(TokenDistribution.MAX_TOKENS)
    private Integer maxOutputTokens;

    @JsonPropertyDescription(
            "Seed for prompt generation, sampling order and arrival times; the same seed gives"
                    + " the same requests in the same order. Runner pod i uses seed + i.")
    @Default("0")
    @Min(0)
    private Long seed = 0L;

    @JsonPropertyDescription("For jsonl: the field holding the prompt text.")
    @Default("prompt")
    @Size(min = 1, max = 128)
    @Pattern("^[A-Za-z0-9_.-]+$")
    private String promptField = "prompt";

    @JsonPropertyDescription(
            "For jsonl: an optional integer field holding the desired output length of each"
                    + " prompt.")
    @Size(min = 1, max = 128)
    @Pattern("^[A-Za-z0-9_.-]+$")
    private String outputTokensField;

    /**
     * The prompt length distribution to use, falling back to the documented default.
     *
     * @return never {@code null}
     */
    @JsonIgnore
    public TokenDistribution resolvedInputTokens() {
        return inputTokens != null ? inputTokens : TokenDistribution.fixed(DEFAULT_INPUT_TOKENS);
    }

    /**
     * The output length distribution for random prompts, falling back to the documented default.
     *
     * @return never {@code null}
     */
    @JsonIgnore
    public TokenDistribution resolvedOutputTokens() {
        return outputTokens != null ? outputTokens : TokenDistribution.fixed(DEFAULT_OUTPUT_TOKENS);
    }

    /**
     * The shared-prefix shape of a prefix_repetition dataset, falling back to the documented
     * default.
     *
     * @return never {@code null}
     */
    @JsonIgnore
    public PrefixRepetitionSpec resolvedPrefixRepetition() {
        return prefixRepetition != null ? prefixRepetition : new PrefixRepetitionSpec();
    }

    public ConversationSpec getConversation() {
        return conversation;
    }

    public void setConversation(ConversationSpec conversation) {
        this.conversation = conversation;
    }

    public TraceSpec getTrace() {
        return trace;
    }

    public void setTrace(TraceSpec trace) {
        this.trace = trace;
    }

    /**
     * The replay of a trace dataset, falling back to the documented defaults.
     *
     * @return never {@code null}
     */
    @JsonIgnore
    public TraceSpec resolvedTrace() {
        return trace != null ? trace : new TraceSpec();
    }

    public PrefixRepetitionSpec getPrefixRepetition() {
        return prefixRepetition;
    }

    public void setPrefixRepetition(PrefixRepetitionSpec prefixRepetition) {
        this.prefixRepetition = prefixRepetition;
    }

    public DatasetType getType() {
        return type;
    }

    public void setType(DatasetType type) {
        this.type = type;
    }

    public DatasetSource getSource() {
        return source;
    }

    public void setSource(DatasetSource source) {
        this.source = source;
    }

    public TokenDistribution getInputTokens() {
        return inputTokens;
    }

    public void setInputTokens(TokenDistribution inputTokens) {
        this.inputTokens = inputTokens;
    }

    public TokenDistribution getOutputTokens() {
        return outputTokens;
    }

    public void setOutputTokens(TokenDistribution outputTokens) {
        this.outputTokens = outputTokens;
    }

    public Integer getMinInputTokens() {
        return minInputTokens;
    }

    public void setMinInputTokens(Integer minInputTokens) {
        this.minInputTokens = minInputTokens;
    }

    public Integer getMaxInputTokens() {
        return maxInputTokens;
    }

    public void setMaxInputTokens(Integer maxInputTokens) {
        this.maxInputTokens = maxInputTokens;
    }

    public Integer getMinOutputTokens() {
        return minOutputTokens;
    }

    public void setMinOutputTokens(Integer minOutputTokens) {
        this.minOutputTokens = minOutputTokens;
    }

    public Integer getMaxOutputTokens() {
        return maxOutputTokens;
    }

    public void setMaxOutputTokens(Integer maxOutputTokens) {
        this.maxOutputTokens = maxOutputTokens;
    }

    public Long getSeed() {
        return seed;
    }

    public void setSeed(Long seed) {
        this.seed = seed;
    }

    public String getPromptField() {
        return promptField;
    }

    public void setPromptField(String promptField) {
        this.promptField = promptField;
    }

    public String getOutputTokensField() {
        return outputTokensField;
    }

    public void setOutputTokensField(String outputTokensField) {
        this.outputTokensField = outputTokensField;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DatasetSpec that
                && type == that.type
                && Objects.equals(source, that.source)
                && Objects.equals(inputTokens, that.inputTokens)
                && Objects.equals(prefixRepetition, that.prefixRepetition)
                && Objects.equals(trace, that.trace)
                && Objects.equals(conversation, that.conversation)
                && Objects.equals(outputTokens, that.outputTokens)
                && Objects.equals(minInputTokens, that.minInputTokens)
                && Objects.equals(maxInputTokens, that.maxInputTokens)
                && Objects.equals(minOutputTokens, that.minOutputTokens)
                && Objects.equals(maxOutputTokens, that.maxOutputTokens)
                && Objects.equals(seed, that.seed)
                && Objects.equals(promptField, that.promptField)
                && Objects.equals(outputTokensField, that.outputTokensField);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                type,
                source,
                inputTokens,
                prefixRepetition,
                trace,
                conversation,
                outputTokens,
                minInputTokens,
                maxInputTokens,
                minOutputTokens,
                maxOutputTokens,
                seed,
                promptField,
                outputTokensField);
    }
}
