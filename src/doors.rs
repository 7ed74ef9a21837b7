//! The doors: every kind of input that someone other than the operator writes and helm-drift
//! reads (from the cluster or the network), each with the one function it enters through, what
//! bounds it, and the test that provokes it with hostile input. `layering::every_read_goes_through_a_door`
//! fails when code reads the cluster or the network outside these functions, when a door names a
//! function that is not there, or a test that does not exist; the security page's trust table says the same
//! for people.

/// One door (read by the tests that hold the code and the security page to the table).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Door {
    /// What comes in.
    pub(crate) input: &'static str,
    /// Who may write it (the least power that can).
    pub(crate) written_by: &'static str,
    /// The functions it enters through: `path/under/src.rs::function`.
    pub(crate) through: &'static [&'static str],
    /// What bounds it: bytes, entries, depth or aliases, time, connections.
    pub(crate) budget: &'static str,
    /// The tests that write it as its writer could and show the bound holds:
    /// `tests/integration/FILE.rs::test` or `src/FILE.rs::test`.
    pub(crate) tests: &'static [&'static str],
}

/// Every door (the security page's trust table names each input).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const DOORS: &[Door] = &[
    Door {
        input: "release records (Secrets, ConfigMaps)",
        written_by: "whoever may create a Secret (ConfigMap) in the namespace",
        through: &[
            "release/storage.rs::list_metadata",
            "release/storage.rs::list_data",
            "release/storage.rs::get_data",
        ],
        budget: "listed in pages of metadata sized by bytes (4 MiB at the sizes seen, asked again with fewer past 8 MiB), each cut to its labels, name and data write time as it is read (a release name over Helm's 53 characters is no record); a record reserves its text and 8x its manifest of a process-wide budget before it is decoded; chart metadata kept as text",
        tests: &["tests/integration/bounded.rs::a_record_of_millions_of_metadata_values_costs_its_bytes"],
    },
    Door {
        input: "release records (SQL rows)",
        written_by: "whoever may write the database's tables",
        through: &["release/sql.rs::releases", "release/sql.rs::read", "release/sql.rs::custom_labels"],
        budget: "rows read as they arrive, only those whose key, name (53), namespace and status fit what Helm writes; custom labels only for the selector's keys; a body over 32 MiB refused, naming its row, before it is sent; the same record budget as Secrets; equality selectors only",
        tests: &["tests/integration/storage.rs::sql_driver_with_postgres"],
    },
    Door {
        input: "a record's chart, values and hooks, run by helm (check --rerender, plan, repair --upgrade)",
        written_by: "whoever writes the record",
        through: &["helm/mod.rs::render_now", "helm/mod.rs::preview", "helm/mod.rs::upgrade"],
        budget: "read the cluster (lookup, with the reader's rights) only for a trusted namespace; else helm upgrade --dry-run=client (lookup answers nothing, no hook runs) and helm's error cut to its last Error: line, 400 characters; helm's output read up to 64 MiB (helm stopped past it), its words up to 1 MiB (the rest dropped); each helm command (a render, a dry-run, helm show chart) stopped after 120 s, a render of --explain after 60 s; repair --upgrade refused before any helm call; the watcher runs no chart",
        tests: &[
            "tests/integration/rights.rs::an_untrusted_records_chart_never_reads_the_cluster_as_the_reader",
            "src/layering.rs::the_watcher_runs_no_chart",
            "src/helm/capture.rs::a_helper_is_read_within_its_budget",
        ],
    },
    Door {
        input: "a Flux HelmRelease and the ConfigMaps and Secrets of its valuesFrom (plan --helmrelease)",
        written_by: "whoever may write HelmReleases, ConfigMaps or Secrets in the HelmRelease's namespace",
        through: &["plan/values_from.rs::helm_release", "plan/values_from.rs::values_source"],
        budget: "one HelmRelease, by name (from a file: only of the namespace named with -n, and its values render without lookup); 64 valuesFrom references at most, each one object read once; each values text parsed within the manifest budget; a targetPath set by helm template of a one-template chart (no cluster); postRenderers only as helm-controller's API takes them (inline patches, targets, images: no file or URL), 64 and 256 KiB at most, Kustomize run within 30 s and 8 MiB; values read from the cluster render the chart without lookup unless their namespace is trusted",
        tests: &[
            "src/plan/values_from.rs::references_are_read_with_their_defaults_and_bounded",
            "tests/integration/plan_flux.rs::values_the_planner_did_not_write_never_read_the_cluster_as_the_planner",
            "src/plan/kustomize.rs::only_what_helm_controllers_api_takes_is_run",
        ],
    },
    Door {
        input: "the HelmRepository or OCIRepository a Flux HelmRelease takes its chart from (plan --helmrelease without a chart)",
        written_by: "whoever may write Flux sources in the namespace the HelmRelease's sourceRef names",
        through: &["plan/flux_chart.rs::source_object"],
        budget: "one object, by name; only its url, type and reference are used (one with credentials, a client certificate, a cloud provider, verification or a digest is refused, never fetched otherwise); the chart name must be a plain name and the url one word not starting with '-'; helm fetches and resolves the version within its run's bounds (120 s, its output bounded), in an empty directory",
        tests: &[
            "src/plan/flux_chart.rs::what_cannot_be_fetched_as_the_controller_would_is_refused",
            "tests/integration/plan_flux.rs::a_helmreleases_chart_version_is_fetched_from_its_repository",
        ],
    },
    Door {
        input: "a Cluster API HelmChartProxy, the Clusters it selects, the objects they refer to and its HelmReleaseProxies (plan --helmchartproxy)",
        written_by: "whoever may write those kinds in the HelmChartProxy's namespace of the management cluster (whoever may already make CAAPH install any chart on the workload clusters)",
        through: &[
            "plan/caaph/reads.rs::chart_proxy",
            "plan/caaph/reads.rs::clusters",
            "plan/caaph/reads.rs::referenced",
            "plan/caaph/reads.rs::release_proxies",
        ],
        budget: "one HelmChartProxy by name (from a file: only of the namespace named with -n); 1,000 Clusters and HelmReleaseProxies at most, each one read, a HelmReleaseProxy only for a Cluster of its own namespace; a selector of label text only; the values template run by helm template of a scratch chart (no cluster, 30 s, 8 MiB), functions CAAPH lacks refused by name; spec.chartName never a path, fetched from spec.repoURL in an empty directory; each cluster reached only through its vetted kubeconfig Secret (inline credentials); a file's values render without lookup; 1800 s for the whole fleet, the clusters left not planned",
        tests: &[
            "tests/integration/plan_caaph.rs::plan_predicts_what_caaph_does_on_every_cluster_a_helmchartproxy_selects",
        ],
    },
    Door {
        input: "Flux HelmReleases (a record stored apart from its release; the drift rules of the one that installs a release)",
        written_by: "whoever may write HelmReleases in the record's namespace (the status: helm-controller)",
        through: &["live/flux.rs::helm_releases"],
        budget: "read in the record's storage namespace only (once per run; every namespace at once in a wide run), in pages sized by bytes, each cut at once to the release it installs and its spec.driftDetection (64 KiB at most, else none of its rules); 4,096 kept at most; 64 rules of 64 paths, each regex compiled within 1 MiB; a HelmRelease names the claim by its spec (its status, which its editors can write too, proves nothing), the claim reaches only the objects carrying its origin labels, and its rules hide fields only of the objects judged for its record; a rule it cannot read is named, never applied",
        tests: &[
            "src/release/vouch.rs::a_helmrelease_names_the_claim_by_its_spec_and_its_status_adds_nothing",
            "src/policy/flux.rs::the_whole_object_bad_rules_and_bounds",
            "tests/integration/flux_layout.rs::a_tenants_helmrelease_and_its_status_give_it_nothing_in_another_namespace",
            "tests/integration/flux_rules.rs::another_namespaces_helmrelease_hides_nothing",
        ],
    },
    Door {
        input: "a record's manifest (YAML)",
        written_by: "whoever writes the record",
        through: &["yaml.rs::to_json_within"],
        budget: "1,000,000 nodes and 8x the text plus 1 MiB after aliases, 256 levels deep, for all of a record's documents together",
        tests: &["src/yaml.rs::hostile_documents_are_bounded_errors"],
    },
    Door {
        input: "live objects (lists)",
        written_by: "whoever may create objects of that kind in the namespace",
        through: &["live/listing.rs::list_objects", "api/sized.rs::page_text"],
        budget: "pages sized to 4 MiB at the sizes seen, a response read as it arrives and asked again with fewer objects past 8 MiB; only objects a release names or Helm manages kept, 64 MiB at most",
        tests: &[
            "tests/integration/bounded.rs::a_page_costs_the_same_whatever_came_before_it",
            "tests/integration/doors.rs::a_tenant_gains_nothing_through_the_chart_s_watcher",
        ],
    },
    Door {
        input: "live objects (one at a time), their CRD schema, HPAs",
        written_by: "whoever edits them",
        through: &[
            "live/mod.rs::get",
            "live/mod.rs::crd_schema",
            "live/mod.rs::hpa_targets",
            "live/change.rs::change",
            "live/change.rs::upgrade_dry_run",
        ],
        budget: "one object (etcd's 1.5 MiB); HPAs listed in pages sized by bytes, each kept only as its scale target as its page is read; compared, never obeyed",
        tests: &["tests/integration/bounded.rs::objects_nobody_names_are_not_held"],
    },
    Door {
        input: "admission's configuration (mutating webhooks and policies, default IngressClass and StorageClass) and namespaces' labels",
        written_by: "cluster administrators (a namespace's labels: whoever may edit the namespace)",
        through: &["live/mutators.rs::listed", "live/mutators.rs::namespace_labels"],
        budget: "read once per run, each kind in pages sized by bytes, each object cut at once to its rules and selectors (or its name); 256 of a kind at most (more: not excused); a namespace's labels only; evidence for the read-only engine as far as a reader can tell (a field a covering webhook may add is shown, not counted), never obeyed",
        tests: &[
            "tests/integration/admission_facts.rs::what_admission_adds_is_no_drift_in_either_engine_and_a_status_write_changes_no_verdict",
            "src/compare/admitted.rs::a_webhook_covers_what_its_rules_and_selectors_name",
        ],
    },
    Door {
        input: "admission guards (ValidatingAdmissionPolicies)",
        written_by: "cluster administrators",
        through: &["live/admission.rs::guards"],
        budget: "only those labelled as helm-drift's, reported, never obeyed",
        tests: &["tests/integration/guard.rs::a_watcher_that_cannot_read_the_guards_exports_no_guard_series"],
    },
    Door {
        input: "Events (DriftDetected and the like)",
        written_by: "whoever may create Events in a namespace",
        through: &["watch/outputs/drift_events.rs::seen", "watch/outputs/drift_events.rs::again"],
        budget: "a page at a time, reduced to their signature at once, 20,000 per reason",
        tests: &["tests/integration/tenancy.rs::a_flood_of_large_events_is_read_a_page_at_a_time"],
    },
    Door {
        input: "break-glass pauses",
        written_by: "whoever may write ConfigMaps in the watcher's namespace",
        through: &["pause/mod.rs::labelled"],
        budget: "pages of 16, 256 at most, read only in the watcher's own namespace; a reason or name cut at 256 characters",
        tests: &[
            "tests/integration/pause.rs::a_pause_holds_healing_until_it_ends_and_one_next_to_the_release_does_nothing",
            "tests/integration/doors.rs::a_tenant_gains_nothing_through_the_chart_s_watcher",
        ],
    },
    Door {
        input: "watcher announcements (where pauses go)",
        written_by: "whoever may write ConfigMaps in a namespace",
        through: &["pause/mod.rs::labelled", "pause/announce.rs::named_elsewhere"],
        budget: "read only in the namespace the operator names (or the chart's usual home), pages of 8, 256 at most; elsewhere only named (metadata)",
        tests: &[
            "tests/integration/pause.rs::a_pause_holds_healing_until_it_ends_and_one_next_to_the_release_does_nothing",
            "tests/integration/doors.rs::a_tenant_gains_nothing_through_the_chart_s_watcher",
        ],
    },
    Door {
        input: "baselines in the cluster",
        written_by: "whoever may write ConfigMaps in the release's namespace (or in the namespace the operator names)",
        through: &["baseline/store.rs::read_configmap", "baseline/store.rs::exists", "baseline/store.rs::configmaps"],
        budget: "taken only from the namespace the operator names (--baseline cluster=NS) or trusts (--trust-namespace); elsewhere named (metadata) and ignored; one ConfigMap, parsed within the record's alias and depth budget; a stored hash of any length but 32 bytes, or of more PBKDF2 iterations than helm-drift writes (100,000), refused before PBKDF2; 16 salted entries verified per release and check, the rest accept nothing (said)",
        tests: &[
            "tests/integration/baseline.rs::a_hostile_baseline_configmap_costs_nothing",
            "tests/integration/baseline.rs::a_baseline_next_to_the_release_is_taken_only_from_a_trusted_namespace",
            "tests/integration/doors.rs::a_tenant_gains_nothing_through_the_chart_s_watcher",
        ],
    },
    Door {
        input: "inventories (Argo CD cluster Secrets, Cluster API Clusters and kubeconfigs, CAAPH proxies)",
        written_by: "whoever may write those kinds in the inventory's namespace",
        through: &[
            "inventory/argocd.rs::read",
            "inventory/capi.rs::read",
            "inventory/capi.rs::reach",
            "inventory/caaph.rs::list",
            "inventory/feed.rs::start",
        ],
        budget: "read only in --clusters-namespace, in pages sized by bytes, each Cluster, Secret or proxy kept only as what a member needs as its page is read (the watcher's: watched, a Secret's metadata cut to its name and resourceVersion, a proxy trimmed of its values, a kubeconfig read once per resourceVersion); inline credentials only",
        tests: &["tests/integration/inventory.rs::an_argo_cd_inventory_is_checked_with_inline_credentials_only"],
    },
    Door {
        input: "member clusters' responses",
        written_by: "whoever runs a member cluster's API server",
        through: &["api/connect.rs::connect"],
        budget: "64 MiB per response; one connection per member (HTTP/2 when offered, pinged every 30 s, dropped after 20 s without an answer), each response's head within the read timeout; each member a task of the watcher's one runtime with its own backoff (1 s doubling to 30 s) and probe (every 5 s, down after 2 silences), so a slow, silent or flooded member waits on its own I/O only; 16 members start at once, each holding its place at most 20 s",
        tests: &["src/api/connect.rs::a_members_response_past_the_cap_is_an_error"],
    },
    Door {
        input: "leases (leader election, a fleet's shards)",
        written_by: "whoever may write Leases in the watcher's namespace",
        through: &[
            "watch/lease.rs::elect",
            "watch/lease.rs::holds",
            "watch/fleet/shard.rs::leases",
            "watch/fleet/shard.rs::leave",
        ],
        budget: "the watcher's own namespace only, one Lease per replica listed by label each round; a lease it cannot read claims nothing, and a replica acts on a cluster only while its own Lease is fresh",
        tests: &["tests/integration/fleet_watch.rs::a_replica_that_cannot_read_the_leases_claims_no_cluster"],
    },
    Door {
        input: "the API server's version, discovery and OpenAPI schemas",
        written_by: "the API server (a fleet member's: whoever runs that cluster)",
        through: &[
            "engine/session.rs::capabilities",
            "watch/fleet/member.rs::silent",
            "live/mod.rs::discover",
            "live/mod.rs::published_schema",
        ],
        budget: "as kube parses them; a fleet member's responses 64 MiB each (api/connect.rs); a schema kept only for the kind asked",
        tests: &["src/api/connect.rs::a_members_response_past_the_cap_is_an_error"],
    },
    Door {
        input: "the API server's answers to helm-drift's own writes (Events, a shard's lease, who the client is, baselines, pauses, guards)",
        written_by: "the API server and its admission webhooks",
        through: &[
            "live/events.rs::record_event",
            "watch/outputs/drift_events.rs::record",
            "watch/fleet/shard.rs::renew",
            "pause/mod.rs::whoami",
            "pause/mod.rs::apply",
            "pause/mod.rs::end",
            "baseline/store.rs::write_configmap",
            "live/admission.rs::write",
            "live/admission.rs::remove",
        ],
        budget: "one object each (etcd's 1.5 MiB), as kube parses it; only whether it was made, or the user's name, kept",
        tests: &[
            "tests/integration/pause.rs::a_pause_holds_healing_until_it_ends_and_one_next_to_the_release_does_nothing",
        ],
    },
    Door {
        input: "alert receivers' answers",
        written_by: "whoever serves the receiver's URL the operator names",
        through: &["watch/outputs/notify.rs::send"],
        budget: "the status line only, never the body; 5 s per attempt, 4 attempts",
        tests: &["tests/integration/watch.rs::a_failing_receiver_never_holds_up_detection"],
    },
    Door {
        input: "the Events' signing key",
        written_by: "whoever may read and write Secrets in the watcher's namespace",
        through: &["watch/store/signing_key.rs::read_or_create"],
        budget: "one Secret of the watcher's namespace",
        tests: &["src/watch/store/signing_key.rs::each_member_of_a_fleet_signs_with_a_key_of_its_own"],
    },
    Door {
        input: "watch streams (records, objects: metadata)",
        written_by: "whoever writes those objects",
        through: &["watch/sources/mod.rs::storage", "watch/sources/mod.rs::kind"],
        budget: "metadata only; each event only marks a release, which is then read within the bounds of a record read (above)",
        tests: &["tests/integration/tenancy.rs::a_namespace_gets_at_most_its_share_of_releases"],
    },
    Door {
        input: "audit webhook connections and batches",
        written_by: "anyone who can reach the port; a batch from a sender with a token or certificate",
        through: &["watch/receiver/server.rs::serve"],
        budget: "64 connections, 8 per source address, 5 s for the handshake, 30 s per request, 8 MiB per batch; 32 groups and addresses per event; a window of 16 MiB per cluster, the namespace holding the most forgetting first; one touch per object waits at a time",
        tests: &["tests/integration/audit.rs::the_audit_endpoint_refuses_and_counts_what_no_api_server_sends"],
    },
    Door {
        input: "audit log lines (check --audit-log)",
        written_by: "the API server (and whoever could write the file)",
        through: &["audit/event.rs::parse_line"],
        budget: "4 MiB per line, the same limits as a batch's events",
        tests: &["src/audit/event.rs::what_no_api_server_writes_is_refused"],
    },
    Door {
        input: "clients of the page, /drifts.json and /metrics",
        written_by: "anyone who can reach the port",
        through: &["watch/outputs/server.rs::serve"],
        budget: "two pages built at once; read-only",
        tests: &["tests/integration/watch.rs::detects_once_resolves_and_follows_the_release"],
    },
];

