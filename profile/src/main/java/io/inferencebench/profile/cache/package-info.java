/**
 * The server-side state a stage starts from: resetting the servers' prefix caches, for the command
 * line and the operator alike.
 */
package io.inferencebench.profile.cache;
