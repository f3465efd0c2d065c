package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/**
 * The prefix-cache state every stage starts from, declared so that two runs are comparable: a
 * server's cache holding an earlier stage's prompts makes a stage's TTFT a measure of the cache.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PrefixCacheSpec {

    /** The states a stage may be declared to start from. */
    public enum State {
        /**
         * Empty: before every stage the prefix cache of every ready endpoint is reset (vLLM POST
         * /reset_prefix_cache, SGLang POST /flush_cache).
         */
        @JsonProperty("cold")
        COLD,
        /**
         * Holding the workload's shared prefixes: after the reset each one is sent alone to every
         * ready endpoint before the stage starts (prefix_repetition prompts only).
         */
        @JsonProperty("warm")
        WARM;

        /** The value as written in YAML. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    @JsonPropertyDescription(
            "cold: before every stage the prefix cache of every ready endpoint behind the target"
                    + " is emptied (vLLM POST /reset_prefix_cache, which vLLM serves when started"
                    + " with VLLM_SERVER_DEV_MODE=1; SGLang POST /flush_cache). A stage whose"
                    + " endpoints were not all reset says so: status.results[].prefixCacheState"
                    + " undeclared, with prefixCacheMessage naming them. warm: after that reset"
                    + " each shared prefix of the workload (dataset type prefix_repetition) is"
                    + " sent alone, asking for one token, to every ready endpoint before the"
                    + " stage starts, so each of its requests finds its prefix cached whichever"
                    + " replica serves it.")
    @Required
    private State state;

    @JsonPropertyDescription(
            "Whether every ready endpoint's prefix cache is emptied before each stage (default"
                    + " true). false only with state warm: the prefixes are then sent on top of"
                    + " what the caches hold (an earlier stage's prompts too), so a stage may find"
                    + " more cached than the workload implies; a cold state needs the reset.")
    private Boolean reset;

    /** A spec with the given state. */
    public static PrefixCacheSpec of(State state) {
        PrefixCacheSpec spec = new PrefixCacheSpec();
        spec.setState(state);
        return spec;
    }

    public State getState() {
        return state;
    }

    public void setState(State state) {
        this.state = state;
    }

    /** Whether the caches are emptied before each stage: {@link #getReset()}, true when unset. */
    public boolean resetsBeforeStage() {
        return reset == null || reset;
    }

    public Boolean getReset() {
        return reset;
    }

    public void setReset(Boolean reset) {
        this.reset = reset;
    }
}
