//! Who made each drift, from the kept audit events: a drifted field's write is the successful
//! write to that object under the field's manager (the request's `fieldManager`, else its user
//! agent's first word) through the same subresource, in flight in the second its managedFields
//! entry records (the last of them, when several are); a deleted object's, the last successful
//! delete of it. When no event matches, or another user's write overlaps the last one, it says so
//! and never guesses.

use super::{AuditedWrite, Target, Window};
use crate::model::{Attribution, Audited, DriftReport, ObjectDrift, ObjectId, Verdict};

/// Said when no kept event made the write.
pub(crate) const NO_RECORD: &str = "no audit record";
/// Said when events by different users could have made it.
pub(crate) const SEVERAL: &str = "several audit records by different users";

/// Attributes every drifted field, deleted and re-created object of the report to the audit
/// event that made it; `target`: where the audit names an object (`None`: the kind is not
/// served, nothing is said).
pub(crate) fn attribute(report: &mut DriftReport, window: &Window, target: impl Fn(&ObjectId) -> Option<Target>) {
    for object in &mut report.objects {
        let Some(t) = target(&object.id) else { continue };
        attribute_object(object, window, &t);
    }
}

fn attribute_object(o: &mut ObjectDrift, window: &Window, target: &Target) {
    if o.verdict == Verdict::Missing {
        o.deleted_by = Some(deleted(window.writes(target).chain(window.writes(&target.collection()))));
    }
    let changers = o.fields.iter_mut().filter_map(|f| f.changed_by.as_mut());
    let changers = changers.chain(o.added.iter_mut().filter_map(|a| a.changed_by.as_mut()));
    let changers = changers.chain(o.expected.iter_mut().filter_map(|e| e.changed_by.as_mut()));
    for by in changers.chain(o.recreated.as_mut()) {
        by.audit = Some(wrote(window.writes(target), by));
    }
}

/// The write a managedFields entry records. An entry without a time (the API server writes
/// none for a write through `scale`) is its manager's last write through that subresource: the
/// latest such write kept (an earlier one would not be the entry's).
pub(crate) fn wrote<'a>(writes: impl Iterator<Item = &'a AuditedWrite>, by: &Attribution) -> Audited {
    let second = by.time.as_deref().and_then(|t| t.parse::<jiff::Timestamp>().ok()).map(|t| t.as_second());
    let same =
        writes.filter(|w| w.actor.verb != "delete" && w.manager == by.manager && w.subresource == by.subresource);
    let Some(second) = second else {
        let last = same.max_by_key(|w| w.completed);
        return last.map_or(Audited::NoRecord(NO_RECORD), |w| Audited::Found(Box::new(w.actor.clone())));
    };
    one_user(same.filter(|w| w.received.as_second() <= second && second <= w.completed.as_second()).collect())
}

/// The last successful delete of the object (or `deletecollection` of its collection, said as
/// such) after it was last created: a delete before a create did not delete what is missing now.
pub(crate) fn deleted<'a>(writes: impl Iterator<Item = &'a AuditedWrite>) -> Audited {
    let writes: Vec<&AuditedWrite> = writes.filter(|w| w.subresource.is_none()).collect();
    let created = writes.iter().filter(|w| w.actor.verb == "create").map(|w| w.completed).max();
    let deletes = writes.iter().filter(|w| {
        let verb = if w.target.is_collection() { "deletecollection" } else { "delete" };
        w.actor.verb == verb && created.is_none_or(|c| w.completed > c)
    });
    let last = deletes.max_by_key(|w| w.completed);
    last.map_or(Audited::NoRecord(NO_RECORD), |w| Audited::Found(Box::new(w.actor.clone())))
}

