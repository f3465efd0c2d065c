package io.inferencebench.runner.cli;

import io.inferencebench.crds.v1alpha1.HeaderValidation;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.v1alpha1.TlsSpec;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.http.Spread;
import io.inferencebench.runner.http.TlsOptions;
import io.inferencebench.runner.plan.PlanTarget;
import io.inferencebench.runner.plan.WireProtocol;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The target flags ({@code --base-url}, {@code --backend}, TLS, headers, …), a picocli mixin: any
 * command that talks to a model server can take them with {@code @Mixin TargetOptions target}. They
 * are laid over the {@code target} section of a {@code --config} file, flags winning.
 */
public final class TargetOptions {

    /** Base URL without {@code --base-url} and without {@code target.url}. */
    public static final String DEFAULT_BASE_URL = "http://127.0.0.1:8000";

    @Option(
            names = "--base-url",
            description = "Server base URL (default " + DEFAULT_BASE_URL + ").")
    String baseUrl;

    @Option(
            names = "--endpoint",
            description =
                    "Request path; default from the API (/v1/completions, /v1/chat/completions, /generate_stream).")
    String endpoint;

    @Option(
            names = "--backend",
            description =
                    "vllm, sglang, tgi, jetstream, triton, openai, openai-chat, lmdeploy, trtllm"
                            + " (default vllm). openai sends only OpenAI API fields (for strict"
                            + " servers); the others add ignore_eos unless --ignore-eos false.")
    String backend;

    @Option(
            names = "--api",
            description =
                    "completions, chat or generate (TGI native); default from backend/endpoint.")
    String api;

    @Option(
            names = "--model",
            description = "Model name sent in requests; discovered from /v1/models when empty.")
    String model;

    @Option(
            names = "--tokenizer",
            description =
                    "Path to a tokenizer.json (or its directory): exact prompt lengths and output counts when the server reports no usage.")
    Path tokenizer;

    @Option(names = "--header", description = "Extra request header K=V (repeatable).")
    List<String> headers = new ArrayList<>();

    @Option(
            names = "--api-key-file",
            description = "File holding an API key, sent as 'Authorization: Bearer'.")
    Path apiKeyFile;

    @Option(
            names = "--ca-cert",
            description =
                    "PEM file of the CA certificates an https target's certificate must chain to"
                            + " (instead of the JVM's trust store).")
    Path caCert;

    @Option(
            names = "--insecure-skip-tls-verify",
            description =
                    "Do not check an https target's certificate or host name (insecure: the API"
                            + " key can be read by whoever answers).")
    boolean insecureSkipTlsVerify;

    @Option(
            names = "--tls-server-name",
            description =
                    "Name the https target's certificate must carry (and sent as SNI), when it"
                            + " differs from the --base-url host.")
    String tlsServerName;

    @Option(
            names = "--balance",
            description =
                    "url (default): connect to the --base-url host as given; addresses: resolve"
                            + " it and send each request to the next of its addresses in turn"
                            + " (e.g. a headless Service's pods), resolving it again every 5 s"
                            + " during the run to follow addresses that join or leave.")
    String balance;

    @Option(
            names = "--connect-to",
            split = ",",
            paramLabel = "ADDRESS",
            description =
                    "Send the requests to these addresses (IP or host, optional :port, default"
                            + " the --base-url port), each request to the next in turn; the Host"
                            + " header, TLS name and path stay the --base-url's.")
    List<String> connectTo = new ArrayList<>();

    @Option(
            names = "--requests-per-connection",
            paramLabel = "N",
            description =
                    "Close a connection after N requests and reuse idle connections oldest"
                            + " first, so a balancer that picks a backend per connection (a"
                            + " Service's kube-proxy) picks often (default: no bound).")
    Integer requestsPerConnection;

    /**
     * Where the connections go ({@code --balance}, {@code --connect-to}) and how long each is kept
     * ({@code --requests-per-connection}).
     *
     * @throws Main.UsageError naming the flag, for a bad value or an address that does not resolve
     */
    public Spread spread(String baseUrlInUse) {
        if (balance != null && !balance.equals("url") && !balance.equals("addresses")) {
            throw new Main.UsageError(
                    "--balance: expected url or addresses, got " + TerminalText.oneLine(balance));
        }
        if ("addresses".equals(balance) && !connectTo.isEmpty()) {
            throw new Main.UsageError(
                    "--balance addresses resolves the --base-url host; --connect-to names the"
                            + " addresses instead: give one of them");
        }
        int bound = 0;
        if (requestsPerConnection != null) {
            if (requestsPerConnection < 1) {
                throw new Main.UsageError(
                        "--requests-per-connection: must be at least 1, got "
                                + requestsPerConnection);
            }
            bound = requestsPerConnection;
        }
        URI uri = URI.create(baseUrlInUse);
        int port = port(uri);
        List<InetSocketAddress> addresses = new ArrayList<>();
        if ("addresses".equals(balance)) {
            addresses.addAll(resolveAll("--balance addresses", uri.getHost(), port));
        }
        for (String entry : connectTo) {
            addresses.addAll(connectAddress(entry.strip(), port));
        }
        return new Spread(addresses, bound);
    }