#[cfg(test)]
mod tests {
    use super::DOORS;
    use crate::layering::{fn_name, none, sources, src, without_comments_and_strings};
    use std::collections::BTreeSet;

    /// What reads the cluster or the network: a LIST, GET or watch of the API, a raw request, a
    /// listening socket, a SQL query.
    const READS: &[&str] = &[
        ".list(",
        ".list_metadata(",
        ".get_opt(",
        ".get_metadata_opt(",
        "api.get(",
        ".request::<",
        ".request_text(",
        ".request_stream(",
        "metadata_watcher(",
        "TcpListener::bind",
        ".query(",
        ".query_opt(",
        ".query_one(",
    ];
    /// Reads that start a word (`watcher(` is not `metadata_watcher(`'s door twice).
    const WORDS: &[&str] = &["watcher(", "list_kept(", "kept_pages(", "list_all_metadata("];
    /// Where the reads above are written once for every door's use.
    const PRIMITIVES: &[&str] = &[
        "api/pages.rs::list_kept",
        "api/pages.rs::kept_pages",
        "api/pages.rs::list_all_metadata",
        "helm/capture.rs::capture",
    ];

    fn reads(line: &str) -> bool {
        let word = |w: &str| {
            line.match_indices(w).any(|(at, _)| !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        };
        // `uri.query()` reads nothing.
        READS.iter().any(|r| line.match_indices(r).any(|(at, _)| !line[at + r.len()..].starts_with(')')))
            || WORDS.iter().any(|w| word(w))
    }

    #[test]
    fn the_read_matcher_sees_reads_and_only_reads() {
        assert!(reads("let list = api.list(&params).await"));
        assert!(reads("tokio::spawn(follow(metas(watcher(api, config))))"));
        assert!(reads("crate::api::list_kept(client, &api, &lp, keep)"));
        assert!(!reads("let q = uri.query();") && !reads("fn my_watcher(x)") && !reads("let x = map.get(&k);"));
    }

    #[test]
    fn every_read_goes_through_a_door() {
        let doors: BTreeSet<&str> = DOORS.iter().flat_map(|d| d.through.iter().copied()).collect();
        let (mut outside, mut functions) = (Vec::new(), BTreeSet::new());
        for source in sources() {
            let file = source.file.strip_prefix(src()).unwrap().display().to_string();
            let mut current = String::from("(no function)");
            for line in without_comments_and_strings(&source.code).lines() {
                if let Some(name) = fn_name(line.trim()) {
                    current = format!("{file}::{name}");
                    functions.insert(current.clone());
                }
                if reads(line) && !doors.contains(current.as_str()) && !PRIMITIVES.contains(&current.as_str()) {
                    outside.push(format!("{current}: {}", line.trim()));
                }
            }
        }
        none(outside, "reads of the cluster or the network outside every door of doors::DOORS");
        none(doors.iter().filter(|d| !functions.contains(**d)).map(|d| d.to_string()), "doors naming no function");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let missing = DOORS.iter().flat_map(|d| d.tests.iter()).filter(|t| {
            let (file, test) = t.split_once("::").expect("FILE::test");
            let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            !text.contains(&format!("fn {test}("))
        });
        none(missing.map(|t| t.to_string()), "doors whose hostile test does not exist");
    }

    /// The compiler finds the reads a text search cannot (a method reached through a helper
    /// crate, a response to a write): `clippy.toml` disallows every method that reads the cluster
    /// or the network, so a read compiles (under `-D warnings`) only inside a function marked
    /// `#[expect(clippy::disallowed_methods)]`, and each mark must sit on a door's function (or a
    /// primitive the doors share). `expect` fails when the mark is not needed.
    #[test]
    fn the_compiler_allows_reads_only_in_doors() {
        let doors: BTreeSet<&str> = DOORS.iter().flat_map(|d| d.through.iter().copied()).collect();
        let mut misplaced = Vec::new();
        for source in sources() {
            let file = source.file.strip_prefix(src()).unwrap().display().to_string();
            let code = without_comments_and_strings(&source.code);
            let mut marked = false;
            for line in code.lines().map(str::trim) {
                if line.contains("allow(clippy::disallowed_methods") {
                    misplaced.push(format!("{file}: an allow, not an expect on a door: {line}"));
                }
                if line.starts_with("#[expect(clippy::disallowed_methods") {
                    marked = true;
                    continue;
                }
                if let (true, Some(name)) = (marked, fn_name(line)) {
                    let at = format!("{file}::{name}");
                    if !doors.contains(at.as_str()) && !PRIMITIVES.contains(&at.as_str()) {
                        misplaced.push(format!("{at}: marked to read, but no door names it"));
                    }
                    marked = false;
                }
            }
        }
        none(misplaced, "reads the compiler lets through outside every door of doors::DOORS");
        let config = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clippy.toml"))
            .expect("clippy.toml");
        let kept = [
            "kube::Api::get\"",
            "kube::Api::list\"",
            "kube::Client::request\"",
            "kube::runtime::watcher\"",
            "kube::Api::patch\"",
            "kube::Api::replace\"",
            "kube::Api::delete\"",
            "kube::Api::patch_status\"",
            "kube::discovery::group\"",
            "kube::discovery::pinned_kind\"",
        ];
        none(
            kept.iter().filter(|m| !config.contains(&format!("path = \"{m}"))).map(|m| m.to_string()),
            "reads clippy.toml no longer disallows",
        );
    }

    /// The numbers a door's budget states, each with the constant the code bounds it by:
    /// `(door input, file under src/, constant, the budget's words with {} for its value)`.
    const BOUNDS: &[(&str, &str, &str, &str)] = &[
        ("release records (Secrets, ConfigMaps)", "api/sized.rs", "PAGE_MAX", "asked again with fewer past {}"),
        ("a record's chart, values", "helm/mod.rs", "HELM_STDOUT", "output read up to {}"),
        ("a record's chart, values", "helm/mod.rs", "HELM_STDERR", "its words up to {}"),
        ("a record's chart, values", "helm/mod.rs", "HELM_SECONDS", "stopped after {} s"),
        ("a Cluster API HelmChartProxy", "plan/caaph/mod.rs", "FLEET_SECONDS", "{} s for the whole fleet"),
        ("a Flux HelmRelease", "plan/values_from.rs", "MOST", "{} valuesFrom references"),
        ("a Flux HelmRelease", "plan/kustomize.rs", "MOST_ITEMS", "{} and"),
        ("a Flux HelmRelease", "plan/kustomize.rs", "MOST_TEXT", "and {} at most"),
        ("a Flux HelmRelease", "helm/scratch.rs", "RENDER_BYTES", "30 s and {}"),
        ("a Cluster API HelmChartProxy", "helm/scratch.rs", "RENDER_BYTES", "30 s, {}"),
        ("live objects (lists)", "api/sized.rs", "PAGE_BYTES", "pages sized to {}"),
        ("live objects (lists)", "api/sized.rs", "PAGE_MAX", "fewer objects past {}"),
        ("audit webhook connections", "watch/receiver/server.rs", "MAX_CONNECTIONS", "{} connections"),
        ("audit webhook connections", "watch/receiver/server.rs", "MAX_BATCH", "{} per batch"),
        ("audit log lines", "audit/event.rs", "MAX_EVENT_BYTES", "{} per line"),
        ("release records (SQL rows)", "release/sql.rs", "BODY_MAX", "a body over {} refused"),
    ];

    /// The value of `const NAME: T = EXPR;` in a source file, for the forms the code uses
    /// (`50`, `10_000`, `64 << 20`, `4 * 1024 * 1024`).
    fn constant(file: &str, name: &str) -> Option<usize> {
        let text =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(file)).ok()?;
        let line = text.lines().find(|l| l.contains(&format!("const {name}: ")))?;
        let expr = line.split_once('=')?.1.trim().trim_end_matches(';').replace('_', "");
        if let Some((a, b)) = expr.split_once("<<") {
            return Some(a.trim().parse::<usize>().ok()? << b.trim().parse::<usize>().ok()?);
        }
        expr.split('*').map(|n| n.trim().parse::<usize>().ok()).product()
    }

