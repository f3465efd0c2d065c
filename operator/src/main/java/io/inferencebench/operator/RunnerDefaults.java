package io.inferencebench.operator;

import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Operator-wide defaults for runner pods, from {@code inferencebench.runner.*} configuration.
 *
 * @param image runner image when the run does not name one
 * @param imagePullPolicy pull policy when the run does not name one
 */
public record RunnerDefaults(String image, String imagePullPolicy) {

    /** Reads the defaults from the application configuration. */
    public static RunnerDefaults fromConfig() {
        var config = ConfigProvider.getConfig();
        return new RunnerDefaults(
                config.getValue("inferencebench.runner.image", String.class),
                config.getOptionalValue("inferencebench.runner.image-pull-policy", String.class)
                        .orElse("IfNotPresent"));
    }
}
