//! Helm's SQL storage driver (PostgreSQL): table `releases_v1`, custom labels in
//! `custom_labels_v1`, bodies encoded as in Secrets.

pub(crate) use super::error::SqlError;
use super::index::MAX_RELEASE_NAME;
use super::index::{Record, ReleaseIndex};
use std::collections::BTreeMap;
use tokio_postgres::NoTls;

/// A connection to Helm's SQL storage.
pub(crate) struct SqlStorage {
    client: tokio_postgres::Client,
}

impl SqlStorage {
    /// Connects, over TLS as the connection string's `sslmode` asks (see [`super::sql_tls`]).
    pub(crate) async fn connect(connection: Option<&str>) -> Result<SqlStorage, SqlError> {
        let conn = connection.ok_or(SqlError::NoConnectionString)?;
        let (wire, tls) = super::sql_tls::split(conn).map_err(SqlError::Tls)?;
        let client = match super::sql_tls::client_config(&tls).map_err(SqlError::Tls)? {
            None => {
                let (client, connection) = tokio_postgres::connect(&wire, NoTls).await.map_err(SqlError::Connect)?;
                tokio::spawn(connection);
                client
            }
            Some(config) => {
                let tls = tokio_postgres_rustls::MakeRustlsConnect::new(config);
                let (client, connection) = tokio_postgres::connect(&wire, tls).await.map_err(SqlError::Connect)?;
                tokio::spawn(connection);
                client
            }
        };
        Ok(SqlStorage { client })
    }

