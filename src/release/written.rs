//! When the storage last wrote a record: what tells Helm's apply of the revision from a later
//! write under Helm's name ([`crate::compare::provenance`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// When the storage last wrote a record's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    /// The server's time of the write that owns a Secret's or ConfigMap's `data` (to the
    /// second); SQL's `modifiedAt` (Helm's clock).
    pub(crate) at: jiff::Timestamp,
}

/// When a storage object's `data` was last written: the time of the managedFields entry that
/// owns it (the latest, when several do), by the server's clock; a label written later (by
/// whoever) does not move it.
pub(crate) fn data_written(meta: &ObjectMeta) -> Option<Written> {
    let entries =
        || meta.managed_fields.iter().flatten().filter_map(|e| Some((e.fields_v1.as_ref()?, e.time.as_ref()?.0)));
    let at = entries().filter(|(f, _)| f.0.get("f:data").is_some()).map(|(_, t)| t).max()?;
    Some(Written { at })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(entries: serde_json::Value) -> ObjectMeta {
        serde_json::from_value(serde_json::json!({"resourceVersion": "42", "managedFields": entries})).unwrap()
    }

    #[test]
    fn the_data_write_is_when_the_record_was_written() {
        let data = serde_json::json!({"manager": "helm", "operation": "Update", "time": "2026-12-02T12:00:10Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:release": {}}}});
        let label = serde_json::json!({"manager": "kubectl-label", "operation": "Update", "time": "2026-12-02T13:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}});
        let w = data_written(&meta(serde_json::json!([data]))).unwrap();
        assert_eq!(w.at.to_string(), "2026-12-02T12:00:10Z");
        // Labelled later: the time stays the data's.
        let w = data_written(&meta(serde_json::json!([data, label]))).unwrap();
        assert_eq!(w.at.to_string(), "2026-12-02T12:00:10Z");
        assert_eq!(data_written(&meta(serde_json::json!([label]))), None);
    }
}
