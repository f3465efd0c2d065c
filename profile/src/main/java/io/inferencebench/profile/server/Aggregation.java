package io.inferencebench.profile.server;

/** How the values of several replicas (or series) combine into one. */
public enum Aggregation {
    /** Add up: counts such as running or waiting requests, counters, histogram buckets. */
    SUM,
    /** Average: fractions and utilisations such as KV-cache usage. */
    MEAN
}
