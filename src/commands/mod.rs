//! The commands: each turns a request into engine calls and returns the model the report layer
//! renders. A command never imports another command.

pub mod accept;
pub mod check;
pub mod guard;
pub mod render;
pub mod repair;
pub mod upgrade;
