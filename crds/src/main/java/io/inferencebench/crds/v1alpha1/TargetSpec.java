package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;

/** The model server under test and how to talk to it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.service) != has(self.url)",
        message = "exactly one of service or url must be set",
        reason = "FieldValueInvalid")
@ValidationRule(
        value =
                "!has(self.headers) || self.headers.all(k, k.matches('^[A-Za-z0-9!#$%&*+.^_|~-]+$'))",
        message = "header names must be HTTP tokens (letters, digits and !#$%&*+.^_|~-)",
        fieldPath = ".headers")
@ValidationRule(
        value =
                "!has(self.headers) || self.headers.all(k, !(k.lowerAscii() in ['host',"
                        + " 'connection', 'content-length', 'transfer-encoding', 'keep-alive',"
                        + " 'proxy-connection', 'te', 'trailer', 'upgrade', 'expect']))",
        message =
                "hop-by-hop and framing headers (Host, Connection, Content-Length,"
                        + " Transfer-Encoding, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade,"
                        + " Expect) are set by the runner and cannot be given",
        fieldPath = ".headers")
@ValidationRule(
        value =
                "!has(self.headers) || self.headers.all(k,"
                        + " !self.headers[k].matches('[\\x00-\\x08\\x0a-\\x1f\\x7f]'))",
        message =
                "header values must not contain line breaks (CR, LF), NUL or other control"
                        + " characters",
        fieldPath = ".headers")
@ValidationRule(
        value = "!has(self.balance) || self.balance != 'endpoints' || has(self.service)",
        message = "balance endpoints needs a service target (a url has no endpoints to list)",
        fieldPath = ".balance")
@ValidationRule(
        value = "!has(self.readinessTimeout) || self.readinessTimeout.matches('[1-9]')",
        message = "readinessTimeout must be greater than zero",
        fieldPath = ".readinessTimeout")
public class TargetSpec {

    /**
     * Longest header value accepted. Servers refuse larger header sections anyway (8 KiB is a
     * common limit), and the bound lets the API server afford the CEL check of every value.
     */
    public static final int MAX_HEADER_VALUE_LENGTH = 8192;

    @JsonPropertyDescription(
            "A Service in this namespace; the operator waits until it has ready endpoints, and"
                    + " scrapes every ready endpoint's metrics. Exactly one of service or url.")
    private ServiceTarget service;

    @JsonPropertyDescription(
            "Base URL of the server, e.g. http://vllm.models.svc:8000 (no path). Exactly one of"
                    + " service or url.")
    @Size(min = 1, max = 2048)
    @Pattern("^https?://[^\\s/?#]+$")
    private String url;

    @JsonPropertyDescription(
            "Server family: vllm, sglang, tgi, jetstream, triton or openai (any other"
                    + " OpenAI-compatible server). Selects the server-metric catalog.")
    @Default("vllm")
    private Backend backend = Backend.VLLM;

    @JsonPropertyDescription(
            "API to call: completions (/v1/completions) or chat (/v1/chat/completions).")
    @Default("completions")
    private ApiKind api = ApiKind.COMPLETIONS;

    @JsonPropertyDescription(
            "Request path overriding the api's default, e.g. /v1/completions behind a gateway.")
    @Size(min = 1, max = 1024)
    @Pattern("^/[^\\s?#]*$")
    private String path;

    @JsonPropertyDescription(
            "Model name sent in requests; when empty the first model listed by /v1/models is used.")
    @Size(min = 1, max = 256)
    private String model;

    @JsonPropertyDescription(
            "Extra HTTP headers sent with every request. Values are stored in plain text; put"
                    + " credentials in apiKeySecretRef.")
    @Size(max = 32)
    private Map<String, @Size(max = MAX_HEADER_VALUE_LENGTH) String> headers;

    @JsonPropertyDescription(
            "Secret key holding an API key, sent as 'Authorization: Bearer <key>'. The key is"
                    + " mounted into runner pods only and never copied into status, ConfigMaps,"
                    + " Events or logs.")
    private SecretKeyRef apiKeySecretRef;

    @JsonPropertyDescription(
            "How long to wait for the target to become ready (Service endpoints ready, or the URL"
                    + " answering) before the run fails with TargetReady=False.")
    @Default("10m")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String readinessTimeout = "10m";

    @JsonPropertyDescription(
            "Certificate checks for an https target: a CA bundle from a ConfigMap or Secret"
                    + " (mounted into runner pods), an explicit insecureSkipVerify, a serverName."
                    + " Without it the certificate and host name are verified against the default"
                    + " trust store.")
    private TlsSpec tls;

    @JsonPropertyDescription(
            "How requests reach the Service's replicas. service (the default): through the"
                    + " Service's address, whose proxy picks a replica per connection (a low-rate"
                    + " run may measure one or two of several). endpoints: to the Service's ready"
                    + " endpoints, each request to the next in turn, so every replica gets an even"
                    + " share (profiles carry requests_per_address); the Host header stays the"
                    + " Service's name. The list is followed while the run runs (within a few"
                    + " seconds): a replica that joins gets turns, one that leaves gets no new"
                    + " requests and its requests in flight finish (profiles carry"
                    + " address_changes). A request whose connection is refused before it was"
                    + " sent goes to the next endpoint (requests_redirected). endpoints needs"
                    + " service.")
    private Balance balance;

    @JsonPropertyDescription(
            "Close each connection after this many requests and reuse idle connections oldest"
                    + " first (default: kept as long as the server keeps them, most recently freed"
                    + " first). Through a Service, whose proxy picks a replica per connection, a"
                    + " bound makes it pick again every this many requests: 1 picks per request."
                    + " Each new connection's set-up is inside the latency of the request that"
                    + " waits for it.")
    @io.fabric8.generator.annotation.Min(1)
    private Integer requestsPerConnection;

    public Integer getRequestsPerConnection() {
        return requestsPerConnection;
    }

    public void setRequestsPerConnection(Integer requestsPerConnection) {
        this.requestsPerConnection = requestsPerConnection;
    }

    public Balance getBalance() {
        return balance;
    }

    public void setBalance(Balance balance) {
        this.balance = balance;
    }

    public TlsSpec getTls() {
        return tls;
    }

    public void setTls(TlsSpec tls) {
        this.tls = tls;
    }

    public ServiceTarget getService() {
        return service;
    }

    public void setService(ServiceTarget service) {
        this.service = service;
    }

    public String getUrl() {
        return url;
    }

    public void setUrl(String url) {
        this.url = url;
    }

    public Backend getBackend() {
        return backend;
    }

    public void setBackend(Backend backend) {
        this.backend = backend;
    }

    public ApiKind getApi() {
        return api;
    }

    public void setApi(ApiKind api) {
        this.api = api;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public String getModel() {
        return model;
    }

    public void setModel(String model) {
        this.model = model;
    }

    public Map<String, String> getHeaders() {
        return headers;
    }

    public void setHeaders(Map<String, String> headers) {
        this.headers = headers;
    }

    public SecretKeyRef getApiKeySecretRef() {
        return apiKeySecretRef;
    }

    public void setApiKeySecretRef(SecretKeyRef apiKeySecretRef) {
        this.apiKeySecretRef = apiKeySecretRef;
    }

    public String getReadinessTimeout() {
        return readinessTimeout;
    }

    public void setReadinessTimeout(String readinessTimeout) {
        this.readinessTimeout = readinessTimeout;
    }
}
