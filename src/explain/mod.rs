//! `check --explain`: for each modified field, which values of the release the template builds
//! it from, and the values that would make the template write the live value. Every value that
//! could produce a field gets a probe of its own (`shape`), the chart rebuilt from the record is
//! rendered with all of them at once, and the probes that show in the field name its values and
//! its shape; renders that fail or lose the field are split in halves until each value is
//! tried, within a bound in renders and time.

mod extension;
mod passes;
mod shape;
mod values;

use crate::compare::subset::scalar_equal;
use crate::desired::{self, DesiredObject};
use crate::helm::{Capabilities, ChartFiles, HelmBinary};
use crate::model::{Built, Cause, DriftReport, Explanation, FieldPath, ObjectDrift, Segment};
use crate::release::Release;
use anyhow::{Context, Result};
use base64::Engine as _;
use serde_json::Value;
use shape::Piece;
use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};
use values::Key;

/// The search stops after this many renders, or this long, whichever comes first.
const MAX_RENDERS: usize = 64;
const MAX_TIME: Duration = Duration::from_secs(60);
/// A field's candidates are rendered together again at most this often.
const MAX_REGROUPS: u8 = 3;

/// Explains the modified fields of a report.
pub async fn explain(
    helm: &HelmBinary,
    release: &Release,
    files: &ChartFiles,
    cluster: &Capabilities,
    report: &DriftReport,
) -> Result<Vec<Explanation>> {
    let defaults = release.chart.as_ref().map(|c| c.default_values()).transpose().context("the chart's values")?;
    let user = release.user_values().context("the release's values")?;
    let values = values::merged(defaults.as_ref(), Some(&user));
    let leaves = values::leaves(&values);
    let mut fields: Vec<Field> = report
        .objects
        .iter()
        .flat_map(|o| o.fields.iter().map(move |f| (o, f)))
        .filter_map(|(o, f)| Field::new(o, &f.path, f.recorded.as_ref()?, f.live.as_ref()?, &leaves))
        .collect();
    fields.extend(passes::added_fields(report));
    let mut search = Search { helm, release, files, cluster, values: &values, leaves: &leaves, renders: 0 };
    search.run(&mut fields).await?;
    search.grown(&mut fields).await?;
    search.tails(&mut fields).await?;
    Ok(conclude(fields, &values, &leaves))
}

/// One modified field and what the search knows of it.
struct Field<'a> {
    object: &'a ObjectDrift,
    path: FieldPath,
    at: String,
    recorded: Value,
    live: Value,
    /// Candidates not yet tried in a render that showed the field.
    untried: BTreeSet<usize>,
    /// Why some candidates could not be tried.
    trouble: Vec<String>,
    /// How often its candidates were rendered together again (a shape seen without all of them).
    regroups: u8,
    found: Option<Found>,
    /// A list that only grew, explained by an empty value the chart fills it from: the value's
    /// key, the form of its items, and the value that writes the items added.
    grown: Option<(Key, String, Value)>,
    /// A list or map that fields added outside Helm made grow (explained only when an empty
    /// value of the chart fills it).
    added: bool,
    /// The values that give the live value when it lacks the shape's last part (verified by a
    /// render).
    fitted: Option<Vec<(usize, Value)>>,
}

/// What a render showed of a field.
enum Found {
    Pieces(Vec<Piece>),
    /// It changes with this value but is not a copy of it.
    Transformed(usize),
}

impl<'a> Field<'a> {
    fn new(
        object: &'a ObjectDrift,
        path: &FieldPath,
        recorded: &Value,
        live: &Value,
        leaves: &[(Key, Value)],
    ) -> Option<Self> {
        let at = path.recorded_pointer()?;
        let (recorded, live) = if object.id.is_secret() && at.starts_with("/data/") {
            (decoded(recorded), decoded(live))
        } else {
            (recorded.clone(), live.clone())
        };
        let untried =
            leaves.iter().enumerate().filter(|(_, (_, v))| candidate(v, &recorded, path)).map(|(n, _)| n).collect();
        Some(Field {
            object,
            path: path.clone(),
            at,
            recorded,
            live,
            untried,
            trouble: Vec::new(),
            regroups: 0,
            found: None,
            grown: None,
            added: false,
            fitted: None,
        })
    }

