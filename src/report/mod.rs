//! Report: the one place that writes output. The [`Printer`] renders the model of each command
//! in the format its [`Style`] names (each format one file: `text`, `json`, `junit`,
//! `markdown`, `html`, listed in `formats`), errors and diagnostics. The presentation
//! decisions every format shares are in `present`; secret values are hidden here and only here
//! (`secret`).

mod changes_json;
mod color;
pub(crate) mod controls;
mod diff;
mod fleet_plan;
mod formats;
mod html;
pub(crate) mod json;
mod junit;
pub(crate) mod markdown;
mod plan_formats;
mod present;
mod printer;
mod secret;
mod style;
mod text;
mod timeline;

pub(crate) use formats::Writes;
pub(crate) use html::board as board_page;
pub(crate) use printer::{Terminal, progress};
pub(crate) use style::{Format, Style, Summary};
pub(crate) use timeline::json as timeline_json;

#[cfg(test)]
mod tests;
