//! Builds a benchmark fleet of Helm-4-style releases directly through the API (much faster than
//! running helm hundreds of times): release records in Helm's Secret format (JSON → gzip →
//! base64, Helm's labels, several revisions) and their objects applied server-side as `helm`.
//! Optionally edits a fraction of the objects afterwards, as `kubectl-edit`.
//!
//!   cargo run --release --example fleet -- PREFIX RELEASES NAMESPACES OBJECTS REVISIONS [DRIFT]
//!
//! Uses KUBECONFIG. Labels every record `fleet=PREFIX` for `helm drift check -A -l fleet=PREFIX`.

// A bench tool writing the cluster it measures: the doors bind the product only.
#![allow(clippy::disallowed_methods)]

use base64::Engine;
use futures::{StreamExt, stream};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::io::Write;

const KINDS: [(&str, &str, &str); 5] = [
    ("v1", "ConfigMap", "configmaps"),
    ("v1", "Secret", "secrets"),
    ("v1", "Service", "services"),
    ("v1", "ServiceAccount", "serviceaccounts"),
    ("apps/v1", "Deployment", "deployments"),
];

fn object(kind: usize, name: &str, ns: &str, release: &str) -> Value {
    let meta = json!({
        "name": name,
        "namespace": ns,
        "labels": {"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": release},
        "annotations": {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns},
    });
    let (api_version, kind_name, _) = KINDS[kind];
    let mut o = json!({"apiVersion": api_version, "kind": kind_name, "metadata": meta});
    match kind {
        0 => o["data"] = json!({"greeting": "hello", "size": "3", "config.yaml": "a: 1\nb: [x, y]\n"}),
        1 => o["data"] = json!({"password": base64::engine::general_purpose::STANDARD.encode(format!("pw-{name}"))}),
        2 => {
            o["spec"] = json!({"clusterIP": "None", "selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]})
        }
        3 => {}
        _ => {
            o["spec"] = json!({"replicas": 0, "selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.0",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}})
        }
    }
    o
}

fn resource(kind: usize) -> ApiResource {
    let (api_version, kind_name, plural) = KINDS[kind];
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind_name.into(),
        plural: plural.into(),
    }
}

/// Runs every future, at most `n` at a time, failing on the first error.
async fn run_all<F, E>(futures: impl Iterator<Item = F>, n: usize) -> Result<(), E>
where
    F: std::future::Future<Output = Result<(), E>>,
{
    stream::iter(futures).buffer_unordered(n).collect::<Vec<_>>().await.into_iter().collect()
}