    /// Every release in `namespace` (all when `None`) whose labels match `selector`. Whoever may
    /// write the table writes its rows: rows are read one at a time as they arrive, and only those
    /// whose key, name, namespace and status fit what Helm writes are records (a name over Helm's
    /// 53 characters is none, as Helm would refuse it).
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn releases(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<ReleaseIndex>, SqlError> {
        use futures::TryStreamExt;
        let terms = parse_selector(selector.unwrap_or(""))?;
        let custom: Vec<String> = terms
            .iter()
            .filter(|(k, _)| !["name", "status", "version", "owner"].contains(&k.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        let labels = if custom.is_empty() { BTreeMap::new() } else { self.custom_labels(&custom).await? };
        let listing = |source| SqlError::Query { what: "listing releases_v1".into(), source };
        let most_name = i32::try_from(MAX_RELEASE_NAME).unwrap_or(i32::MAX);
        let rows = self
            .client
            .query_raw(
                "SELECT key, name, namespace, version, status, GREATEST(createdat, modifiedat)::bigint FROM releases_v1 WHERE owner = 'helm' AND ($1::text IS NULL OR namespace = $1) AND length(name) <= $2 AND length(key) <= $3 AND length(namespace) <= $4 AND length(status) <= $5",
                [&namespace as &(dyn tokio_postgres::types::ToSql + Sync), &most_name, &MOST_KEY, &MOST_NAMESPACE, &MOST_STATUS],
            )
            .await
            .map_err(listing)?;
        let mut rows = std::pin::pin!(rows);
        let mut grouped: BTreeMap<(String, String), Vec<Record>> = BTreeMap::new();
        while let Some(row) = rows.try_next().await.map_err(listing)? {
            let key: String = row.get(0);
            let name: String = row.get(1);
            let ns: String = row.get(2);
            let version: i32 = row.get(3);
            let status: String = row.get(4);
            let at = row.get::<_, Option<i64>>(5).and_then(|s| jiff::Timestamp::from_second(s).ok());
            let written = at.map(|at| super::Written { at });
            let system = |k: &str| match k {
                "name" => Some(name.clone()),
                "status" => Some(status.clone()),
                "version" => Some(version.to_string()),
                "owner" => Some("helm".to_string()),
                _ => None,
            };
            let matches = terms.iter().all(|(k, v)| match system(k) {
                Some(actual) => &actual == v,
                None => labels.get(&(key.clone(), ns.clone(), k.clone())) == Some(v),
            });
            if matches && let Ok(revision) = u32::try_from(version) {
                grouped.entry((ns, name)).or_default().push(Record { object: key, revision, status, written });
            }
        }
        Ok(grouped.into_iter().map(|((namespace, name), records)| ReleaseIndex { namespace, name, records }).collect())
    }

    /// The encoded body of one record; refused, naming the row, past [`BODY_MAX`] bytes (asked of
    /// the database before the body is sent).
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn read(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, SqlError> {
        let most = i32::try_from(BODY_MAX).unwrap_or(i32::MAX);
        let row = self
            .client
            .query_opt(
                "SELECT CASE WHEN octet_length(body) <= $3 THEN body END, octet_length(body)::bigint FROM releases_v1 WHERE key = $1 AND namespace = $2",
                &[&key, &namespace, &most],
            )
            .await
            .map_err(|source| SqlError::Query { what: format!("reading row {key:?}"), source })?;
        let Some(row) = row else { return Ok(None) };
        match (row.get::<_, Option<String>>(0), row.get::<_, Option<i64>>(1)) {
            (Some(body), _) => Ok(Some(body.into_bytes())),
            (None, Some(bytes)) => Err(SqlError::TooLarge {
                row: format!("{namespace}/{key}"),
                bytes: u64::try_from(bytes).unwrap_or_default(),
                most: BODY_MAX >> 20,
            }),
            (None, None) => Ok(None),
        }
    }

    /// The custom labels named `keys` of every row, each a label Kubernetes would take (a value
    /// of at most 63 characters), read one at a time as they arrive.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    async fn custom_labels(&self, keys: &[String]) -> Result<BTreeMap<(String, String, String), String>, SqlError> {
        use futures::TryStreamExt;
        let listing = |source| SqlError::Query { what: "listing custom_labels_v1".into(), source };
        let rows = self
            .client
            .query_raw(
                "SELECT releasekey, releasenamespace, key, value FROM custom_labels_v1 WHERE key = ANY($1) AND length(value) <= 63 AND length(releasekey) <= $2 AND length(releasenamespace) <= $3",
                [&keys as &(dyn tokio_postgres::types::ToSql + Sync), &MOST_KEY, &MOST_NAMESPACE],
            )
            .await
            .map_err(listing)?;
        let mut rows = std::pin::pin!(rows);
        let mut out = BTreeMap::new();
        while let Some(r) = rows.try_next().await.map_err(listing)? {
            out.insert((r.get(0), r.get(1), r.get(2)), r.get(3));
        }
        Ok(out)
    }
}

/// The longest row key a record has (`sh.helm.release.v1.NAME.vN`, NAME at most 53).
const MOST_KEY: i32 = 128;
/// The longest namespace name Kubernetes takes.
const MOST_NAMESPACE: i32 = 63;
/// The longest status Helm writes (`pending-rollback`), with room.
const MOST_STATUS: i32 = 32;
/// The largest encoded body read (base64 of a gzipped record; a Secret's holds 1 MiB at most).
pub(crate) const BODY_MAX: usize = 32 * 1024 * 1024;

/// `k=v,k2==v2` into pairs.
fn parse_selector(s: &str) -> Result<Vec<(String, String)>, SqlError> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            let (k, v) =
                t.split_once("==").or_else(|| t.split_once('=')).ok_or_else(|| SqlError::Selector(s.into()))?;
            if k.ends_with('!') {
                return Err(SqlError::Selector(s.into()));
            }
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_selectors_only() {
        assert_eq!(parse_selector("a=b, c==d").unwrap(), vec![("a".into(), "b".into()), ("c".into(), "d".into())]);
        assert!(parse_selector("a!=b").is_err());
        assert!(parse_selector("a").is_err());
        assert!(parse_selector("").unwrap().is_empty());
    }
}
