//! Why a request to the API server failed, typed: what the server said, in one line a person
//! can act on (never a debug dump of kube's `Status`).

use crate::model::FieldConflict;

/// A failed request to the API server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ApiError {
    /// HTTP 403: the identity lacks an RBAC verb.
    #[error("forbidden: the identity may not {verb} {resource} ({message})")]
    Forbidden { verb: String, resource: String, message: String },
    /// HTTP 404.
    #[error("404 NotFound: {message}")]
    NotFound { message: String },
    /// HTTP 400/422: the request or the object it would make is invalid; `detail` lists the
    /// server's causes (`field: message`).
    #[error("{code} {reason}: {detail}")]
    Invalid { code: u16, reason: String, detail: String },
    /// HTTP 409: the object changed meanwhile, a guarded patch's test failed, or a server-side
    /// apply met fields other managers own (`conflicts`, as the server names them).
    #[error("409 Conflict: {message}")]
    Conflict { message: String, conflicts: Vec<FieldConflict> },
    /// The server was unreachable, timed out, or said it is busy or failing (retried first).
    #[error("{message}")]
    Transient { message: String },
    #[error("{message}")]
    Other { message: String },
}

impl ApiError {
    /// Translates kube's error for a request that tried to `verb` `resource`.
    pub(crate) fn from_kube(e: &kube::Error, verb: &str, resource: &str) -> ApiError {
        match e {
            kube::Error::Api(s) => {
                let reason = if s.reason.is_empty() { "Error".to_string() } else { s.reason.clone() };
                let message = s.message.clone();
                match s.code {
                    403 => ApiError::Forbidden { verb: verb.into(), resource: resource.into(), message },
                    404 => ApiError::NotFound { message },
                    409 => {
                        let causes = s.details.iter().flat_map(|d| &d.causes);
                        let conflicts = causes
                            .filter(|c| c.reason == "FieldManagerConflict")
                            .filter_map(|c| FieldConflict::from_cause(&c.message, &c.field))
                            .collect();
                        ApiError::Conflict { message, conflicts }
                    }
                    400 | 422 => {
                        let causes: Vec<String> = s
                            .details
                            .iter()
                            .flat_map(|d| &d.causes)
                            .map(|c| {
                                if c.field.is_empty() {
                                    c.message.clone()
                                } else {
                                    format!("{}: {}", c.field, c.message)
                                }
                            })
                            .collect();
                        let detail = if causes.is_empty() { message } else { causes.join("; ") };
                        ApiError::Invalid { code: s.code, reason, detail }
                    }
                    code @ (429 | 500..=599) => ApiError::Transient { message: format!("{code} {reason}: {message}") },
                    code => ApiError::Other { message: format!("{code} {reason}: {message}") },
                }
            }
            e if super::retry::transient(e) => ApiError::Transient { message: one_line(e) },
            e => ApiError::Other { message: one_line(e) },
        }
    }

    /// One word for the failure (a metric label).
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            ApiError::Forbidden { .. } => "forbidden",
            ApiError::NotFound { .. } => "not-found",
            ApiError::Invalid { .. } => "invalid",
            ApiError::Conflict { .. } => "conflict",
            ApiError::Transient { .. } => "unavailable",
            ApiError::Other { .. } => "other",
        }
    }

    pub(crate) fn is_forbidden(&self) -> bool {
        matches!(self, ApiError::Forbidden { .. })
    }
}

/// kube's message without its type prefix (`HyperError: `, `ServiceError: `), each cause once.
fn one_line(e: &kube::Error) -> String {
    let text = crate::errors::one_line(e);
    for prefix in ["HyperError: ", "ServiceError: ", "HttpError: "] {
        if let Some(rest) = text.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::response::Status;

    fn api(code: u16, reason: &str, message: &str, causes: &[(&str, &str)]) -> kube::Error {
        let causes: Vec<_> = causes.iter().map(|(f, m)| serde_json::json!({"field": f, "message": m})).collect();
        let status: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": code, "reason": reason, "message": message, "details": {"causes": causes}
        }))
        .unwrap();
        kube::Error::Api(Box::new(status))
    }

    #[test]
    fn invalid_names_the_field_and_the_cause() {
        let e = api(
            422,
            "Invalid",
            "Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].ports[1].name: Duplicate value: \"http\"",
            &[("spec.template.spec.containers[0].ports[1].name", "Duplicate value: \"http\"")],
        );
        let text = ApiError::from_kube(&e, "patch", "deployments").to_string();
        assert_eq!(text, "422 Invalid: spec.template.spec.containers[0].ports[1].name: Duplicate value: \"http\"");
    }

    #[test]
    fn a_server_side_conflict_names_each_field_and_its_owner() {
        let status: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl\" with subresource \"scale\" using apps/v1: .spec.replicas",
            "details": {"causes": [
                {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl\" with subresource \"scale\" using apps/v1", "field": ".spec.replicas"},
                {"reason": "Other", "message": "conflict with \"x\" using v1", "field": ".spec.paused"}
            ]}
        }))
        .unwrap();
        let ApiError::Conflict { conflicts, .. } =
            ApiError::from_kube(&kube::Error::Api(Box::new(status)), "patch", "deployments")
        else {
            panic!("a 409 is a conflict");
        };
        assert_eq!(conflicts.len(), 1, "only the field manager's causes: {conflicts:?}");
        assert_eq!((conflicts[0].manager.as_str(), conflicts[0].field.as_str()), ("kubectl", ".spec.replicas"));
    }

    #[test]
    fn forbidden_names_the_verb_and_no_debug_dump_leaks() {
        let e = api(403, "Forbidden", "secrets \"x\" is forbidden: User \"v\" cannot patch", &[]);
        let err = ApiError::from_kube(&e, "patch", "secrets");
        assert!(err.is_forbidden());
        assert_eq!(
            err.to_string(),
            "forbidden: the identity may not patch secrets (secrets \"x\" is forbidden: User \"v\" cannot patch)"
        );
        for e in [api(409, "Conflict", "the object has been modified", &[]), api(500, "InternalError", "boom", &[])] {
            let text = ApiError::from_kube(&e, "get", "pods").to_string();
            assert!(!text.contains("Status {") && !text.contains("Some("), "{text}");
        }
    }
}
