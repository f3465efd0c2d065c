package io.inferencebench.profile.compare;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An LPG profile document (one stage) with a label for messages, e.g. its file name.
 *
 * @param label the label, or {@code null}
 * @param document the LPG document ({@code metrics}, {@code dimensions}, ...)
 */
public record LabeledProfile(String label, JsonNode document) {}
