package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;

/**
 * What each request contains: prompts, lengths, streaming and sampling. A plain Jackson object with
 * Java defaults: the runner's {@code --config} YAML reads it without Kubernetes.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class WorkloadSpec {

    @JsonPropertyDescription(
            "The prompts; default: random prompts of 1024 input / 128 output tokens.")
    private DatasetSpec dataset = new DatasetSpec();

    @JsonPropertyDescription(
            "Tokenizer for sizing synthetic prompts and counting tokens when the server does not"
                    + " report usage. Without it prompts are sized by an approximation and"
                    + " profiles say which token source was used.")
    private TokenizerSpec tokenizer;

    @JsonPropertyDescription(
            "Stream responses (SSE); required to measure time to first token and inter-token"
                    + " latency.")
    @Default("true")
    private Boolean streaming = Boolean.TRUE;

    @JsonPropertyDescription(
            "Ask the server to ignore end-of-sequence so every request produces exactly its"
                    + " output token count (ignore_eos, an extension vLLM, SGLang, LMDeploy and"
                    + " TensorRT-LLM honour). Unset: true for every backend but openai, whose"
                    + " requests carry only OpenAI API fields (strict servers such as"
                    + " transformers serve refuse others with HTTP 422).")
    private Boolean ignoreEos;

    @JsonPropertyDescription(
            "Several models or LoRA adapters behind one target: each request asks for one, drawn"
                    + " by weight from the run's seed (a conversation's session keeps its model)."
                    + " Profiles carry statistics per model (metrics.by_model). Set it or"
                    + " target.model, not both.")
    @io.fabric8.generator.annotation.Size(max = MAX_MODELS)
    @io.fabric8.generator.annotation.ValidationRule(
            value = "self.all(m, !has(m.weight) || m.weight > 0.0)",
            message = "every weight must be > 0")
    private java.util.List<WeightedModel> models;

    /** The most models a mix may have. */
    public static final int MAX_MODELS = 64;

    @JsonPropertyDescription("Sampling parameters sent with every request.")
    private SamplingSpec sampling = new SamplingSpec();

    @JsonPropertyDescription(
            "The prefix-cache state every stage starts from (e.g. {state: cold}); without it the"
                    + " state is not declared and a stage may find an earlier stage's prompts"
                    + " cached.")
    private PrefixCacheSpec prefixCache;

    public java.util.List<WeightedModel> getModels() {
        return models;
    }

    public void setModels(java.util.List<WeightedModel> models) {
        this.models = models;
    }

    public DatasetSpec getDataset() {
        return dataset;
    }

    public void setDataset(DatasetSpec dataset) {
        this.dataset = dataset;
    }

    public TokenizerSpec getTokenizer() {
        return tokenizer;
    }

    public void setTokenizer(TokenizerSpec tokenizer) {
        this.tokenizer = tokenizer;
    }

    public Boolean getStreaming() {
        return streaming;
    }

    public void setStreaming(Boolean streaming) {
        this.streaming = streaming;
    }

    public Boolean getIgnoreEos() {
        return ignoreEos;
    }

    public void setIgnoreEos(Boolean ignoreEos) {
        this.ignoreEos = ignoreEos;
    }

    public SamplingSpec getSampling() {
        return sampling;
    }

    public void setSampling(SamplingSpec sampling) {
        this.sampling = sampling;
    }

    public PrefixCacheSpec getPrefixCache() {
        return prefixCache;
    }

    public void setPrefixCache(PrefixCacheSpec prefixCache) {
        this.prefixCache = prefixCache;
    }
}