    /// A number as the budgets write it: bytes in KiB or MiB when whole, else as is.
    fn spoken(constant: &str, value: usize) -> String {
        let bytes = ["BYTES", "MAX", "TEXT", "STDOUT", "STDERR", "BATCH"].iter().any(|w| constant.ends_with(w));
        match value {
            v if bytes && v >= 1 << 20 && v % (1 << 20) == 0 => format!("{} MiB", v >> 20),
            v if bytes && v >= 1 << 10 && v % (1 << 10) == 0 => format!("{} KiB", v >> 10),
            v => v.to_string(),
        }
    }

    #[test]
    fn each_budget_states_the_constant_the_code_bounds_by() {
        let wrong = BOUNDS.iter().filter_map(|(input, file, name, words)| {
            let door = DOORS.iter().find(|d| d.input.starts_with(input));
            let Some(value) = constant(file, name) else { return Some(format!("{file}: no constant {name}")) };
            let said = words.replace("{}", &spoken(name, value));
            match door {
                None => Some(format!("no door {input:?}")),
                Some(d) if !d.budget.contains(&said) => {
                    Some(format!("{input:?}: its budget does not say {said:?} ({file}::{name})"))
                }
                Some(_) => None,
            }
        });
        none(wrong, "door budgets that part from the code's constants");
        assert_eq!(spoken("MAX_BATCH", 8 << 20), "8 MiB");
        assert_eq!(spoken("MOST_TEXT", 256 << 10), "256 KiB");
        assert_eq!(spoken("MOST", 64), "64");
    }