fn record(name: &str, ns: &str, version: u32, status: &str, manifest: &str) -> Vec<u8> {
    let release = json!({
        "name": name, "namespace": ns, "version": version,
        "info": {"first_deployed": "2026-01-01T00:00:00Z", "last_deployed": "2026-01-01T00:00:00Z",
                 "description": "benchmark fleet", "status": status},
        "chart": {"metadata": {"apiVersion": "v2", "name": "fleet", "version": "1.0.0"}, "templates": [], "values": {}},
        "config": {}, "manifest": manifest, "hooks": [], "apply_method": "ssa",
    });
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(release.to_string().as_bytes()).unwrap();
    base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap()).into_bytes()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        anyhow::bail!("usage: fleet PREFIX RELEASES NAMESPACES OBJECTS REVISIONS [DRIFT]");
    }
    let prefix = args[1].clone();
    let (releases, namespaces, objects, revisions): (usize, usize, usize, u32) =
        (args[2].parse()?, args[3].parse()?, args[4].parse()?, args[5].parse()?);
    let drift: f64 = args.get(6).map(|d| d.parse()).transpose()?.unwrap_or(0.0);
    let client = kube::Client::try_default().await?;

    if drift == 0.0 {
        let nss: Api<Namespace> = Api::all(client.clone());
        for i in 0..namespaces {
            let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("{prefix}-ns{i}")}});
            nss.patch(&format!("{prefix}-ns{i}"), &PatchParams::apply("fleet"), &Patch::Apply(&ns)).await?;
        }
    }
    let work: Vec<(usize, usize)> = (0..releases).flat_map(|r| (0..objects).map(move |j| (r, j))).collect();
    if drift > 0.0 {
        // Edit every n-th object as kubectl-edit would.
        let every = (1.0 / drift).round().max(1.0) as usize;
        let edits: Vec<_> = work.iter().enumerate().filter(|(i, _)| i % every == 0).map(|(_, w)| *w).collect();
        let n = edits.len();
        run_all(
            edits.into_iter().map(|(r, j)| {
                let client = client.clone();
                let prefix = prefix.clone();
                async move {
                    let ns = format!("{prefix}-ns{}", r % namespaces);
                    let kind = j % KINDS.len();
                    let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &resource(kind));
                    let patch = match kind {
                        0 => json!({"data": {"greeting": "edited"}}),
                        1 => json!({"data": {"password": "ZWRpdGVk"}}),
                        4 => json!({"spec": {"replicas": 1}}),
                        _ => json!({"metadata": {"labels": {"edited-by": "someone"}}}),
                    };
                    let name = format!("{prefix}-r{r}-o{j}");
                    api.patch(
                        &name,
                        &PatchParams { field_manager: Some("kubectl-edit".into()), ..Default::default() },
                        &Patch::Merge(&patch),
                    )
                    .await
                    .map(|_| ())
                }
            }),
            32,
        )
        .await?;
        println!("edited {n} objects");
        return Ok(());
    }

    // Objects, applied server-side as helm.
    run_all(
        work.iter().map(|&(r, j)| {
            let client = client.clone();
            let prefix = prefix.clone();
            async move {
                let ns = format!("{prefix}-ns{}", r % namespaces);
                let release = format!("{prefix}-r{r}");
                let kind = j % KINDS.len();
                let name = format!("{release}-o{j}");
                let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &resource(kind));
                api.patch(
                    &name,
                    &PatchParams::apply("helm").force(),
                    &Patch::Apply(&object(kind, &name, &ns, &release)),
                )
                .await
                .map(|_| ())
            }
        }),
        32,
    )
    .await?;

    // Release records: revisions 1..N-1 superseded, N deployed.
    run_all((0..releases).map(|r| {
        let client = client.clone();
        let prefix = prefix.clone();
        async move {
            let ns = format!("{prefix}-ns{}", r % namespaces);
            let release = format!("{prefix}-r{r}");
            let manifest: String = (0..objects)
                .map(|j| {
                    let o = object(j % KINDS.len(), &format!("{release}-o{j}"), &ns, &release);
                    let mut o = o.clone();
                    // The manifest holds what the chart rendered: Helm adds the metadata itself.
                    o["metadata"].as_object_mut().unwrap().remove("annotations");
                    o["metadata"]["labels"].as_object_mut().unwrap().remove("app.kubernetes.io/managed-by");
                    o["metadata"].as_object_mut().unwrap().remove("namespace");
                    format!("---\n# Source: fleet/templates/o{j}.yaml\n{}", serde_yaml::to_string(&o).unwrap())
                })
                .collect();
            let secrets: Api<Secret> = Api::namespaced(client, &ns);
            for v in 1..=revisions {
                let status = if v == revisions { "deployed" } else { "superseded" };
                let secret: Secret = serde_json::from_value(json!({
                    "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
                    "metadata": {"name": format!("sh.helm.release.v1.{release}.v{v}"),
                        "labels": {"owner": "helm", "name": release, "status": status, "version": v.to_string(), "fleet": prefix}},
                }))
                .unwrap();
                let mut secret = secret;
                secret.data = Some([("release".to_string(), ByteString(record(&release, &ns, v, status, &manifest)))].into());
                secrets.create(&PostParams::default(), &secret).await?;
            }
            Ok::<_, kube::Error>(())
        }
    }), 16).await?;
    println!(
        "fleet {prefix}: {releases} releases x {objects} objects in {namespaces} namespaces, {revisions} revision(s) each"
    );
    Ok(())
}
