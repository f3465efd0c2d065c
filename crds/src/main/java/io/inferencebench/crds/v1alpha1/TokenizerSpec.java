package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * A Hugging Face {@code tokenizer.json} used to size synthetic prompts and to count output tokens
 * when the server does not report usage.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TokenizerSpec {

    /** Key read when {@code configMapRef.key} is not set. */
    public static final String DEFAULT_KEY = "tokenizer.json";

    @JsonPropertyDescription(
            "ConfigMap key holding tokenizer.json (binaryData or data); key defaults to"
                    + " tokenizer.json.")
    @Required
    private ConfigMapKeyRef configMapRef;

    @JsonPropertyDescription(
            "Name recorded as tokenizer_id in the profiles, e.g. the model repository id. Defaults"
                    + " to the model name.")
    @Size(min = 1, max = 256)
    private String id;

    public ConfigMapKeyRef getConfigMapRef() {
        return configMapRef;
    }

    public void setConfigMapRef(ConfigMapKeyRef configMapRef) {
        this.configMapRef = configMapRef;
    }

    public String getId() {
        return id;
    }

    public void setId(String id) {
        this.id = id;
    }
}