/// The last of the writes: the one the managedFields entry records (each write of its manager
/// moves the entry). When another user's write was still in flight as it was received, which
/// of them came last is not known: said, not guessed.
fn one_user(writes: Vec<&AuditedWrite>) -> Audited {
    let Some(last) = writes.iter().max_by_key(|w| w.completed) else { return Audited::NoRecord(NO_RECORD) };
    let someone_else =
        |w: &&&AuditedWrite| w.actor.user != last.actor.user || w.actor.impersonated_by != last.actor.impersonated_by;
    if writes.iter().filter(someone_else).any(|w| w.completed > last.received) {
        return Audited::NoRecord(SEVERAL);
    }
    Audited::Found(Box::new(last.actor.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::parse_line;
    use crate::audit::{Window, WindowLimits};
    use serde_json::{Value, json};

    fn write(user: &str, verb: &str, manager: &str, at: &str) -> Value {
        json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":format!("{user}-{at}"),"stage":"ResponseComplete",
            "requestURI":format!("/api/v1/namespaces/ns/configmaps/c?fieldManager={manager}"),"verb":verb,
            "user":{"username":user,"groups":["system:authenticated"]},"userAgent":"kubectl/v1.36.3",
            "objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1"},
            "responseStatus":{"code":200},"requestReceivedTimestamp":format!("{at}.999000Z"),"stageTimestamp":format!("{at}.999900Z")})
    }

    fn window(events: &[Value]) -> Window {
        let mut w = Window::new(WindowLimits::default());
        for e in events {
            w.keep(parse_line(&e.to_string()).unwrap().unwrap(), "2026-12-02T15:00:00Z".parse().unwrap());
        }
        w
    }

    fn target() -> Target {
        Target { group: "".into(), plural: "configmaps".into(), namespace: Some("ns".into()), name: "c".into() }
    }

    fn by(manager: &str, time: &str) -> Attribution {
        Attribution {
            manager: manager.into(),
            operation: "Update".into(),
            subresource: None,
            time: Some(time.into()),
            person: true,
            audit: None,
        }
    }

    fn user(a: Audited) -> String {
        match a {
            Audited::Found(actor) => actor.user,
            Audited::NoRecord(why) => why.to_string(),
        }
    }

    #[test]
    fn the_write_in_flight_in_the_entry_s_second_under_its_manager_made_it() {
        let w = window(&[
            write("bob", "patch", "kubectl-edit", "2026-12-02T14:50:00"),
            write("alice", "patch", "kubectl-edit", "2026-12-02T14:51:00"),
            write("carol", "patch", "kubectl-patch", "2026-12-02T14:51:00"),
        ]);
        assert_eq!(user(wrote(w.writes(&target()), &by("kubectl-edit", "2026-12-02T14:51:00Z"))), "alice");
        assert_eq!(user(wrote(w.writes(&target()), &by("kubectl-edit", "2026-12-02T14:52:00Z"))), NO_RECORD);
        assert_eq!(user(wrote(w.writes(&target()), &by("k9s", "2026-12-02T14:51:00Z"))), NO_RECORD);
    }

    #[test]
    fn an_untimed_entry_is_its_manager_s_last_write_through_the_subresource() {
        let w = window(&[
            write("bob", "patch", "kubectl", "2026-12-02T14:50:00"),
            write("alice", "patch", "kubectl", "2026-12-02T14:51:00"),
        ]);
        assert_eq!(user(wrote(w.writes(&target()), &Attribution { time: None, ..by("kubectl", "") })), "alice");
        let scale = Attribution { time: None, subresource: Some("scale".into()), ..by("kubectl", "") };
        assert_eq!(user(wrote(w.writes(&target()), &scale)), NO_RECORD, "not through the subresource");
    }

    #[test]
    fn of_two_users_in_one_second_the_last_is_named_unless_they_overlap() {
        let at = |user: &str, received: &str, completed: &str| {
            let mut e = write(user, "patch", "kubectl-edit", "2026-12-02T14:51:00");
            e["requestReceivedTimestamp"] = json!(format!("2026-12-02T14:51:00.{received}Z"));
            e["stageTimestamp"] = json!(format!("2026-12-02T14:51:00.{completed}Z"));
            e
        };
        let entry = by("kubectl-edit", "2026-12-02T14:51:00Z");
        let ordered = window(&[at("bob", "100", "200"), at("alice", "300", "400")]);
        assert_eq!(user(wrote(ordered.writes(&target()), &entry)), "alice", "bob's write came first");
        let overlapping = window(&[at("bob", "100", "350"), at("alice", "300", "400")]);
        assert_eq!(user(wrote(overlapping.writes(&target()), &entry)), SEVERAL);
    }

    #[test]
    fn a_deleted_object_is_the_last_delete_s() {
        let w = window(&[
            write("bob", "delete", "", "2026-12-02T14:50:00"),
            write("alice", "delete", "", "2026-12-02T14:55:00"),
        ]);
        assert_eq!(user(deleted(w.writes(&target()))), "alice");
        assert_eq!(user(deleted(window(&[]).writes(&target()))), NO_RECORD);
        // Made again after alice's delete: hers did not delete what is missing now.
        let again = window(&[
            write("alice", "delete", "", "2026-12-02T14:55:00"),
            write("bob", "create", "", "2026-12-02T14:56:00"),
        ]);
        assert_eq!(user(deleted(again.writes(&target()))), NO_RECORD);
        // A deletecollection of its collection counts, as the collection's.
        let mut all = write("carol", "deletecollection", "", "2026-12-02T14:57:00");
        all["objectRef"].as_object_mut().unwrap().remove("name");
        let swept = window(&[write("bob", "create", "", "2026-12-02T14:56:00"), all]);
        let (one, all) = (target(), target().collection());
        assert_eq!(user(deleted(swept.writes(&one).chain(swept.writes(&all)))), "carol");
    }

    #[test]
    fn the_window_forgets_the_oldest_within_its_bytes_and_age() {
        let mut w = Window::new(WindowLimits { max_age: std::time::Duration::from_secs(600), max_bytes: 4096 });
        let now: jiff::Timestamp = "2026-12-02T15:00:00Z".parse().unwrap();
        for i in 0..1000 {
            let e = write(&format!("user{i}"), "patch", "kubectl-edit", "2026-12-02T14:59:00");
            w.keep(parse_line(&e.to_string()).unwrap().unwrap(), now);
        }
        let (count, bytes) = w.size();
        assert!(bytes <= 4096 && count > 0 && count < 1000, "{count} writes, {bytes} bytes");
        assert_eq!(w.dropped(), 1000 - count as u64);
        assert!(w.writes(&target()).last().is_some_and(|x| x.actor.user == "user999"), "the newest are kept");
        w.forget_old("2026-12-02T15:10:01Z".parse().unwrap());
        assert_eq!(w.size(), (0, 0), "older than the window");
    }

    /// Whoever floods writes to their own namespace's objects forgets their own history only.
    #[test]
    fn a_flood_in_one_namespace_forgets_only_its_own_writes() {
        let mut w = Window::new(WindowLimits { max_age: std::time::Duration::from_secs(600), max_bytes: 8192 });
        let now: jiff::Timestamp = "2026-12-02T15:00:00Z".parse().unwrap();
        let keep = |w: &mut Window, user: &str, ns: &str| {
            let mut e = write(user, "patch", "kubectl-edit", "2026-12-02T14:59:00");
            e["objectRef"]["namespace"] = json!(ns);
            w.keep(parse_line(&e.to_string()).unwrap().unwrap(), now);
        };
        keep(&mut w, "alice", "team");
        for i in 0..5000 {
            keep(&mut w, &format!("tenant{i}"), "flood");
        }
        let team = Target { namespace: Some("team".into()), ..target() };
        let flood = Target { namespace: Some("flood".into()), ..target() };
        assert_eq!(
            w.writes(&team).map(|x| x.actor.user.as_str()).collect::<Vec<_>>(),
            ["alice"],
            "another team's write"
        );
        assert!(w.writes(&flood).last().is_some_and(|x| x.actor.user == "tenant4999"));
        let (count, bytes) = w.size();
        assert!(bytes <= 8192 && count < 5001 && w.dropped() == 5001 - count as u64, "{count} writes, {bytes} bytes");
    }
}
