/**
 * The whole contract between the operator and runner pods, read and written through these types on
 * both sides: the work order the operator writes into the {@code <run>-runner} ConfigMap (key
 * {@value io.inferencebench.crds.workorder.RunnerWorkOrder#KEY}, with {@link
 * io.inferencebench.crds.workorder.TlsOrder}), the keys of the control ConfigMap (stage barriers,
 * {@link io.inferencebench.crds.workorder.RunnerWorkOrder#CANCEL_KEY}), the keys of the part
 * ConfigMaps runner pods write ({@link io.inferencebench.crds.workorder.PartReport}: state, stage
 * results, the discovered model, the cancelled flag) with their live {@link
 * io.inferencebench.crds.workorder.ProgressReport}, and the labels on all of them ({@link
 * io.inferencebench.crds.workorder.PartLabels}).
 */
package io.inferencebench.crds.workorder;