    /// The tables [`DOORS`] writes (`HELM_DRIFT_WRITE_DOORS=1` writes them): for users on the
    /// security page, what is read, who can write it and its limits; for contributors in the
    /// architecture page, the functions that read each too.
    #[test]
    fn the_security_page_lists_every_door() {
        let marker = "<!-- doors: generated from src/doors.rs (HELM_DRIFT_WRITE_DOORS=1 cargo test --lib doors) -->\n";
        let mut users = format!("{marker}| what is read | who can write it | its limits |\n|---|---|---|\n");
        let mut contributors = format!("{marker}| input | who can write it | door | budget |\n|---|---|---|---|\n");
        for d in DOORS {
            let through: Vec<String> = d.through.iter().map(|t| format!("`{t}`")).collect();
            users.push_str(&format!("| {} | {} | {} |\n", d.input, d.written_by, d.budget));
            contributors.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                d.input,
                d.written_by,
                through.join(", "),
                d.budget
            ));
        }
        let stale: Vec<&str> =
            [("docs/src/security.md", users), ("docs/src/contributing/architecture.md", contributors)]
                .into_iter()
                .filter(|(page, table)| !table_is_written(page, &format!("{table}<!-- /doors -->")))
                .map(|(page, _)| page)
                .collect();
        assert!(
            stale.is_empty(),
            "doors tables out of date in {stale:?}: HELM_DRIFT_WRITE_DOORS=1 cargo test --lib doors"
        );
    }

    /// Whether `page`'s doors table is `table`; written when `HELM_DRIFT_WRITE_DOORS` is set.
    fn table_is_written(page: &str, table: &str) -> bool {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
        let text = std::fs::read_to_string(&path).unwrap();
        let (start, end) = (text.find("<!-- doors:"), text.find("<!-- /doors -->"));
        let (Some(start), Some(end)) = (start, end) else { panic!("{page} has no doors table") };
        let written = &text[start..end + "<!-- /doors -->".len()];
        if written != table && std::env::var_os("HELM_DRIFT_WRITE_DOORS").is_some() {
            std::fs::write(&path, text.replacen(written, table, 1)).unwrap();
            return true;
        }
        written == table
    }
}
