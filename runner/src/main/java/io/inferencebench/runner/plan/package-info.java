/**
 * From what the user asked (a BenchmarkRun spec, or the CLI's flags laid over its sections) to what
 * the engine runs, in one place for both roads: the command line ({@code cli}) and the in-pod mode
 * ({@code pod}) call the same rules, so the same spec means the same requests. Started with the
 * points where the two roads had drifted: the wire protocol of a backend, the model discovery and
 * the defaults of the spec.
 */
package io.inferencebench.runner.plan;
