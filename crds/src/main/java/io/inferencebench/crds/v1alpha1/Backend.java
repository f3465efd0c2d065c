package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The model server family: selects request format defaults and the server-metric catalog. */
public enum Backend {
    @JsonProperty("vllm")
    VLLM,
    @JsonProperty("sglang")
    SGLANG,
    @JsonProperty("tgi")
    TGI,
    @JsonProperty("jetstream")
    JETSTREAM,
    @JsonProperty("triton")
    TRITON,
    /** Any other OpenAI-compatible server; no server-metric catalog beyond user includes. */
    @JsonProperty("openai")
    OPENAI;

    /** The value as written in YAML and in profile dimensions. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
