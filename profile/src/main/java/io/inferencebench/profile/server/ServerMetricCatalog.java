package io.inferencebench.profile.server;

import static io.inferencebench.profile.server.CatalogEntry.counter;
import static io.inferencebench.profile.server.CatalogEntry.gauge;
import static io.inferencebench.profile.server.CatalogEntry.histogram;
import static io.inferencebench.profile.server.CatalogEntry.info;
import static io.inferencebench.profile.server.CatalogEntry.splitGauge;

import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which server metrics to summarise for a backend, with their types and replica aggregation, plus
 * the user's {@code include}/{@code exclude} adjustments.
 *
 * <p>Defaults per backend follow what each server exposes (vLLM's current names with the renamed V0
 * names as aliases, each summarised under the name the server exposes, both when it exposes both;
 * llm-d-inference-sim uses vLLM's names; SGLang; TGI; JetStream; Triton with the TensorRT-LLM
 * backend and trtllm-serve). Info gauges (metadata such as {@code vllm:cache_config_info}) are
 * never summarised, even when included.
 *
 * <p>Selectors: {@code include} entries are a metric name or a glob ({@code *} and {@code ?}),
 * optionally followed by {@code :sum} or {@code :mean} to set the replica aggregation (for example
 * {@code vllm:num_requests_running:sum} or {@code my_gauge_*:mean}); {@code exclude} entries are
 * names or globs. Exclusion wins over inclusion. Immutable.
 */
public final class ServerMetricCatalog {

    /** Backends with a built-in catalog. */
    public static final List<String> BACKENDS =
            List.of(
                    "vllm",
                    "llm-d-inference-sim",
                    "sglang",
                    "tgi",
                    "jetstream",
                    "triton",
                    "openai");

    private static final Pattern SELECTOR_NAME = Pattern.compile("[a-zA-Z_:*?][a-zA-Z0-9_:*?]*");

    private final List<CatalogEntry> entries;
    private final List<Include> includes;
    private final List<Pattern> excludes;

    private record Include(Pattern pattern, String literal, Aggregation aggregation) {}

    /**
     * A metric resolved against scraped pages: the name the server really exposes and how to treat
     * it.
     *
     * @param name exposed family name (an alias when the server uses an older name)
     * @param type the type to summarise as (the page's histogram/summary/counter/gauge type wins
     *     over the catalog's when the page declares one)
     * @param aggregation replica aggregation
     * @param splitLabel label whose values are summarised separately, or {@code null}
     */
    public record ResolvedMetric(
            String name, MetricType type, Aggregation aggregation, String splitLabel) {}

    private ServerMetricCatalog(
            List<CatalogEntry> entries, List<Include> includes, List<Pattern> excludes) {
        this.entries = List.copyOf(entries);
        this.includes = List.copyOf(includes);
        this.excludes = List.copyOf(excludes);
    }

    /**
     * The default catalog of a backend.
     *
     * @param backend one of {@link #BACKENDS} (case-insensitive); {@code openai} and unknown
     *     backends get the union of all catalogs (only metrics a page exposes are reported)
     * @return the catalog
     */
    public static ServerMetricCatalog forBackend(String backend) {
        String b = backend == null ? "openai" : backend.toLowerCase(Locale.ROOT);
        List<CatalogEntry> entries =
                switch (b) {
                    case "vllm", "llm-d-inference-sim", "llm-d" -> vllm();
                    case "sglang" -> sglang();
                    case "tgi" -> tgi();
                    case "jetstream" -> jetstream();
                    case "triton", "trtllm", "tensorrt-llm" -> triton();
                    default -> {
                        List<CatalogEntry> all = new ArrayList<>();
                        all.addAll(vllm());
                        all.addAll(sglang());
                        all.addAll(tgi());
                        all.addAll(jetstream());
                        all.addAll(triton());
                        yield all;
                    }
                };
        return new ServerMetricCatalog(entries, List.of(), List.of());
    }