    fn open(&self) -> bool {
        self.found.is_none() && !self.untried.is_empty()
    }
}

/// Whether a value of the release could be what a template writes into a field holding
/// `recorded`: equal to it, or (for text) part of it.
fn candidate(value: &Value, recorded: &Value, path: &FieldPath) -> bool {
    match (value, recorded) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
        (Value::String(s), Value::String(r)) => !s.is_empty() && r.contains(s.as_str()),
        (Value::Number(_), Value::String(r)) => r.contains(&values::printed(value)),
        (v, r) => scalar_equal(v, r, path),
    }
}

/// A Secret's `data` value decoded (templates write it with `b64enc`), as is when it is not
/// base64 text.
fn decoded(v: &Value) -> Value {
    v.as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .map_or_else(|| v.clone(), Value::String)
}

struct Search<'a> {
    helm: &'a HelmBinary,
    release: &'a Release,
    files: &'a ChartFiles,
    cluster: &'a Capabilities,
    values: &'a Value,
    leaves: &'a [(Key, Value)],
    renders: usize,
}

impl Search<'_> {
    async fn run(&mut self, fields: &mut [Field<'_>]) -> Result<()> {
        let dir = tempfile::Builder::new().prefix("helm-drift-explain-").tempdir()?;
        let started = Instant::now();
        let mut queue: VecDeque<Group> = first_groups(fields, self.leaves);
        while let Some(Group { keys: group, letters }) = queue.pop_front() {
            if !fields.iter().any(|f| f.open() && group.iter().any(|n| f.untried.contains(n))) {
                continue;
            }
            if self.renders >= MAX_RENDERS || started.elapsed() > MAX_TIME {
                let why =
                    format!("the search stopped after {} renders ({} s)", self.renders, started.elapsed().as_secs());
                fields.iter_mut().filter(|f| f.open()).for_each(|f| f.trouble.push(why.clone()));
                break;
            }
            let probe = |n: usize| {
                let v = &self.leaves[n].1;
                if letters { shape::letters(n, v).unwrap_or_else(|| shape::probe(n, v)) } else { shape::probe(n, v) }
            };
            let probes: Vec<(usize, Value)> = group.iter().map(|&n| (n, probe(n))).collect();
            match self.render(&probes, &dir).await {
                Err(_) if group.len() > 1 => halves(&mut queue, &group),
                Err(_) if !letters && self.leaves[group[0]].1.is_string() => {
                    queue.push_front(Group { keys: group, letters: true })
                }
                Err(e) => {
                    let text = e.to_string();
                    let line = text.lines().find(|l| l.contains("Error:")).or(text.lines().next()).unwrap_or_default();
                    let line = line.find("Error:").map_or(line, |at| &line[at..]);
                    let line: String = line.trim().chars().take(300).collect();
                    let why = format!("the chart does not render with {} changed ({line})", self.leaves[group[0]].0);
                    give_up(fields, group[0], &why);
                }
                Ok(objects) => {
                    let (lost, together) = read(fields, &group, &probes, &objects, self.leaves);
                    for keys in together {
                        queue.push_front(Group { keys, letters: false });
                    }
                    if lost.len() > 1 {
                        halves(&mut queue, &lost);
                    } else if let Some(&n) = lost.first() {
                        give_up(
                            fields,
                            n,
                            &format!("with {} changed the chart renders no such field", self.leaves[n].0),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The chart rendered with the probes in place of their values.
    async fn render(&mut self, probes: &[(usize, Value)], dir: &tempfile::TempDir) -> Result<Vec<DesiredObject>> {
        let mut tree = self.values.clone();
        for (n, p) in probes {
            values::set(&mut tree, &self.leaves[*n].0, p.clone());
        }
        self.render_tree(&tree, dir).await
    }

    /// The chart rendered with these values.
    async fn render_tree(&mut self, tree: &Value, dir: &tempfile::TempDir) -> Result<Vec<DesiredObject>> {
        self.renders += 1;
        let path = dir.path().join(format!("probe-{}.json", self.renders));
        std::fs::write(&path, serde_json::to_vec(tree)?)?;
        let extra = ["--values".to_string(), path.display().to_string()];
        let text = self.helm.template(self.release, self.files, self.cluster, &extra).await?;
        Ok(desired::parse_manifest(&text).into_iter().flatten().collect())
    }
}

/// Candidates probed together in one render, with letters-only text probes or not.
struct Group {
    keys: Vec<usize>,
    letters: bool,
}

/// Every text and number candidate in one render; each true/false candidate alone (flipping
/// several at once tells nothing), those named like the field first.
fn first_groups(fields: &[Field], leaves: &[(Key, Value)]) -> VecDeque<Group> {
    let all: BTreeSet<usize> = fields.iter().flat_map(|f| f.untried.iter().copied()).collect();
    let (flags, probes): (Vec<usize>, Vec<usize>) = all.into_iter().partition(|&n| leaves[n].1.is_boolean());
    let group = |keys: &[usize]| Group { keys: keys.to_vec(), letters: false };
    let mut queue: VecDeque<Group> = probes.chunks(shape::MAX_PROBES).map(group).collect();
    let named = |n: &usize| {
        let name = leaves[*n].0.last_name().to_ascii_lowercase();
        !fields.iter().any(|f| f.untried.contains(n) && f.at.to_ascii_lowercase().contains(&name))
    };
    let mut flags = flags;
    flags.sort_by_key(named);
    queue.extend(flags.iter().map(|n| group(std::slice::from_ref(n))));
    queue
}

fn halves(queue: &mut VecDeque<Group>, group: &[usize]) {
    let (a, b) = group.split_at(group.len() / 2);
    queue.push_front(Group { keys: b.to_vec(), letters: false });
    queue.push_front(Group { keys: a.to_vec(), letters: false });
}

/// Candidate `n` cannot be tried for the fields that wait on it: why.
fn give_up(fields: &mut [Field], n: usize, why: &str) {
    for f in fields.iter_mut().filter(|f| f.found.is_none()) {
        if f.untried.remove(&n) {
            f.trouble.push(why.to_string());
        }
    }
}

/// What one render shows of each open field; returns the candidates to try again in smaller
/// groups (the render lost a field, or changed it in a way several of them could explain), and
/// groups to render as they are (a field's candidates that showed, with those left out of this
/// render whose value still shows around them).
fn read(
    fields: &mut [Field],
    group: &[usize],
    probes: &[(usize, Value)],
    objects: &[DesiredObject],
    leaves: &[(Key, Value)],
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let (mut again, mut together) = (BTreeSet::new(), Vec::new());
    for f in fields.iter_mut().filter(|f| f.open()) {
        let tried: Vec<usize> = group.iter().copied().filter(|n| f.untried.contains(n)).collect();
        if tried.is_empty() {
            continue;
        }
        let rendered = find(objects, f.object).and_then(|o| o.object.pointer(&f.at));
        let rendered = match rendered {
            Some(r) if f.object.id.is_secret() && f.at.starts_with("/data/") => decoded(r),
            Some(r) => r.clone(),
            None => {
                again.extend(tried);
                continue;
            }
        };
        if let Some(pieces) = shape::read(&rendered, probes) {
            // Candidates left out of this render whose value still shows in the text around
            // the probes (`:6.5.0` when the tag was in the other half): render them together
            // with the ones that showed, a few times at most, before taking the shape as is.
            let shown: Vec<usize> =
                pieces.iter().filter_map(|p| if let Piece::Value(n) = p { Some(*n) } else { None }).collect();
            let text: String =
                pieces.iter().filter_map(|p| if let Piece::Text(t) = p { Some(t.as_str()) } else { None }).collect();
            let left_out: Vec<usize> = f
                .untried
                .iter()
                .copied()
                .filter(|n| !group.contains(n) && text.contains(&values::printed(&leaves[*n].1)))
                .collect();
            if left_out.is_empty() || f.regroups >= MAX_REGROUPS {
                f.found = Some(Found::Pieces(pieces));
            } else {
                f.regroups += 1;
                let mut keys: Vec<usize> = shown.into_iter().chain(left_out).collect();
                keys.sort_unstable();
                keys.dedup();
                together.push(keys);
            }
        } else if scalar_equal(&rendered, &f.recorded, &f.path) {
            tried.iter().for_each(|n| {
                f.untried.remove(n);
            });
        } else if let [n] = tried[..] {
            f.found = Some(if leaves[n].1.is_boolean() {
                Found::Pieces(vec![Piece::Value(n)])
            } else {
                Found::Transformed(n)
            });
        } else {
            again.extend(tried);
        }
    }
    (again.into_iter().collect(), together)
}

/// The object of a render: by kind and name, else the one object of that kind its template
/// renders (a probe may rename it).
fn find<'a>(objects: &'a [DesiredObject], o: &ObjectDrift) -> Option<&'a DesiredObject> {
    objects.iter().find(|d| d.kind == o.id.kind && d.name == o.id.name).or_else(|| {
        let mut same = objects.iter().filter(|d| d.kind == o.id.kind && d.source.is_some() && d.source == o.source);
        let one = same.next();
        if same.next().is_none() { one } else { None }
    })
}

/// The explanations, with the values that make every explained field live: one set of values
/// for the release, so a list holding two explained values is set once with both.
fn conclude(fields: Vec<Field>, values: &Value, leaves: &[(Key, Value)]) -> Vec<Explanation> {
    let mut wanted = values.clone();
    let mut taken: Vec<(usize, Value, String)> = Vec::new();
    let mut out = Vec::new();
    let mut changes = Vec::new();
    for f in fields {
        let name = |n: usize| leaves[n].0.to_string();
        let place = format!("{} {}", f.object.id, f.path);
        let mut grown_keys: Vec<Key> = Vec::new();
        let (cause, changed) = match f.found {
            Some(Found::Transformed(n)) => (
                Cause::Values(Built {
                    keys: vec![name(n)],
                    shape: String::new(),
                    set: Vec::new(),
                    misfit: Some("the template transforms the value (the field is not a copy of it)".into()),
                }),
                Vec::new(),
            ),
            Some(Found::Pieces(pieces)) => {
                let mut keys: Vec<String> = Vec::new();
                for p in &pieces {
                    if let Piece::Value(n) = p
                        && !keys.contains(&name(*n))
                    {
                        keys.push(name(*n));
                    }
                }
                let shape = shape::shape(&pieces, &name);
                let current = |n: usize| leaves[n].1.clone();
                let (changed, misfit) = match shape::fit(&pieces, &f.live, &current).or(f.fitted.clone()) {
                    None => (
                        Vec::new(),
                        Some("the live value does not have the template's shape (change the chart)".into()),
                    ),
                    Some(parts) => {
                        let changed: Vec<(usize, Value)> =
                            parts.into_iter().filter(|(n, v)| *v != leaves[*n].1).collect();
                        match changed.iter().find_map(|(n, v)| taken.iter().find(|(m, w, _)| m == n && w != v)) {
                            Some((n, _, other)) => (
                                Vec::new(),
                                Some(format!("{} also makes {other}, which asks for another value", name(*n))),
                            ),
                            None => (changed, None),
                        }
                    }
                };
                for (n, v) in &changed {
                    values::set(&mut wanted, &leaves[*n].0, v.clone());
                    taken.push((*n, v.clone(), place.clone()));
                }
                (Cause::Values(Built { keys, shape, set: Vec::new(), misfit }), changed)
            }
            None if f.grown.is_some() => {
                let (key, shape, value) = f.grown.clone().expect("checked");
                values::set(&mut wanted, &key, value);
                grown_keys.push(key.clone());
                (Cause::Values(Built { keys: vec![key.to_string()], shape, set: Vec::new(), misfit: None }), Vec::new())
            }
            // An addition no empty value of the chart explains: nothing to say of it.
            None if f.added => continue,
            None if f.trouble.is_empty() => (Cause::HardCoded(f.object.source.clone()), Vec::new()),
            None => {
                let mut trouble = f.trouble;
                trouble.dedup();
                (Cause::NotFound(trouble.join("; ")), Vec::new())
            }
        };
        let mut keys: Vec<Key> = changed.into_iter().map(|(n, _)| leaves[n].0.clone()).collect();
        keys.append(&mut grown_keys);
        changes.push(keys);
        out.push(Explanation { object: f.object.id.clone(), path: f.path, live: f.live, cause });
    }
    for (e, keys) in out.iter_mut().zip(changes) {
        if let Cause::Values(built) = &mut e.cause {
            built.set = values::set_pairs(&wanted, &keys);
        }
    }
    out
}
