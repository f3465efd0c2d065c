/** The server-side state a stage starts from: resetting the servers' prefix caches. */
package io.inferencebench.runner.cache;