    /**
     * Checks include/exclude selectors.
     *
     * @param include include selectors (may be {@code null})
     * @param exclude exclude selectors (may be {@code null})
     * @return one message per invalid selector; empty when all are valid
     */
    public static List<String> validateSelectors(List<String> include, List<String> exclude) {
        List<String> messages = new ArrayList<>();
        if (include != null) {
            for (int i = 0; i < include.size(); i++) {
                String s = include.get(i);
                String problem = selectorProblem(s, true);
                if (problem != null) {
                    messages.add("metrics.include[" + i + "] '" + s + "': " + problem);
                }
            }
        }
        if (exclude != null) {
            for (int i = 0; i < exclude.size(); i++) {
                String s = exclude.get(i);
                String problem = selectorProblem(s, false);
                if (problem != null) {
                    messages.add("metrics.exclude[" + i + "] '" + s + "': " + problem);
                }
            }
        }
        return messages;
    }

    private static String selectorProblem(String selector, boolean allowAggregation) {
        if (selector == null || selector.isBlank()) {
            return "must not be empty";
        }
        String name = selector;
        if (allowAggregation) {
            String[] parts = splitAggregation(selector);
            name = parts[0];
            if (parts[1] != null && aggregationOf(parts[1]) == null) {
                return "aggregation must be sum or mean";
            }
        }
        if (!SELECTOR_NAME.matcher(name).matches()) {
            return "must be a metric name or glob of letters, digits, '_', ':', '*' and '?'";
        }
        return null;
    }

    /** Splits a trailing {@code :sum}/{@code :mean}; metric names themselves may contain colons. */
    private static String[] splitAggregation(String selector) {
        int colon = selector.lastIndexOf(':');
        if (colon > 0) {
            String suffix = selector.substring(colon + 1).toLowerCase(Locale.ROOT);
            if (suffix.equals("sum") || suffix.equals("mean") || suffix.equals("avg")) {
                return new String[] {selector.substring(0, colon), suffix};
            }
        }
        return new String[] {selector, null};
    }

    private static Aggregation aggregationOf(String s) {
        return switch (s) {
            case "sum" -> Aggregation.SUM;
            case "mean", "avg" -> Aggregation.MEAN;
            default -> null;
        };
    }

    /**
     * This catalog adjusted by the user's selectors.
     *
     * @param include extra metrics (names or globs, optional {@code :sum}/{@code :mean})
     * @param exclude metrics to drop (names or globs)
     * @return the adjusted catalog
     * @throws IllegalArgumentException when a selector is invalid (see {@link #validateSelectors})
     */
    public ServerMetricCatalog adjust(List<String> include, List<String> exclude) {
        List<String> problems = validateSelectors(include, exclude);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        List<Include> newIncludes = new ArrayList<>(includes);
        if (include != null) {
            for (String s : include) {
                String[] parts = splitAggregation(s.trim());
                newIncludes.add(
                        new Include(
                                glob(parts[0]),
                                isGlob(parts[0]) ? null : parts[0],
                                parts[1] == null ? null : aggregationOf(parts[1])));
            }
        }
        List<Pattern> newExcludes = new ArrayList<>(excludes);
        if (exclude != null) {
            for (String s : exclude) {
                newExcludes.add(glob(s.trim()));
            }
        }
        return new ServerMetricCatalog(entries, newIncludes, newExcludes);
    }

    /**
     * The built-in entries of this catalog (before include/exclude).
     *
     * @return the entries
     */
    public List<CatalogEntry> entries() {
        return entries;
    }

