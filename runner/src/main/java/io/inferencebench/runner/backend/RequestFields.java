package io.inferencebench.runner.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The fields an OpenAI-API request carries beyond OpenAI's own API, per backend, and what to tell
 * the user when a server refuses one.
 *
 * <p>{@code openai} means a server that may accept OpenAI's fields only (Hugging Face's
 * transformers serve, OpenAI itself, gateways validating OpenAI's schema answer anything else with
 * HTTP 4xx, e.g. 422 "Extra inputs are not permitted"), so it sends none unless asked: {@code
 * --ignore-eos} or {@code workload.ignoreEos: true} adds {@code ignore_eos}, {@code --top-k} or
 * {@code workload.sampling.topK} adds {@code top_k}. Every other backend adds {@code ignore_eos} by
 * default (vLLM, SGLang, LMDeploy and TensorRT-LLM honour it: each request then generates exactly
 * its {@code max_tokens}); TGI's native {@code /generate} API has no such field.
 */
public final class RequestFields {

    /**
     * A field beyond OpenAI's API in this run's requests.
     *
     * @param field the JSON field, e.g. {@code ignore_eos}
     * @param dropWith how the user leaves it out (flag and spec field), e.g. {@code drop it with
     *     --ignore-eos false}
     */
    public record Extension(String field, String dropWith) {}

    /** {@code ignore_eos}: dropped with {@code --ignore-eos false}. */
    public static final Extension IGNORE_EOS =
            new Extension(
                    "ignore_eos", "drop it with --ignore-eos false (workload.ignoreEos: false)");

    /** {@code top_k}: dropped by leaving out {@code --top-k}. */
    public static final Extension TOP_K =
            new Extension("top_k", "drop it by leaving out --top-k (workload.sampling.topK)");

    /** Error wordings of servers that refuse fields they do not know. */
    private static final Pattern UNKNOWN_FIELD =
            Pattern.compile(
                    "extra inputs are not permitted|extra_forbidden|extra fields not permitted"
                            + "|unrecognized request argument|unknown field|unexpected keyword"
                            + "|additional properties",
                    Pattern.CASE_INSENSITIVE);

    private RequestFields() {}

    /** Whether {@code backend} sends {@code ignore_eos} when the workload does not say. */
    public static boolean ignoreEosByDefault(String backend) {
        String b = backend == null ? "vllm" : backend.toLowerCase(Locale.ROOT);
        return !b.equals("openai") && !b.equals("openai-chat");
    }

    /**
     * The fields beyond OpenAI's API that requests of {@code api} with {@code params} carry.
     *
     * @param api {@code completions}, {@code chat} or {@code generate} (TGI's own API: none of
     *     OpenAI's rules apply)
     */
    public static List<Extension> extensions(String api, GenerationParams params) {
        List<Extension> out = new ArrayList<>();
        if ("generate".equals(api)) {
            return out;
        }
        if (params.ignoreEos()) {
            out.add(IGNORE_EOS);
        }
        if (params.topK() != null) {
            out.add(TOP_K);
        }
        return out;
    }

    /**
     * What to tell the user about a refused request: the extension fields the server's error names
     * (its body quotes the field, e.g. a pydantic {@code "loc": ["body", "ignore_eos"]}), or all of
     * them when it refuses unknown fields without naming one.
     *
     * @param error the request's error message (status and the start of the body)
     * @param sent the extension fields the requests carried
     * @return the hint, or {@code null} when the error is about something else
     */
    public static String refusalHint(String error, List<Extension> sent) {
        if (error == null || sent.isEmpty()) {
            return null;
        }
        List<Extension> named = new ArrayList<>();
        for (Extension e : sent) {
            if (Pattern.compile("(?<![A-Za-z0-9_])" + e.field() + "(?![A-Za-z0-9_])")
                    .matcher(error)
                    .find()) {
                named.add(e);
            }
        }
        boolean unknownFields = UNKNOWN_FIELD.matcher(error).find();
        if (named.isEmpty() && !unknownFields) {
            return null;
        }
        List<Extension> shown = named.isEmpty() ? sent : named;
        StringBuilder b =
                new StringBuilder(
                        named.isEmpty()
                                ? "the server refuses fields outside OpenAI's API, and these"
                                        + " requests carry some: "
                                : "the server refuses a field outside OpenAI's API: ");
        for (int i = 0; i < shown.size(); i++) {
            Extension e = shown.get(i);
            b.append(i == 0 ? "" : "; ")
                    .append(e.field())
                    .append(" (")
                    .append(e.dropWith())
                    .append(')');
        }
        return b.toString();
    }
}
