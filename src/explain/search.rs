//! The probe search: every candidate of every field gets a probe, the chart is rendered with
//! many at once, renders that fail or lose the field are split in halves, within a bound in
//! renders and time.

use super::field::{Appearance, Field, decoded};
use super::shape::{self, Piece};
use super::values::{self, Key};
use crate::compare::subset::scalar_equal;
use crate::desired::{self, DesiredObject};
use crate::helm::{Capabilities, ChartFiles, HelmBinary};
use crate::model::ObjectDrift;
use crate::release::Release;
use anyhow::Result;
use serde_json::Value;
use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// The search stops after this many renders, or this long, whichever comes first.
pub(super) const MAX_RENDERS: usize = 64;
pub(super) const MAX_TIME: Duration = Duration::from_secs(60);
/// A field's candidates are rendered together again at most this often.
pub(super) const MAX_REGROUPS: u8 = 3;

pub(super) struct Search<'a> {
    pub(super) helm: &'a HelmBinary,
    pub(super) release: &'a Release,
    pub(super) files: &'a ChartFiles,
    pub(super) cluster: &'a Capabilities,
    pub(super) values: &'a Value,
    pub(super) leaves: &'a [(Key, Value)],
    pub(super) renders: usize,
}

impl Search<'_> {
    pub(super) async fn run(&mut self, fields: &mut [Field<'_>]) -> Result<()> {
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
    pub(super) async fn render(
        &mut self,
        probes: &[(usize, Value)],
        dir: &tempfile::TempDir,
    ) -> Result<Vec<DesiredObject>> {
        let mut tree = self.values.clone();
        for (n, p) in probes {
            values::set(&mut tree, &self.leaves[*n].0, p.clone());
        }
        self.render_tree(&tree, dir).await
    }

    /// The chart rendered with these values.
    pub(super) async fn render_tree(&mut self, tree: &Value, dir: &tempfile::TempDir) -> Result<Vec<DesiredObject>> {
        self.renders += 1;
        let path = dir.path().join(format!("probe-{}.json", self.renders));
        std::fs::write(&path, serde_json::to_vec(tree)?)?;
        let extra = ["--values".to_string(), path.display().to_string()];
        // One render never outlasts the whole search's time.
        let text = self.helm.within(MAX_TIME).template(self.release, self.files, self.cluster, &extra).await?;
        Ok(desired::parse_manifest(&text).into_iter().flatten().collect())
    }
}

/// Candidates probed together in one render, with letters-only text probes or not.
pub(super) struct Group {
    pub(super) keys: Vec<usize>,
    pub(super) letters: bool,
}

/// Every text and number candidate in one render; each true/false candidate alone (flipping
/// several at once tells nothing), those named like the field first.
pub(super) fn first_groups(fields: &[Field], leaves: &[(Key, Value)]) -> VecDeque<Group> {
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

pub(super) fn halves(queue: &mut VecDeque<Group>, group: &[usize]) {
    let (a, b) = group.split_at(group.len() / 2);
    queue.push_front(Group { keys: b.to_vec(), letters: false });
    queue.push_front(Group { keys: a.to_vec(), letters: false });
}

/// Candidate `n` cannot be tried for the fields that wait on it: why.
pub(super) fn give_up(fields: &mut [Field], n: usize, why: &str) {
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
pub(super) fn read(
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
                f.found = Some(Appearance::Pieces(pieces));
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
                Appearance::Pieces(vec![Piece::Value(n)])
            } else {
                Appearance::Transformed(n)
            });
        } else {
            again.extend(tried);
        }
    }
    (again.into_iter().collect(), together)
}

/// The object of a render: by kind and name, else the one object of that kind its template
/// renders (a probe may rename it).
pub(super) fn find<'a>(objects: &'a [DesiredObject], o: &ObjectDrift) -> Option<&'a DesiredObject> {
    objects.iter().find(|d| d.kind == o.id.kind && d.name == o.id.name).or_else(|| {
        let mut same = objects.iter().filter(|d| d.kind == o.id.kind && d.source.is_some() && d.source == o.source);
        let one = same.next();
        if same.next().is_none() { one } else { None }
    })
}