    /**
     * Resolves the catalog against scraped pages: each catalog entry under every one of its names
     * that a page exposes (a server exposing an old and a new name of one signal gets both, each
     * under its own name), then included metrics found on the pages, minus excluded and info
     * metrics. Include and exclude selectors match the exposed names.
     *
     * @param pages successfully parsed pages of the window
     * @return the metrics to summarise, in catalog order
     */
    public List<ResolvedMetric> resolve(Collection<ParsedPage> pages) {
        Map<String, ResolvedMetric> out = new LinkedHashMap<>();
        Set<String> claimed = new LinkedHashSet<>();
        for (CatalogEntry e : entries) {
            claimed.addAll(e.allNames());
            if (e.info()) {
                continue;
            }
            // Every name the server exposes, not only the first: a server that exposes an old
            // and a new vLLM name (gpu_cache_usage_perc and kv_cache_usage_perc) is read by
            // dashboards keyed on either, so both are summarised, each under its own name.
            for (String name : e.allNames()) {
                MetricFamily family = findFamily(pages, name);
                if (family == null || isInfo(family)) {
                    continue;
                }
                Aggregation explicit = explicitAggregation(name);
                Aggregation aggregation = explicit != null ? explicit : e.aggregation();
                out.putIfAbsent(
                        name,
                        new ResolvedMetric(
                                exposedName(family, name),
                                effectiveType(e.type(), family.type()),
                                aggregation,
                                e.splitLabel()));
            }
        }
        for (Include inc : includes) {
            for (ParsedPage page : pages) {
                for (MetricFamily family : page.families().values()) {
                    String name = family.name();
                    if (!inc.pattern().matcher(name).matches()
                            || claimed.contains(name)
                            || out.containsKey(name)
                            || isInfo(family)
                            || family.samples().isEmpty()) {
                        continue;
                    }
                    MetricType type =
                            family.type() == MetricType.UNKNOWN ? MetricType.GAUGE : family.type();
                    Aggregation aggregation = explicitAggregation(name);
                    if (aggregation == null) {
                        aggregation = defaultAggregation(name, type);
                    }
                    out.put(
                            name,
                            new ResolvedMetric(exposedName(family, name), type, aggregation, null));
                }
            }
        }
        List<ResolvedMetric> result = new ArrayList<>();
        for (ResolvedMetric m : out.values()) {
            if (excluded(m.name())) {
                continue;
            }
            if (m.type() == MetricType.INFO || m.type() == MetricType.STATESET) {
                continue;
            }
            result.add(m);
        }
        return result;
    }

    /** The aggregation the last matching include selector names explicitly, or {@code null}. */
    private Aggregation explicitAggregation(String name) {
        Aggregation aggregation = null;
        for (Include inc : includes) {
            if (inc.aggregation() != null && inc.pattern().matcher(name).matches()) {
                aggregation = inc.aggregation();
            }
        }
        return aggregation;
    }

    /**
     * A copy of a page with only the families this catalog could summarise (catalog names and
     * aliases, included metrics; excluded and info metrics dropped) and no problems: what a scraper
     * needs to keep, for example in a checkpoint. The statistics of a trimmed page equal those of
     * the full page.
     *
     * @param page a parsed page
     * @return the trimmed page
     */
    public ParsedPage trim(ParsedPage page) {
        Set<String> wanted = new java.util.HashSet<>();
        for (CatalogEntry e : entries) {
            if (!e.info()) {
                wanted.addAll(e.allNames());
            }
        }
        Map<String, MetricFamily> kept = new LinkedHashMap<>();
        int samples = 0;
        for (MetricFamily family : page.families().values()) {
            String name = family.name();
            boolean keep = isInfo(family) ? false : wantedByName(wanted, name);
            if (!keep && !isInfo(family)) {
                for (Include inc : includes) {
                    if (inc.pattern().matcher(name).matches()) {
                        keep = true;
                        break;
                    }
                }
            }
            if (keep && !excluded(name)) {
                kept.put(name, family);
                samples += family.samples().size();
            }
        }
        return new ParsedPage(page.format(), kept, List.of(), 0, samples);
    }

    private static boolean wantedByName(Set<String> wanted, String familyName) {
        return wanted.contains(familyName)
                || wanted.contains(familyName + "_total")
                || (familyName.endsWith("_total")
                        && wanted.contains(familyName.substring(0, familyName.length() - 6)));
    }

    private boolean excluded(String name) {
        String stripped = name.endsWith("_total") ? name.substring(0, name.length() - 6) : null;
        for (Pattern p : excludes) {
            if (p.matcher(name).matches() || (stripped != null && p.matcher(stripped).matches())) {
                return true;
            }
        }
        return false;
    }

