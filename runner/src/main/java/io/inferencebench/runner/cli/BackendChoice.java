package io.inferencebench.runner.cli;

import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.plan.WireProtocol;

/** Maps vLLM-style --backend/--api/--endpoint choices to a wire protocol ({@link WireProtocol}). */
record BackendChoice(String backend, Protocol protocol, String path) {

    static BackendChoice resolve(
            String backendFlag, String apiFlag, String endpoint, boolean stream) {
        try {
            WireProtocol wire =
                    WireProtocol.resolve(
                            backendFlag,
                            apiFlag,
                            endpoint,
                            stream,
                            new WireProtocol.Fields("--backend", "--api", "--endpoint"));
            return new BackendChoice(wire.backend(), wire.protocol(), wire.path());
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
    }
}
