//! A self-healing fleet shared by two replicas (issues 84, 92): each entry is healed by the
//! replica it is placed on and never by both, also across a replica killed mid-way, whose
//! entries the other takes once its Lease expires. Repairs are counted from both replicas' logs.

use crate::fleet_watch::{kubeconfig_of, management_and_two_planes};
use crate::inventory::cluster;
use crate::support::{eventually, eventually_or};
use crate::watching::Watching;
use std::time::Duration;

/// The repairs applied to entry `entry`, as logged in `lines` (the replicas' logs).
fn repairs(lines: &[serde_json::Value], entry: &str) -> usize {
    let cluster = format!("heal-shard-mgmt/{entry}");
    lines
        .iter()
        .filter(|l| l["msg"] == "repair" && l["result"] == "applied" && l["cluster"] == cluster.as_str())
        .count()
}

#[test]
fn two_healing_replicas_never_heal_one_entry_twice() {
    // One entry per control plane: what one entry heals, the other never sees drift of.
    let (mgmt, near, far) = management_and_two_planes("heal-shard-mgmt", "heal-shard-w");
    for env in [&near, &far] {
        env.kubectl(&["label", "secret", "-l", "owner=helm,name=web", "helm-drift.io/repair=true"]).success();
    }
    cluster(&mgmt, "a", "fleet: heal", true, Some(&kubeconfig_of(&near)));
    cluster(&mgmt, "b", "fleet: heal", true, Some(&kubeconfig_of(&far)));
    let args = [
        "web",
        "-n",
        "heal-shard-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "heal-shard-mgmt",
        "--clusters-interval",
        "1s",
        "--leader-elect",
        "--lease-name",
        "heal",
        "--lease-namespace",
        "heal-shard-mgmt",
        "--lease-duration",
        "3s",
        "--repair",
        "--repair-cooldown",
        "1s",
        "--fight-limit",
        "10",
        "--trust-namespace",
        "heal-shard-w",
    ];
    let one = Watching::start(&mgmt, &args).ready();
    let two = Watching::start(&mgmt, &args).ready();
    let holds = |w: &Watching, entry: &str| {
        w.metrics().contains(&format!(
            "helm_drift_release_drifted{{cluster=\"heal-shard-mgmt/{entry}\",namespace=\"heal-shard-w\",release=\"web\"}}"
        ))
    };
    // Each entry on exactly one replica (placed by hashing: both may be on one).
    eventually("each entry on one replica", Duration::from_secs(60), || {
        (holds(&one, "a") ^ holds(&two, "a")) && (holds(&one, "b") ^ holds(&two, "b"))
    });
    let healed = |round: usize, replicas: &[&Watching]| {
        for env in [&near, &far] {
            let edit = format!(r#"{{"data":{{"greeting":"edit {round}"}}}}"#);
            env.merge_patch("configmap", "web-config", &edit);
        }
        for env in [&near, &far] {
            eventually_or(
                &format!("round {round} healed on {}", env.ns),
                Duration::from_secs(45),
                || env.get("configmap", "web-config", "{.data.greeting}") == "hello",
                || replicas.iter().map(|w| w.logs_text()).collect::<Vec<_>>().join("\n---\n"),
            );
        }
    };
    // A repair's log line follows its write: wait for each entry's line, then count them exactly.
    let logged = |lines: &dyn Fn() -> Vec<serde_json::Value>, each: usize| {
        eventually("every repair logged", Duration::from_secs(30), || {
            let l = lines();
            repairs(&l, "a") >= each && repairs(&l, "b") >= each
        });
    };
    healed(1, &[&one, &two]);
    let both = || [one.log_lines(), two.log_lines()].concat();
    logged(&both, 1);
    assert_eq!((repairs(&both(), "a"), repairs(&both(), "b")), (1, 1), "{}\n---\n{}", one.logs_text(), two.logs_text());
    // The replica holding entry a dies without giving its Lease back; the next rounds' edits
    // come before its Lease has expired, and the survivor heals its entries once it has them.
    let (dying, survivor) = if holds(&one, "a") { (one, two) } else { (two, one) };
    let by_dying = dying.log_lines();
    dying.kill();
    healed(2, &[&survivor]);
    healed(3, &[&survivor]);
    eventually("the survivor watches both entries", Duration::from_secs(30), || {
        holds(&survivor, "a") && holds(&survivor, "b")
    });
    // Each round repaired each entry exactly once, whoever held it.
    logged(&|| [by_dying.clone(), survivor.log_lines()].concat(), 3);
    let lines = [by_dying, survivor.log_lines()].concat();
    assert_eq!((repairs(&lines, "a"), repairs(&lines, "b")), (3, 3), "{}", survivor.logs_text());
    survivor.stop();
}
