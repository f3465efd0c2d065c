/**
 * The {@code inferencebench.io/v1alpha1} API: the {@link
 * io.inferencebench.crds.v1alpha1.BenchmarkRun} custom resource, its spec and status.
 *
 * <p>The CRD YAML is generated from these classes at build time; every field carries a description
 * (shown by {@code kubectl explain}), OpenAPI limits and, where a rule spans fields, a CEL {@code
 * x-kubernetes-validations} rule. {@link io.inferencebench.crds.v1alpha1.WorkloadSpec} and {@link
 * io.inferencebench.crds.v1alpha1.LoadSpec} are plain Jackson objects with Java defaults, so the
 * runner's command line can read them from YAML without Kubernetes.
 */
package io.inferencebench.crds.v1alpha1;
