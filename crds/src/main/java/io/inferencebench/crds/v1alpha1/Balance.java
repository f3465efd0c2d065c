package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How a run's requests reach the replicas behind a target Service. */
public enum Balance {
    /**
     * Through the Service's address as any client would: its proxy picks a replica per connection,
     * so a low-rate run can measure one or two replicas of several.
     */
    @JsonProperty("service")
    SERVICE,
    /**
     * To the Service's ready endpoints themselves, each request to the next in turn, so every
     * replica gets an even share; the Host header stays the Service's name.
     */
    @JsonProperty("endpoints")
    ENDPOINTS;

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
