//! Every install of the chart the book shows (`helm install|upgrade helm-drift CHART ...`) renders
//! with `helm template` as written (the published chart is this checkout's), and what each grants
//! cluster-wide besides reading and Events is what the block's `<!-- book: chart writes W; W... -->`
//! says, one entry per install line in order (`none`, or the verbs such as `create patch`).

use crate::support::{Env, Helm, repo_root};
use serde_yaml::Value;

/// An install line of the chart, and what its block says it grants.
struct Install {
    at: String,
    words: Vec<String>,
    says: Option<String>,
}

fn installs() -> Vec<Install> {
    let mut out = Vec::new();
    for (page, text) in crate::release::documents(&repo_root()) {
        let lines: Vec<&str> = text.lines().collect();
        for code in crate::book::code_blocks(&lines) {
            let marker = crate::book::comments_above(code.above)
                .into_iter()
                .find_map(|c| c.strip_prefix("book: chart writes "))
                .map(|m| m.split(';').map(|w| w.trim().to_string()).collect::<Vec<_>>());
            let lines = crate::book::joined(code.body);
            let installs = lines
                .iter()
                .map(|l| crate::book::split_comment(l).0)
                .filter(|c| c.starts_with("helm install helm-drift ") || c.starts_with("helm upgrade helm-drift "));
            for (i, line) in installs.enumerate() {
                let says = marker.as_ref().and_then(|m| m.get(i).cloned());
                out.push(Install { at: format!("{page}:{}", code.line), words: crate::book::words(line), says });
            }
        }
    }
    out
}

/// The verbs granted by the ClusterRoles besides reading, on anything but Events.
fn writes(docs: &[Value]) -> String {
    let mut verbs: Vec<String> = docs
        .iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .flat_map(|d| d["rules"].as_sequence().cloned().unwrap_or_default())
        .filter(|r| !r["resources"].as_sequence().is_some_and(|x| x.iter().all(|x| x == "events")))
        .flat_map(|r| r["verbs"].as_sequence().cloned().unwrap_or_default())
        .filter_map(|v| v.as_str().map(str::to_string))
        .filter(|v| !["get", "list", "watch"].contains(&v.as_str()))
        .collect();
    verbs.sort();
    verbs.dedup();
    if verbs.is_empty() { "none".to_string() } else { verbs.join(" ") }
}

#[test]
fn every_install_of_the_chart_in_the_book_renders_and_grants_what_it_says() {
    let env = Env::new("book-chart");
    let installs = installs();
    assert!(installs.len() >= 4, "the chart's installs in the book: {}", installs.len());
    let mut wrong = Vec::new();
    for install in &installs {
        // `helm install NAME CHART FLAGS`: the flags that shape what is rendered.
        let mut flags: Vec<&str> = Vec::new();
        let mut words = install.words[4..].iter();
        while let Some(w) = words.next() {
            match w.as_str() {
                "--version" => {
                    words.next();
                }
                "-n" | "--namespace" => flags.extend(["--namespace", words.next().unwrap()]),
                "--create-namespace" | "--wait" | "--atomic" => {}
                other => flags.push(other),
            }
        }
        let docs = crate::chart::template(&env, Helm::V4, &flags);
        let granted = writes(&docs);
        match &install.says {
            None => wrong.push(format!("{}: no `<!-- book: chart writes ... -->` above its block", install.at)),
            Some(says) if *says != granted => {
                wrong.push(format!("{}: grants {granted}, the page says {says}", install.at))
            }
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
