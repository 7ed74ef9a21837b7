//! The comparison policy: what a difference means beyond the bare comparison. [`ignore`] rules
//! leave fields out (flags, the config file, annotations), [`expected`] rules say which writes
//! outside Helm are routine, [`controllers`] what built-in controllers write by design, [`gitops`] reads the same rules from a Flux `HelmRelease` or an
//! Argo CD `Application` ([`flux`]: a HelmRelease's drift rules, [`labels`]: the selectors they
//! use), [`jq`] evaluates Argo CD's jq path expressions, and [`config`] reads
//! them all from the config file.

pub(crate) mod config;
pub(crate) mod controllers;
pub(crate) mod expected;
pub(crate) mod flux;
pub(crate) mod gitops;
pub(crate) mod ignore;
pub(crate) mod jq;
pub(crate) mod labels;
