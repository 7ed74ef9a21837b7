//! jq path expressions (Argo CD's `jqPathExpressions`) through jaq, a Rust jq implementation:
//! the JSON pointers of what an expression selects in an object.

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;
use serde_json::Value;

/// A compiled `[path(EXPR)]`.
pub(crate) struct PathQuery {
    expr: String,
    filter: jaq_core::Filter<data::JustLut<Val>>,
}

impl std::fmt::Debug for PathQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PathQuery({:?})", self.expr)
    }
}

/// A jq path expression that does not parse or compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("jq expression {expr:?} does not {stage}: {detail}")]
pub(crate) struct JqError {
    expr: String,
    stage: &'static str,
    detail: String,
}

impl PathQuery {
    /// Compiles a jq path expression.
    pub(crate) fn new(expr: &str) -> Result<PathQuery, JqError> {
        let code = format!("[path({expr})]");
        let program = File { code: code.as_str(), path: () };
        let defs = jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs());
        let funs = jaq_core::funs().chain(jaq_std::funs()).chain(jaq_json::funs());
        let arena = Arena::default();
        let modules = Loader::new(defs).load(&arena, program).map_err(|e| JqError {
            expr: expr.into(),
            stage: "parse",
            detail: format!("{e:?}"),
        })?;
        let filter = Compiler::default().with_funs(funs).compile(modules).map_err(|e| JqError {
            expr: expr.into(),
            stage: "compile",
            detail: format!("{e:?}"),
        })?;
        Ok(PathQuery { expr: expr.to_string(), filter })
    }

    /// The JSON pointers the expression selects in `object` (none when it selects nothing or
    /// fails on this object).
    pub(crate) fn pointers(&self, object: &Value) -> Vec<String> {
        let Ok(input) = jaq_json::read::parse_single(object.to_string().as_bytes()) else { return Vec::new() };
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        let mut out = Vec::new();
        for result in self.filter.id.run((ctx, input)).map(unwrap_valr) {
            let Ok(paths) = result else { continue };
            let Ok(Value::Array(paths)) = serde_json::from_str::<Value>(&paths.to_string()) else { continue };
            for p in paths {
                let tokens = p.as_array().cloned().unwrap_or_default();
                let mut pointer = String::new();
                for t in tokens {
                    let token = t.as_str().map_or_else(|| t.to_string(), str::to_string);
                    pointer = crate::model::path::join(&pointer, &token);
                }
                out.push(pointer);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selects_pointers() {
        let q = PathQuery::new(r#".spec.template.spec.initContainers[] | select(.name == "istio-init")"#).unwrap();
        let obj = json!({"spec": {"template": {"spec": {"initContainers": [{"name": "a"}, {"name": "istio-init"}]}}}});
        assert_eq!(q.pointers(&obj), ["/spec/template/spec/initContainers/1"]);
        assert!(q.pointers(&json!({})).is_empty());
        let q = PathQuery::new(".metadata.annotations[\"a/b\"]").unwrap();
        assert_eq!(q.pointers(&json!({"metadata": {"annotations": {"a/b": "x"}}})), ["/metadata/annotations/a~1b"]);
        assert!(PathQuery::new(".spec[").is_err());
    }
}