    private static MetricFamily findFamily(Collection<ParsedPage> pages, String name) {
        MetricFamily declaredOnly = null;
        for (ParsedPage page : pages) {
            MetricFamily f = page.family(name);
            if (f != null) {
                if (!f.samples().isEmpty()) {
                    return f;
                }
                declaredOnly = f;
            }
        }
        return declaredOnly;
    }

    /** Counters are reported under their sample name ({@code foo_total}), whatever the format. */
    private static String exposedName(MetricFamily family, String requested) {
        if (family.type() == MetricType.COUNTER && !family.samples().isEmpty()) {
            return family.samples().get(0).name();
        }
        if (family.type() == MetricType.COUNTER && requested.endsWith("_total")) {
            return requested;
        }
        return family.name();
    }

    private static MetricType effectiveType(MetricType catalogType, MetricType pageType) {
        return switch (pageType) {
            case HISTOGRAM, SUMMARY, COUNTER, GAUGE -> pageType;
            default -> catalogType;
        };
    }

    private static boolean isInfo(MetricFamily family) {
        return family.type() == MetricType.INFO || family.name().endsWith("_info");
    }

    private static Aggregation defaultAggregation(String name, MetricType type) {
        if (type != MetricType.GAUGE) {
            return Aggregation.SUM;
        }
        String n = name.toLowerCase(Locale.ROOT);
        for (String hint :
                List.of(
                        "perc",
                        "usage",
                        "utilization",
                        "utilisation",
                        "ratio",
                        "fraction",
                        "rate")) {
            if (n.contains(hint)) {
                return Aggregation.MEAN;
            }
        }
        return Aggregation.SUM;
    }

    private static boolean isGlob(String s) {
        return s.indexOf('*') >= 0 || s.indexOf('?') >= 0;
    }

