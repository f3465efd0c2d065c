/**
 * One run's client set up once, whichever road runs it: the command line's {@code run} and {@code
 * search} and a runner pod each open a {@link io.inferencebench.runner.session.RunSession} over the
 * prompts and transport they prepared, and run their stages on its engine.
 */
package io.inferencebench.runner.session;
