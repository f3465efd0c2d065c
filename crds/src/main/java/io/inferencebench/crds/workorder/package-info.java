/**
 * The contract between the operator and runner pods: the work order the operator writes into the
 * {@code <run>-runner} ConfigMap (key {@value
 * io.inferencebench.crds.workorder.RunnerWorkOrder#KEY}) and the keys of the control ConfigMap.
 */
package io.inferencebench.crds.workorder;
