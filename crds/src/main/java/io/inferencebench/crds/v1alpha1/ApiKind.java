package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The OpenAI-style API requests are sent to. */
public enum ApiKind {
    /** {@code POST /v1/completions} with a text prompt. */
    @JsonProperty("completions")
    COMPLETIONS,
    /** {@code POST /v1/chat/completions} with the prompt as one user message. */
    @JsonProperty("chat")
    CHAT;

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The default request path of this API.
     *
     * @return e.g. {@code /v1/completions}
     */
    public String defaultPath() {
        return this == CHAT ? "/v1/chat/completions" : "/v1/completions";
    }
}