    private static Pattern glob(String glob) {
        StringBuilder regex = new StringBuilder();
        for (char c : glob.toCharArray()) {
            switch (c) {
                case '*' -> regex.append(".*");
                case '?' -> regex.append('.');
                default -> regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString());
    }

    private static List<CatalogEntry> vllm() {
        return List.of(
                gauge("vllm:num_requests_running", Aggregation.SUM),
                gauge("vllm:num_requests_waiting", Aggregation.SUM),
                gauge("vllm:kv_cache_usage_perc", Aggregation.MEAN, "vllm:gpu_cache_usage_perc"),
                splitGauge("vllm:num_requests_waiting_by_reason", "reason"),
                gauge("vllm:num_requests_swapped", Aggregation.SUM),
                gauge("vllm:cpu_cache_usage_perc", Aggregation.MEAN),
                gauge("vllm:avg_prompt_throughput_toks_per_s", Aggregation.SUM),
                gauge("vllm:avg_generation_throughput_toks_per_s", Aggregation.SUM),
                info("vllm:cache_config_info"),
                info("vllm:lora_requests_info"),
                counter("vllm:prompt_tokens_total"),
                counter("vllm:generation_tokens_total"),
                counter("vllm:request_success_total"),
                counter("vllm:num_preemptions_total"),
                counter("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
                counter("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
                counter("vllm:prompt_tokens_cached_total"),
                // Seen on vLLM 0.16 (V1 engine): KV-connector prefix cache and recomputed prompts.
                counter("vllm:prompt_tokens_recomputed_total"),
                counter("vllm:external_prefix_cache_queries_total"),
                counter("vllm:external_prefix_cache_hits_total"),
                splitGauge("vllm:engine_sleep_state", "sleep_state"),
                histogram("vllm:time_to_first_token_seconds"),
                histogram("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
                histogram("vllm:request_time_per_output_token_seconds"),
                histogram("vllm:e2e_request_latency_seconds"),
                histogram("vllm:request_queue_time_seconds"),
                histogram("vllm:request_prefill_time_seconds"),
                histogram("vllm:request_decode_time_seconds"),
                histogram("vllm:request_inference_time_seconds"),
                histogram("vllm:request_prompt_tokens"),
                histogram("vllm:request_generation_tokens"),
                histogram("vllm:request_params_max_tokens"),
                histogram("vllm:iteration_tokens_total"),
                histogram("vllm:request_prefill_kv_computed_tokens"),
                histogram("vllm:request_max_num_generation_tokens"),
                histogram("vllm:request_params_n"));
    }

    private static List<CatalogEntry> sglang() {
        return List.of(
                gauge("sglang:num_running_reqs", Aggregation.SUM),
                gauge("sglang:num_queue_reqs", Aggregation.SUM),
                gauge("sglang:num_used_tokens", Aggregation.SUM),
                gauge("sglang:token_usage", Aggregation.MEAN),
                gauge("sglang:gen_throughput", Aggregation.SUM),
                gauge("sglang:cache_hit_rate", Aggregation.MEAN),
                counter("sglang:prompt_tokens_total"),
                counter("sglang:generation_tokens_total"),
                counter("sglang:cached_tokens_total"),
                counter("sglang:num_requests_total"),
                counter("sglang:num_aborted_requests_total"),
                histogram("sglang:time_to_first_token_seconds"),
                histogram("sglang:inter_token_latency_seconds"),
                histogram("sglang:e2e_request_latency_seconds"),
                histogram("sglang:queue_time_seconds"));
    }

    private static List<CatalogEntry> tgi() {
        return List.of(
                gauge("tgi_queue_size", Aggregation.SUM),
                gauge("tgi_batch_current_size", Aggregation.SUM),
                gauge("tgi_batch_current_max_tokens", Aggregation.SUM),
                counter("tgi_request_count"),
                counter("tgi_request_success"),
                counter("tgi_request_failure"),
                histogram("tgi_request_duration"),
                histogram("tgi_request_queue_duration"),
                histogram("tgi_request_inference_duration"),
                histogram("tgi_request_mean_time_per_token_duration"),
                histogram("tgi_request_input_length"),
                histogram("tgi_request_generated_tokens"),
                histogram("tgi_batch_next_size"));
    }

    private static List<CatalogEntry> jetstream() {
        return List.of(
                gauge("jetstream_slots_used_percentage", Aggregation.MEAN),
                gauge("jetstream_prefill_backlog_size", Aggregation.SUM),
                gauge("jetstream_transfer_backlog_size", Aggregation.SUM),
                gauge("jetstream_generate_backlog_size", Aggregation.SUM),
                counter("jetstream_request_success_count_total"),
                histogram("jetstream_time_to_first_token"),
                histogram("jetstream_time_per_output_token"),
                histogram("jetstream_time_per_request"),
                histogram("jetstream_queue_duration"),
                histogram("jetstream_request_input_length"),
                histogram("jetstream_request_output_length"));
    }

    private static List<CatalogEntry> triton() {
        return List.of(
                counter("nv_inference_request_success"),
                counter("nv_inference_request_failure"),
                counter("nv_inference_count"),
                counter("nv_inference_exec_count"),
                counter("nv_inference_request_duration_us"),
                counter("nv_inference_queue_duration_us"),
                gauge("nv_gpu_utilization", Aggregation.MEAN),
                gauge("nv_gpu_memory_used_bytes", Aggregation.SUM),
                splitGauge("nv_trt_llm_request_metrics", "request_type"),
                splitGauge("nv_trt_llm_kv_cache_block_metrics", "kv_cache_block_type"),
                gauge("trtllm_num_requests_running", Aggregation.SUM),
                gauge("trtllm_num_requests_waiting", Aggregation.SUM),
                gauge("trtllm_kv_cache_utilization", Aggregation.MEAN),
                counter("trtllm_request_success_total"),
                histogram("trtllm_time_to_first_token_seconds"),
                histogram(
                        "trtllm_inter_token_latency_seconds",
                        "trtllm_time_per_output_token_seconds"),
                histogram("trtllm_e2e_request_latency_seconds"),
                histogram("trtllm_request_queue_time_seconds"));
    }
}
