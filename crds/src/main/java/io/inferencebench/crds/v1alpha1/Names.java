package io.inferencebench.crds.v1alpha1;

/** Patterns and limits for Kubernetes names referenced from a BenchmarkRun. */
public final class Names {

    /** A DNS-1123 subdomain: names of ConfigMaps, Secrets and PersistentVolumeClaims. */
    public static final String DNS_SUBDOMAIN =
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

    /** A DNS-1035 label: names of Services. */
    public static final String DNS_LABEL = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

    /** A key of a ConfigMap or Secret. */
    public static final String CONFIG_MAP_KEY = "^[-._a-zA-Z0-9]+$";

    /**
     * Longest BenchmarkRun name: the runner Job is {@code <run>-runner} and its pods' host names
     * {@code <run>-runner-<index>} must fit a 63-character DNS label for up to 1000 runners.
     */
    public static final int MAX_RUN_NAME_LENGTH = 52;

    private Names() {}
}