    /** The URL's port, or its scheme's default. */
    static int port(URI uri) {
        return uri.getPort() > 0
                ? uri.getPort()
                : ("https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80);
    }

    /**
     * Whether the addresses come from resolving the {@code --base-url} host ({@code --balance
     * addresses}), which is then resolved again during the run.
     */
    boolean followsHost() {
        return "addresses".equals(balance);
    }

    private static List<InetSocketAddress> connectAddress(String entry, int defaultPort) {
        if (entry.isEmpty()) {
            throw new Main.UsageError("--connect-to: an empty address");
        }
        String host = entry;
        int port = defaultPort;
        int colon = entry.lastIndexOf(':');
        boolean bracketed = entry.startsWith("[");
        if (bracketed) {
            int close = entry.indexOf(']');
            if (close < 0) {
                throw new Main.UsageError(
                        "--connect-to: " + TerminalText.oneLine(entry) + ": no closing ]");
            }
            host = entry.substring(1, close);
            colon = close + 1 < entry.length() && entry.charAt(close + 1) == ':' ? close + 1 : -1;
        } else if (colon >= 0 && entry.indexOf(':') != colon) {
            // an IPv6 literal without brackets: no port
            colon = -1;
        } else if (colon >= 0) {
            host = entry.substring(0, colon);
        }
        if (colon >= 0) {
            try {
                port = Integer.parseInt(entry.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new Main.UsageError(
                        "--connect-to: " + TerminalText.oneLine(entry) + ": bad port");
            }
        }
        return resolveAll("--connect-to", host, port);
    }

    private static List<InetSocketAddress> resolveAll(String flag, String host, int port) {
        try {
            List<InetSocketAddress> out = new ArrayList<>();
            for (InetAddress address : InetAddress.getAllByName(host)) {
                out.add(new InetSocketAddress(address, port));
            }
            return out;
        } catch (UnknownHostException e) {
            throw new Main.UsageError(
                    flag + ": " + TerminalText.oneLine(host) + " does not resolve to an address");
        }
    }

    /**
     * The base URL: {@code --base-url}, else the config's {@code target.url}, else {@value
     * #DEFAULT_BASE_URL}; a config's {@code target.service} is resolved in a cluster only.
     */
    public String baseUrl(TargetSpec config, PrintWriter err) {
        if (baseUrl != null) {
            BaseUrl.check("--base-url", baseUrl);
            return baseUrl;
        }
        if (config != null && config.getUrl() != null) {
            BaseUrl.check("--config target.url", config.getUrl());
            return config.getUrl();
        }
        if (config != null && config.getService() != null) {
            err.println(
                    "note: --config target.service names a Service, which only the operator"
                            + " resolves; sending to "
                            + DEFAULT_BASE_URL
                            + " (give --base-url)");
        }
        return DEFAULT_BASE_URL;
    }

    /**
     * The flags laid over the config's target section: backend, API, path, model, headers (per
     * name, flags winning) and certificate checks.
     *
     * @param baseUrlInUse the base URL (TLS flags apply to https only)
     */
    public PlanTarget layOver(TargetSpec config, String baseUrlInUse, PrintWriter err) {
        URI target = BaseUrl.check("--base-url", baseUrlInUse);
        TargetSpec c = config == null ? new TargetSpec() : config;
        String backendName = backend;
        String apiName = api;
        if (backendName == null && config != null && c.getBackend() != null) {
            backendName = c.getBackend().wireName();
        }
        // The config's API is a choice for the config's backend; another --backend derives its own.
        if (apiName == null && backend == null && config != null && c.getApi() != null) {
            apiName = c.getApi().wireName();
        }
        Map<String, String> merged = new LinkedHashMap<>();
        if (c.getHeaders() != null) {
            merged.putAll(c.getHeaders());
        }
        merged.putAll(headerFlags());
        if (config != null && c.getApiKeySecretRef() != null && apiKeyFile == null) {
            err.println(
                    "note: --config target.apiKeySecretRef is read by the operator only; give"
                            + " --api-key-file FILE");
        }
        return new PlanTarget(
                backendName,
                apiName,
                endpoint != null ? endpoint : c.getPath(),
                model != null && !model.isBlank() ? model : c.getModel(),
                merged,
                tls(target, c.getTls(), err));
    }

    /** Names of the inputs of the wire protocol, for its messages. */
    public WireProtocol.Fields wireFields(TargetSpec config) {
        return new WireProtocol.Fields(
                "--backend",
                api != null || config == null || config.getApi() == null ? "--api" : "target.api",
                endpoint != null || config == null || config.getPath() == null
                        ? "--endpoint"
                        : "target.path");
    }

    /** The {@code Authorization} header of {@code --api-key-file}, or an empty map. */
    public Map<String, String> credentials() throws IOException {
        if (apiKeyFile == null) {
            return Map.of();
        }
        if (!Files.isReadable(apiKeyFile)) {
            throw new Main.UsageError("--api-key-file: cannot read " + apiKeyFile);
        }
        String key = Files.readString(apiKeyFile, StandardCharsets.UTF_8).strip();
        if (key.isEmpty()) {
            throw new Main.UsageError("--api-key-file: " + apiKeyFile + " is empty");
        }
        if (!HeaderValidation.validate(Map.of("Authorization", key), "", "").isEmpty()) {
            throw new Main.UsageError(
                    "--api-key-file: "
                            + apiKeyFile
                            + " holds a line break (CR or LF), NUL or another control character"
                            + " inside the key; it must be the key alone on one line (the key is"
                            + " not shown)");
        }
        return Map.of("Authorization", "Bearer " + key);
    }

    /** The {@code --tokenizer}, loaded, or {@code null}. */
    public HfTokenizer loadTokenizer() {
        if (tokenizer == null) {
            return null;
        }
        try {
            return HfTokenizer.load(tokenizer);
        } catch (IOException | RuntimeException e) {
            throw new Main.UsageError("--tokenizer: " + Main.describe(e));
        }
    }

    /**
     * The {@code --header} flags by name, checked as a spec's {@code target.headers} are. Messages
     * name the header, never its value (a value may be a credential).
     */
    private Map<String, String> headerFlags() {
        Map<String, String> result = new LinkedHashMap<>();
        for (int i = 0; i < headers.size(); i++) {
            String h = headers.get(i);
            int eq = h.indexOf('=');
            if (eq <= 0) {
                throw new Main.UsageError(
                        "--header: the "
                                + ordinal(i + 1)
                                + " --header is not NAME=VALUE"
                                + (h.indexOf(':') > 0 ? " (write NAME=VALUE, not NAME: VALUE)" : "")
                                + "; it is not shown, as it may hold a credential");
            }
            result.put(h.substring(0, eq).trim(), h.substring(eq + 1));
        }
        List<String> problems = HeaderValidation.validate(result, "--header", " ");
        if (!problems.isEmpty()) {
            throw new Main.UsageError(String.join("; ", problems));
        }
        return result;
    }

    private static String ordinal(int n) {
        return n
                + (n % 100 >= 11 && n % 100 <= 13
                        ? "th"
                        : switch (n % 10) {
                            case 1 -> "st";
                            case 2 -> "nd";
                            case 3 -> "rd";
                            default -> "th";
                        });
    }

    private TlsOptions tls(URI target, TlsSpec config, PrintWriter err) {
        boolean https = "https".equalsIgnoreCase(target.getScheme());
        if (!https && (caCert != null || insecureSkipTlsVerify || tlsServerName != null)) {
            throw new Main.UsageError(
                    (caCert != null
                                    ? "--ca-cert"
                                    : insecureSkipTlsVerify
                                            ? "--insecure-skip-tls-verify"
                                            : "--tls-server-name")
                            + ": applies only to an https:// --base-url");
        }
        if (insecureSkipTlsVerify && caCert != null) {
            throw new Main.UsageError(
                    "--insecure-skip-tls-verify: cannot be combined with --ca-cert (which checks"
                            + " the certificate)");
        }
        if (tlsServerName != null && tlsServerName.isBlank()) {
            throw new Main.UsageError("--tls-server-name: must not be empty");
        }
        boolean insecure = insecureSkipTlsVerify;
        String serverName = tlsServerName;
        if (config != null && https) {
            if (caCert == null && !insecure) {
                String ref =
                        config.getCaConfigMapRef() != null
                                ? "caConfigMapRef"
                                : config.getCaSecretRef() != null ? "caSecretRef" : null;
                if (ref != null) {
                    throw new Main.UsageError(
                            "--config target.tls."
                                    + ref
                                    + ": the command line reads the CA from a file; give --ca-cert"
                                    + " FILE");
                }
                insecure = Boolean.TRUE.equals(config.getInsecureSkipVerify());
            }
            if (serverName == null) {
                serverName = config.getServerName();
            }
        }
        TlsOptions options = new TlsOptions(caCert, insecure, serverName);
        try {
            options.check();
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--ca-cert: " + e.getMessage());
        }
        if (https && insecure) {
            err.println(
                    "WARNING: "
                            + (insecureSkipTlsVerify
                                    ? "--insecure-skip-tls-verify"
                                    : "--config target.tls.insecureSkipVerify")
                            + ": the certificate of "
                            + target.getHost()
                            + " is NOT checked; whoever answers there receives the requests"
                            + (apiKeyFile != null ? " and the API key" : "")
                            + ". Use --ca-cert FILE instead.");
            err.flush();
        }
        return options;
    }
}
